"""Chapter 10 obligations: the memory planner's plans are valid on a fixed set of instances."""

from __future__ import annotations

import random
from dataclasses import replace

import z3

from ..spec.memory_plan import (
    ALIGNMENT,
    FirstFit,
    Plan,
    PlanSlot,
    _first_fit,
    align256,
    compute_memory_plan,
)
from ..spec.memory_plan import sweep as spec_sweep
from ..spec.registry import Mutant
from .obligation import Query, z3_obligation

RNG_SEED = 0x10AD
SIZES = (0, 1, 255, 256, 257, 512, 700, 768, 1024, 1500, 2048, 4096)
"""Sizes that round to a few 256-byte units, so exact fits, waste and splits all happen."""
SPANS = (0, 0, 1, 1, 2, 3, 5, 9)
"""Lifetimes (death - birth): mostly short, so slots die and are reused often."""


def _random_slots(rng: random.Random, n: int, ops: int, external: float) -> list[PlanSlot]:
    out = []
    for _ in range(n):
        birth = rng.randrange(ops)
        out.append(PlanSlot(rng.choice(SIZES), birth, birth + rng.choice(SPANS),
                            rng.random() < external))
    return out


def _shapes() -> list[list[PlanSlot]]:
    """Hand-made instances, one per planner path."""
    s = PlanSlot
    return [
        # direct reuse with waste: 512 B takes the dying 2048 B; 1024 B splits the waste
        [s(2048, 0, 1), s(512, 2, 3), s(1024, 2, 4), s(256, 0, 4)],
        # first-fit splits: 256 B reuses a dying 4096 B slot, later slots split the rest
        [s(4096, 0, 0), s(256, 1, 1), s(1024, 2, 6), s(700, 3, 6), s(300, 4, 6), s(5, 5, 6)],
        # swap-remove: three exact holes taken whole, in an order that moves the last entry
        [s(256, 0, 0), s(512, 0, 0), s(768, 0, 0), s(1, 0, 5), s(256, 2, 4), s(768, 2, 4),
         s(512, 3, 4), s(600, 5, 5)],
        # zero-size slots between and inside live ones, and a zero-size hole reused
        [s(0, 0, 3), s(256, 0, 1), s(0, 1, 1), s(0, 2, 2), s(256, 2, 3), s(0, 2, 3)],
        # externals (offset 0 whatever their size) around internal slots at offset 0
        [s(4096, 0, 9, True), s(256, 0, 1), s(256, 2, 3), s(12, 0, 0, True), s(257, 1, 3)],
    ]


def instances() -> list[list[PlanSlot]]:
    """The fixed instances: the shapes, 24 seeded random slot sets of up to 50 slots, and one
    of 200 slots over 64 ops."""
    rng = random.Random(RNG_SEED)
    out = _shapes()
    for k in range(24):
        out.append(_random_slots(rng, rng.randint(2, 50), rng.choice((4, 10, 30)),
                                 0.15 if k % 3 else 0.0))
    out.append(_random_slots(rng, 200, 64, 0.1))
    return out


def _fields(row: z3.BitVecRef, widths: tuple[int, ...]) -> list[z3.BitVecRef]:
    """The fields of a row, low bits first."""
    out, low = [], 0
    for w in widths:
        out.append(z3.Extract(low + w - 1, low, row))
        low += w
    return out


def violation(slots: list[PlanSlot], plan: Plan) -> z3.BoolRef:
    """Some internal slots i < j alive at a common op share a byte, or some internal slot is
    misaligned or past the pool, or an external slot is off 0, or the pool is unaligned.

    Slot k is one row of fields (k, internal, offset, size, birth, death), and the two slots
    are any two rows of the instance; the value fields are w bits, room for every sum of two
    without wrapping."""
    pool = plan.pool_bytes
    sizes = [align256(s.nbytes) for s in slots]
    w = max(pool, *plan.offsets, *sizes, *(s.death_op for s in slots)).bit_length() + 2
    widths = (len(slots).bit_length(), 1, w, w, w, w)
    values = [(k, int(not s.is_external), plan.offsets[k], sizes[k], s.birth_op, s.death_op)
              for k, s in enumerate(slots)]
    rows = [sum(v << sum(widths[:f]) for f, v in enumerate(row)) for row in values]
    row_i, row_j = z3.BitVecs("row_i row_j", sum(widths))
    i, int_i, off_i, size_i, birth_i, death_i = _fields(row_i, widths)
    j, int_j, off_j, size_j, birth_j, death_j = _fields(row_j, widths)
    return z3.And(
        z3.Or([row_i == r for r in rows]), z3.Or([row_j == r for r in rows]),
        z3.Or(z3.And(z3.ULT(i, j), int_i == 1, int_j == 1, z3.ULE(birth_i, death_j),
                     z3.ULE(birth_j, death_i), size_i != 0, size_j != 0,
                     z3.ULT(off_i, off_j + size_j), z3.ULT(off_j, off_i + size_i)),
              z3.And(int_i == 1, z3.Or(off_i & (ALIGNMENT - 1) != 0,
                                       z3.UGT(off_i + size_i, pool))),
              z3.And(int_i == 0, off_i != 0),
              z3.BoolVal(pool % ALIGNMENT != 0)))


def sweep(slots: list[PlanSlot], free_delay: int = 1, first_fit: FirstFit = _first_fit) -> Plan:
    """compute_memory_plan's sweep (device fields aside) with its knobs exposed for the
    mutants."""
    plan = Plan([0] * len(slots), num_external=sum(s.is_external for s in slots))
    spec_sweep(slots, plan, [i for i, s in enumerate(slots) if not s.is_external], free_delay,
               first_fit)
    return plan


def _first_fit_no_shrink(free: list[list[int]], size: int, pool_end: int) -> tuple[int, int]:
    for entry in free:
        if entry[1] >= size:
            return entry[0], pool_end
    return pool_end, pool_end + size


def frees_at_death(slots: list[PlanSlot]) -> Plan:
    """Mutant: a slot's space is free again at its death op, while it is still alive."""
    return sweep(slots, free_delay=0)


def first_fit_keeps_entry(slots: list[PlanSlot]) -> Plan:
    """Mutant: first fit hands out a free entry's start but never shrinks or removes it."""
    return sweep(slots, first_fit=_first_fit_no_shrink)


def rounds_down(slots: list[PlanSlot]) -> Plan:
    """Mutant: sizes are rounded down to 256 bytes, so a 257-byte slot gets 256."""
    return compute_memory_plan([replace(s, nbytes=s.nbytes // ALIGNMENT * ALIGNMENT)
                                for s in slots])


@z3_obligation(
    "PO10.1",
    "The memory planner's plans are valid: on 30 fixed instances (hand-made shapes for "
    "direct reuse with waste, first-fit splits, swap-remove, zero-size slots and externals; "
    "24 seeded random sets of up to 50 slots; one of 200 slots) z3 finds no two internal "
    "slots alive at a common op whose 256-rounded byte ranges overlap, no internal slot "
    "misaligned or past the pool, no external slot off offset 0 and no pool size off a "
    "multiple of 256.",
    covers=("plan.compute", "trace.build"),
    subject=compute_memory_plan,
    mutants=(Mutant("frees at death", "a slot is freed at its death op, not the op after",
                    frees_at_death),
             Mutant("first fit keeps the entry", "first fit does not shrink the free entry "
                    "it takes", first_fit_keeps_entry),
             Mutant("rounds down", "sizes are rounded down to 256 bytes, not up",
                    rounds_down)),
)
def plans_are_valid(planner):
    return [Query(f"instance {k} ({len(slots)} slots)", violation(slots, planner(slots)))
            for k, slots in enumerate(instances())]
