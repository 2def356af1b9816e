"""Chapter 10 obligations: the memory planner's plans are valid on a fixed set of instances,
under the spec's free list and the seed's (E10.1), and both make the plans worked out for them."""

from __future__ import annotations

import random

import z3

from ...spec.core.bits import align_up
from ...spec.core.registry import Mutant
from ...spec.crucible.memory_plan import (
    ALIGNMENT,
    E10_1,
    Plan,
    PlanSlot,
    _coalesce,
    _direct_reuse,
    _first_fit,
    _lowest_fit,
    align256,
    compute_memory_plan,
    sweep,
)
from ..core.obligation import Property, Query, property_obligation, z3_obligation

SEED = frozenset({E10_1})
"""The seed's planner: the profile crucible@8d2680a2 as far as the planner reads it."""
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
    sizes = [align_up(s.nbytes, ALIGNMENT) for s in slots]
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


# --- bugs planted in the spec's planner ------------------------------------------------------

FREES_AT_DEATH = Mutant.edit("frees at death", "a slot is freed at its death op, not the op "
                             "after, while it is still alive", sweep, "slots[i].death_op + 1",
                             "slots[i].death_op")
SPLIT_KEEPS_START = Mutant.edit("split keeps the start", "first fit takes the head of a larger "
                                "free entry but only shrinks it, leaving its start in place",
                                _first_fit, "                entry[0] += size\n", "")
EXACT_FIT_KEPT = Mutant.edit("exact fit kept", "first fit does not remove a free entry it "
                             "takes whole", _first_fit,
                             "free[k] = free[-1]\n                free.pop()", "pass")
DYING_TAKEN_TWICE = Mutant.edit("dying slot taken twice", "direct reuse can give one dying "
                                "slot to two newborns", _direct_reuse, "d not in used and ", "")
WASTE_AT_START = Mutant.edit("waste at the start", "the waste of a direct reuse is freed from "
                             "the slot's start, not past the newborn", _direct_reuse,
                             "_release(free, plan.offsets[d] + size, waste, seed)",
                             "_release(free, plan.offsets[d], waste, seed)")
LOWEST_SPLIT_KEEPS_START = Mutant.edit("lowest fit keeps the start", "the spec's first fit "
                                       "takes the head of a larger block but only shrinks it",
                                       _lowest_fit, "                entry[0] += size\n", "")
LOWEST_EXACT_KEPT = Mutant.edit("lowest fit keeps an exact block", "the spec's first fit does "
                                "not remove a block it takes whole", _lowest_fit,
                                "free.pop(k)", "free[k]")
GROWN_PAST_THE_POOL = Mutant.edit("grown block past the pool", "the block that ends the pool "
                                  "is grown without growing the pool", _lowest_fit,
                                  "return offset, offset + size", "return offset, pool_end")
MERGES_ACROSS_A_GAP = Mutant.edit("merge across a gap", "a freed block is merged with the next "
                                  "free block even when live bytes lie between", _coalesce,
                                  "free[k][0] == end", "free[k][0] >= end")
ROUNDS_DOWN = Mutant.edit("rounds down", "sizes are rounded down to 256 bytes, not up",
                          align256, "(n + ALIGNMENT - 1) & ~(ALIGNMENT - 1)",
                          "n & ~(ALIGNMENT - 1)")
NO_ALIGNMENT = Mutant.edit("no 256-byte alignment", "the planner uses the byte sizes as they "
                           "are, unrounded", align256, "(n + ALIGNMENT - 1) & ~(ALIGNMENT - 1)",
                           "n")


@z3_obligation(
    "PO10.1",
    "The memory planner's plans are valid, with the spec's free list and with the seed's "
    "(E10.1): on 30 fixed instances (hand-made shapes for direct reuse with waste, first-fit "
    "splits, swap-remove, zero-size slots and externals; 24 seeded random sets of up to 50 "
    "slots; one of 200 slots) z3 finds no two internal slots alive at a common op whose "
    "256-rounded byte ranges overlap, no internal slot misaligned or past the pool, no "
    "external slot off offset 0 and no pool size off a multiple of 256.",
    covers=("plan.compute", "trace.build"),
    subject=compute_memory_plan,
    mutants=(FREES_AT_DEATH, SPLIT_KEEPS_START, EXACT_FIT_KEPT, DYING_TAKEN_TWICE,
             WASTE_AT_START, ROUNDS_DOWN, NO_ALIGNMENT, LOWEST_SPLIT_KEEPS_START,
             LOWEST_EXACT_KEPT, GROWN_PAST_THE_POOL, MERGES_ACROSS_A_GAP),
)
def plans_are_valid(planner):
    return [Query(f"instance {k} ({len(slots)} slots{', E10.1' if errata else ''})",
                  violation(slots, planner(slots, errata)))
            for errata in (frozenset(), SEED) for k, slots in enumerate(instances())]


@z3_obligation(
    "PO10.60",
    "The planner's size rounding align256(n) is align_up(n, 256) (PO1.1: the least multiple "
    "of 256 that is >= n) for every 64-bit n.",
    covers=("plan.compute",),
    subject=align256,
    mutants=(ROUNDS_DOWN, NO_ALIGNMENT,
             Mutant.edit("rounds to 255", "the mask is ~ALIGNMENT, not ~(ALIGNMENT - 1)",
                         align256, "& ~(ALIGNMENT - 1)", "& ~ALIGNMENT")),
)
def align256_is_align_up(f):
    n = z3.BitVec("n", 64)
    return [Query("align256(n) == align_up(n, 256)", f(n) != align_up(n, ALIGNMENT))]


S = PlanSlot
KNOWN_PLANS = (
    ("the seed's test", [S(1024, 0, 5), S(2048, 1, 3), S(1024, 4, 7), S(512, 0, 7, True)],
     [0, 1024, 1024, 0], 3072),
    ("best-fit direct reuse at op 3",
     [S(1024, 0, 2), S(4096, 1, 2), S(1000, 3, 6), S(3000, 3, 5), S(256, 0, 6), S(5000, 6, 7)],
     [0, 1280, 0, 1280, 1024, 5376], 10496),
    ("zero-size and tiny slots",
     [S(0, 0, 1), S(1, 0, 1), S(0, 1, 2), S(256, 1, 3), S(257, 2, 3)],
     [0, 0, 256, 256, 512], 1024),
    ("same birth op, many slots, freed later into the free list",
     [S(512, 0, 0), S(768, 0, 1), S(1024, 0, 2), S(2048, 2, 4), S(300, 3, 5), S(200, 3, 5),
      S(1280, 4, 6), S(100, 7, 8)],
     [0, 512, 1280, 2304, 1280, 0, 4352, 4352], 5632),
)
"""(name, slots, offsets, pool bytes): plans the real planner made (golden values of crucible
8d2680a2)."""

DOCUMENTED_PLANS = (
    ("least waste, not the first dying slot that fits",
     [S(1024, 0, 0), S(256, 0, 0), S(256, 1, 1)], [0, 1024, 1024], 1280),
    ("the earliest dying slot on a tie", [S(256, 0, 0), S(256, 0, 0), S(256, 1, 1)],
     [0, 256, 0], 512),
    ("a reuse's waste goes to the free list",
     [S(1024, 0, 0), S(256, 1, 3), S(256, 2, 3)], [0, 0, 256], 1024),
    ("swap-remove moves the last free entry forward",
     [S(512, 0, 0), S(768, 0, 0), S(1024, 0, 0), S(512, 2, 3), S(512, 2, 3)],
     [0, 512, 1280, 0, 1280], 2304),
)
"""Plans worked out by hand from the documented sweep: best-fit direct reuse (least waste,
earliest on a tie, the waste pushed past the newborn), then first fit over the free list in
index order with swap-remove."""


def _plans_as_the_code_does(planner, errata: frozenset[str] = SEED):
    def check(case) -> None:
        _, slots, offsets, pool = case
        plan = planner(slots, errata)
        assert (plan.offsets, plan.pool_bytes) == (offsets, pool), (plan.offsets,
                                                                    plan.pool_bytes)
        assert plan.num_external == sum(s.is_external for s in slots)

    return check


@property_obligation(
    "PO10.61",
    "The seed's planner (E10.1) makes the real code's plans: on its 4 known instances (the seed's "
    "test, best-fit direct reuse, zero-size and tiny slots, first fit over a free list) and on "
    "4 worked by hand from the documented sweep (least waste, earliest on a tie, waste freed, "
    "swap-remove) every offset, the pool size and the external count are the code's.",
    covers=("plan.compute",),
    subject=compute_memory_plan,
    mutants=(FREES_AT_DEATH, ROUNDS_DOWN,
             Mutant.edit("first fit of the dying", "a newborn reuses the first dying slot "
                         "that fits, not the one wasting least", _direct_reuse,
                         "(best is None or room - size < best[1])", "best is None"),
             Mutant.edit("order-keeping removal", "an entry taken whole is removed in place, "
                         "not replaced by the last", _first_fit,
                         "free[k] = free[-1]\n                free.pop()", "free.pop(k)"),
             Mutant.edit("latest on a tie", "direct reuse takes the last of equally wasteful "
                         "dying slots", _direct_reuse, "room - size < best[1]",
                         "room - size <= best[1]"),
             Mutant.edit("waste dropped", "the waste of a direct reuse is not freed",
                         _direct_reuse, "            if waste:\n                _release(free, "
                         "plan.offsets[d] + size, waste, seed)\n", "")),
)
def plans_known(planner):
    return [Property("known plans", _plans_as_the_code_does(planner),
                     cases=lambda: KNOWN_PLANS),
            Property("plans worked by hand", _plans_as_the_code_does(planner),
                     cases=lambda: DOCUMENTED_PLANS)]


SPEC_PLANS = (
    ("two adjacent holes merge for a larger slot (E10.1's witness)",
     [S(256, 0, 0), S(256, 0, 0), S(512, 2, 2)], [0, 256, 0], 512),
    ("a hole merges with the free block after it",
     [S(256, 0, 1), S(256, 0, 0), S(256, 0, 3), S(512, 3, 3)], [0, 256, 512, 0], 768),
    ("a hole merges with the free blocks at both its ends",
     [S(256, 0, 0), S(256, 0, 1), S(256, 0, 0), S(256, 0, 3), S(768, 3, 3)],
     [0, 256, 512, 768, 0], 1024),
    ("the lowest block that fits, not the first freed",
     [S(256, 0, 1), S(256, 0, 5), S(256, 0, 0), S(256, 3, 3)], [0, 256, 512, 0], 768),
    ("holes apart never merge across a live slot",
     [S(256, 0, 1), S(256, 0, 5), S(256, 0, 0), S(512, 3, 3)], [0, 256, 512, 512], 1024),
    ("the block that ends the pool grows past it",
     [S(256, 0, 3), S(512, 0, 0), S(1024, 2, 3)], [0, 256, 256], 1280),
    ("a zero-byte slot takes the lowest free block, leaving it whole",
     [S(0, 0, 0), S(256, 0, 0), S(256, 0, 2), S(0, 2, 2)], [0, 0, 256, 0], 512),
)
"""(name, slots, offsets, pool bytes) worked out by hand from the spec's free list: every
freed block kept in address order and merged with its free neighbours, first fit by lowest
address, else grow the block that ends the pool, else the end of the pool."""


@property_obligation(
    "PO10.62",
    "The spec's planner makes the plans worked out by hand for its free list: two adjacent "
    "holes serve a slot of their joint size (E10.1's witness), a freed block merges with the "
    "free block after it and with those at both its ends, first fit takes the lowest block "
    "that fits, holes apart never merge across a live slot, the free block ending the pool "
    "grows past it, and a zero-byte slot takes the lowest free block.",
    covers=("plan.compute",),
    subject=compute_memory_plan,
    mutants=(Mutant.edit("no merge after", "a freed block is not merged with the free block "
                         "after it", _coalesce, "free[k][0] == end", "free[k][0] == -1"),
             Mutant.edit("no merge before", "a freed block is not merged with the free block "
                         "before it", _coalesce, "free[k - 1][0] + free[k - 1][1] == start",
                         "free[k - 1][0] == -1"),
             Mutant.edit("first freed, not lowest", "blocks are kept in the order freed, not "
                         "by address", _coalesce, "k = bisect_left(free, [offset, 0])",
                         "k = len(free)"),
             Mutant.edit("no growth at the pool's end", "a slot that fits no block goes to "
                         "the end of the pool even when a free block ends it", _lowest_fit,
                         "if free and free[-1][0] + free[-1][1] == pool_end:",
                         "if False:"),
             Mutant.edit("seed's list by default", "the spec's planner keeps the seed's free "
                         "list", compute_memory_plan, "E10_1 in errata", "True"),
             MERGES_ACROSS_A_GAP),
)
def plans_worked_by_hand(planner):
    return [Property("the spec's free list", _plans_as_the_code_does(planner, frozenset()),
                     cases=lambda: SPEC_PLANS)]
