"""The op registry (design §2): the one place every tool reads.

An op is declared once in `spec/` with its schemas, domain, proof obligations and errata.
Implementations register themselves from `reference/` and `fast/`; proof obligations from
`proofs/`. The serve dispatch table, the vectors, the differential tests, the coverage table
and the paper are all derived from what is registered here.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .schema import Record
from .strategies import st

BACKENDS = ("numba", "cupy")
PO_KINDS = ("z3", "model", "property", "contract")
_OP_NAME = re.compile(r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_.]*$")
_PO_ID = re.compile(r"^PO\d+\.\d+$")


@dataclass(frozen=True)
class InvalidCase:
    """A family of wire-level args (JSON) that the spec answers with an error code."""

    description: str
    args: Callable[[], st.SearchStrategy]
    code: str = "invalid_input"


@dataclass
class Op:
    """A declared op: its wire name, chapter, schemas and everything derived tools need.

    `edges()` lists hand-picked wire args for the vectors; `bench(n, rng)` makes n realistic
    inputs at once for `crucible-spec bench`; `locate(args)` maps a byte offset of the op's
    byte-string result to the field it belongs to, for first-difference reports."""

    name: str
    chapter: int
    summary: str
    args: Record
    result: Record
    spec: tuple[Callable, ...] = ()
    domain: Callable[[], st.SearchStrategy] | None = None
    invalid: tuple[InvalidCase, ...] = ()
    check: Callable[[dict], None] | None = None
    check_columns: Callable[[dict], bool] | None = None
    """True when every row of the argument columns passes `check` (its vectorised form: a
    batch whose columns fail it is checked item by item, for the first item's error)."""
    obligations: tuple[str, ...] = ()
    errata: tuple[str, ...] = ()
    not_applicable: dict[str, str] = field(default_factory=dict)
    compare: str = "exact"
    bench: Callable[[int, Any], list[dict]] | None = None
    work: Callable[[int], int] | None = None
    """The scalar steps of the bench input of size n (e.g. n^3 for an n x n x n matmul): above
    bench's --ref-max the reference is timed at a size it can afford and scaled by this."""
    edges: Callable[[], list[dict]] | None = None
    locate: Callable[[dict], Callable[[int], str]] | None = None
    proof_note: str = ""
    """Why the op has no proof obligation, where none would mean anything."""
    arg_rules: Callable[[], dict] | None = None
    """JSON Schema the args meet across fields (e.g. a struct's fields by the struct's name)."""
    module: str = ""
    """The spec module that declares the op (dotted), set by `declare`."""
    needs: tuple[str, ...] = ()
    """Optional packages every implementation of the op needs (spec/core/optional.py)."""

    def strategy(self) -> st.SearchStrategy:
        """Valid inputs (Python values): the op's declared domain, else one derived from `args`."""
        return self.domain() if self.domain else self.args.strategy()


SAME_SUBJECT = object()
"""A mutant's subject when the bug is planted in the spec's own code (an edit)."""


@dataclass(frozen=True)
class Mutant:
    """A plausible bug in the subject of a proof obligation; the obligation must fail on it.

    Either `subject` replaces the obligation's subject, or (an edit) the source text `old`
    of the spec function `target` is replaced by `new` in place while the obligation checks
    its own subject; `Mutant.edit` builds the second kind."""

    name: str
    description: str
    subject: Any = SAME_SUBJECT
    target: Callable | None = None
    old: str = ""
    new: str = ""
    occurrence: int = 1

    @classmethod
    def edit(cls, name: str, description: str, target: Callable, old: str, new: str,
             occurrence: int = 1) -> Mutant:
        """The bug `old` -> `new` (the `occurrence`-th match) in `target`'s own source."""
        return cls(name, description, SAME_SUBJECT, target, old, new, occurrence)


@dataclass(frozen=True)
class Obligation:
    """A proof obligation: `build(subject)` yields its checks; `subject` is the spec's own item
    (a function, a table, a layout) and each mutant swaps in a plausible bug instead."""

    id: str
    statement: str
    kind: str
    covers: tuple[str, ...]
    build: Callable[[Any], Any]
    subject: Any
    mutants: tuple[Mutant, ...]
    timeout_s: float = 60.0


@dataclass(frozen=True)
class Erratum:
    """A place where a seed implementation departs from the spec's intended behaviour (§5)."""

    id: str
    title: str
    seed: str
    location: str
    ops: tuple[str, ...]
    witness: dict
    flag: str
    detail: str
    also: tuple[dict, ...] = ()
    """Witnesses for the other ops the erratum reaches, each {op, args, spec, seed}."""
    also_seeds: tuple[str, ...] = ()
    """Later versions of the seed that still have it: their profiles turn it on too."""


class Registry:
    """Holds ops, their implementations, proof obligations, errata and profiles."""

    def __init__(self) -> None:
        self.ops: dict[str, Op] = {}
        self.references: dict[str, Callable] = {}
        self.kernels: dict[str, dict[str, Callable]] = {b: {} for b in BACKENDS}
        self.kernel_models: dict[str, dict[str, frozenset[str]]] = {b: {} for b in BACKENDS}
        self.modules: dict[tuple[str, str], str] = {}
        """(op, layer) -> the dotted module that registered its reference or kernel."""
        self.obligations: dict[str, Obligation] = {}
        self.errata: dict[str, Erratum] = {}
        self.layouts: dict[str, Any] = {}

    def declare(self, op: Op) -> Op:
        if not _OP_NAME.match(op.name):
            raise ValueError(f"op name {op.name!r} is not <area>.<op>")
        if op.name in self.ops:
            raise ValueError(f"op {op.name!r} declared twice")
        unknown = set(op.not_applicable) - set(BACKENDS)
        if unknown:
            raise ValueError(f"{op.name}: unknown backend {sorted(unknown)}")
        self.ops[op.name] = op
        return op

    def add_reference(self, name: str, fn: Callable) -> None:
        if name in self.references:
            raise ValueError(f"reference for {name!r} registered twice")
        self.references[name] = fn

    def add_kernel(self, name: str, backend: str, fn: Callable,
                   models: tuple[str, ...] = ()) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}")
        if name in self.kernels[backend]:
            raise ValueError(f"{backend} kernel for {name!r} registered twice")
        self.kernels[backend][name] = fn
        self.kernel_models[backend][name] = frozenset(models)

    def add_obligation(self, po: Obligation) -> None:
        if not _PO_ID.match(po.id) or po.kind not in PO_KINDS:
            raise ValueError(f"bad proof obligation {po.id!r} of kind {po.kind!r}")
        if po.id in self.obligations:
            raise ValueError(f"proof obligation {po.id} registered twice")
        if not po.mutants:
            raise ValueError(f"{po.id} names no mutant")
        self.obligations[po.id] = po

    def add_erratum(self, erratum: Erratum) -> None:
        if erratum.id in self.errata:
            raise ValueError(f"erratum {erratum.id} registered twice")
        self.errata[erratum.id] = erratum

    def add_layout(self, layout: Any) -> None:
        """Register a declared struct (spec/core/layout.py) under its C++ name and aliases."""
        for key in (layout.name, *layout.aliases):
            if key in self.layouts:
                raise ValueError(f"layout {key!r} declared twice")
            self.layouts[key] = layout

    def layout(self, name: str) -> Any:
        """A struct by C++ name or alias; a trailing parenthetical note is ignored."""
        key = name.split(" (", 1)[0].strip()
        return self.layouts.get(name) or self.layouts.get(key)

    def op(self, name: str) -> Op:
        return self.ops[name]

    def obligations_for(self, name: str) -> list[str]:
        """Ids of the proof obligations that cover op `name` (declared on either side)."""
        ids = set(self.ops[name].obligations)
        ids |= {po.id for po in self.obligations.values() if name in po.covers}
        return sorted(ids, key=po_sort_key)

    def errata_for(self, name: str) -> list[str]:
        ids = set(self.ops[name].errata) | {e.id for e in self.errata.values() if name in e.ops}
        return sorted(ids, key=po_sort_key)


def po_sort_key(ident: str) -> tuple:
    """Order ids like PO8.10 / E8.2 numerically by chapter, then number."""
    nums = re.findall(r"\d+", ident)
    return (ident.rstrip("0123456789."), *map(int, nums))


REGISTRY = Registry()


def _caller_module() -> str:
    """The dotted name of the module that called the registering function."""
    return sys._getframe(2).f_globals["__name__"]


def declare(name: str, chapter: int, summary: str, args: Record, result: Record, **kw) -> Op:
    """Declare an op in the global registry, recording the spec module that declares it."""
    module = _caller_module()
    return REGISTRY.declare(Op(name, chapter, summary, args, result, module=module, **kw))


def reference(name: str) -> Callable[[Callable], Callable]:
    """Register the reference (oracle) implementation of op `name`."""

    module = _caller_module()

    def deco(fn: Callable) -> Callable:
        REGISTRY.add_reference(name, fn)
        REGISTRY.modules[name, "reference"] = module
        return fn

    return deco


def kernel(name: str, backend: str, models: tuple[str, ...] = ()
           ) -> Callable[[Callable], Callable]:
    """Register a batch kernel of op `name` for `backend`: columns in, columns out. A kernel
    that `models` errata also receives `errata=` (the active ones) and serves those profiles."""

    module = _caller_module()

    def deco(fn: Callable) -> Callable:
        REGISTRY.add_kernel(name, backend, fn, models)
        REGISTRY.modules[name, backend] = module
        return fn

    return deco
