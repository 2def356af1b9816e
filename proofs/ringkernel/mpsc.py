"""Obligation of RingKernel's MpscQueue and BoundedQueue (chapter 4): one FIFO across
producers, with drops counted once per refused message (PO4.122)."""

from __future__ import annotations

from collections import deque

from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.ringkernel import mpsc
from ..core.obligation import Property, property_obligation

WORD = 2**64

# ── PO4.122: queue.mpsc and queue.bounded against a deque ─────────────────────────────────────


def rounded(requested: int) -> int:
    """The next power of two (1 for 0 and 1), by doubling."""
    cap = 1
    while cap < requested:
        cap *= 2
    return cap


def _against_deque(args: dict) -> None:
    """Each answer and QueueStats as a bounded deque of (producer, message) says."""
    out = mpsc.bounded_op(args["capacity"], args["steps"])
    cap = rounded(args["capacity"])
    held: deque[tuple[int, int]] = deque()
    enq = deq = dropped = top = 0
    for step, got in zip(args["steps"], out["results"], strict=True):
        op = step["op"]
        if op == "reset_stats":
            enq = deq = dropped = 0
            top = len(held)
            assert got == {"outcome": "ok"}, got
        elif op.startswith("enqueue") and len(held) == cap:
            dropped += 1
            assert got == ({"outcome": "queue_full", "capacity": cap} if op == "enqueue" else
                           {"outcome": "timeout", "timeout_ms": step["timeout_ms"]}), (step, got)
        elif op.startswith("enqueue"):
            held.append((step["producer"], step["message"]))
            enq, top = enq + 1, max(top, len(held))
            assert got == {"outcome": "ok"}, (step, got)
        elif held:
            producer, message = held.popleft()
            deq += 1
            assert got == {"outcome": "ok", "producer": producer, "message": message}, got
        else:
            assert got == ({"outcome": "queue_empty"} if op == "dequeue" else
                           {"outcome": "timeout", "timeout_ms": step["timeout_ms"]}), got
    want = {"capacity": cap, "len": len(held), "enqueued": enq, "dequeued": deq,
            "dropped": dropped, "depth": len(held), "max_depth": top}
    assert {k: out[k] for k in want} == want, (out, want)


def _bounded_cases() -> st.SearchStrategy:
    word = st.one_of(st.integers(0, 3), st.integers(0, WORD - 1))
    step = st.one_of(
        st.fixed_dictionaries({"op": st.just("enqueue"), "producer": word, "message": word}),
        st.fixed_dictionaries({"op": st.just("enqueue_timeout"), "producer": word,
                               "message": word, "timeout_ms": st.integers(0, 3)}),
        st.fixed_dictionaries({"op": st.just("dequeue_timeout"),
                               "timeout_ms": st.integers(0, 3)}),
        st.just({"op": "dequeue"}), st.just({"op": "reset_stats"}))
    return st.fixed_dictionaries({"capacity": st.integers(0, 5),
                                  "steps": st.lists(step, max_size=30)})


@property_obligation(
    "PO4.122",
    "queue.bounded (and so queue.mpsc, its steps without waits) is one FIFO of the rounded "
    "capacity across producers: a dequeue gives the oldest (producer, message), an enqueue "
    "or a wait on a full queue is refused and counted once as dropped, a wait on an empty "
    "one times out, and after reset_stats the counters restart while depth and len stay the "
    "messages held and max_depth restarts at them.",
    covers=("queue.mpsc", "queue.bounded"),
    subject=mpsc.bounded_op,
    mutants=(
        Mutant.edit("each try a drop", "E4.111 always on: a wait counts two drops",
                    mpsc.enqueue_timeout, "E4_111 in errata and s.timeout_ms", "s.timeout_ms"),
        Mutant.edit("depth from counters", "E4.112 always on: depth = enqueued - dequeued",
                    mpsc.stats, "if E4_112 in errata else depth(q)", "if True else depth(q)"),
        Mutant.edit("max_depth zeroed", "reset_stats sets max_depth to 0", mpsc.reset_stats,
                    "0 if E4_112 in errata else depth(q)", "0"),
        Mutant.edit("producer and message swapped", "the dequeue answer reads the halves "
                    "the wrong way round", mpsc.dequeue, '"producer": got >> 64',
                    '"producer": got & (WORD - 1)'),
        Mutant.edit("full wait enqueues", "a wait on a full queue overwrites the oldest",
                    mpsc.enqueue_timeout, "if not is_full(q):", "if True:"),
    ),
)
def bounded_is_a_fifo(_subject):
    return [Property("generated steps with waits and resets", _against_deque,
                     strategy=_bounded_cases, examples=300)]
