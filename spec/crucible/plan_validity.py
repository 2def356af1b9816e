"""Chapter 10: what makes a memory plan valid, as plain predicates.

A plan is valid when the pool is a whole number of 256-byte units, every internal slot sits
at a 256-aligned offset with its rounded size inside the pool, two internal slots alive at a
common op never share a byte, and every external slot (owned by the caller) has offset 0.
"""

from __future__ import annotations

from itertools import combinations

from .memory_plan import ALIGNMENT, Plan, PlanSlot, align256


def lifetimes_intersect(a: PlanSlot, b: PlanSlot) -> bool:
    """Both slots are alive at some op: [birth_op, death_op] are closed intervals."""
    return a.birth_op <= b.death_op and b.birth_op <= a.death_op


def byte_ranges_intersect(offset_a: int, size_a: int, offset_b: int, size_b: int) -> bool:
    """[offset, offset + size) share a byte; an empty range shares none."""
    return size_a > 0 and size_b > 0 and offset_a < offset_b + size_b and \
        offset_b < offset_a + size_a


def plan_violations(slots: list[PlanSlot], plan: Plan) -> list[str]:
    """Every way `plan` breaks the plan invariants for `slots`; empty when it is valid."""
    if len(plan.offsets) != len(slots):
        return [f"{len(plan.offsets)} offsets for {len(slots)} slots"]
    out = []
    if plan.pool_bytes % ALIGNMENT:
        out.append(f"pool_bytes {plan.pool_bytes} is not a multiple of {ALIGNMENT}")
    internal = [i for i, s in enumerate(slots) if not s.is_external]
    for i, s in enumerate(slots):
        if s.is_external and plan.offsets[i] != 0:
            out.append(f"external slot {i} has offset {plan.offsets[i]}, not 0")
    for i in internal:
        offset, size = plan.offsets[i], align256(slots[i].nbytes)
        if offset % ALIGNMENT:
            out.append(f"slot {i}: offset {offset} is not a multiple of {ALIGNMENT}")
        if offset + size > plan.pool_bytes:
            out.append(f"slot {i}: [{offset}, {offset + size}) ends past the pool "
                       f"({plan.pool_bytes} bytes)")
    for i, j in combinations(internal, 2):
        if lifetimes_intersect(slots[i], slots[j]) and byte_ranges_intersect(
                plan.offsets[i], align256(slots[i].nbytes),
                plan.offsets[j], align256(slots[j].nbytes)):
            out.append(f"slots {i} and {j} are alive together and share bytes")
    return out
