"""Oracle tools for someone debugging an implementation: where two byte records differ, and
what the spec says an op should have answered."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine import Implementation
from ..spec.core.errors import SpecError
from ..spec.core.layout import Struct, leaf_name, leaves
from ..spec.core.registry import REGISTRY, Op
from .diff import Difference, compare
from .trace_fields import show_leaf


@dataclass(frozen=True)
class FieldDiff:
    """One member that differs between two records."""

    record: int
    field: str
    offset: int
    a: str
    b: str

    def describe(self, struct: str) -> str:
        return (f"record {self.record} {struct}{self.field} @ byte {self.offset}: "
                f"{self.a} != {self.b}")


def diff_records(s: Struct, a: bytes, b: bytes) -> tuple[list[FieldDiff], list[str]]:
    """Member-level differences of two arrays of records, and notes on their lengths."""
    notes = []
    for name, data in (("A", a), ("B", b)):
        if len(data) % s.size:
            notes.append(f"{name} is {len(data)} bytes: not a whole number of {s.size}-byte "
                         f"{s.name} records ({len(data) % s.size} trailing bytes ignored)")
    na, nb = len(a) // s.size, len(b) // s.size
    if na != nb:
        notes.append(f"A has {na} records, B has {nb}; comparing the first {min(na, nb)}")
    table = leaves(s)
    covered = {off for leaf in table for off in range(leaf.offset, leaf.offset + leaf.size)}
    out = []
    for r in range(min(na, nb)):
        ra, rb = a[r * s.size:(r + 1) * s.size], b[r * s.size:(r + 1) * s.size]
        if ra == rb:
            continue
        for leaf in table:
            span = slice(leaf.offset, leaf.offset + leaf.size)
            xa, xb = ra[span], rb[span]
            if xa != xb:
                out.append(FieldDiff(r, leaf_name(leaf), r * s.size + leaf.offset,
                                     show_leaf(leaf, xa), show_leaf(leaf, xb)))
        for off in range(s.size):
            if off not in covered and ra[off] != rb[off]:
                out.append(FieldDiff(r, " implicit padding", r * s.size + off,
                                     f"{ra[off]:02x}", f"{rb[off]:02x}"))
    return out, notes


@dataclass
class Explanation:
    """What the spec says about one request and a received answer."""

    op: Op
    expected: dict
    difference: Difference | None


def explain(op_name: str, args: dict, got: dict, errata: frozenset[str]) -> Explanation:
    """Expected answer of `op_name` on `args`, and the first difference of `got` from it.
    `got` is a response ({"ok", "result"|"error"}) or a bare result object."""
    op = REGISTRY.ops[op_name]
    try:
        expected = {"ok": True, "result": Implementation("reference", errata).call(op_name, args)}
        want, error = expected["result"], None
    except SpecError as e:
        expected = {"ok": False, "error": {"code": e.code, "message": e.message}}
        want, error = None, e.code
    response = got if "ok" in got else {"ok": True, "result": got}
    return Explanation(op, expected, compare(op, args, want, error, response))
