"""Obligations of RingKernel's PartitionedQueue (chapter 4): each source's order kept in its
partition, a true round robin and totals that add up (PO4.123); producers that share a
partition lose nothing (PO4.125: 15 states and 14 transitions with 2 producers, 37 and 39 with
3)."""

from __future__ import annotations

from collections import deque

from ...spec.core.errata import NO_ERRATA
from ...spec.core.registry import Mutant
from ...spec.ringkernel import partitioned as pt
from ..core.obligation import Property, model_obligation, property_obligation
from .mpsc import rounded

# ── PO4.123: queue.partitioned ────────────────────────────────────────────────────────────────


def _against_partitions(args: dict) -> None:
    """Routing, per-partition FIFO, the round robin and the totals, from deques."""
    out = pt.partitioned_op(args["partitions"], args["capacity"], args["steps"])
    count, cap = rounded(max(args["partitions"], 1)), rounded(args["capacity"])
    parts: list[deque[tuple[int, int]]] = [deque() for _ in range(count)]
    cursor = top = 0
    for step, got in zip(args["steps"], out["results"], strict=True):
        if step["op"] == "enqueue":
            q = parts[step["source"] % count]
            if len(q) == cap:
                assert got == {"outcome": "queue_full", "capacity": cap}, got
                continue
            q.append((step["source"], step["message"]))
            top = max(top, sum(map(len, parts)))
            assert got == {"outcome": "ok"}, got
        elif step["op"] == "dequeue" and step["partition"] >= count:
            assert got["outcome"] == "invalid_config", got
        elif step["op"] == "dequeue":
            q = parts[step["partition"]]
            assert got == (_took(q.popleft()) if q else {"outcome": "queue_empty"}), got
        elif step["op"] == "dequeue_any":
            order = [(cursor + i) % count for i in range(count)]
            served = next((p for p in order if parts[p]), None)
            if served is None:
                assert got == {"outcome": "queue_empty"}, got
                continue
            cursor = (served + 1) % count
            assert got == _took(parts[served].popleft()), (got, served)
        else:
            top = sum(map(len, parts))
    held = sum(map(len, parts))
    assert out["partition_count"] == count and out["total_messages"] == held, out
    assert out["total"]["depth"] == held and out["total"]["max_depth"] == top, out
    for k in ("enqueued", "dequeued", "dropped", "depth"):
        assert out["total"][k] == sum(p[k] for p in out["partitions"]), (k, out)


def _took(entry: tuple[int, int]) -> dict:
    return {"outcome": "ok", "source": entry[0], "message": entry[1]}


@property_obligation(
    "PO4.123",
    "queue.partitioned routes source s to partition s mod P (P the rounded count), keeps "
    "each partition a FIFO of the rounded capacity, serves dequeue_any from the first "
    "non-empty partition at the cursor and moves the cursor past it, refuses a partition "
    "index >= P, and its totals are the partitions' sums with max_depth the largest total "
    "depth seen.",
    covers=("queue.partitioned",),
    subject=pt.partitioned_op,
    mutants=(
        Mutant.edit("cursor by calls", "E4.113: the cursor moves one per call",
                    pt.dequeue_any, "pq.cursor = (index + 1) % pq.count",
                    "pq.cursor = (start + 1) % pq.count"),
        Mutant.edit("largest partition's max", "E4.114 always on", pt.totals,
                    "biggest if E4_114 in errata else pq.max_total", "biggest"),
        Mutant.edit("mask without - 1", "the partition is source & P", pt.partition_for,
                    "source & (pq.count - 1)", "source & pq.count"),
        Mutant.edit("count not rounded", "3 partitions stay 3", pt.partition_count,
                    "1 << (max(requested, 1) - 1).bit_length()", "max(requested, 1)"),
        Mutant.edit("index bound one late", "partition P is accepted", pt.dequeue,
                    "partition >= pq.count", "partition > pq.count"),
    ),
)
def partitions_keep_order(_subject):
    return [Property("generated steps", _against_partitions,
                     strategy=pt.partitioned_domain, examples=300)]


# ── PO4.125: producers sharing a partition ────────────────────────────────────────────────────


@model_obligation(
    "PO4.125",
    "Two and three sources that map to one partition of capacity 1, enqueueing at once "
    "(every interleaving of take the lock, read head, write the slot, publish, count): every "
    "published message is held, and enqueued equals the messages held once counted.",
    covers=("queue.partitioned",),
    subject=pt.producers_machine,
    mutants=(
        Mutant.edit("no producer lock", "E4.116 always on", pt.producer_step,
                    "if p.pc == LOCK and E4_116 in errata:", "if p.pc == LOCK:"),
        Mutant.edit("full one late", "a full partition takes one more", pt.producer_step,
                    "s.head >= PARTITION_CAPACITY", "s.head > PARTITION_CAPACITY"),
        Mutant.edit("uncounted", "an enqueue leaves enqueued", pt.producer_step,
                    "enqueued=s.enqueued + 1", "enqueued=s.enqueued"),
    ),
)
def shared_partition(machine):
    return [machine(NO_ERRATA), machine(NO_ERRATA, producers=3)]
