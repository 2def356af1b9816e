"""Chapter 10 obligations from the Lean formalization's MemoryPlan and Basic modules: the two
overlap predicates a plan's validity is made of (plan_validity), against brute force."""

from __future__ import annotations

from itertools import product

from ...spec.core.registry import Mutant
from ...spec.crucible import plan_validity as pv
from ...spec.crucible.memory_plan import PlanSlot
from ..core.obligation import Property, property_obligation

OPS = range(5)
BYTES = range(6)


def lifetime_cases() -> list[tuple[int, int, int, int]]:
    return [(b1, d1, b2, d2) for b1, d1, b2, d2 in product(OPS, repeat=4)
            if b1 <= d1 and b2 <= d2]


def _check_lifetimes(case: tuple[int, int, int, int]) -> None:
    b1, d1, b2, d2 = case
    a, b = PlanSlot(0, b1, d1), PlanSlot(0, b2, d2)
    both = any(b1 <= t <= d1 and b2 <= t <= d2 for t in OPS)
    assert pv.lifetimes_intersect(a, b) == both, f"[{b1}, {d1}] and [{b2}, {d2}]"
    assert pv.lifetimes_intersect(b, a) == both, "overlap is not symmetric"


def _check_bytes(case: tuple[int, int, int, int]) -> None:
    o1, s1, o2, s2 = case
    shared = any(o1 <= x < o1 + s1 and o2 <= x < o2 + s2 for x in range(12))
    assert pv.byte_ranges_intersect(o1, s1, o2, s2) == shared, f"[{o1}, +{s1}) [{o2}, +{s2})"
    if o1 + s1 <= o2:
        assert not pv.byte_ranges_intersect(o1, s1, o2, s2), "ranges in order intersect"


@property_obligation(
    "PO10.40",
    "Two slots' closed lifetimes [birth, death] intersect exactly when some op lies in both, "
    "in either order; two byte ranges [offset, offset + size) intersect exactly when they "
    "share a byte, so ranges one after the other (a + s1 <= b) never do (every lifetime over "
    "5 ops and every range within 12 bytes).",
    covers=("plan.compute",),
    subject=pv.plan_violations,
    mutants=(
        Mutant.edit("half-open death", "a slot dying at an op is not alive at it",
                    pv.lifetimes_intersect, "a.birth_op <= b.death_op",
                    "a.birth_op < b.death_op"),
        Mutant.edit("touching ranges", "ranges that only touch count as sharing a byte",
                    pv.byte_ranges_intersect, "offset_a < offset_b + size_b",
                    "offset_a <= offset_b + size_b"),
    ),
)
def overlap_predicates(subject):
    return [Property("lifetimes", _check_lifetimes, cases=lifetime_cases),
            Property("byte ranges", _check_bytes,
                     cases=lambda: list(product(BYTES, repeat=4)))]
