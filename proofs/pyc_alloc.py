"""Chapter 10 obligations of PyC's allocator: a plan never gives two requests alive at one
step the same bytes, and (the spec's profile) every offset suits its request's alignment."""

from __future__ import annotations

import itertools

from ..spec.pyc_alloc import AllocRequest, build_plan, overlaps, place, request_sets
from ..spec.registry import Mutant
from .obligation import Property, property_obligation


def check_plan(reqs: list[AllocRequest], offsets: list[int]) -> None:
    """Requests alive at one step have disjoint byte ranges; offsets suit their alignment."""
    for a, b in itertools.combinations(range(len(reqs)), 2):
        ra, rb = reqs[a], reqs[b]
        if ra.start_step <= rb.end_step and rb.start_step <= ra.end_step:
            disjoint = offsets[a] + ra.size <= offsets[b] or offsets[b] + rb.size <= offsets[a]
            assert disjoint, (a, b, offsets)
    assert all(off % r.align == 0 for off, r in zip(offsets, reqs, strict=True)), offsets


def _random(args: dict) -> None:
    reqs = [AllocRequest(**q) for q in args["requests"]]
    check_plan(reqs, build_plan(reqs, args["mode"], args["budget"]).offsets)


def _small() -> list[list[AllocRequest]]:
    """Every set of three requests with sizes 1-3, alignments 0, 2 and 4, lifetimes in 0..1."""
    one = [AllocRequest(0, s, a, b, e) for s in (1, 2, 3) for a in (0, 2, 4)
           for b, e in ((0, 0), (0, 1), (1, 1))]
    return [list(t) for t in itertools.product(one, repeat=3)]


def _enumerated(reqs: list[AllocRequest]) -> None:
    check_plan(reqs, place(reqs).offsets)


@property_obligation(
    "PO10.200",
    "A PyC plan never places two requests that are alive at one step on overlapping bytes, "
    "and every offset is a multiple of its request's alignment (0 meaning 1; E10.2): over every "
    "set of three small requests, and generated sets of up to 12.",
    covers=("pyc.alloc",),
    subject=place,
    mutants=(
        Mutant.edit("no alignment check", "the seed's reuse: any earlier offset",
                    place, "(E10_2 not in errata and cand % r.align)", "False"),
        Mutant.edit("smaller slot reused", "a slot smaller than the request is reused", place,
                    "reqs[j].size < r.size", "reqs[j].size < 0"),
        Mutant.edit("exclusive lifetimes", "lifetimes that touch at one step do not overlap",
                    overlaps, "a.end_step < b.start_step", "a.end_step <= b.start_step"),
        Mutant.edit("unaligned fresh slot", "a fresh slot starts at the mark as it is", place,
                    "chosen = align_up(plan.peak_bytes, r.align)", "chosen = plan.peak_bytes"),
    ),
)
def plans_are_sound(_subject):
    return [
        Property("every three small requests", _enumerated, cases=_small),
        Property("generated request sets", _random, strategy=request_sets),
    ]
