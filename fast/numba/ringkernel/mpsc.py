"""numba kernel for RingKernel's MpscQueue (queue.mpsc): in a run of steps the producer lock
changes nothing, so the SPSC ring kernel (queue.simulate's) runs twice over the same
enqueue/dequeue pattern, once carrying the messages and once their producers; QueueStats
follow from the answers, restarting at each reset_stats."""

from __future__ import annotations

import numpy as np

from ....spec.core.registry import kernel
from ....spec.ringkernel.mpsc import MPSC_FIELDS, parse
from ....spec.ringkernel.queue import OK, QUEUE_EMPTY, QUEUE_FULL, WORD, round_capacity
from .queue import DEQUEUE, EMPTY, ENQUEUE, FULL, queue_run


def mpsc_answers(capacity: int, parsed: list) -> list[dict]:
    """Each step's answer, the ring run by the numba kernel."""
    ring = [s for s in parsed if s.op != "reset_stats"]
    kinds = np.array([ENQUEUE if s.op == "enqueue" else DEQUEUE for s in ring], dtype=np.int64)
    outcome = np.zeros(len(ring), dtype=np.int64)
    messages, producers = np.zeros(len(ring), dtype=np.uint64), np.zeros(len(ring), np.uint64)
    state = np.zeros(6, dtype=np.uint64)
    for column, values in ((messages, [s.message for s in ring]),
                           (producers, [s.producer for s in ring])):
        queue_run(kinds, np.array(values, dtype=np.uint64), capacity, np.uint64(0), outcome,
                  column, state)
    answers = iter(range(len(ring)))
    results: list[dict] = []
    for s in parsed:
        if s.op == "reset_stats":
            results.append({"outcome": OK})
            continue
        i = next(answers)
        if outcome[i] == FULL:
            results.append({"outcome": QUEUE_FULL, "capacity": capacity})
        elif outcome[i] == EMPTY:
            results.append({"outcome": QUEUE_EMPTY})
        else:
            results.append({"outcome": OK} if s.op == "enqueue" else
                           {"outcome": OK, "producer": int(producers[i]),
                            "message": int(messages[i])})
    return results


def _stats(parsed, results, capacity: int) -> dict:
    """QueueStats from the answers, restarting at each reset_stats."""
    held = enq = deq = dropped = top = 0
    for s, r in zip(parsed, results, strict=True):
        if s.op == "reset_stats":
            enq = deq = dropped = 0
            top = held
        elif r["outcome"] == QUEUE_FULL:
            dropped += 1
        elif r["outcome"] == OK and s.op == "enqueue":
            enq, held = enq + 1, held + 1
            top = max(top, held)
        elif r["outcome"] == OK:
            deq, held = deq + 1, held - 1
    return {"capacity": capacity, "len": held, "enqueued": enq, "dequeued": deq,
            "dropped": dropped, "depth": held % WORD, "max_depth": top}


@kernel("queue.mpsc", "numba")
def queue_mpsc_batch(capacity, steps):
    rows = []
    for c, s in zip(capacity.tolist(), steps, strict=True):
        cap, parsed = round_capacity(int(c)), parse(s, MPSC_FIELDS)
        results = mpsc_answers(cap, parsed)
        rows.append({"results": results} | _stats(parsed, results, cap))
    keys = ("capacity", "len", "enqueued", "dequeued", "dropped", "depth", "max_depth")
    return {"results": [r["results"] for r in rows]} | {
        k: np.array([r[k] for r in rows], dtype=np.uint64) for k in keys}
