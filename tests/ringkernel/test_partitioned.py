"""RingKernel's PartitionedQueue (queue.partitioned): routing, rounding, the invalid index, the
round robin and the totals, as the real queue.rs (rustc -O) answers, and the spec's values
where an erratum departs."""

from __future__ import annotations

import pytest

from crucible_spec import load_all
from crucible_spec.engine import Implementation
from crucible_spec.proofs.core.model import explore
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.ringkernel import partitioned as pt
from crucible_spec.witness import check

load_all()
RK = profile_errata("ringkernel@1.1.0")
TOP = 2**64
OK = {"outcome": "ok"}


def _run(args: dict, errata: frozenset[str] = frozenset()) -> dict:
    return Implementation("reference", errata).call("queue.partitioned", args)


def _enq(source: int, *messages: int) -> list[dict]:
    return [{"op": "enqueue", "source": source, "message": m} for m in messages]


def _got(source: int, message: int) -> dict:
    return {"outcome": "ok", "source": source, "message": message}


def _stats(enq: int, deq: int, dropped: int, depth: int, top: int) -> dict:
    return {"enqueued": enq, "dequeued": deq, "dropped": dropped, "depth": depth,
            "max_depth": top}


ANY = {"op": "dequeue_any"}
IDLE = _stats(0, 0, 0, 0, 0)


@pytest.mark.parametrize("errata", [frozenset(), RK])
def test_three_partitions_of_0_are_four_of_1(errata):
    """Real: P 4, capacity 1; source 5 goes to partition 1; index 4 is refused."""
    r = _run({"partitions": 3, "capacity": 0, "steps": [
        *_enq(5, 1, 2), {"op": "dequeue", "partition": 1}, ANY,
        {"op": "dequeue", "partition": 4}]}, errata)
    assert r["results"] == [OK, {"outcome": "queue_full", "capacity": 1}, _got(5, 1),
                            {"outcome": "queue_empty"},
                            {"outcome": "invalid_config",
                             "message": "Invalid partition index: 4 (max: 3)"}]
    assert (r["partition_count"], r["capacity_per_partition"], r["total_capacity"],
            r["total_messages"]) == (4, 1, 4, 0)
    assert r["total"] == _stats(1, 1, 1, 0, 1)
    assert r["partitions"] == [IDLE, _stats(1, 1, 1, 0, 1), IDLE, IDLE]


ROUND = {"partitions": 4, "capacity": 4, "steps": [*_enq(0, 1, 2, 3), *_enq(1, 4, 5, 6),
                                                   *[ANY] * 4]}


def test_ringkernels_round_robin_serves_partition_0_three_times_in_four():
    """Real: 1, 4, 2, 3; totals max_depth 3 (the largest partition's), depth 2."""
    r = _run(ROUND, RK)
    assert r["results"][6:] == [_got(0, 1), _got(1, 4), _got(0, 2), _got(0, 3)]
    assert r["total"] == _stats(6, 4, 0, 2, 3)
    assert r["partitions"] == [_stats(3, 3, 0, 0, 3), _stats(3, 1, 0, 2, 3), IDLE, IDLE]


def test_the_spec_alternates_the_busy_partitions():
    """Derived: the cursor moves past the partition served: 1, 4, 2, 5; six were held."""
    r = _run(ROUND)
    assert r["results"][6:] == [_got(0, 1), _got(1, 4), _got(0, 2), _got(1, 5)]
    assert r["total"] == _stats(6, 4, 0, 2, 6)


def test_one_partition_and_a_reset():
    """Real (P 0 -> 1, capacity 2): after the reset the total depth wraps to 2^64 - 1."""
    args = {"partitions": 0, "capacity": 2, "steps": [*_enq(7, 1), *_enq(9, 2), *_enq(11, 3),
                                                      ANY, {"op": "reset_stats"}, ANY]}
    seed, spec = _run(args, RK), _run(args)
    assert seed["results"] == spec["results"] == [
        OK, OK, {"outcome": "queue_full", "capacity": 2}, _got(7, 1), OK, _got(9, 2)]
    assert seed["total"] == _stats(0, 1, 0, TOP - 1, 0)
    assert spec["total"] == _stats(0, 1, 0, 0, 1)


@pytest.mark.parametrize("args", [
    {"partitions": 65, "capacity": 1, "steps": []},
    {"partitions": 2, "capacity": 1, "steps": [{"op": "dequeue"}]},
    {"partitions": 2, "capacity": 1, "steps": [{"op": "enqueue", "source": -1, "message": 1}]},
])
def test_bad_input_is_refused(args):
    with pytest.raises(SpecError) as e:
        _run(args)
    assert e.value.code == "invalid_input"


@pytest.mark.parametrize("eid", ["E4.113", "E4.114", "E4.115", "E4.116"])
def test_every_erratum_reproduces(eid):
    assert check(REGISTRY.errata[eid]).startswith("reproduced")


def test_65_partitions_are_128_in_ringkernel():
    """Real: partition_count 128, total_capacity 128 for a capacity of 1."""
    r = _run({"partitions": 65, "capacity": 1, "steps": [*_enq(200, 1), ANY]}, RK)
    assert (r["partition_count"], r["total_capacity"]) == (128, 128)
    assert r["results"] == [OK, _got(200, 1)] and r["partitions"][72]["enqueued"] == 1


@pytest.mark.parametrize("producers,states,transitions", [(2, 15, 14), (3, 37, 39)])
def test_producers_of_one_partition_take_turns(producers, states, transitions):
    e = explore(pt.producers_machine(producers=producers))
    assert (e.violation, e.states, e.transitions) == (None, states, transitions)


def test_without_the_lock_two_producers_write_one_slot():
    """The real queue.rs, two threads of 2,000,000 enqueues each into one partition
    (rustc -O): enqueued counted 4,000,000 while 2.9 to 3.7 million were held."""
    e = explore(pt.shared_partition_machine(frozenset({pt.E4_116})))
    assert e.violation == pt.NOTHING_LOST
    assert e.trace[-2:] == ["P0 publishes head", "P1 writes the slot"]


def test_a_full_partition_drops_the_second_producer():
    s = pt.producers_machine().initial
    for i in (0, 0, 0, 0, 0, 1, 1):  # P0 lock, read, write, publish, count; P1 lock, read
        s = pt.producer_step(s, i)
    assert (s.head, s.enqueued, s.dropped, s.slots) == (1, 1, 1, (1,))
