"""Implementations behind one interface: the reference oracle and the fast backends.

`Implementation.call` takes a wire request's op name and JSON args and returns the JSON result,
raising `SpecError` with the §4 error code. A fast backend answers an op from the reference,
with a recorded reason, when its kernel is declared not applicable or when the profile turns on
an erratum the kernel does not model; an op it should have a kernel for is `unsupported`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .spec.core.errors import UNKNOWN_OP, UNSUPPORTED, SpecError
from .spec.core.json_schema import all_valid, check_args
from .spec.core.registry import BACKENDS, REGISTRY, Op
from .spec.core.wire_columns import decode_columns, encode_rows, rows_text

IMPLS = ("reference", *BACKENDS)


class JsonRows(list):
    """The results of a batch a kernel answered whole, each already its compact JSON text
    (what the encoder with separators "," and ":" writes of the wire result)."""


@dataclass(frozen=True)
class Route:
    """How an implementation answers one op: 'reference', 'kernel', or 'missing', and why."""

    how: str
    reason: str = ""


class Implementation:
    """One implementation (reference, numba or cupy) under one profile."""

    def __init__(self, name: str, errata: frozenset[str] = frozenset()):
        if name not in IMPLS:
            raise ValueError(f"unknown implementation {name!r}; choose from {', '.join(IMPLS)}")
        self.name = name
        self.errata = errata
        self._routes: dict[str, Route] = {}

    def route(self, op: Op) -> Route:
        """Which code answers `op`, with the reason for any fallback."""
        if op.name not in self._routes:
            self._routes[op.name] = self._route(op)
        return self._routes[op.name]

    def _route(self, op: Op) -> Route:
        if self.name == "reference":
            return Route("reference") if op.name in REGISTRY.references else Route(
                "missing", "no reference implementation")
        if self.name in op.not_applicable:
            return Route("reference", f"{self.name} not applicable: {op.not_applicable[self.name]}")
        modelled = REGISTRY.kernel_models[self.name].get(op.name, frozenset())
        active = sorted(e for e in set(REGISTRY.errata_for(op.name)) & self.errata
                        if REGISTRY.errata[e].flag == "result" and e not in modelled)
        if active:
            return Route("reference", f"profile turns on {', '.join(active)}, which the "
                                      f"{self.name} kernel does not model")
        if op.name in REGISTRY.kernels[self.name]:
            return Route("kernel")
        return Route("missing", f"no {self.name} kernel")

    def fallbacks(self) -> dict[str, str]:
        """Op -> reason, for every op this implementation answers from the reference."""
        out = {}
        if self.name == "reference":
            return out
        for op in REGISTRY.ops.values():
            r = self.route(op)
            if r.how == "reference":
                out[op.name] = r.reason
        return out

    def supported(self) -> list[str]:
        return sorted(n for n, op in REGISTRY.ops.items() if self.route(op).how != "missing")

    def call(self, name: str, json_args: Any) -> Any:
        """Answer one request: check the args against the op's JSON Schema, decode and check
        them, run, encode the result."""
        op = REGISTRY.ops.get(name)
        if op is None:
            raise SpecError(UNKNOWN_OP, f"no op named {name!r}")
        check_args(op, json_args)
        args = decode_args(op, json_args)
        return op.result.encode(self.run_batch(op, [args])[0])

    def call_many(self, name: str, json_args: list, text: bool = False) -> list:
        """Answers to consecutive requests for one op: each a wire result or the `SpecError`
        (or other exception) that `call` raises on it alone. Where a kernel answers the op,
        the requests its schema accepts (all of them, in the common case, by one check of the
        whole list) run as one batch; if that batch raises, each is answered alone, so every
        error is exactly `call`'s. With `text`, a batch the kernel answers whole may come back
        as `JsonRows` (spec.wire_columns.rows_text)."""
        op = REGISTRY.ops.get(name)
        if len(json_args) == 1 or op is None or self.route(op).how != "kernel":
            return [_outcome(self.call, name, a) for a in json_args]
        if all_valid(op, json_args):
            return self._fast_or_alone(op, json_args, text)
        out: list = [_outcome(check_args, op, a) for a in json_args]
        valid = [i for i, o in enumerate(out) if o is None]
        for i, r in zip(valid, self._fast_or_alone(op, [json_args[i] for i in valid]),
                        strict=True):
            out[i] = r
        return out

    def _fast_or_alone(self, op: Op, json_args: list, text: bool = False) -> list:
        """Wire results of schema-checked args by the kernel's fast path (as `JsonRows` where
        `text` and `rows_text` can write them), or, if that raises, each answered alone."""
        try:
            return wire_fast_path(self, op, json_args, text)
        except Exception:  # answered one by one, each with call's own error
            return [_outcome(self.call, op.name, a) for a in json_args]

    def run_batch(self, op: Op, items: list[dict]) -> list[dict]:
        """Results (Python values) for a batch of decoded, checked args."""
        route = self.route(op)
        if route.how == "missing":
            raise SpecError(UNSUPPORTED, f"{self.name} does not implement {op.name}: "
                                         f"{route.reason}")
        if route.how == "reference":
            return [run_reference(op, args, self.errata) for args in items]
        return op.result.rows(self.run_columns(op, op.args.columns(items)), len(items))

    def run_columns(self, op: Op, columns: dict) -> dict:
        """The kernel's result columns for checked argument columns (errata where it models
        them)."""
        if REGISTRY.kernel_models[self.name][op.name]:
            columns = columns | {"errata": self.errata}
        return REGISTRY.kernels[self.name][op.name](**columns)

    def run_batch_wire(self, op: Op, json_items: list) -> list:
        """Wire results for a batch of JSON args (item i decoded at path `args[i]`; the first
        bad item raises its error). Where this backend has a kernel for the op the arguments
        go straight into columns and the results straight back to JSON (spec.wire_columns);
        otherwise each item is decoded, checked and run as `run_batch` does."""
        if self.route(op).how == "kernel":
            return wire_fast_path(self, op, json_items)
        return [op.result.encode(r) for r in self.run_batch(op, decode_batch(op, json_items))]


def _outcome(fn: Any, *args: Any) -> Any:
    """fn(*args), or the exception it raised."""
    try:
        return fn(*args)
    except Exception as e:  # the caller answers it as call would have
        return e


def wire_fast_path(impl: Implementation, op: Op, json_items: list, text: bool = False) -> list:
    """Wire results of a batch the kernel answers, decoded and encoded a column at a time
    (with `text`, as `JsonRows` where rows_text can write them); an op that declares a
    cross-field check still checks each item's decoded values."""
    try:
        columns = decode_columns(op.args, json_items, "args")
    except SpecError:
        if op.check:
            decode_batch(op, json_items)  # a check may fail on an earlier item: its error first
        raise
    if op.check:
        for args in op.args.rows(columns, len(json_items)):
            op.check(args)
    results = impl.run_columns(op, columns)
    texts = rows_text(op.result, results, len(json_items)) if text else None
    if texts is not None:
        return JsonRows(texts)
    return encode_rows(op.result, results, len(json_items))


def decode_batch(op: Op, json_items: list) -> list[dict]:
    """Each item decoded (at `args[i]`) and checked in turn: the first bad item raises."""
    out = []
    for i, a in enumerate(json_items):
        out.append(op.args.decode(a, f"args[{i}]"))
        if op.check:
            op.check(out[-1])
    return out


def decode_args(op: Op, json_args: Any) -> dict:
    """The op's args as Python values (schema errors: bad_request; domain: invalid_input)."""
    args = op.args.decode(json_args, "args")
    if op.check:
        op.check(args)
    return args


def errata_seen(op: Op, errata: frozenset[str]) -> frozenset[str] | None:
    """The errata `run_reference` hands the op under a profile's `errata`: all of them when
    the op declares errata, else none (None): two profiles that give equal values get equal
    answers."""
    return errata if op.errata else None


def run_reference(op: Op, args: dict, errata: frozenset[str] = frozenset()) -> dict:
    """Call the reference implementation; ops that declare errata also receive the profile's."""
    fn = REGISTRY.references[op.name]
    seen = errata_seen(op, errata)
    if seen is not None:
        return fn(**args, errata=seen)
    return fn(**args)
