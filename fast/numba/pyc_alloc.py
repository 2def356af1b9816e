"""numba kernel for PyC's allocator. Offsets are only ever slot starts, and the request that
opens a slot is the first and largest one there, so the spec's scan over earlier requests is
the same as a scan over slots in the order they opened: the first slot at least as large,
suitably aligned and free for the request's lifetime. Each slot keeps its lifetimes in a
linked list."""

from __future__ import annotations

import numpy as np
from numba import njit

from ...spec.errata import NO_ERRATA
from ...spec.errors import InvalidInput
from ...spec.pyc_alloc import (
    E10_2,
    MODES,
    AllocPlan,
    AllocRequest,
    rematerialize,
    requests_from_wire,
)
from ...spec.registry import kernel
from ...spec.schema import Utf8


@njit(cache=True)
def place_into(size, align, start, end, check_align, offsets, counters):
    """First fit over slots; counters = [peak, reused, events, overlap_pairs]."""
    n = size.size
    slot_off = np.empty(n, dtype=np.int64)
    slot_size = np.empty(n, dtype=np.int64)
    head = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    slots = 0
    peak = 0
    for i in range(n):
        for j in range(i):  # 1. time overlaps with earlier requests
            if not (end[j] < start[i] or end[i] < start[j]):
                counters[3] += 1
        chosen = -1
        for m in range(slots):  # 2. the first slot that fits
            if slot_size[m] < size[i]:
                continue
            if check_align and slot_off[m] % align[i] != 0:
                continue
            k = head[m]
            free = True
            while k >= 0:
                if not (end[k] < start[i] or end[i] < start[k]):
                    free = False
                    break
                k = nxt[k]
            if free:
                chosen = m
                break
        if chosen >= 0:
            counters[1] += 1
        else:  # 3. a fresh slot
            chosen = slots
            slot_off[chosen] = (peak + align[i] - 1) // align[i] * align[i]
            slot_size[chosen] = size[i]
            peak = slot_off[chosen] + size[i]
            slots += 1
            counters[2] += 1
        offsets[i] = slot_off[chosen]
        nxt[i] = head[chosen]
        head[chosen] = i
    counters[0] = peak


def alloc_one(requests: list[dict], mode: str, budget: int, errata=NO_ERRATA) -> dict:
    if mode not in MODES:
        raise InvalidInput(f"args.mode: {mode!r} is not one of {', '.join(MODES)}")
    reqs = requests_from_wire(requests)
    arrays = prepare_arrays(reqs)
    offsets, counters = place_arrays(*arrays, E10_2 not in errata)
    plan = AllocPlan(offsets.tolist(), int(counters[0]), int(counters[1]), int(counters[2]),
                     int(counters[3]))
    rematerialize(plan, reqs, mode, budget)
    return vars(plan)


def prepare_arrays(reqs: list[AllocRequest]) -> tuple[np.ndarray, ...]:
    cols = [[r.size for r in reqs], [r.align for r in reqs], [r.start_step for r in reqs],
            [r.end_step for r in reqs]]
    return tuple(np.array(c, dtype=np.int64) for c in cols)


def place_arrays(size, align, start, end, check_align: bool):
    offsets = np.zeros(size.size, dtype=np.int64)
    counters = np.zeros(4, dtype=np.int64)
    place_into(size, align, start, end, check_align, offsets, counters)
    return offsets, counters


@kernel("pyc.alloc", "numba", models=(E10_2,))
def alloc_batch(requests, mode, budget, errata=NO_ERRATA):
    modes = Utf8().from_column(mode)
    rows = [alloc_one(r, m, int(b), errata) for r, m, b in zip(requests, modes, budget,
                                                                  strict=True)]
    return {"offsets": [r["offsets"] for r in rows]} | {
        k: np.array([r[k] for r in rows], dtype=np.int64)
        for k in ("peak_bytes", "reused", "allocation_events", "overlap_pairs",
                  "pressure_events", "remat_tensors", "remat_bytes")}


alloc_batch.prepare = lambda requests, mode, budget, errata=NO_ERRATA: [
    (prepare_arrays(requests_from_wire(r)), E10_2 not in errata) for r in requests]
alloc_batch.core = lambda prepared: [place_arrays(*a, check) for a, check in prepared]
