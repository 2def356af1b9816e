"""Chapter 10 obligations of PyC's allocator: a plan never gives two requests alive at one
step the same bytes (PO10.200), and (the spec's profile) every offset suits its request's
alignment (PO10.201); the budget's accounting (PO10.202); both checked by z3 per fixed plan
(PO10.203)."""

from __future__ import annotations

import itertools
import random

import z3

from ...spec.core.registry import Mutant
from ...spec.pyc.alloc import (
    E10_2,
    FACTS_REQUESTS,
    MISALIGNED,
    AllocPlan,
    AllocRequest,
    benefit,
    build_plan,
    overlaps,
    place,
    rematerialize,
    request_sets,
)
from ..core.obligation import Property, Query, property_obligation, z3_obligation

RNG_SEED = 0xA11C
ALIGNMENTS = (0, 1, 2, 4, 8, 16, 64, 3)
"""The alignments of the random plans: 0 (meaning 1), powers of two and one that is not."""


def check_disjoint(reqs: list[AllocRequest], offsets: list[int]) -> None:
    """Requests alive at one step have disjoint byte ranges."""
    for a, b in itertools.combinations(range(len(reqs)), 2):
        ra, rb = reqs[a], reqs[b]
        if ra.start_step <= rb.end_step and rb.start_step <= ra.end_step:
            disjoint = offsets[a] + ra.size <= offsets[b] or offsets[b] + rb.size <= offsets[a]
            assert disjoint, (a, b, offsets)


def check_aligned(reqs: list[AllocRequest], offsets: list[int]) -> None:
    """Every offset is a multiple of its request's alignment (0 meaning 1)."""
    assert all(off % (r.alignment or 1) == 0 for off, r in zip(offsets, reqs, strict=True)), \
        offsets


def _small() -> list[list[AllocRequest]]:
    """Every list of three requests with sizes 1-3, alignments 0, 2 and 4, lifetimes in 0..1."""
    one = [AllocRequest(0, s, a, b, e) for s in (1, 2, 3) for a in (0, 2, 4)
           for b, e in ((0, 0), (0, 1), (1, 1))]
    return [list(t) for t in itertools.product(one, repeat=3)]


def _on_plans(check):
    """The check on every small list's placement, and on generated plans with a budget."""
    def enumerated(reqs: list[AllocRequest]) -> None:
        check(reqs, place(reqs).offsets)

    def generated(args: dict) -> None:
        reqs = [AllocRequest(**q) for q in args["requests"]]
        check(reqs, build_plan(reqs, args["mode"], args["budget"]).offsets)

    return [Property("every three small requests", enumerated, cases=_small),
            Property("generated request sets", generated, strategy=request_sets)]


SMALLER_SLOT = Mutant.edit("smaller slot reused", "a slot smaller than the request is reused",
                           place, "reqs[j].size < r.size", "reqs[j].size < 0")
EXCLUSIVE_LIFETIMES = Mutant.edit("exclusive lifetimes", "lifetimes that touch at one step do "
                                  "not overlap", overlaps, "a.end_step < b.start_step",
                                  "a.end_step <= b.start_step")
NO_ALIGNMENT_CHECK = Mutant.edit("no alignment check", "the seed's reuse: any earlier offset",
                                 place, "(E10_2 not in errata and cand % r.align)", "False")
UNALIGNED_FRESH = Mutant.edit("unaligned fresh slot", "a fresh slot starts at the mark as it is",
                              place, "chosen = align_up(plan.peak_bytes, r.align)",
                              "chosen = plan.peak_bytes")


@property_obligation(
    "PO10.200",
    "A PyC plan never places two requests that are alive at one step (inclusive lifetimes) on "
    "overlapping bytes: over every list of three small requests, and generated lists of up to "
    "12 with a budget (rematerialization moves no offset).",
    covers=("pyc.alloc",),
    subject=place,
    mutants=(
        SMALLER_SLOT, EXCLUSIVE_LIFETIMES,
        Mutant.edit("owner only", "only the candidate's first owner is checked for a clash",
                    place, "if cand not in busy:", "if not overlaps(reqs[j], r):"),
    ),
)
def plans_are_disjoint(_subject):
    return _on_plans(check_disjoint)


@property_obligation(
    "PO10.201",
    "Under the spec's profile every offset of a PyC plan is a multiple of its request's "
    "alignment (0 meaning 1), reused offsets included (E10.2 breaks this): over every list of "
    "three small requests, and generated lists of up to 12.",
    covers=("pyc.alloc",),
    subject=place,
    mutants=(
        NO_ALIGNMENT_CHECK,
        Mutant.edit("owner's alignment", "a candidate is checked against its owner's alignment",
                    place, "cand % r.align)", "cand % reqs[j].align)"),
        UNALIGNED_FRESH,
    ),
)
def plans_are_aligned(_subject):
    return _on_plans(check_aligned)


def _budget(args: dict) -> None:
    reqs = [AllocRequest(**q) for q in args["requests"]]
    before = place(reqs)
    plan = build_plan(reqs, args["mode"], args["budget"])
    assert plan.offsets == before.offsets, "rematerialization moves no offset"
    excess = before.peak_bytes - args["budget"]
    if args["budget"] == 0 or excess <= 0:
        assert (plan.pressure_events, plan.remat_tensors, plan.peak_bytes) == \
            (0, 0, before.peak_bytes)
        return
    assert plan.pressure_events == 1
    gaining = sum(benefit(r) > 0 for r in reqs)
    if args["mode"] == "utilization_first":
        assert plan.remat_tensors == 0 and plan.peak_bytes == before.peak_bytes
    elif args["mode"] == "balanced":
        assert plan.remat_tensors == min(1, gaining)
    else:
        assert plan.remat_bytes >= excess or plan.remat_tensors == gaining
    expected = args["budget"] if plan.remat_bytes >= excess else before.peak_bytes - \
        plan.remat_bytes
    assert plan.peak_bytes == expected, (plan, expected)


@property_obligation(
    "PO10.202",
    "The budget's accounting moves no offset; with pressure it counts one pressure event, and "
    "UTILIZATION_FIRST rematerializes nothing, BALANCED exactly one tensor (none when no "
    "request has a benefit above 0), MEMORY_FIRST until the excess is covered or no request "
    "with a benefit is left; the peak is then the budget when covered, "
    "else the mark less what was relieved.",
    covers=("pyc.alloc",),
    subject=rematerialize,
    mutants=(
        Mutant.edit("balanced keeps going", "BALANCED picks until its target is met",
                    rematerialize, 'if mode == "balanced":', "if False:"),
        Mutant.edit("peak not lowered", "a partial relief leaves the peak as it was",
                    rematerialize, "else plan.peak_bytes - relieved", "else plan.peak_bytes"),
        Mutant.edit("utilization rematerializes", "UTILIZATION_FIRST targets the excess",
                    rematerialize, '"utilization_first": 0', '"utilization_first": excess'),
        Mutant.edit("zero benefit picked", "a request that relieves nothing is a candidate",
                    rematerialize, "if benefit(r) > 0]", "if benefit(r) >= 0]"),
    ),
)
def budget_accounting(_subject):
    return [Property("generated plans with budgets", _budget, strategy=request_sets)]


def z3_instances() -> list[list[AllocRequest]]:
    """Fixed plans for z3: the facts sheet's three requests, E10.2's witness, 24 seeded random
    lists of up to 40 requests (alignments 0-64 and 3, short lifetimes) and one of 300."""
    rng = random.Random(RNG_SEED)

    def rand(n: int, steps: int) -> list[AllocRequest]:
        out = []
        for t in range(n):
            start = rng.randrange(steps)
            out.append(AllocRequest(t, rng.randint(1, 300), rng.choice(ALIGNMENTS), start,
                                    start + rng.choice((0, 0, 1, 2, 4))))
        return out

    out = [[AllocRequest(**q) for q in FACTS_REQUESTS], [AllocRequest(**q) for q in MISALIGNED]]
    out += [rand(rng.randint(2, 40), rng.choice((3, 8, 20))) for _ in range(24)]
    return [*out, rand(300, 60)]


def _rows(reqs: list[AllocRequest], offsets: list[int], peak: int):
    """Each request as one bit-vector row (k, offset, size, alignment, start, end) and two
    free rows i and j that must be rows of the plan; the fields are wide enough for every sum
    of two without wrapping."""
    w = max(peak, *(r.end_step for r in reqs), *(r.align for r in reqs)).bit_length() + 2
    widths = (len(reqs).bit_length(), w, w, w, w, w)
    rows = [sum(v << sum(widths[:f]) for f, v in enumerate(
        (k, offsets[k], r.size, r.align, r.start_step, r.end_step))) for k, r in enumerate(reqs)]
    picked = []
    for name in ("row_i", "row_j"):
        row = z3.BitVec(name, sum(widths))
        fields, low = [], 0
        for width in widths:
            fields.append(z3.Extract(low + width - 1, low, row))
            low += width
        picked.append((z3.Or([row == v for v in rows]), fields))
    return picked, w


def clash(reqs: list[AllocRequest], plan: AllocPlan, aligned: bool) -> z3.BoolRef:
    """Two requests i < j alive at one step share a byte, or a request ends past the mark, or
    (with `aligned`) an offset is not a multiple of its alignment."""
    ((in_i, (i, off_i, size_i, al_i, s_i, e_i)), (in_j, (j, off_j, size_j, _, s_j, e_j))), w = \
        _rows(reqs, plan.offsets, plan.peak_bytes)
    bad = [z3.And(z3.ULT(i, j), z3.ULE(s_i, e_j), z3.ULE(s_j, e_i),
                  z3.ULT(off_i, off_j + size_j), z3.ULT(off_j, off_i + size_i)),
           z3.UGT(off_i + size_i, z3.BitVecVal(plan.peak_bytes, w))]
    if aligned:
        bad.append(z3.URem(off_i, al_i) != 0)
    return z3.And(in_i, in_j, z3.Or(bad))


@z3_obligation(
    "PO10.203",
    "Per plan, z3 finds no two PyC requests alive at one step (inclusive lifetimes) whose "
    "byte ranges overlap and none that ends past the high-water mark, under both profiles; "
    "under the spec's none whose offset is off its alignment, while under E10.2 z3 finds such "
    "an offset in the erratum's witness. On 27 fixed plans: the facts sheet's, E10.2's, 24 "
    "seeded random lists of up to 40 requests and one of 300.",
    covers=("pyc.alloc",),
    subject=place,
    mutants=(
        SMALLER_SLOT, EXCLUSIVE_LIFETIMES, NO_ALIGNMENT_CHECK,
        Mutant.edit("mark left behind", "a fresh slot does not move the mark past itself",
                    place, "plan.peak_bytes = chosen + r.size", "plan.peak_bytes = chosen"),
        UNALIGNED_FRESH,
    ),
)
def plans_hold_per_plan(planner):
    seed = frozenset({E10_2})
    out = [Query(f"plan {k} ({len(reqs)} requests{', E10.2' if errata else ''})",
                 clash(reqs, planner(reqs, errata), aligned=not errata))
           for errata in (frozenset(), seed) for k, reqs in enumerate(z3_instances())]
    witness = [AllocRequest(**q) for q in MISALIGNED]
    plan = planner(witness, seed)
    (in_i, (_, off, _, align, _, _)), _ = _rows(witness, plan.offsets, plan.peak_bytes)[0]
    misaligned = z3.And(in_i, z3.URem(off, align) != 0)
    return [*out, Query("E10.2: an offset off its alignment", misaligned, expect="sat")]
