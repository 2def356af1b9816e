"""RingKernel's MpscQueue and BoundedQueue (queue.mpsc, queue.bounded): answers and QueueStats
as the real queue.rs gives them (built with rustc -O and run on these steps), the spec's
intended values where an erratum departs, numba against the reference, bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.witness import check

load_all()
RK = "ringkernel@1.1.0"
TOP = 2**64
OK = {"outcome": "ok"}
EMPTY = {"outcome": "queue_empty"}


def _ask(op: str, args: dict, impl: str = "reference", profile: str = "crucible") -> dict:
    return answer(json.dumps({"id": 1, "op": op, "args": args}),
                  Implementation(impl, profile_errata(profile)), profile)


def _enq(producer: int, *messages: int) -> list[dict]:
    return [{"op": "enqueue", "producer": producer, "message": m} for m in messages]


def _got(producer: int, message: int) -> dict:
    return {"outcome": "ok", "producer": producer, "message": message}


def _timeout(ms: int) -> dict:
    return {"outcome": "timeout", "timeout_ms": ms}


DEQ, RESET = {"op": "dequeue"}, {"op": "reset_stats"}


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("profile", ["crucible", RK])
def test_one_fifo_across_producers(impl, profile):
    """Real: capacity 3 rounds to 4, the fifth enqueue is refused, order is global."""
    steps = [*_enq(1, 10), *_enq(2, 20), *_enq(1, 11), *_enq(3, 30), *_enq(2, 21), *[DEQ] * 5]
    r = _ask("queue.mpsc", {"capacity": 3, "steps": steps}, impl, profile)["result"]
    assert r["results"] == [OK] * 4 + [{"outcome": "queue_full", "capacity": 4},
                                       _got(1, 10), _got(2, 20), _got(1, 11), _got(3, 30), EMPTY]
    assert r == r | {"capacity": 4, "len": 0, "enqueued": 4, "dequeued": 4, "dropped": 1,
                     "depth": 0, "max_depth": 4}


RESET_RUN = {"capacity": 4, "steps": [*_enq(1, 1, 2), RESET, DEQ, *_enq(2, 3)]}


def test_reset_stats_in_ringkernel_leaves_depth_0_with_two_held():
    """Real: len 2, enqueued 1, dequeued 1, depth 0, max_depth 2."""
    r = _ask("queue.mpsc", RESET_RUN, profile=RK)["result"]
    assert r["results"] == [OK, OK, OK, _got(1, 1), OK]
    assert (r["len"], r["enqueued"], r["dequeued"], r["depth"], r["max_depth"]) == (2, 1, 1, 0, 2)


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_reset_stats_in_the_spec_keeps_depth_the_messages_held(impl):
    """Derived: two held at the reset (max_depth 2), one out, one in: depth 2."""
    r = _ask("queue.mpsc", RESET_RUN, impl)["result"]
    assert (r["len"], r["enqueued"], r["dequeued"], r["depth"], r["max_depth"]) == (2, 1, 1, 2, 2)


def test_a_dequeue_after_reset_wraps_ringkernels_depth():
    r = _ask("queue.mpsc", {"capacity": 4, "steps": [*_enq(1, 1, 2), RESET, DEQ]},
             profile=RK)["result"]
    assert (r["len"], r["depth"], r["max_depth"]) == (1, TOP - 1, 0)


BOUNDED_RUN = {"capacity": 2, "steps": [
    *_enq(1, 10, 11),
    {"op": "enqueue_timeout", "producer": 2, "message": 20, "timeout_ms": 0},
    {"op": "enqueue_timeout", "producer": 2, "message": 21, "timeout_ms": 5}, DEQ,
    {"op": "dequeue_timeout", "timeout_ms": 0}, {"op": "dequeue_timeout", "timeout_ms": 3},
    {"op": "enqueue_timeout", "producer": 3, "message": 30, "timeout_ms": 1}]}
BOUNDED_RESULTS = [OK, OK, _timeout(0), _timeout(5), _got(1, 10), _got(1, 11), _timeout(3), OK]


@pytest.mark.parametrize("profile,dropped", [("crucible", 2), (RK, 3)])
def test_waits_time_out_and_ringkernel_counts_each_try(profile, dropped):
    """Real: dropped 3 (1 for the 0 ms wait, 2 for the 5 ms one); the spec counts 1 each."""
    r = _ask("queue.bounded", BOUNDED_RUN, profile=profile)["result"]
    assert r["results"] == BOUNDED_RESULTS
    assert r == r | {"capacity": 2, "len": 1, "enqueued": 3, "dequeued": 2, "depth": 1,
                     "max_depth": 2, "dropped": dropped}


@pytest.mark.parametrize("args,code,field", [
    ({"capacity": 65537, "steps": []}, "invalid_input", "args.capacity"),
    ({"capacity": 2, "steps": [{"op": "enqueue", "message": 1}]}, "invalid_input",
     "args.steps[0]"),
    ({"capacity": 2, "steps": [{"op": "enqueue", "producer": TOP, "message": 1}]},
     "invalid_input", "args.steps[0].producer"),
    ({"capacity": 2, "steps": [{"op": "enqueue_timeout", "producer": 1, "message": 1,
                                "timeout_ms": 1}]}, "invalid_input", "args.steps[0]"),
])
def test_bad_mpsc_input_names_the_field(args, code, field):
    err = _ask("queue.mpsc", args)["error"]
    assert err["code"] == code and err["message"].startswith(field), err


def test_a_wait_of_2_to_the_32_ms_is_refused():
    err = _ask("queue.bounded", {"capacity": 2, "steps": [
        {"op": "dequeue_timeout", "timeout_ms": 2**32}]})["error"]
    assert err["code"] == "invalid_input" and "timeout_ms" in err["message"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(REGISTRY.ops["queue.mpsc"].domain())
def test_numba_matches_the_reference(args):
    assert Implementation("numba").call("queue.mpsc", args) == \
        Implementation("reference").call("queue.mpsc", args)


@pytest.mark.parametrize("eid", ["E4.108", "E4.111", "E4.112"])
def test_every_erratum_reproduces(eid):
    assert check(REGISTRY.errata[eid]).startswith("reproduced")
