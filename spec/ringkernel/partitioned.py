"""Chapter 4: RingKernel's PartitionedQueue (ringkernel-core queue.rs), as op
`queue.partitioned`.

P SPSC partitions (spec/ringkernel/queue.py), each of the same capacity; a source's messages
all go to one partition, so each source's order is kept.
1. P = the next power of two of max(partitions, 1), at most MAX_PARTITIONS requested (E4.115:
   RingKernel takes any count); each partition is new_queue(capacity).
2. enqueue (source, message): into partition source & (P - 1); ok or queue_full with the
   partition's capacity (the other partitions' room does not help).
3. dequeue (partition): that partition's oldest message; queue_empty; or, for an index >= P,
   invalid_config with RingKernel's message "Invalid partition index: i (max: P - 1)".
4. dequeue_any: round robin. The scan starts at the cursor, takes the first non-empty
   partition and moves the cursor past it; an empty queue leaves the cursor (E4.113:
   RingKernel's cursor moves on by one per call, whichever partition served).
5. reset_stats: every partition's (queue.mpsc step 6).
6. Totals: enqueued, dequeued, dropped and depth summed; max_depth is the largest total depth
   seen (E4.114: RingKernel's is the largest partition's max_depth, below depth whenever two
   partitions hold messages).
7. Concurrent producers (`producers_machine`): sources that share a partition enqueue one at
   a time, under the partition's producer lock: take the lock, read head and tail (full:
   drop), write the slot, publish head + 1, count, release (E4.116: RingKernel takes no lock,
   so two producers can read one head and write one slot).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..core import shapes as js
from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.layout import u64
from ..core.machine import Machine
from ..core.registry import InvalidCase, declare
from ..core.schema import U64, Field, Json, record
from ..core.steps import parse_steps, step_field, steps_schema
from ..core.strategies import st
from .mpsc import reset_stats, stats
from .queue import (
    MAX_CAPACITY,
    OK,
    QUEUE_EMPTY,
    QUEUE_FULL,
    WORD,
    SpscQueue,
    depth,
    new_queue,
    try_dequeue,
    try_enqueue,
)

MAX_PARTITIONS = 64
"""The spec's bound on the requested partition count."""
INVALID_CONFIG = "invalid_config"
E4_113, E4_114, E4_115, E4_116 = "E4.113", "E4.114", "E4.115", "E4.116"
STEP_FIELDS = {"enqueue": ("source", "message"), "dequeue": ("partition",), "dequeue_any": (),
               "reset_stats": ()}


@dataclass
class PartitionedQueue:
    """The partitions, the dequeue_any cursor and the largest total depth seen."""

    partitions: list[SpscQueue]
    cursor: int = 0
    max_total: int = 0

    @property
    def count(self) -> int:
        return len(self.partitions)


def partition_count(requested: int, errata: frozenset[str] = NO_ERRATA) -> int:
    """Step 1: the next power of two of max(requested, 1) (E4.115: any count up to 2^63)."""
    bound = WORD // 2 if E4_115 in errata else MAX_PARTITIONS
    if not 0 <= requested <= bound:
        raise InvalidInput(f"args.partitions: {requested} is over the spec's bound "
                           f"{MAX_PARTITIONS}")
    return 1 << (max(requested, 1) - 1).bit_length()


def new_partitioned(partitions: int, capacity: int, errata: frozenset[str] = NO_ERRATA
                    ) -> PartitionedQueue:
    """Step 1."""
    return PartitionedQueue([new_queue(capacity, 0, errata)
                             for _ in range(partition_count(partitions, errata))])


def partition_for(pq: PartitionedQueue, source: int) -> int:
    """Step 2: the source's partition."""
    return source & (pq.count - 1)


def total_depth(pq: PartitionedQueue) -> int:
    return sum(depth(p) for p in pq.partitions)


def enqueue(pq: PartitionedQueue, source: int, message: int) -> dict:
    """Step 2."""
    p = pq.partitions[partition_for(pq, source)]
    if try_enqueue(p, source << 64 | message) != OK:
        return {"outcome": QUEUE_FULL, "capacity": p.capacity}
    pq.max_total = max(pq.max_total, total_depth(pq))
    return {"outcome": OK}


def _taken(got: int | None) -> dict:
    if got is None:
        return {"outcome": QUEUE_EMPTY}
    return {"outcome": OK, "source": got >> 64, "message": got & (WORD - 1)}


def dequeue(pq: PartitionedQueue, partition: int) -> dict:
    """Step 3."""
    if partition >= pq.count:
        return {"outcome": INVALID_CONFIG, "message": f"Invalid partition index: {partition} "
                                                      f"(max: {pq.count - 1})"}
    return _taken(try_dequeue(pq.partitions[partition]))


def dequeue_any(pq: PartitionedQueue, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Step 4."""
    start = pq.cursor
    if E4_113 in errata:
        pq.cursor = (pq.cursor + 1) % pq.count
    for i in range(pq.count):
        index = (start + i) % pq.count
        got = try_dequeue(pq.partitions[index])
        if got is not None:
            if E4_113 not in errata:
                pq.cursor = (index + 1) % pq.count
            return _taken(got)
    return _taken(None)


def totals(pq: PartitionedQueue, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Step 6."""
    each = [stats(p, errata) for p in pq.partitions]
    out = {k: sum(s[k] for s in each) % WORD for k in ("enqueued", "dequeued", "dropped",
                                                        "depth")}
    biggest = max(s["max_depth"] for s in each)
    return out | {"max_depth": biggest if E4_114 in errata else pq.max_total}


def _stat(s: dict) -> dict:
    return {k: s[k] for k in ("enqueued", "dequeued", "dropped", "depth", "max_depth")}


def run_step(pq: PartitionedQueue, op: str, s: dict, errata: frozenset[str]) -> dict:
    """One step's answer."""
    if op == "enqueue":
        return enqueue(pq, s["source"], s["message"])
    if op == "dequeue":
        return dequeue(pq, s["partition"])
    if op == "dequeue_any":
        return dequeue_any(pq, errata)
    for p in pq.partitions:
        reset_stats(p, errata)
    pq.max_total = total_depth(pq)
    return {"outcome": OK}


def parse(steps: Any) -> list[tuple[str, dict]]:
    """The steps, each field a u64."""
    return [(op, {f: step_field(s, f, u64, InvalidInput, f"args.steps[{i}]")
                  for f in STEP_FIELDS[op]})
            for i, (op, s) in enumerate(parse_steps(steps, STEP_FIELDS))]


def partitioned_op(partitions: int, capacity: int, steps: Any,
                   errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run the steps on a fresh PartitionedQueue."""
    parsed = parse(steps)
    pq = new_partitioned(partitions, capacity, errata)
    results = [run_step(pq, op, s, errata) for op, s in parsed]
    cap = pq.partitions[0].capacity
    return {"results": results, "partition_count": pq.count, "capacity_per_partition": cap,
            "total_capacity": cap * pq.count, "total_messages": total_depth(pq),
            "total": totals(pq, errata),
            "partitions": [_stat(stats(p, errata)) for p in pq.partitions]}


def check_args(a: dict) -> None:
    """The steps, whatever the profile (the count's bound depends on it)."""
    parse(a["steps"])


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

_STATS = js.obj({k: js.uint(64) for k in ("enqueued", "dequeued", "dropped", "depth",
                                          "max_depth")})
_ANSWERS = js.array(js.one_of(
    js.obj({"outcome": {"enum": [OK]}}),
    js.obj({"outcome": {"enum": [QUEUE_FULL]}, "capacity": js.uint(64)}),
    js.obj({"outcome": {"enum": [OK]}, "source": js.uint(64), "message": js.uint(64)}),
    js.obj({"outcome": {"enum": [QUEUE_EMPTY]}}),
    js.obj({"outcome": {"enum": [INVALID_CONFIG]}, "message": js.STRING})))


def partitioned_domain() -> st.SearchStrategy:
    """Valid inputs: small partition counts and capacities, sources often colliding."""
    small = st.integers(0, 9)
    step = st.one_of(
        st.fixed_dictionaries({"op": st.just("enqueue"), "source": st.one_of(
            small, st.integers(0, WORD - 1)), "message": st.integers(0, WORD - 1)}),
        st.fixed_dictionaries({"op": st.just("dequeue"), "partition": small}),
        st.just({"op": "dequeue_any"}), st.just({"op": "reset_stats"}))
    return st.fixed_dictionaries({"partitions": st.integers(0, 9),
                                  "capacity": st.integers(0, 5),
                                  "steps": st.lists(step, max_size=30)})


def _enq(source: int, *messages: int) -> list[dict]:
    return [{"op": "enqueue", "source": source, "message": m} for m in messages]


ANY = {"op": "dequeue_any"}
ROUND_ROBIN = {"partitions": 4, "capacity": 4,
               "steps": [*_enq(0, 1, 2, 3), *_enq(1, 4, 5, 6), *[ANY] * 4]}
"""Two busy partitions of four: RingKernel serves partition 0 three times in four."""

declare(
    "queue.partitioned", chapter=4,
    summary="RingKernel's PartitionedQueue: a source's messages go to SPSC partition "
            "source & (P - 1); dequeues name a partition or take the next in round robin; "
            "each answer, the sizes and the total and per-partition QueueStats.",
    args=record(partitions=Field(U64, f"requested partitions, 0 to {MAX_PARTITIONS}; rounded "
                                      "up to a power of two"),
                capacity=Field(U64, f"each partition's requested capacity, 0 to "
                                    f"{MAX_CAPACITY}"),
                steps=Field(Json("[step]", steps_schema(STEP_FIELDS, {
                    "source": U64.json_schema(), "message": U64.json_schema(),
                    "partition": U64.json_schema()}, STEP_FIELDS)),
                    "enqueue {source, message} / dequeue {partition} / dequeue_any / "
                    "reset_stats")),
    result=record(results=Json("[per-step answer]", _ANSWERS),
                  partition_count=Field(U64, "P"),
                  capacity_per_partition=Field(U64, "each partition's rounded capacity"),
                  total_capacity=Field(U64, "P x the partition capacity"),
                  total_messages=Field(U64, "messages held in all partitions"),
                  total=Json("QueueStats", _STATS),
                  partitions=Json("[QueueStats]", js.array(_STATS))),
    spec=(partition_count, partition_for, dequeue_any, totals), domain=partitioned_domain,
    check=check_args, errata=("E4.108", "E4.112", E4_113, E4_114, E4_115, E4_116),
    not_applicable={"numba": "a few dozen steps over several small rings, each step a "
                             "handful of comparisons: the run is decoding, not a loop",
                    "cupy": "the steps are one sequence; each depends on the state the last "
                            "one left"},
    invalid=(InvalidCase("65 partitions", lambda: st.just(
        {"partitions": MAX_PARTITIONS + 1, "capacity": 1, "steps": []})),
             InvalidCase("a dequeue without a partition", lambda: st.just(
                 {"partitions": 2, "capacity": 1, "steps": [{"op": "dequeue"}]}))),
    edges=lambda: [
        ROUND_ROBIN,
        {"partitions": 3, "capacity": 0, "steps": [*_enq(5, 1, 2), {"op": "dequeue",
                                                                     "partition": 1}, ANY]},
        {"partitions": 4, "capacity": 4, "steps": [*_enq(0, 1), *_enq(1, 2),
                                                   {"op": "dequeue", "partition": 100}]}],
)

erratum(
    E4_113, "PartitionedQueue::try_dequeue_any's round robin favours the partition after an "
            "empty run",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/queue.rs "
                                       "PartitionedQueue::try_dequeue_any",
    ops=("queue.partitioned",),
    witness={"args": ROUND_ROBIN,
             "spec": {"results": [{"outcome": OK}] * 6 + [
                 {"outcome": OK, "source": 0, "message": 1},
                 {"outcome": OK, "source": 1, "message": 4},
                 {"outcome": OK, "source": 0, "message": 2},
                 {"outcome": OK, "source": 1, "message": 5}]},
             "seed": {"results": [{"outcome": OK}] * 6 + [
                 {"outcome": OK, "source": 0, "message": 1},
                 {"outcome": OK, "source": 1, "message": 4},
                 {"outcome": OK, "source": 0, "message": 2},
                 {"outcome": OK, "source": 0, "message": 3}]}},
    flag="result",
    detail="The scan starts at dequeue_index, which each call raises by one atomically: the "
           "cursor moves on by one per call, not past the partition that served. With "
           "partitions 0 and 1 busy and 2 and 3 empty, the calls starting at 2 and 3 both "
           "wrap round to partition 0, which gets three dequeues in four, against the "
           "documented fair round robin. The spec's cursor moves past the partition served.",
)

erratum(
    E4_114, "PartitionedQueue::stats reports a total max_depth below the total depth",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/queue.rs "
                                       "PartitionedQueue::stats",
    ops=("queue.partitioned",),
    witness={"args": {"partitions": 4, "capacity": 4, "steps": [*_enq(0, 1), *_enq(1, 2)]},
             "spec": {"total": {"enqueued": 2, "dequeued": 0, "dropped": 0, "depth": 2,
                                "max_depth": 2}},
             "seed": {"total": {"enqueued": 2, "dequeued": 0, "dropped": 0, "depth": 2,
                                "max_depth": 1}}},
    flag="result",
    detail="The aggregate sums the partitions' depths but takes the largest partition's "
           "max_depth, so the queue reports holding 2 messages with a maximum depth "
           "observed of 1. The spec's total max_depth is the largest total depth seen.",
)

erratum(
    E4_115, "PartitionedQueue::new takes any partition count",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/queue.rs "
                                       "PartitionedQueue::new",
    ops=("queue.partitioned",),
    witness={"args": {"partitions": MAX_PARTITIONS + 1, "capacity": 1, "steps": []},
             "spec": {"error": "invalid_input"},
             "seed": {"partition_count": 2 * MAX_PARTITIONS, "total_capacity": 2 * MAX_PARTITIONS}},
    flag="result",
    detail="partition_count.max(1).next_power_of_two() is not bounded: any count is honoured, "
           "one SpscQueue per partition, and past 2^63 the release build wraps it to 0: a "
           "queue with no partitions whose partition_for computes 0 - 1 and whose every "
           "enqueue indexes past the end and panics (the spec keeps such counts invalid in "
           "both profiles). The spec refuses counts above its bound of 64.",
)


# ── step 7: producers sharing a partition ─────────────────────────────────────────────────────

LOCK, READ, WRITE, PUBLISH, COUNT, DONE = range(6)
PRODUCER_STEPS = ("takes the lock", "reads head and tail", "writes the slot", "publishes head",
                  "counts and releases")
PARTITION_CAPACITY = 1
NOTHING_LOST = "every published message is held"
STATS_HELD = "enqueued - dequeued is the messages held"


class Producer(NamedTuple):
    pc: int
    message: int
    seen: int = 0
    """The head it read."""
    published: bool = False


class Partition(NamedTuple):
    head: int
    slots: tuple[int, ...]
    enqueued: int
    dropped: int
    lock: int | None
    producers: tuple[Producer, ...]


def producer_step(s: Partition, i: int, errata: frozenset[str] = NO_ERRATA) -> Partition | None:
    """Step 7 for producer i (the consumer is idle: tail stays 0)."""
    p = s.producers[i]

    def at(pc: int, seen: int = p.seen, published: bool = p.published, **fields: Any
           ) -> Partition:
        moved = tuple(Producer(pc, p.message, seen, published) if j == i else q
                      for j, q in enumerate(s.producers))
        return s._replace(producers=moved, **fields)

    if p.pc == LOCK and E4_116 in errata:
        return at(READ)
    if p.pc == LOCK:
        return at(READ, lock=i) if s.lock is None else None
    if p.pc == READ and s.head >= PARTITION_CAPACITY:
        return at(DONE, dropped=s.dropped + 1, lock=None)
    if p.pc == READ:
        return at(WRITE, seen=s.head)
    if p.pc == WRITE:
        return at(PUBLISH, slots=tuple(p.message if k == p.seen % PARTITION_CAPACITY else m
                                       for k, m in enumerate(s.slots)))
    if p.pc == PUBLISH:
        return at(COUNT, published=True, head=p.seen + 1)
    if p.pc == COUNT:
        return at(DONE, enqueued=s.enqueued + 1, lock=None)
    return None


def producers_steps(s: Partition, errata: frozenset[str]) -> Iterator[tuple[str, Partition]]:
    for i, p in enumerate(s.producers):
        nxt = producer_step(s, i, errata)
        if nxt is not None:
            what = "starts (no lock)" if p.pc == LOCK and E4_116 in errata else \
                PRODUCER_STEPS[p.pc]
            yield f"P{i} {what}", nxt


def nothing_lost(s: Partition) -> bool:
    """A producer past its publish has its message in a slot below head (tail is 0)."""
    held = {s.slots[k % PARTITION_CAPACITY] for k in range(s.head)}
    return all(p.message in held for p in s.producers if p.published)


def producers_machine(errata: frozenset[str] = NO_ERRATA, producers: int = 2) -> Machine:
    """`producers` sources that map to one partition of capacity 1, one message each."""
    start = Partition(0, (0,) * PARTITION_CAPACITY, 0, 0, None,
                      tuple(Producer(LOCK, m) for m in range(1, producers + 1)))
    return Machine(
        f"PartitionedQueue producers={producers} capacity={PARTITION_CAPACITY}", start,
        lambda s: producers_steps(s, errata), (
            (NOTHING_LOST, nothing_lost),
            (STATS_HELD, lambda s: any(p.pc == COUNT for p in s.producers) or
             s.enqueued == s.head)),
        done=lambda s: all(p.pc == DONE for p in s.producers))


def shared_partition_machine(errata: frozenset[str] = NO_ERRATA) -> Machine:
    """E4.116 alone: two sources of one partition enqueue at once."""
    return producers_machine(errata & {E4_116})


erratum(
    E4_116, "Two producers whose sources share a partition can write one slot: a message is "
            "lost and counted",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/queue.rs "
                                       "PartitionedQueue::try_enqueue_from",
    ops=("queue.partitioned",),
    witness={"machine": "ringkernel.partitioned.shared_partition_machine",
             "invariant": NOTHING_LOST},
    flag="model",
    detail="PartitionedQueue is offered for many producers, but each partition is a plain "
           "SpscQueue and try_enqueue_from takes no lock: two sources that map to one "
           "partition both read head h, both write slot h & mask and both store h + 1. One "
           "message is overwritten, head moves once and enqueued (an atomic add) counts two, "
           "so stats say 2 held while the queue holds 1. The spec serialises a partition's "
           "producers (MpscQueue's producer lock, per partition).",
)
