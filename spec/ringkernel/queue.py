"""Chapter 4: RingKernel's host SpscQueue (ringkernel-core queue.rs), as op `queue.simulate`.

1. capacity = the next power of two of the requested capacity (RingKernel's
   `usize::next_power_of_two`, so a request of 0 gives 1); mask = capacity - 1. The spec
   refuses requests above MAX_CAPACITY (RingKernel's largest tier is 16384; SpscQueue::new
   takes any, and past 2^63 its release build rounds to 0, a queue that refuses every
   message: E4.108).
2. head (producer) and tail (consumer) are free-running u64 counters, both starting at
   `start` (0 in RingKernel; any value here, so that wrapping past 2^64 can be run).
3. enqueue: full iff head - tail >= capacity (mod 2^64): dropped += 1, outcome queue_full;
   otherwise the message goes to slot head & mask, head += 1, enqueued += 1 and
   max_depth = max(max_depth, head - tail).
4. dequeue: empty iff head == tail: outcome queue_empty; otherwise the message leaves slot
   tail & mask, tail += 1, dequeued += 1.
5. depth = enqueued - dequeued (RingKernel's QueueStats), which equals head - tail.

Steps: {"op": "enqueue", "message": u64} and {"op": "dequeue"}. Answers: enqueue
{"outcome": "ok"} or {"outcome": "queue_full", "capacity"}; dequeue {"outcome": "ok",
"message"} or {"outcome": "queue_empty"}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.layout import u64
from ..core.registry import InvalidCase, declare
from ..core.schema import U64, Field, Json, record
from ..core.steps import parse_steps, step_field, steps_schema
from ..core.strategies import st

WORD = 1 << 64
MAX_CAPACITY = 1 << 16
"""The spec's bound on the requested capacity."""
OK, QUEUE_FULL, QUEUE_EMPTY = "ok", "queue_full", "queue_empty"
E4_108 = "E4.108"


@dataclass
class SpscQueue:
    """The queue's state: slots by index, counters and producer/consumer stats."""

    capacity: int
    head: int = 0
    tail: int = 0
    slots: dict[int, int] = field(default_factory=dict)
    enqueued: int = 0
    dequeued: int = 0
    dropped: int = 0
    max_depth: int = 0

    @property
    def mask(self) -> int:
        return self.capacity - 1


def round_capacity(requested: int, errata: frozenset[str] = NO_ERRATA) -> int:
    """Step 1: the smallest power of two >= requested (1 for 0; E4.108: any u64, 0 past
    2^63)."""
    if E4_108 in errata and MAX_CAPACITY < requested < WORD:
        return 0 if requested > WORD // 2 else 1 << (requested - 1).bit_length()
    if not 0 <= requested <= MAX_CAPACITY:
        raise InvalidInput(f"args.capacity: {requested} is over the spec's bound "
                           f"{MAX_CAPACITY}")
    return 1 if requested <= 1 else 1 << (requested - 1).bit_length()


def new_queue(requested: int, start: int = 0, errata: frozenset[str] = NO_ERRATA
              ) -> SpscQueue:
    """Steps 1-2."""
    return SpscQueue(round_capacity(requested, errata), start, start)


def depth(q: SpscQueue) -> int:
    """head - tail, wrapping."""
    return (q.head - q.tail) % WORD


def is_full(q: SpscQueue) -> bool:
    return depth(q) >= q.capacity


def is_empty(q: SpscQueue) -> bool:
    return q.head == q.tail


def try_enqueue(q: SpscQueue, message: int) -> str:
    """Step 3."""
    if is_full(q):
        q.dropped += 1
        return QUEUE_FULL
    q.slots[q.head & q.mask] = message
    q.head = (q.head + 1) % WORD
    q.enqueued += 1
    q.max_depth = max(q.max_depth, depth(q))
    return OK


def try_dequeue(q: SpscQueue) -> int | None:
    """Step 4: the message, or None when empty."""
    if is_empty(q):
        return None
    message = q.slots.pop(q.tail & q.mask)
    q.tail = (q.tail + 1) % WORD
    q.dequeued += 1
    return message


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

STEP_FIELDS = {"enqueue": ("message",), "dequeue": ()}
STEPS = steps_schema(STEP_FIELDS, {"message": U64.json_schema()}, {"enqueue": ("message",)})
ANSWERS = js.array(js.one_of(
    js.obj({"outcome": {"enum": [OK]}}), js.obj({"outcome": {"enum": [QUEUE_FULL]},
                                                 "capacity": js.uint(64)}),
    js.obj({"outcome": {"enum": [OK]}, "message": js.uint(64)}),
    js.obj({"outcome": {"enum": [QUEUE_EMPTY]}})))
"""Answers: enqueue {outcome ok} / {outcome queue_full, capacity}; dequeue {outcome ok,
message} / {outcome queue_empty}."""


def queue_steps(steps: Any) -> list[tuple[str, int]]:
    """Parsed steps: ("enqueue", message) / ("dequeue", 0)."""
    return [(op, step_field(s, "message", u64, InvalidInput, f"args.steps[{i}]")
             if op == "enqueue" else 0)
            for i, (op, s) in enumerate(parse_steps(steps, STEP_FIELDS))]


def final_state(q: SpscQueue) -> dict:
    return {"capacity": q.capacity, "head": q.head, "tail": q.tail, "enqueued": q.enqueued,
            "dequeued": q.dequeued, "dropped": q.dropped,
            "depth": (q.enqueued - q.dequeued) % WORD, "max_depth": q.max_depth}


def simulate_op(capacity: int, steps: Any, start: int = 0,
                errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run the steps on a fresh queue."""
    q = new_queue(capacity, start, errata)
    results: list[dict] = []
    for op, message in queue_steps(steps):
        if op == "enqueue":
            outcome = try_enqueue(q, message)
            results.append({"outcome": OK} if outcome == OK
                            else {"outcome": QUEUE_FULL, "capacity": q.capacity})
        else:
            got = try_dequeue(q)
            results.append({"outcome": QUEUE_EMPTY} if got is None
                           else {"outcome": OK, "message": got})
    return {"results": results} | final_state(q)


def check_args(a: dict) -> None:
    """The steps, whatever the profile (the capacity's bound depends on it: simulate_op)."""
    queue_steps(a["steps"])


def _domain() -> st.SearchStrategy:
    step = st.one_of(st.builds(lambda m: {"op": "enqueue", "message": m},
                               st.integers(0, WORD - 1)), st.just({"op": "dequeue"}))
    return st.fixed_dictionaries({
        "capacity": st.integers(0, 9), "steps": st.lists(step, max_size=40),
        "start": st.one_of(st.just(0), st.integers(WORD - 12, WORD - 1),
                           st.integers(0, WORD - 1))})


def _enq(*messages: int) -> list[dict]:
    return [{"op": "enqueue", "message": m} for m in messages]


DEQ = {"op": "dequeue"}

declare(
    "queue.simulate", chapter=4,
    summary="RingKernel's SpscQueue: enqueues and dequeues in order on a power-of-two ring "
            "with free-running u64 counters; each outcome, the counters and the stats.",
    args=record(capacity=Field(U64, f"requested capacity, 0 to {MAX_CAPACITY}; rounded up "
                                    "to a power of two"),
                steps=Field(Json("[step]", STEPS), "enqueue / dequeue steps"),
                start=Field(U64, "the counters' first value", 0)),
    result=record(results=Json("[per-step result]", ANSWERS),
                  capacity=Field(U64, "the rounded capacity"),
                  head=Field(U64, "producer counter"), tail=Field(U64, "consumer counter"),
                  enqueued=U64, dequeued=U64, dropped=Field(U64, "enqueues refused as full"),
                  depth=Field(U64, "enqueued - dequeued"),
                  max_depth=Field(U64, "the largest head - tail after an enqueue")),
    spec=(round_capacity, try_enqueue, try_dequeue, is_full, is_empty), domain=_domain,
    check=check_args, errata=(E4_108,),
    not_applicable={"cupy": "the steps are one sequence; each depends on the state the last "
                            "one left"},
    invalid=(InvalidCase("a capacity of 2^70", lambda: st.just({"capacity": 2**70,
                                                                 "steps": []})),
             InvalidCase("a capacity over the spec's bound",
                         lambda: st.just({"capacity": MAX_CAPACITY + 1, "steps": []})),
             InvalidCase("an unknown step", lambda: st.just({"capacity": 2,
                                                              "steps": [{"op": "push"}]})),
             InvalidCase("a message given as a decimal string", lambda: st.just(
                 {"capacity": 2, "steps": [{"op": "enqueue", "message": "12"}]})),
             InvalidCase("an enqueue without a message",
                         lambda: st.just({"capacity": 2, "steps": [{"op": "enqueue"}]}))),
    edges=lambda: [
        {"capacity": 3, "steps": _enq(1, 2, 3, 4, 5, 6) + [DEQ] * 5 + _enq(7)},
        {"capacity": 0, "steps": [DEQ, *_enq(9, 10), DEQ, DEQ]},
        {"capacity": 2, "steps": _enq(1, 2) + [DEQ] + _enq(3, 4) + [DEQ] * 3,
         "start": WORD - 2},
        {"capacity": MAX_CAPACITY, "steps": [*_enq(WORD - 1), DEQ]}],
)

OVER_BOUND = {"capacity": MAX_CAPACITY + 1, "steps": [*_enq(7), DEQ]}
"""A request past the spec's bound: RingKernel makes a queue of 2^17."""
WRAPPED = {"capacity": WORD // 2 + 1, "steps": [*_enq(7), DEQ]}
"""A request past 2^63: next_power_of_two wraps to 0 in RingKernel's release build."""

erratum(
    E4_108, "SpscQueue::new takes any capacity, and one past 2^63 makes a queue of 0",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/queue.rs SpscQueue::new",
    ops=("queue.simulate", "queue.mpsc", "queue.bounded", "queue.partitioned"),
    witness={"args": WRAPPED, "spec": {"error": "invalid_input"},
             "seed": {"capacity": 0, "dropped": 1,
                      "results": [{"outcome": QUEUE_FULL, "capacity": 0},
                                  {"outcome": QUEUE_EMPTY}]}},
    also=({"op": "queue.simulate", "args": OVER_BOUND, "spec": {"error": "invalid_input"},
           "seed": {"capacity": 2 * MAX_CAPACITY, "enqueued": 1, "dequeued": 1}},
          {"op": "queue.mpsc", "args": {"capacity": WORD // 2 + 1, "steps": [
              {"op": "enqueue", "producer": 1, "message": 7}]},
           "spec": {"error": "invalid_input"},
           "seed": {"capacity": 0, "dropped": 1, "results": [{"outcome": QUEUE_FULL,
                                                              "capacity": 0}]}},
          {"op": "queue.bounded", "args": {"capacity": WORD // 2 + 1, "steps": [
              {"op": "enqueue", "producer": 1, "message": 7}]},
           "spec": {"error": "invalid_input"}, "seed": {"capacity": 0, "dropped": 1}},
          {"op": "queue.partitioned", "args": {"partitions": 1, "capacity": WORD // 2 + 1,
                                               "steps": [{"op": "enqueue", "source": 0,
                                                          "message": 7}]},
           "spec": {"error": "invalid_input"},
           "seed": {"capacity_per_partition": 0, "total_capacity": 0}}),
    flag="result",
    detail="capacity.next_power_of_two() is not checked: a request of 2^63 + 1 or more wraps "
           "to 0 in the release build (a debug build panics), mask = 0 - 1 wraps too, and "
           "every enqueue finds head - tail >= 0 and is dropped as QueueFull { capacity: 0 }. "
           "Below that any request is honoured, one envelope slot per place, so a caller can "
           "ask for a queue of 2^40 slots. The spec refuses requests above its bound of 2^16.",
)
