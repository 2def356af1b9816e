"""numba kernel for PyC's allocator. Offsets are only ever slot starts, and the request that
opens a slot is the first and largest one there, so the spec's scan over earlier requests is
the same as a scan over slots in the order they opened: the first slot at least as large,
suitably aligned and free for the request's lifetime. The requests sharing a slot never meet
in time, so each slot keeps their lifetimes sorted and answers "free?" by binary search."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.errata import NO_ERRATA
from ....spec.core.errors import InvalidInput
from ....spec.core.registry import kernel
from ....spec.core.schema import Utf8
from ....spec.pyc.alloc import (
    E10_2,
    E10_3,
    E10_4,
    MODES,
    AllocPlan,
    AllocRequest,
    build_plan,
    rematerialize,
    requests_from_wire,
)


@njit(cache=True)
def count_overlap_pairs(start, end):
    """Pairs alive at one step: all pairs less those where one ends before the other starts."""
    n = start.size
    starts = np.sort(start)
    apart = 0
    for a in range(n):  # 1. requests starting after a ends
        apart += n - np.searchsorted(starts, end[a], side="right")
    return n * (n - 1) // 2 - apart


@njit(cache=True)
def slot_is_free(pool_start, pool_end, base, length, s, e):
    """The slot's lifetimes are disjoint and sorted: only the last one starting by e can meet."""
    lo, hi = 0, length
    while lo < hi:  # 1. members starting at or before e
        mid = (lo + hi) // 2
        if pool_start[base + mid] <= e:
            lo = mid + 1
        else:
            hi = mid
    return lo == 0 or pool_end[base + lo - 1] < s


@njit(cache=True)
def place_into(size, align, start, end, check_align, offsets, counters):
    """First fit over slots; counters = [peak, reused, events, overlap_pairs]."""
    n = size.size
    slot_off = np.empty(n, dtype=np.int64)
    slot_size = np.empty(n, dtype=np.int64)
    base = np.empty(n, dtype=np.int64)
    length = np.zeros(n, dtype=np.int64)
    cap = np.empty(n, dtype=np.int64)
    pool_start = np.empty(max(4 * n, 1), dtype=np.int64)
    pool_end = np.empty(max(4 * n, 1), dtype=np.int64)
    used = 0
    slots = 0
    peak = 0
    for i in range(n):
        chosen = -1
        for m in range(slots):  # 1. the first slot that fits
            if slot_size[m] < size[i] or (check_align and slot_off[m] % align[i] != 0):
                continue
            if slot_is_free(pool_start, pool_end, base[m], length[m], start[i], end[i]):
                chosen = m
                break
        if chosen >= 0:
            counters[1] += 1
        else:  # 2. a fresh slot
            chosen = slots
            slot_off[chosen] = (peak + align[i] - 1) // align[i] * align[i]
            slot_size[chosen] = size[i]
            peak = slot_off[chosen] + size[i]
            base[chosen], cap[chosen] = used, 1
            used += 1
            slots += 1
            counters[2] += 1
        offsets[i] = slot_off[chosen]
        m, b = chosen, base[chosen]
        if length[m] == cap[m]:  # 3. a full slot moves to twice the room (pool <= 4n)
            pool_start[used:used + length[m]] = pool_start[b:b + length[m]]
            pool_end[used:used + length[m]] = pool_end[b:b + length[m]]
            base[m], cap[m] = used, 2 * cap[m]
            used += cap[m]
            b = base[m]
        pos = length[m]
        while pos > 0 and pool_start[b + pos - 1] > start[i]:  # 4. sorted insert
            pool_start[b + pos] = pool_start[b + pos - 1]
            pool_end[b + pos] = pool_end[b + pos - 1]
            pos -= 1
        pool_start[b + pos], pool_end[b + pos] = start[i], end[i]
        length[m] += 1
    counters[0] = peak
    counters[3] = count_overlap_pairs(start, end)


@njit(cache=True)
def remat_into(size, start, end, target, balanced, out):
    """The spec's greedy picks on a swap-removed list of the requests with a benefit above 0;
    out = [tensors, relieved]."""
    span = end - start + 1
    gain = np.where(span <= 1, size, size // np.maximum(span, 1))
    order = np.nonzero(gain > 0)[0]
    left, relieved, tensors = order.size, 0, 0
    while target > 0 and left > 0 and relieved < target:
        best = 0
        for c in range(1, left):  # 1. best benefit per step; a tie keeps the first
            a, b = order[c], order[best]
            if gain[a] * span[b] > gain[b] * span[a]:
                best = c
        relieved += gain[order[best]]
        tensors += 1
        order[best] = order[left - 1]  # 2. swap-remove
        left -= 1
        if balanced:
            break
    out[0], out[1] = tensors, relieved


def alloc_one(requests: list[dict], mode: str, budget: int, errata=NO_ERRATA) -> dict:
    if mode not in MODES:
        raise InvalidInput(f"args.mode: {mode!r} is not one of {', '.join(MODES)}")
    reqs = requests_from_wire(requests, errata)
    if sum(r.size + r.align for r in reqs) >= 1 << 63:  # E10.4's wrapping sums: int64 cannot
        return vars(build_plan(reqs, mode, budget, errata))  # hold them, the spec's own
    arrays = prepare_arrays(reqs)
    offsets, counters = place_arrays(*arrays, E10_2 not in errata)
    plan = AllocPlan(offsets.tolist(), *(int(c) for c in counters))
    if reqs and max(r.size for r in reqs) * max(r.span for r in reqs) >= 1 << 63:
        rematerialize(plan, reqs, mode, budget, errata)  # int64 products wrap: the spec's own
    elif budget > 0 and plan.peak_bytes > budget:  # the spec's rematerialize, in numba
        excess = plan.peak_bytes - budget
        target = {"memory_first": excess, "balanced": max(excess // 2, 1),
                  "utilization_first": 0}[mode]
        out = np.zeros(2, dtype=np.int64)
        remat_into(arrays[0], arrays[2], arrays[3], target, mode == "balanced", out)
        plan.pressure_events, plan.remat_tensors, plan.remat_bytes = 1, int(out[0]), int(out[1])
        plan.peak_bytes = budget if out[1] >= excess else plan.peak_bytes - int(out[1])
    return vars(plan)


def prepare_arrays(reqs: list[AllocRequest]) -> tuple[np.ndarray, ...]:
    cols = [[r.size for r in reqs], [r.align for r in reqs], [r.start_step for r in reqs],
            [r.end_step for r in reqs]]
    return tuple(np.array(c, dtype=np.int64).reshape(-1) for c in cols)


def place_arrays(size, align, start, end, check_align: bool):
    offsets = np.zeros(size.size, dtype=np.int64)
    counters = np.zeros(4, dtype=np.int64)
    place_into(size, align, start, end, check_align, offsets, counters)
    return offsets, counters


@kernel("pyc.alloc", "numba", models=(E10_2, E10_3, E10_4))
def alloc_batch(requests, mode, budget, errata=NO_ERRATA):
    modes = Utf8().from_column(mode)
    rows = [alloc_one(r, m, int(b), errata) for r, m, b in zip(requests, modes, budget,
                                                                  strict=True)]
    return {"offsets": [r["offsets"] for r in rows]} | {  # u64: a peak may pass 2^63 - 1
        k: np.array([r[k] for r in rows], dtype=np.uint64)
        for k in ("peak_bytes", "reused", "allocation_events", "overlap_pairs",
                  "pressure_events", "remat_tensors", "remat_bytes")}


alloc_batch.prepare = lambda requests, mode, budget, errata=NO_ERRATA: [
    (prepare_arrays(requests_from_wire(r, errata)), E10_2 not in errata) for r in requests]
alloc_batch.core = lambda prepared: [place_arrays(*a, check) for a, check in prepared]
