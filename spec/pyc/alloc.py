"""Chapter 10: PyC's runtime allocator (runtime/runtime_allocator.c), a first-fit lifetime
planner with a memory budget and rematerialization accounting.

A request is {tensor_id, size > 0, alignment (0 means 1), start_step <= end_step}; lifetimes
are inclusive, and two requests overlap in time unless one ends before the other starts.
Requests are placed in the order given, never sorted. For request i:
1. overlap_pairs grows by the earlier requests that overlap i in time.
2. First-fit reuse: for each earlier request j in order, its offset is a candidate when j is
   at least as large as i, the offset suits i's alignment (PyC does not check this: E10.2), and
   no earlier request at that offset overlaps i in time. The first candidate is taken
   (reused + 1).
3. Otherwise a fresh slot at the high-water mark rounded up to i's alignment
   (allocation_events + 1); the mark moves past it.
With a budget above 0 and a mark above it, rematerialization is accounted, as PyC does, without
moving any offset: the excess, a target (the excess for MEMORY_FIRST, half of it and at least 1
for BALANCED, nothing for UTILIZATION_FIRST), then greedy picks, among the requests whose
benefit is above 0 (benefit = size when it lives one step, else size // steps), of the one with
the best benefit per step until the target is met; BALANCED stops after one pick. peak_bytes
is then the budget when the picks cover the excess, else the mark less what they relieve.

PyC holds at most 2048 requests (PYC_CAPACITY); the spec lifts that bound to MAX_REQUESTS and
refuses more (invalid_input), and refuses plans whose sizes and alignments pass ARENA_LIMIT.
Steps are ordinals from 0; PyC's are C ints and it plans negative ones too (E10.3). PyC's sums
are size_t and wrap past 2^64 - 1 (E10.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import Field, Int, Json, List, Utf8, record
from ..core.shapes import array, integer, obj, uint
from ..core.strategies import st
from .wire import PYC_SEED

E10_2, E10_3, E10_4 = "E10.2", "E10.3", "E10.4"
MODES = ("balanced", "memory_first", "utilization_first")
"""pyc_objective_mode by ordinal: BALANCED 0, MEMORY_FIRST 1, UTILIZATION_FIRST 2."""
MAX_REQUESTS = 1 << 20
"""The spec's own bound on the requests of one plan (PyC's build holds 2048)."""
ARENA_LIMIT = (1 << 64) - 1
"""The spec's bound on a plan's sizes plus alignments, so every offset and peak fits in a u64
(PyC's size_t sums would wrap past it)."""
SIZE_T = 1 << 64
"""The modulus of PyC's size_t arithmetic (E10.4)."""
STEP_MIN = -(1 << 31)
"""The least step PyC's int holds: under E10.3 a step may be negative down to it."""
PYC_CAPACITY = 2048
"""Requests PyC's plan holds. Real code: runtime/runtime_allocator.c, the plan's capacity."""


@dataclass(frozen=True)
class AllocRequest:
    tensor_id: int
    size: int
    alignment: int
    start_step: int
    end_step: int

    @property
    def align(self) -> int:
        return self.alignment or 1

    @property
    def span(self) -> int:
        return self.end_step - self.start_step + 1


@dataclass
class AllocPlan:
    """The plan's offsets (request order) and PyC's counters."""

    offsets: list[int] = field(default_factory=list)
    peak_bytes: int = 0
    reused: int = 0
    allocation_events: int = 0
    overlap_pairs: int = 0
    pressure_events: int = 0
    remat_tensors: int = 0
    remat_bytes: int = 0


def overlaps(a: AllocRequest, b: AllocRequest) -> bool:
    """Inclusive lifetimes: overlapping unless one ends before the other starts."""
    return not (a.end_step < b.start_step or b.end_step < a.start_step)


def align_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def place(reqs: list[AllocRequest], errata: frozenset[str] = NO_ERRATA) -> AllocPlan:
    """Steps 1-3 for every request in order. Quadratic: the offsets busy during i's lifetime
    are gathered once, where PyC rescans every earlier request per candidate (same answer)."""
    plan = AllocPlan()
    for i, r in enumerate(reqs):
        alive = [k for k in range(i) if overlaps(reqs[k], r)]  # 1. earlier requests alive with i
        plan.overlap_pairs += len(alive)
        busy = {plan.offsets[k] for k in alive}
        chosen = None
        for j in range(i):  # 2. first fit over earlier offsets not busy during i's lifetime
            cand = plan.offsets[j]
            if reqs[j].size < r.size or (E10_2 not in errata and cand % r.align):
                continue
            if cand not in busy:
                chosen = cand
                break
        if chosen is not None:
            plan.reused += 1
        else:  # 3. a fresh slot
            chosen = align_up(plan.peak_bytes, r.align)
            plan.peak_bytes = chosen + r.size
            if E10_4 in errata:  # size_t sums wrap
                chosen, plan.peak_bytes = chosen % SIZE_T, plan.peak_bytes % SIZE_T
            plan.allocation_events += 1
        plan.offsets.append(chosen)
    return plan


def benefit(r: AllocRequest) -> int:
    return r.size if r.span <= 1 else r.size // r.span


def better(a: AllocRequest, b: AllocRequest, errata: frozenset[str] = NO_ERRATA) -> bool:
    """a relieves more per step than b, cross-multiplied (E10.4: in wrapping size_t)."""
    lhs, rhs = benefit(a) * b.span, benefit(b) * a.span
    if E10_4 in errata:
        lhs, rhs = lhs % SIZE_T, rhs % SIZE_T
    return lhs > rhs


def rematerialize(plan: AllocPlan, reqs: list[AllocRequest], mode: str, budget: int,
                  errata: frozenset[str] = NO_ERRATA) -> None:
    """The budget's accounting, pure bookkeeping as in PyC and the defined behaviour here:
    counters and peak_bytes change, no offset moves (an offset plus size may pass the peak)."""
    if budget == 0 or plan.peak_bytes <= budget:
        return
    excess = plan.peak_bytes - budget
    plan.pressure_events = 1
    target = {"memory_first": excess, "balanced": max(excess // 2, 1),
              "utilization_first": 0}[mode]
    candidates, relieved = [r for r in reqs if benefit(r) > 0], 0
    while target and candidates and relieved < target:
        best = 0
        for c in range(1, len(candidates)):  # the best benefit per step; a tie keeps the first
            a, b = candidates[c], candidates[best]
            if better(a, b, errata):
                best = c
        relieved += benefit(candidates[best])
        if E10_4 in errata:
            relieved %= SIZE_T
        plan.remat_tensors += 1
        candidates[best] = candidates[-1]
        candidates.pop()
        if mode == "balanced":
            break
    plan.remat_bytes = relieved
    plan.peak_bytes = budget if relieved >= excess else plan.peak_bytes - relieved


def build_plan(reqs: list[AllocRequest], mode: str, budget: int,
               errata: frozenset[str] = NO_ERRATA) -> AllocPlan:
    plan = place(reqs, errata)
    rematerialize(plan, reqs, mode, budget, errata)
    return plan


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

_U64 = (1 << 64) - 1
REQUEST_SCHEMA = array(obj({"tensor_id": integer(-(1 << 63), (1 << 63) - 1), "size": uint(63),
                            "alignment": uint(63), "start_step": integer(STEP_MIN, (1 << 63) - 1),
                            "end_step": integer(STEP_MIN, (1 << 63) - 1)}), MAX_REQUESTS)


def requests_from_wire(requests: list[dict],
                       errata: frozenset[str] = NO_ERRATA) -> list[AllocRequest]:
    """Requests from the wire; a size of 0 or an end before the start is refused, as PyC's
    build refuses it, and a negative step unless E10.3."""
    out = []
    for i, q in enumerate(requests):
        r = AllocRequest(q["tensor_id"], q["size"], q["alignment"], q["start_step"],
                         q["end_step"])
        if r.size == 0:
            raise InvalidInput(f"args.requests[{i}].size: a request needs at least one byte")
        if r.start_step < 0 and E10_3 not in errata:
            raise InvalidInput(f"args.requests[{i}].start_step: a step is an ordinal from 0")
        if r.end_step < r.start_step:
            raise InvalidInput(f"args.requests[{i}].end_step: ends before it starts")
        out.append(r)
    if sum(r.size + r.align for r in out) > ARENA_LIMIT and E10_4 not in errata:
        raise InvalidInput("args.requests: sizes and alignments total more than 2^64 - 1")
    return out


def alloc_op(requests: list[dict], mode: str, budget: int,
             errata: frozenset[str] = NO_ERRATA) -> dict:
    if mode not in MODES:
        raise InvalidInput(f"args.mode: {mode!r} is not one of {', '.join(MODES)}")
    plan = build_plan(requests_from_wire(requests, errata), mode, budget, errata)
    return vars(plan)


def _req(tid: int, size: int, start: int, end: int, alignment: int = 64) -> dict:
    return {"tensor_id": tid, "size": size, "alignment": alignment, "start_step": start,
            "end_step": end}


FACTS_REQUESTS = [_req(0, 128, 0, 2), _req(1, 64, 3, 4), _req(2, 256, 1, 3)]
"""The facts sheet's three requests (a, b, c), all aligned to 64."""
MISALIGNED = [_req(0, 3, 0, 0, 1), _req(1, 5, 0, 0, 1), _req(2, 4, 1, 1, 4)]
"""A reused offset of 3 for a request aligned to 4 (E10.2)."""
ZERO_BENEFIT = [_req(0, 1, 0, 3, 1), _req(1, 1, 0, 3, 1), _req(2, 4, 0, 1, 1)]
"""Two one-byte requests living four steps (benefit 1 // 4 = 0): PyC never picks them."""
NEGATIVE_STEP = {"requests": [_req(0, 8, -2, 0), _req(1, 8, 1, 2)], "mode": "balanced",
                 "budget": 0}
"""A request that starts at step -2 (E10.3)."""


@st.composite
def request_sets(draw, max_n: int = 12) -> dict:
    reqs = []
    for t in range(draw(st.integers(0, max_n))):
        start = draw(st.integers(0, 8))
        reqs.append(_req(t, draw(st.integers(1, 300)), start, draw(st.integers(start, 10)),
                         draw(st.sampled_from([0, 1, 2, 4, 8, 16, 64, 3]))))
    return {"requests": reqs, "mode": draw(st.sampled_from(MODES)),
            "budget": draw(st.sampled_from([0, 64, 256, 1000]))}


def alloc_bench(n: int, rng) -> list[dict]:
    """n requests with short lifetimes spread over n / 4 steps, sizes 64 B to 64 KiB."""
    starts = rng.integers(0, max(n // 4, 1), n)
    spans = rng.integers(0, 16, n)
    sizes = rng.integers(64, 65536, n)
    aligns = rng.choice([0, 16, 64, 256], n)
    return [{"requests": [_req(i, int(sizes[i]), int(starts[i]), int(starts[i] + spans[i]),
                               int(aligns[i])) for i in range(n)],
             "mode": "memory_first", "budget": 0}]


_OUT = {k: Field(Int(64), "") for k in ("peak_bytes", "reused", "allocation_events",
                                         "overlap_pairs", "pressure_events", "remat_tensors",
                                         "remat_bytes")}
declare(
    "pyc.alloc", chapter=10,
    summary="PyC's first-fit lifetime plan in request order, with the budget's "
            "rematerialization accounting.",
    args=record(requests=Field(Json("[{tensor_id, size, alignment, start_step, end_step}]",
                                    REQUEST_SCHEMA), "in insertion order"),
                mode=Field(Utf8(), "balanced, memory_first or utilization_first", "balanced"),
                budget=Field(Int(64), "bytes; 0 is no budget", 0)),
    result=record(offsets=Json("[u64]", List(Int(64))), **_OUT),
    spec=(build_plan, place, rematerialize), errata=(E10_2, E10_3, E10_4),
    domain=request_sets,
    bench=alloc_bench,
    invalid=(InvalidCase("a request of 0 bytes", lambda: st.just(
                 {"requests": [_req(0, 0, 0, 0)], "mode": "balanced", "budget": 0})),
             InvalidCase("a request that ends before it starts", lambda: st.just(
                 {"requests": [_req(0, 8, 3, 2)], "mode": "balanced", "budget": 0})),
             InvalidCase("sizes totalling more than 2^64 - 1", lambda: st.just(
                 {"requests": [_req(0, (1 << 63) - 1, 0, 0), _req(1, (1 << 63) - 1, 0, 0),
                               _req(2, 2, 0, 0)], "mode": "balanced", "budget": 0})),
             InvalidCase("an unknown mode", lambda: st.just(
                 {"requests": [], "mode": "fastest", "budget": 0}))),
    edges=lambda: [{"requests": FACTS_REQUESTS, "mode": m, "budget": 256} for m in MODES]
    + [{"requests": FACTS_REQUESTS, "mode": "balanced", "budget": 0},
       {"requests": MISALIGNED, "mode": "balanced", "budget": 0},
       {"requests": [], "mode": "memory_first", "budget": 1},
       {"requests": [_req(0, 10, 0, 0, 0), _req(1, 10, 0, 0, 0)], "mode": "memory_first",
        "budget": 5},
       {"requests": ZERO_BENEFIT, "mode": "memory_first", "budget": 2},
       {"requests": [_req(0, 1 << 62, 0, 0), _req(1, 1 << 62, 0, 0)], "mode": "balanced",
        "budget": 0},
       NEGATIVE_STEP, WRAPPING],
    not_applicable={"cupy": "first fit is sequential: each request's offset depends on every "
                            "earlier one"},
)

erratum(
    E10_2, "A reused offset is not checked against the new request's alignment",
    seed=PYC_SEED, location="src/runtime/runtime_allocator.c, the reuse scan of the build",
    ops=("pyc.alloc",),
    witness={"args": {"requests": MISALIGNED, "mode": "balanced", "budget": 0},
             "spec": {"offsets": [0, 3, 8], "peak_bytes": 12},
             "seed": {"offsets": [0, 3, 3], "peak_bytes": 8}},
    flag="result",
    detail="A fresh slot is aligned for the request that opens it, but the reuse scan takes "
           "any earlier offset large and free enough, so a request aligned to 4 lands at 3. "
           "PyC's own random runs put thousands of offsets off their alignment. The spec "
           "skips a candidate its request's alignment does not divide.",
)

erratum(
    E10_3, "A request may start at a negative step",
    seed=PYC_SEED, location="src/compiler/runtime/runtime_allocator.c pyc_alloc_plan_add_request",
    ops=("pyc.alloc",),
    witness={"args": NEGATIVE_STEP, "spec": {"error": "invalid_input"},
             "seed": {"offsets": [0, 0], "peak_bytes": 8, "reused": 1, "allocation_events": 1,
                      "overlap_pairs": 0, "pressure_events": 0, "remat_tensors": 0,
                      "remat_bytes": 0}},
    flag="result",
    detail="Steps are C ints and a request is refused only for size 0 or an end before its "
           "start, so a lifetime [-2, 0] is planned like any other (it ends before [1, 2] "
           "starts, so the second request reuses offset 0). The spec's steps are ordinals from "
           "0 and it refuses a negative one; under E10.3 it plans it down to INT_MIN.",
)

WRAPPING = {"requests": [_req(0, (1 << 63) - 1, 0, 0), _req(1, (1 << 63) - 1, 0, 0),
                         _req(2, 2, 0, 0)], "mode": "balanced", "budget": 0}
"""Three requests alive together whose sizes pass 2^64 (E10.4)."""
erratum(
    E10_4, "The planner's size_t sums wrap, so a plan past 2^64 bytes reuses live memory",
    seed=PYC_SEED, location="src/compiler/runtime/runtime_allocator.c align_up, "
                            "pyc_alloc_plan_build_with_mode",
    ops=("pyc.alloc",),
    witness={"args": WRAPPING, "spec": {"error": "invalid_input"},
             "seed": {"offsets": [0, 9223372036854775808, 0], "peak_bytes": 2, "reused": 0,
                      "allocation_events": 3, "overlap_pairs": 3, "pressure_events": 0,
                      "remat_tensors": 0, "remat_bytes": 0}},
    flag="result",
    detail="The mark, align_up and the relief are size_t sums with no overflow check: after "
           "two requests of 2^63 - 1 bytes the mark is 2^64 - 1, aligning it to 64 wraps to "
           "0, and the third request, alive at the same step, is placed at offset 0 over the "
           "first, with a peak of 2. The benefit-per-step products of the relief wrap too. "
           "The spec refuses plans whose sizes and alignments pass 2^64 - 1; under E10.4 it "
           "computes them modulo 2^64 as PyC does.",
)
