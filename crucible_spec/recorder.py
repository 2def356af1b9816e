"""Record a PyTorch program's ATen ops as a .crtrace trace, one ring entry per op.

A TorchDispatchMode stands in for the native Vessel's boxed fallback at DispatchKey::Crucible
and fills each TraceRing::Entry and TensorMeta the way it does (see recorder_torch): inputs
walked in schema order before the op runs, outputs once Autograd has wrapped them, at most 32
metas and 5 scalars per op, the training phase and module scope from hooks, callsite_hash 0.
Importing this module imports torch.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from torch.utils._python_dispatch import TorchDispatchMode

from .recorder_torch import (
    Pointers,
    has_python_key,
    query,
    returned_tensors,
    tensor_meta,
    walk_arguments,
)
from .spec.crucible.crtrace import NAME_MAX, NAME_TABLE_CAP, LoadedTrace, meta_starts_of
from .spec.crucible.trace_ring import ENTRY, MAX_SCALARS
from .spec.crucible.types import TrainingPhase, pack_op_flags
from .spec.crucible.vessel import ROOT_SCOPE, schema_hash, scope_hash, shape_hash

T = TypeVar("T")

MAX_METAS = 32
"""The native fallback's inline TensorMeta buffer: inputs first, outputs take what is left."""

SKIPPED_OPS = frozenset({"profiler::_record_function_enter_new",
                         "profiler::_record_function_exit"})
"""Profiler bookkeeping the native recorder passes through unrecorded (any overload)."""


class ScriptError(Exception):
    """The recorded program is missing, malformed or raised: one line for the user."""


ModuleTree = torch.nn.Module | list | tuple | dict


def module_paths(model: ModuleTree) -> dict[str, torch.nn.Module]:
    """Every module by its named_modules() path, the root as "<root>"; in a list or dict of
    modules each path starts with the index or key. A module shared twice keeps its first."""
    roots = (model.items() if isinstance(model, dict) else
             enumerate(model) if isinstance(model, list | tuple) else [(None, model)])
    paths: dict[str, torch.nn.Module] = {}
    seen: set[int] = set()
    for key, root in roots:
        for name, module in root.named_modules():
            if id(module) not in seen:
                seen.add(id(module))
                parts = [str(p) for p in (key, name) if p is not None and p != ""]
                paths[".".join(parts) or ROOT_SCOPE] = module
    return paths


class Scopes:
    """Module scopes: a forward pre-hook on every module sets the current path. It is never
    popped: the last module entered wins and backward ops inherit it; None before any."""

    def __init__(self) -> None:
        self.current: str | None = None
        self.entered: dict[str, None] = {}

    def enter(self, path: str) -> None:
        self.current = path
        self.entered.setdefault(path)

    def install(self, model: ModuleTree, stack: ExitStack) -> None:
        for path, module in module_paths(model).items():
            handle = module.register_forward_pre_hook(lambda *_, p=path: self.enter(p))
            stack.callback(handle.remove)


class Phases:
    """The training phase: BACKWARD while the autograd engine runs a graph task, OPTIMIZER
    inside any Optimizer.step (the global step hooks), else FORWARD."""

    def __init__(self) -> None:
        self.optimizer_depth = 0

    def _step(self, delta: int) -> None:
        self.optimizer_depth = max(0, self.optimizer_depth + delta)

    def install(self, stack: ExitStack) -> None:
        stack.callback(register_optimizer_step_pre_hook(lambda *_: self._step(1)).remove)
        stack.callback(register_optimizer_step_post_hook(lambda *_: self._step(-1)).remove)

    def current(self) -> TrainingPhase:
        if torch._C._current_graph_task_id() != -1:
            return TrainingPhase.BACKWARD
        return TrainingPhase.OPTIMIZER if self.optimizer_depth else TrainingPhase.FORWARD


class Recorder(TorchDispatchMode):
    """Records every ATen op it sees as a ring entry plus its input and output metas.

    The native fallback sits above Autograd; this mode runs below it. Input metas are taken
    before the op runs (as the native fallback takes them); output metas wait until the next op
    or the end of the step, by when Autograd and ADInplaceOrView have finished with them (their
    grad_fn, requires_grad, output_nr, view flag and in-place version bump), as the native
    fallback sees them when its redispatch returns. The outputs are held by weak reference only
    (a strong one would change the program: AccumulateGrad copies a gradient it cannot steal);
    one that died by then keeps the meta taken right after the op ran."""

    def __init__(self, raw_pointers: bool = False) -> None:
        super().__init__()
        self.pointers = Pointers(raw_pointers)
        self.scopes = Scopes()
        self.phases = Phases()
        self.entries: list[dict] = []
        self.metas: list[dict] = []
        self.pending: list[tuple[int, weakref.ref]] = []
        self.scope_hashes: list[int] = []
        self.op_names: dict[str, None] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.flush()
        if func._schema.name in SKIPPED_OPS:
            return func(*args, **kwargs)
        tensors, scalars = walk_arguments(func._schema, args, kwargs)
        tensors = tensors[:MAX_METAS]
        inputs = [tensor_meta(t, self.pointers) for t in tensors]
        out = func(*args, **kwargs)
        outs = returned_tensors(func._schema, out)[:MAX_METAS - len(inputs)]
        self.append(func, inputs, outs, scalars, any(map(has_python_key, tensors + outs)))
        return out

    def __exit__(self, *exc):
        result = super().__exit__(*exc)
        self.flush()
        return result

    def flush(self) -> None:
        """Fill the output metas the last op left pending."""
        for index, ref in self.pending:
            t = ref()
            if t is not None:
                self.metas[index] = tensor_meta(t, self.pointers)
        self.pending = []

    def append(self, func, inputs: list[dict], outs: list[torch.Tensor], scalars: list[int],
               torch_function: bool) -> None:
        """One ring entry: hashes, counts, capped scalars and the op_flags byte."""
        name = func.name()
        self.op_names.setdefault(name)
        kept = scalars[:MAX_SCALARS]
        self.entries.append({
            **ENTRY.default_values(),
            "schema_hash": schema_hash(name),
            "shape_hash": shape_hash([m["sizes"][:m["ndim"]] for m in inputs]),
            "num_inputs": len(inputs), "num_outputs": len(outs),
            "num_scalar_args": len(kept),
            "grad_enabled": torch.is_grad_enabled(),
            "op_flags": pack_op_flags(torch.is_inference_mode_enabled(),
                                      func._schema.is_mutable, self.phases.current(),
                                      torch_function),
            "scalar_values": kept + [0] * (MAX_SCALARS - len(kept)),
        })
        self.metas += inputs
        self.pending = [(len(self.metas) + k, weakref.ref(t)) for k, t in enumerate(outs)]
        self.metas += [tensor_meta(t, self.pointers) for t in outs]
        self.scope_hashes.append(scope_hash(self.scopes.current))

    def trace(self) -> LoadedTrace:
        """Everything recorded so far as a loaded trace (callsite hashes are all 0)."""
        counts = [e["num_inputs"] + e["num_outputs"] for e in self.entries]
        return LoadedTrace(
            entries=list(self.entries), meta_starts=meta_starts_of(counts),
            scope_hashes=list(self.scope_hashes), callsite_hashes=[0] * len(self.entries),
            metas=list(self.metas), names=name_table(self.op_names, self.scopes.entered))


def name_table(op_names, scopes) -> dict[int, str]:
    """hash -> name for the op names, then the scope paths, in first-seen order; at most 512,
    names of 1..256 UTF-8 bytes without NUL (a hash already present keeps its first name)."""
    names: dict[int, str] = {}
    candidates = [(schema_hash(n), n) for n in op_names] + [(scope_hash(p), p) for p in scopes]
    for h, name in candidates:
        raw = name.encode("utf-8")
        if len(names) < NAME_TABLE_CAP and 1 <= len(raw) <= NAME_MAX and b"\0" not in raw:
            names.setdefault(h, name)
    return names


@dataclass
class Program:
    """A loaded script: `model` (tracked for scopes), `step()` and an optional `setup()`."""

    name: str
    model: ModuleTree
    step: Callable[[], Any]
    setup: Callable[[], Any] | None


def one_line(e: BaseException) -> str:
    """'Type: first line of the message' (or just the type)."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def call_user(target: str, what: str, fn: Callable[..., T], *args: Any) -> T:
    """Run user code; anything it raises becomes one ScriptError line."""
    try:
        return fn(*args)
    except (Exception, SystemExit) as e:
        raise ScriptError(f"{target}: {what} raised {one_line(e)}") from None


@contextmanager
def imported(target: str) -> Iterator[ModuleType]:
    """The script file (run fresh, its directory first on sys.path, both undone afterwards) or
    the importable module named `target`."""
    path = Path(target)
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise ScriptError(f"{target}: {'not a file' if path.exists() else 'no such file'}")
        with script_module(target, path) as module:
            yield module
    elif query(lambda: importlib.util.find_spec(target), None) is None:
        raise ScriptError(f"{target}: no such file or module")
    else:
        yield call_user(target, "importing it", importlib.import_module, target)


@contextmanager
def script_module(target: str, path: Path) -> Iterator[ModuleType]:
    """The script run as a fresh module, registered with its folder on sys.path until done."""
    name = f"_crucible_record_{path.stem}"
    spec = importlib.util.spec_from_file_location(
        name, path, loader=importlib.machinery.SourceFileLoader(name, str(path)))
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.modules[name] = module
    sys.path.insert(0, folder)
    try:
        call_user(target, "importing it", spec.loader.exec_module, module)
        yield module
    finally:
        sys.modules.pop(name, None)
        if folder in sys.path:
            sys.path.remove(folder)


def is_module_tree(model: Any) -> bool:
    """An nn.Module, or a non-empty list or dict of them."""
    if isinstance(model, dict):
        model = list(model.values())
    if isinstance(model, list | tuple):
        return bool(model) and all(isinstance(m, torch.nn.Module) for m in model)
    return isinstance(model, torch.nn.Module)


@contextmanager
def load_program(target: str) -> Iterator[Program]:
    """The program a script defines; ScriptError if it is missing or malformed."""
    with imported(target) as module:
        model = getattr(module, "model", None)
        step = getattr(module, "step", None)
        setup = getattr(module, "setup", None)
        if not is_module_tree(model):
            raise ScriptError(f"{target} defines no `model` (an nn.Module, or a list or dict "
                              f"of modules)")
        if not callable(step):
            raise ScriptError(f"{target} defines no step() function")
        if setup is not None and not callable(setup):
            raise ScriptError(f"{target}: `setup` is not a function")
        yield Program(target, model, step, setup)


def record(program: Program, iterations: int, raw_pointers: bool = False,
           progress: Callable[[str], None] = lambda _: None) -> LoadedTrace:
    """Run setup() once unrecorded, then `iterations` steps back to back into one trace."""
    if program.setup is not None:
        call_user(program.name, "setup()", program.setup)
    recorder = Recorder(raw_pointers)
    with ExitStack() as stack:
        recorder.scopes.install(program.model, stack)
        recorder.phases.install(stack)
        for i in range(iterations):
            with recorder:
                call_user(program.name, "step()", program.step)
            progress(f"recording {program.name}: iteration {i + 1}/{iterations}, "
                     f"{len(recorder.entries)} ops")
    return recorder.trace()
