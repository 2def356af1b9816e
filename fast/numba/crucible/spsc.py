"""numba kernels for the ring and MetaLog simulators: one pass over the steps, slots holding
the index of the append step that filled them."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.spsc_ops import check_advance, metalog_steps, ring_item_wire, ring_steps
from ....spec.crucible.types import NONE32

APPEND, DRAIN, CONTIGUOUS, ADVANCE, RESET = 0, 1, 2, 3, 4
KIND = {"append": APPEND, "drain": DRAIN, "contiguous": CONTIGUOUS, "advance_tail": ADVANCE,
        "reset": RESET}


@njit(cache=True)
def ring_run(kinds, maxes, capacity, ok, counts, drained, state):
    """TraceRing try_append / drain / reset; drained[] lists the append steps taken out."""
    slots = np.zeros(capacity, dtype=np.int64)
    head = tail = cached = 0
    taken = 0
    for i in range(kinds.size):
        if kinds[i] == APPEND:
            if head - cached >= capacity:
                cached = tail
            if head - cached < capacity:
                slots[head & (capacity - 1)] = i
                head += 1
                ok[i] = 1
        elif kinds[i] == DRAIN:
            count = min(head - tail, maxes[i])
            for j in range(count):
                drained[taken] = slots[(tail + j) & (capacity - 1)]
                taken += 1
            counts[i] = count
            tail += count
        else:
            head = tail = cached = 0
    state[0], state[1], state[2] = head, tail, cached


@njit(cache=True)
def metalog_run(kinds, a0, a1, capacity, out, state):
    """MetaLog try_append / try_contiguous / advance_tail / reset with u32 counters; out is
    the start, the slot, or -1 for none/null; state[3] is the first bad advance, or -1."""
    mod = np.int64(1) << 32
    head = tail = cached = np.int64(0)
    state[3] = -1
    for i in range(kinds.size):
        out[i] = -1
        if kinds[i] == APPEND:
            n = a0[i]
            if n == 0:
                continue
            if (head - cached) % mod + n > capacity:
                cached = tail
            if (head - cached) % mod + n <= capacity:
                out[i] = head
                head = (head + n) % mod
        elif kinds[i] == CONTIGUOUS:
            pos = a0[i] & (capacity - 1)
            if a1[i] != 0 and pos + a1[i] <= capacity:
                out[i] = pos
        elif kinds[i] == ADVANCE:
            if (a0[i] - tail) % mod > (head - tail) % mod:
                state[0], state[1], state[3] = head, tail, i
                return
            tail = a0[i]
        else:
            head = tail = cached = 0
    state[0], state[1], state[2] = head, tail, cached


def ring_one(capacity: int, steps) -> dict:
    parsed = ring_steps(steps)
    n = len(parsed)
    kinds = np.array([KIND[s[0]] for s in parsed], dtype=np.int64)
    maxes = np.array([s[1] if s[0] == "drain" else 0 for s in parsed], dtype=np.int64)
    ok = np.zeros(n, dtype=np.uint8)
    counts = np.zeros(n, dtype=np.int64)
    drained = np.zeros(n, dtype=np.int64)
    state = np.zeros(3, dtype=np.int64)
    ring_run(kinds, maxes, capacity, ok, counts, drained, state)
    results, taken = [], 0
    for i, s in enumerate(parsed):
        if s[0] == "append":
            results.append({"ok": bool(ok[i])})
        elif s[0] == "drain":
            src = drained[taken:taken + counts[i]].tolist()
            taken += counts[i]
            results.append({"count": int(counts[i]),
                            "items": [ring_item_wire(parsed[j][1]) for j in src]})
        else:
            results.append({})
    return {"results": results, "head": int(state[0]), "tail": int(state[1]),
            "cached_tail": int(state[2])}


def metalog_one(capacity: int, steps) -> dict:
    parsed = metalog_steps(steps)
    n = len(parsed)
    kinds = np.array([KIND[s[0]] for s in parsed], dtype=np.int64)
    a0 = np.array([s[1] if len(s) > 1 else 0 for s in parsed], dtype=np.int64)
    a1 = np.array([s[2] if len(s) > 2 else 0 for s in parsed], dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    state = np.zeros(4, dtype=np.int64)
    metalog_run(kinds, a0, a1, capacity, out, state)
    if state[3] >= 0:
        bad = int(state[3])
        check_advance(bad, int(a0[bad]), int(state[0]), int(state[1]))
    results = []
    for i, s in enumerate(parsed):
        value = int(out[i])
        if s[0] == "append":
            results.append({"start": NONE32 if value < 0 else value})
        elif s[0] == "contiguous":
            results.append({"slot": None if value < 0 else value})
        else:
            results.append({})
    return {"results": results, "head": int(state[0]), "tail": int(state[1]),
            "cached_tail": int(state[2])}


def _batch(one, capacity, steps) -> dict:
    rows = [one(int(c), s) for c, s in zip(capacity.tolist(), steps, strict=True)]
    out = {k: [r[k] for r in rows] for k in ("results", "head", "tail", "cached_tail")}
    return out | {k: np.array(out[k], dtype=np.uint64) for k in ("head", "tail", "cached_tail")}


@kernel("ring.simulate", "numba")
def ring_simulate_batch(capacity, steps):
    return _batch(ring_one, capacity, steps)


@kernel("metalog.simulate", "numba")
def metalog_simulate_batch(capacity, steps):
    return _batch(metalog_one, capacity, steps)
