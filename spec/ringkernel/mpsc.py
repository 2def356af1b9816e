"""Chapter 4: RingKernel's MpscQueue and BoundedQueue (ringkernel-core queue.rs), as ops
`queue.mpsc` and `queue.bounded`.

An MpscQueue is the SpscQueue of spec/ringkernel/queue.py behind one producer lock, so any
number of producers enqueue and the one consumer sees a single FIFO across them. A
BoundedQueue wraps an MpscQueue and adds waits: in a run of steps nothing else runs, so a
wait that finds the queue full (or empty) can only time out.
1. The queue is `new_queue(capacity)`: the capacity rounded up to a power of two.
2. enqueue (producer, message): the SPSC enqueue of the envelope; the answer says ok or
   queue_full with the capacity.
3. dequeue: the oldest envelope (its producer and message), or queue_empty.
4. enqueue_timeout (bounded): an enqueue when there is room; on a full queue the message is
   refused once, dropped += 1, and the answer is timeout with the wait asked (E4.111:
   RingKernel counts each try, two for any wait over 0 ms).
5. dequeue_timeout (bounded): a dequeue, or timeout on an empty queue.
6. reset_stats: enqueued, dequeued and dropped restart at 0 and max_depth at the current
   depth. depth is always head - tail, the messages held (E4.112: RingKernel zeroes max_depth
   and computes depth as enqueued - dequeued since the reset, which wraps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.layout import u32, u64
from ..core.registry import InvalidCase, declare
from ..core.schema import U64, Field, Json, record
from ..core.steps import parse_steps, step_field, steps_schema
from ..core.strategies import st
from .queue import (
    MAX_CAPACITY,
    OK,
    QUEUE_EMPTY,
    QUEUE_FULL,
    WORD,
    SpscQueue,
    depth,
    is_empty,
    is_full,
    new_queue,
    try_dequeue,
    try_enqueue,
)

TIMEOUT = "timeout"
E4_111, E4_112 = "E4.111", "E4.112"
MPSC_FIELDS = {"enqueue": ("producer", "message"), "dequeue": (), "reset_stats": ()}
BOUNDED_FIELDS = MPSC_FIELDS | {"enqueue_timeout": ("producer", "message", "timeout_ms"),
                                "dequeue_timeout": ("timeout_ms",)}
FIELD_TYPES = {"producer": u64, "message": u64, "timeout_ms": u32}


@dataclass(frozen=True)
class Step:
    """One parsed step; fields a step lacks are 0."""

    op: str
    producer: int = 0
    message: int = 0
    timeout_ms: int = 0


def parse(steps: Any, fields: dict[str, tuple[str, ...]]) -> list[Step]:
    """The steps, each field checked against its type."""
    return [Step(op, **{f: step_field(s, f, FIELD_TYPES[f], InvalidInput, f"args.steps[{i}]")
                        for f in fields[op]})
            for i, (op, s) in enumerate(parse_steps(steps, fields))]


def envelope(producer: int, message: int) -> int:
    """The slot's content: the producer (the envelope's source kernel) and the message."""
    return producer << 64 | message


def enqueue(q: SpscQueue, s: Step) -> dict:
    """Step 2."""
    if try_enqueue(q, envelope(s.producer, s.message)) == OK:
        return {"outcome": OK}
    return {"outcome": QUEUE_FULL, "capacity": q.capacity}


def dequeue(q: SpscQueue) -> dict:
    """Step 3."""
    got = try_dequeue(q)
    if got is None:
        return {"outcome": QUEUE_EMPTY}
    return {"outcome": OK, "producer": got >> 64, "message": got & (WORD - 1)}


def enqueue_timeout(q: SpscQueue, s: Step, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Step 4."""
    if not is_full(q):
        return enqueue(q, s)
    q.dropped += 2 if E4_111 in errata and s.timeout_ms else 1
    return {"outcome": TIMEOUT, "timeout_ms": s.timeout_ms}


def dequeue_timeout(q: SpscQueue, s: Step) -> dict:
    """Step 5."""
    return {"outcome": TIMEOUT, "timeout_ms": s.timeout_ms} if is_empty(q) else dequeue(q)


def reset_stats(q: SpscQueue, errata: frozenset[str] = NO_ERRATA) -> None:
    """Step 6."""
    q.enqueued = q.dequeued = q.dropped = 0
    q.max_depth = 0 if E4_112 in errata else depth(q)


def stats(q: SpscQueue, errata: frozenset[str] = NO_ERRATA) -> dict:
    """QueueStats, with len (the messages held)."""
    held = (q.enqueued - q.dequeued) % WORD if E4_112 in errata else depth(q)
    return {"capacity": q.capacity, "len": depth(q), "enqueued": q.enqueued,
            "dequeued": q.dequeued, "dropped": q.dropped, "depth": held,
            "max_depth": q.max_depth}


def run_step(q: SpscQueue, s: Step, errata: frozenset[str] = NO_ERRATA) -> dict:
    """One step's answer."""
    if s.op == "enqueue":
        return enqueue(q, s)
    if s.op == "dequeue":
        return dequeue(q)
    if s.op == "enqueue_timeout":
        return enqueue_timeout(q, s, errata)
    if s.op == "dequeue_timeout":
        return dequeue_timeout(q, s)
    reset_stats(q, errata)
    return {"outcome": OK}


def _run(capacity: int, steps: list[Step], errata: frozenset[str]) -> dict:
    q = new_queue(capacity, 0, errata)
    results = [run_step(q, s, errata) for s in steps]
    return {"results": results} | stats(q, errata)


def mpsc_op(capacity: int, steps: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run the steps on a fresh MpscQueue."""
    return _run(capacity, parse(steps, MPSC_FIELDS), errata)


def bounded_op(capacity: int, steps: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run the steps on a fresh BoundedQueue."""
    return _run(capacity, parse(steps, BOUNDED_FIELDS), errata)


def check_mpsc(a: dict) -> None:
    """The steps, whatever the profile (the capacity's bound depends on it)."""
    parse(a["steps"], MPSC_FIELDS)


def check_bounded(a: dict) -> None:
    """The steps, whatever the profile."""
    parse(a["steps"], BOUNDED_FIELDS)


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

_SCHEMAS = {"producer": U64.json_schema(), "message": U64.json_schema(),
            "timeout_ms": js.uint(32)}
_ANSWERS = js.array(js.one_of(
    js.obj({"outcome": {"enum": [OK]}}),
    js.obj({"outcome": {"enum": [QUEUE_FULL]}, "capacity": js.uint(64)}),
    js.obj({"outcome": {"enum": [OK]}, "producer": js.uint(64), "message": js.uint(64)}),
    js.obj({"outcome": {"enum": [QUEUE_EMPTY]}}),
    js.obj({"outcome": {"enum": [TIMEOUT]}, "timeout_ms": js.uint(32)})))


def _result() -> Any:
    return record(results=Json("[per-step answer]", _ANSWERS),
                  capacity=Field(U64, "the rounded capacity"),
                  len=Field(U64, "messages held: head - tail"),
                  enqueued=U64, dequeued=U64, dropped=Field(U64, "messages refused as full"),
                  depth=Field(U64, "QueueStats.depth: the messages held"),
                  max_depth=Field(U64, "the largest depth since creation or reset"))


def _step(ops: tuple[str, ...]) -> st.SearchStrategy:
    word = st.one_of(st.integers(0, 3), st.integers(0, WORD - 1))
    return st.one_of(*[st.fixed_dictionaries(
        {"op": st.just(op)} | {f: (st.integers(0, 2) if f == "timeout_ms" else word)
                               for f in BOUNDED_FIELDS[op]}) for op in ops])


def _domain(ops: tuple[str, ...]) -> Any:
    return lambda: st.fixed_dictionaries({"capacity": st.integers(0, 9),
                                          "steps": st.lists(_step(ops), max_size=30)})


def _enq(producer: int, *messages: int) -> list[dict]:
    return [{"op": "enqueue", "producer": producer, "message": m} for m in messages]


DEQ, RESET = {"op": "dequeue"}, {"op": "reset_stats"}
ZERO_COUNTS = {"enqueued": 0, "dequeued": 0, "dropped": 0}
"""The counters reset_stats zeroes."""
_INVALID = (
    InvalidCase("a capacity over the spec's bound",
                lambda: st.just({"capacity": MAX_CAPACITY + 1, "steps": []})),
    InvalidCase("an enqueue without a producer", lambda: st.just(
        {"capacity": 2, "steps": [{"op": "enqueue", "message": 1}]})),
    InvalidCase("a producer of 2^64", lambda: st.just(
        {"capacity": 2, "steps": [{"op": "enqueue", "producer": WORD, "message": 1}]})))
_FIELDS_DOC = {"producer": "the envelope's source kernel", "message": "the message",
               "timeout_ms": "the wait, in milliseconds"}

declare(
    "queue.mpsc", chapter=4,
    summary="RingKernel's MpscQueue: producers enqueue under one lock into an SpscQueue; "
            "each answer (a dequeue names the producer), the length and QueueStats.",
    args=record(capacity=Field(U64, f"requested capacity, 0 to {MAX_CAPACITY}"),
                steps=Field(Json("[step]", steps_schema(MPSC_FIELDS, _SCHEMAS, MPSC_FIELDS)),
                            "enqueue {producer, message} / dequeue / reset_stats")),
    result=_result(),
    spec=(enqueue, dequeue, reset_stats, stats), domain=_domain(tuple(MPSC_FIELDS)),
    check=check_mpsc, errata=("E4.108", E4_112),
    not_applicable={"cupy": "the steps are one sequence; each depends on the state the last "
                            "one left"},
    invalid=_INVALID,
    edges=lambda: [
        {"capacity": 3, "steps": [*_enq(1, 10), *_enq(2, 20), *_enq(1, 11), *_enq(3, 30),
                                  *_enq(2, 21), *[DEQ] * 5]},
        {"capacity": 4, "steps": [*_enq(1, 1, 2), RESET, DEQ, *_enq(2, 3)]},
        {"capacity": 0, "steps": [DEQ, *_enq(WORD - 1, WORD - 1), DEQ]}],
)


def _timed(producer: int, message: int, ms: int) -> dict:
    return {"op": "enqueue_timeout", "producer": producer, "message": message, "timeout_ms": ms}


declare(
    "queue.bounded", chapter=4,
    summary="RingKernel's BoundedQueue: an MpscQueue with waits that time out; each answer, "
            "the length and QueueStats.",
    args=record(capacity=Field(U64, f"requested capacity, 0 to {MAX_CAPACITY}"),
                steps=Field(Json("[step]", steps_schema(BOUNDED_FIELDS, _SCHEMAS,
                                                        BOUNDED_FIELDS)),
                            "enqueue / dequeue / enqueue_timeout / dequeue_timeout / "
                            "reset_stats")),
    result=_result(),
    spec=(enqueue_timeout, dequeue_timeout, reset_stats, stats),
    domain=_domain(tuple(BOUNDED_FIELDS)), check=check_bounded,
    errata=("E4.108", E4_111, E4_112),
    not_applicable={"numba": "waits and stats resets on a queue of at most a few dozen "
                             "steps: queue.mpsc's kernel covers the ring itself",
                    "cupy": "the steps are one sequence; each depends on the state the last "
                            "one left"},
    invalid=(*_INVALID, InvalidCase("a wait of 2^32 ms", lambda: st.just(
        {"capacity": 2, "steps": [{"op": "dequeue_timeout", "timeout_ms": 1 << 32}]}))),
    edges=lambda: [
        {"capacity": 2, "steps": [*_enq(1, 10, 11), _timed(2, 20, 0), _timed(2, 21, 5),
                                  DEQ, {"op": "dequeue_timeout", "timeout_ms": 0},
                                  {"op": "dequeue_timeout", "timeout_ms": 3},
                                  _timed(3, 30, 1)]}],
)

erratum(
    E4_111, "BoundedQueue::enqueue_timeout counts every failed try as a dropped message",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/queue.rs "
                                       "BoundedQueue::enqueue_timeout",
    ops=("queue.bounded",),
    witness={"args": {"capacity": 1, "steps": [*_enq(1, 7), _timed(1, 8, 1)]},
             "spec": {"dropped": 1}, "seed": {"dropped": 2}},
    also=({"op": "queue.bounded",
           "args": {"capacity": 1, "steps": [*_enq(1, 7), _timed(1, 8, 0), _timed(1, 9, 2)]},
           "spec": {"dropped": 2}, "seed": {"dropped": 3}},),
    flag="result",
    detail="The wait loop calls the inner try_enqueue on a clone of the envelope each time "
           "round, and each QueueFull adds one to the producer's dropped counter. A wait of "
           "more than 0 ms on a queue that stays full tries twice (before and after the wait) "
           "and counts 2 drops for one message; one that succeeds after a wait counts a drop "
           "for a message that was enqueued, so drop_rate overstates losses.",
)

erratum(
    E4_112, "After reset_stats, QueueStats.depth wraps to 2^64 - 1 and max_depth starts at 0",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/queue.rs "
                                       "SpscQueue::reset_stats, QueueStats::from",
    ops=("queue.mpsc", "queue.bounded", "queue.partitioned"),
    witness={"args": {"capacity": 4, "steps": [*_enq(1, 1, 2), RESET, DEQ]},
             "spec": {"len": 1, "depth": 1, "max_depth": 2},
             "seed": {"len": 1, "depth": WORD - 1, "max_depth": 0}},
    also=({"op": "queue.bounded", "args": {"capacity": 4, "steps": [*_enq(1, 1, 2), RESET]},
           "spec": {"len": 2, "depth": 2}, "seed": {"len": 2, "depth": 0}},
          {"op": "queue.partitioned", "args": {"partitions": 1, "capacity": 4, "steps": [
              {"op": "enqueue", "source": 0, "message": 1},
              {"op": "enqueue", "source": 0, "message": 2}, RESET]},
           "spec": {"total_messages": 2, "total": {**ZERO_COUNTS, "depth": 2, "max_depth": 2}},
           "seed": {"total_messages": 2, "total": {**ZERO_COUNTS, "depth": 0, "max_depth": 0}}}),
    flag="result",
    detail="reset_stats zeroes enqueued, dequeued, dropped and max_depth but not head and "
           "tail, and QueueStats.depth is enqueued - dequeued (wrapping): a queue holding "
           "messages reports depth 0 after a reset, and 2^64 - 1 once one of them is "
           "dequeued. The spec's depth is head - tail and max_depth restarts at it.",
)
