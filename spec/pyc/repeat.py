"""Chapter 14: the stable-repeat fast path of PyC's run (compiler_api.c, pyc_run_model): when
a run reuses the last successful run's work instead of checking again.

A model remembers its last successful run (inputs, outputs, their shape hash, bucket and
signature) only while speculative plans and the phantom graph are off; a failed run forgets
it. For a run with inputs I and outputs O (each list non-empty, at most 8 kept):
1. Exact repeat: PYC_ENABLE_STABLE_REPEAT_FASTPATH is on (unset, or anything but `0`,
   `false`, `FALSE`), the backend is CUDA, speculative plans, phantom graph and autotune are
   off, a last run is remembered, and I and O equal its descriptors field by field (data
   pointer, size_bytes, dtype, rank, dimensions). It skips the fingerprint guard, the input
   guard, the rails controller and kernel reselection.
2. Otherwise, with speculative plans and phantom graph off and a last run remembered: I and O
   equal to its descriptors skip the input guard (`descriptors`). PyC also skips it when only
   the shape hash of I equals the last one's (`shape_hash`, E14.6).
3. A run that skipped the input guard by step 2 and succeeds also skips the controller and
   kernel reselection when the switch is on, the backend is CUDA and speculative plans,
   phantom graph and autotune are off. In the spec that is only ever an exact repeat; in PyC
   a new data pointer of the same shape does it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, Field, List, Optional, record
from ..core.strategies import st
from .guard import DESC, E14_6, TensorDesc, descs_from_wire, shape_hash
from .ir import MAX_INPUTS, DType
from .wire import Named

BACKEND = Named(("cpu", "cuda"), "backend")
CPU, CUDA = range(2)
CACHED_BY = Named(("none", "exact_repeat", "descriptors", "shape_hash"), "repeat kind")
NOT_CACHED, EXACT, DESCRIPTORS, SHAPE_HASH = range(4)
MAX_DESCS = 16
"""The spec's own bound on the descriptors one run passes."""


@dataclass(frozen=True)
class RunConfig:
    """What the fast path reads of a compiled model and the environment."""

    backend: int = CPU
    speculative: bool = False
    phantom: bool = False
    autotune: bool = False
    fastpath_env: bool = True


@dataclass(frozen=True)
class LastRun:
    """The last successful run a model remembers."""

    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]
    bucket: str = ""
    signature: str = ""


def remembers(cfg: RunConfig) -> bool:
    """A model keeps its last run only with speculative plans and phantom graph off."""
    return not cfg.speculative and not cfg.phantom


def same_run(last: LastRun, inputs: tuple[TensorDesc, ...],
             outputs: tuple[TensorDesc, ...]) -> bool:
    """Both lists fit PyC's eight slots and equal the last run's, field by field."""
    return len(inputs) <= MAX_INPUTS and len(outputs) <= MAX_INPUTS and \
        inputs == last.inputs and outputs == last.outputs


def cached_by(cfg: RunConfig, last: LastRun | None, inputs: tuple[TensorDesc, ...],
              outputs: tuple[TensorDesc, ...], errata: frozenset[str] = NO_ERRATA) -> int:
    """Steps 1-2: how the run skips the input guard, if it does."""
    if last is None or not remembers(cfg):
        return NOT_CACHED
    if cfg.fastpath_env and cfg.backend == CUDA and not cfg.autotune and \
            same_run(last, inputs, outputs):  # 1
        return EXACT
    if same_run(last, inputs, outputs):  # 2
        return DESCRIPTORS
    if E14_6 in errata and 0 != shape_hash(inputs) == shape_hash(last.inputs):
        return SHAPE_HASH
    return NOT_CACHED


def skips_controller(cfg: RunConfig, how: int, failed: bool) -> bool:
    """Step 3 (and step 1): the run leaves the controller and the kernel as they were."""
    return how == EXACT or (how != NOT_CACHED and not failed and cfg.fastpath_env
                            and cfg.backend == CUDA and remembers(cfg) and not cfg.autotune)


# ── pyc.repeat ────────────────────────────────────────────────────────────────────────────────

DESCS = List(DESC, MAX_DESCS)
LAST = record(inputs=DESCS, outputs=DESCS)


def check_descs(args: dict) -> None:
    """Non-empty lists (pyc_run_model refuses empty ones) of pyc_dtype descriptors."""
    groups = [("inputs", args["inputs"]), ("outputs", args["outputs"])]
    if args["last"] is not None:
        groups += [("last.inputs", args["last"]["inputs"]),
                   ("last.outputs", args["last"]["outputs"])]
    for name, items in groups:
        if not items:
            raise InvalidInput(f"args.{name}: empty; a run passes at least one tensor each way")
        for i, t in enumerate(items):
            if t["dtype"] not in tuple(DType):
                raise InvalidInput(f"args.{name}[{i}].dtype: {t['dtype']} is not a pyc_dtype")


def config_from_wire(backend: int, speculative: bool, phantom: bool, autotune: bool,
                     fastpath_env: bool) -> RunConfig:
    return RunConfig(backend, speculative, phantom, autotune, fastpath_env)


def repeat_op(backend: int, speculative: bool, phantom: bool, autotune: bool,
              fastpath_env: bool, last: dict | None, inputs: list[dict], outputs: list[dict],
              errata: frozenset[str] = NO_ERRATA) -> dict:
    cfg = config_from_wire(backend, speculative, phantom, autotune, fastpath_env)
    prev = None if last is None else LastRun(descs_from_wire(last["inputs"]),
                                             descs_from_wire(last["outputs"]))
    how = cached_by(cfg, prev, descs_from_wire(inputs), descs_from_wire(outputs), errata)
    return {"cached_by": how, "fingerprint_guard": how != EXACT,
            "input_guard": how == NOT_CACHED, "controller": not skips_controller(cfg, how, False)}


def _d(dtype: int = 1, shape: tuple = (4, 4), size: int = 64, data: int = 1) -> dict:
    return {"dtype": dtype, "shape": list(shape), "size_bytes": size, "data": data}


F32_4X4, OUT_4X4 = _d(), _d(data=2)
F16_COLLIDING = _d(2, (4, 4), 0x30000000195)
"""guard.py's f16 [4, 4] descriptor whose shape hash is the f32 [4, 4] 64-byte one's."""
LAST_4X4 = {"inputs": [F32_4X4], "outputs": [OUT_4X4]}


def repeat_args(inputs=(F32_4X4,), outputs=(OUT_4X4,), last=LAST_4X4, backend: int = CUDA,
                speculative=False, phantom=False, autotune=False, env=True) -> dict:
    return {"backend": BACKEND.names[backend], "speculative": speculative, "phantom": phantom,
            "autotune": autotune, "fastpath_env": env, "last": last, "inputs": list(inputs),
            "outputs": list(outputs)}


def repeat_edges() -> list[dict]:
    """Each kind of repeat, each switch that turns the fast path off, and E14.6's witness."""
    return [repeat_args(), repeat_args(backend=CPU), repeat_args(env=False),
            repeat_args(autotune=True), repeat_args(speculative=True), repeat_args(phantom=True),
            repeat_args(last=None), repeat_args(inputs=(_d(data=3),)),
            repeat_args(outputs=(_d(data=3),)), repeat_args(inputs=(F16_COLLIDING,)),
            repeat_args(inputs=(F16_COLLIDING,), backend=CPU),
            repeat_args(inputs=(_d(shape=(2, 8)),)), repeat_args(inputs=(F32_4X4,) * 9,
                                                                 last={"inputs": [F32_4X4] * 9,
                                                                       "outputs": [OUT_4X4]})]


def repeat_domain() -> st.SearchStrategy:
    desc = st.builds(_d, st.sampled_from([1, 2]), st.sampled_from([(4, 4), (2, 8), (16,)]),
                     st.sampled_from([64, 32, 0x30000000195]), st.integers(0, 2))
    descs = st.lists(desc, min_size=1, max_size=3)
    return st.builds(repeat_args, descs, descs,
                     st.none() | st.builds(lambda i, o: {"inputs": i, "outputs": o}, descs, descs)
                     | st.just(LAST_4X4), st.sampled_from([CPU, CUDA]), st.booleans(),
                     st.booleans(), st.booleans(), st.booleans()).map(
        lambda a: a | {"backend": BACKEND.names.index(a["backend"])})


_ONE_RUN = "one comparison of a few descriptors per run: no numeric core"
declare(
    "pyc.repeat", chapter=14,
    summary="PyC's stable-repeat fast path: which checks a run skips because it repeats the "
            "last successful run.",
    args=record(backend=Field(BACKEND, "the model's backend"),
                speculative=Field(BOOL, "speculative plans on", False),
                phantom=Field(BOOL, "phantom graph on", False),
                autotune=Field(BOOL, "autotune on", False),
                fastpath_env=Field(BOOL, "PYC_ENABLE_STABLE_REPEAT_FASTPATH on (the default)",
                                   True),
                last=Field(Optional(LAST, {"inputs": [], "outputs": []}),
                           "the last successful run's descriptors; null: none"),
                inputs=Field(DESCS, "the run's input descriptors"),
                outputs=Field(DESCS, "the run's output descriptors")),
    result=record(cached_by=Field(CACHED_BY, "how the run skips the input guard; none: it "
                                             "does not"),
                  fingerprint_guard=Field(BOOL, "the fingerprint guard runs (when enforced)"),
                  input_guard=Field(BOOL, "the input guard runs"),
                  controller=Field(BOOL, "the controller and kernel reselection run, if the "
                                         "run succeeds")),
    spec=(cached_by, skips_controller, same_run), check=check_descs, errata=(E14_6,),
    domain=repeat_domain, edges=repeat_edges,
    invalid=(InvalidCase("no output", lambda: st.just(repeat_args(outputs=()))),
             InvalidCase("a dtype outside pyc_dtype", lambda: st.just(
                 repeat_args(inputs=(_d(dtype=9),))))),
    not_applicable={"numba": _ONE_RUN, "cupy": _ONE_RUN},
)
