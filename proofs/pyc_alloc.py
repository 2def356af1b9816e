"""Chapter 10 obligations of PyC's allocator: a plan never gives two requests alive at one
step the same bytes (PO10.200), and (the spec's profile) every offset suits its request's
alignment (PO10.201)."""

from __future__ import annotations

import itertools

from ..spec.pyc_alloc import (
    AllocRequest,
    build_plan,
    overlaps,
    place,
    rematerialize,
    request_sets,
)
from ..spec.registry import Mutant
from .obligation import Property, property_obligation


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


@property_obligation(
    "PO10.200",
    "A PyC plan never places two requests that are alive at one step (inclusive lifetimes) on "
    "overlapping bytes: over every list of three small requests, and generated lists of up to "
    "12 with a budget (rematerialization moves no offset).",
    covers=("pyc.alloc",),
    subject=place,
    mutants=(
        Mutant.edit("smaller slot reused", "a slot smaller than the request is reused", place,
                    "reqs[j].size < r.size", "reqs[j].size < 0"),
        Mutant.edit("exclusive lifetimes", "lifetimes that touch at one step do not overlap",
                    overlaps, "a.end_step < b.start_step", "a.end_step <= b.start_step"),
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
        Mutant.edit("no alignment check", "the seed's reuse: any earlier offset",
                    place, "(E10_2 not in errata and cand % r.align)", "False"),
        Mutant.edit("owner's alignment", "a candidate is checked against its owner's alignment",
                    place, "cand % r.align)", "cand % reqs[j].align)"),
        Mutant.edit("unaligned fresh slot", "a fresh slot starts at the mark as it is", place,
                    "chosen = align_up(plan.peak_bytes, r.align)", "chosen = plan.peak_bytes"),
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
    if args["mode"] == "utilization_first":
        assert plan.remat_tensors == 0 and plan.peak_bytes == before.peak_bytes
    elif args["mode"] == "balanced":
        assert plan.remat_tensors == min(1, len(reqs))
    else:
        assert plan.remat_bytes >= excess or plan.remat_tensors == len(reqs)
    expected = args["budget"] if plan.remat_bytes >= excess else before.peak_bytes - \
        plan.remat_bytes
    assert plan.peak_bytes == expected, (plan, expected)


@property_obligation(
    "PO10.202",
    "The budget's accounting moves no offset; with pressure it counts one pressure event, and "
    "UTILIZATION_FIRST rematerializes nothing, BALANCED exactly one tensor, MEMORY_FIRST until "
    "the excess is covered or no candidate is left; the peak is then the budget when covered, "
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
    ),
)
def budget_accounting(_subject):
    return [Property("generated plans with budgets", _budget, strategy=request_sets)]
