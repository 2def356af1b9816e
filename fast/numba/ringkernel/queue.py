"""numba kernel for RingKernel's SpscQueue (queue.simulate): the spec's rules on u64 counters
that wrap like RingKernel's, the slots an array of capacity messages."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.ringkernel.queue import QUEUE_EMPTY, QUEUE_FULL, queue_steps, round_capacity

ENQUEUE, DEQUEUE = 0, 1
DONE, FULL, EMPTY = 0, 1, 2


@njit(cache=True)
def queue_run(kinds, messages, capacity, start, outcome, out, state):
    """state = [head, tail, enqueued, dequeued, dropped, max_depth] after the steps."""
    cap = np.uint64(capacity)
    mask = cap - np.uint64(1)
    one = np.uint64(1)
    slots = np.zeros(capacity, dtype=np.uint64)
    head = tail = np.uint64(start)
    enqueued = dequeued = dropped = max_depth = np.uint64(0)
    for i in range(kinds.size):
        if kinds[i] == ENQUEUE:
            if head - tail >= cap:
                dropped += one
                outcome[i] = FULL
                continue
            slots[head & mask] = messages[i]
            head += one
            enqueued += one
            max_depth = max(max_depth, head - tail)
        elif head == tail:
            outcome[i] = EMPTY
        else:
            out[i] = slots[tail & mask]
            tail += one
            dequeued += one
    state[0], state[1], state[2] = head, tail, enqueued
    state[3], state[4], state[5] = dequeued, dropped, max_depth


def queue_one(requested: int, steps, start: int) -> dict:
    capacity = round_capacity(requested)
    parsed = queue_steps(steps)
    kinds = np.array([ENQUEUE if op == "enqueue" else DEQUEUE for op, _ in parsed],
                     dtype=np.int64)
    messages = np.array([m for _, m in parsed], dtype=np.uint64)
    outcome = np.zeros(len(parsed), dtype=np.int64)
    out = np.zeros(len(parsed), dtype=np.uint64)
    state = np.zeros(6, dtype=np.uint64)
    queue_run(kinds, messages, capacity, np.uint64(start), outcome, out, state)
    results: list[dict] = []
    for i, (op, _) in enumerate(parsed):
        if outcome[i] == FULL:
            results.append({"outcome": QUEUE_FULL, "capacity": capacity})
        elif outcome[i] == EMPTY:
            results.append({"outcome": QUEUE_EMPTY})
        else:
            results.append({"outcome": "ok"} if op == "enqueue"
                           else {"outcome": "ok", "message": int(out[i])})
    head, tail, enqueued, dequeued, dropped, max_depth = (int(v) for v in state)
    return {"results": results, "capacity": capacity, "head": head, "tail": tail,
            "enqueued": enqueued, "dequeued": dequeued, "dropped": dropped,
            "depth": (enqueued - dequeued) % 2**64, "max_depth": max_depth}


@kernel("queue.simulate", "numba")
def queue_simulate_batch(capacity, steps, start):
    rows = [queue_one(int(c), s, int(b)) for c, s, b in
            zip(capacity.tolist(), steps, start.tolist(), strict=True)]
    out = {k: [r[k] for r in rows] for k in rows[0]} if rows else {
        k: [] for k in ("results", "capacity", "head", "tail", "enqueued", "dequeued",
                        "dropped", "depth", "max_depth")}
    return {"results": out["results"]} | {k: np.array(v, dtype=np.uint64)
                                          for k, v in out.items() if k != "results"}
