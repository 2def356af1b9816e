"""RingKernel's CheckpointManager (checkpoint.manager) over in-memory storage: requests,
completions, failures, cancels, retention, restarts and loads, as the real checkpoint.rs
(rustc -O, MemoryStorage shared across managers) answers, and the spec's values where an
erratum departs."""

from __future__ import annotations

import pytest

from crucible_spec import load_all
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.witness import check

load_all()
RK = profile_errata("ringkernel@1.1.0")
OK = {"outcome": "ok"}


def _run(args: dict, errata: frozenset[str] = frozenset()) -> dict:
    return Implementation("reference", errata).call("checkpoint.manager", args)


def _reg(slot: int, kid: str = "k0", ktype: str = "fdtd") -> dict:
    return {"op": "register", "actor_slot": slot, "kernel_id": kid, "kernel_type": ktype}


def _req(slot: int) -> dict:
    return {"op": "request", "actor_slot": slot}


def _done(rid: int, slot: int, step: int, data: str = "", success: bool = True) -> dict:
    return {"op": "complete", "request_id": rid, "actor_slot": slot, "success": success,
            "step": step, "data": data}


def _saved(slot: int, step: int) -> dict:
    return {"outcome": "saved", "name": f"checkpoint_{slot}_step_{step}"}


def _loaded(kid: str, ktype: str, step: int, slot: int, rid: int, data: str) -> dict:
    return {"outcome": "ok", "kernel_id": kid, "kernel_type": ktype, "step": step,
            "actor_slot": slot, "request_id": rid, "data": data}


LIFE = {"max_snapshots": 2, "steps": [
    {"op": "load", "actor_slot": 3}, _req(3), _reg(3, "a", "b"), _req(3),
    _done(1, 7, 4, success=False), _done(1, 3, 4), _req(3), {"op": "cancel", "request_id": 2},
    {"op": "cancel", "request_id": 2}, _done(2, 3, 1, "ff"), _req(3), _done(3, 3, 1),
    {"op": "load", "actor_slot": 3}]}


@pytest.mark.parametrize("errata", [frozenset(), RK])
def test_requests_failures_cancels_and_a_load(errata):
    """Real: the failure names the response's slot (7); a completed id is unknown after."""
    r = _run(LIFE, errata)
    assert r["results"] == [
        {"outcome": "none"}, {"outcome": "not_registered"}, OK, OK | {"request_id": 1},
        {"outcome": "error", "message": "invalid checkpoint: Snapshot failed for actor slot 7"},
        {"outcome": "unknown_request"}, OK | {"request_id": 2}, OK | {"cancelled": True},
        OK | {"cancelled": False}, {"outcome": "unknown_request"}, OK | {"request_id": 3},
        _saved(3, 1), _loaded("a", "b", 1, 3, 3, "")]
    assert (r["pending"], r["total_completed"], r["total_failed"], r["stored"]) == \
        (0, 1, 1, ["checkpoint_3_step_1"])


@pytest.mark.parametrize("errata", [frozenset(), RK])
def test_slot_1_does_not_see_slot_12_and_unregister_keeps_the_files(errata):
    args = {"max_snapshots": 0, "steps": [
        _reg(1, "a", "b"), _reg(12, "c", "d"), _req(12), _done(1, 12, 3, "0c"),
        {"op": "load", "actor_slot": 1}, {"op": "list", "actor_slot": 1}, _req(1),
        _done(2, 1, 7), {"op": "unregister", "actor_slot": 1}, _req(1),
        {"op": "load", "actor_slot": 1}]}
    r = _run(args, errata)
    assert r["results"] == [OK, OK, OK | {"request_id": 1}, _saved(12, 3), {"outcome": "none"},
                            OK | {"names": []}, OK | {"request_id": 2}, _saved(1, 7), OK,
                            {"outcome": "not_registered"}, _loaded("a", "b", 7, 1, 2, "")]
    assert r["stored"] == ["checkpoint_12_step_3", "checkpoint_1_step_7"]


RESTARTED = {"max_snapshots": 2, "steps": [
    _reg(0), _req(0), _done(1, 0, 1, "01"), _req(0), _done(2, 0, 2, "02"), {"op": "restart"},
    _reg(0), _req(0), _done(1, 0, 3, "03"), _req(0), _done(2, 0, 4, "04"),
    {"op": "list", "actor_slot": 0}, {"op": "load", "actor_slot": 0}]}


def test_ringkernel_keeps_four_of_max_2_across_a_restart():
    """Real: the four names listed and stored; load gives step 4; the counters restarted."""
    r = _run(RESTARTED, RK)
    names = [f"checkpoint_0_step_{s}" for s in (1, 2, 3, 4)]
    assert r["results"][-2:] == [OK | {"names": names},
                                 _loaded("k0", "fdtd", 4, 0, 2, "04")]
    assert (r["stored"], r["total_completed"]) == (names, 2)


def test_the_spec_keeps_two_across_a_restart():
    r = _run(RESTARTED)
    names = ["checkpoint_0_step_3", "checkpoint_0_step_4"]
    assert r["results"][-2:] == [OK | {"names": names}, _loaded("k0", "fdtd", 4, 0, 2, "04")]
    assert r["stored"] == names


def test_a_second_snapshot_at_one_step_loses_both_in_ringkernel():
    """Real: 'I/O error: Checkpoint not found: checkpoint_0_step_5', nothing stored."""
    args = {"max_snapshots": 1, "steps": [_reg(0), _req(0), _done(1, 0, 5, "aa"), _req(0),
                                          _done(2, 0, 5, "bb"), {"op": "load", "actor_slot": 0}]}
    seed, spec = _run(args, RK), _run(args)
    assert seed["results"][-1] == {"outcome": "error", "message": "I/O error: Checkpoint not "
                                                                  "found: checkpoint_0_step_5"}
    assert seed["stored"] == [] and seed["total_completed"] == 2
    assert spec["results"][-1] == _loaded("k0", "fdtd", 5, 0, 2, "bb")
    assert spec["stored"] == ["checkpoint_0_step_5"]


def test_after_a_restart_ringkernel_loads_step_9_before_step_10():
    args = {"max_snapshots": 5, "steps": [_reg(0), _req(0), _done(1, 0, 9, "09"), _req(0),
                                          _done(2, 0, 10, "10"), {"op": "restart"},
                                          {"op": "load", "actor_slot": 0},
                                          {"op": "list", "actor_slot": 0}]}
    seed, spec = _run(args, RK), _run(args)
    assert seed["results"][-2:] == [_loaded("k0", "fdtd", 9, 0, 1, "09"), OK | {
        "names": ["checkpoint_0_step_10", "checkpoint_0_step_9"]}]
    assert spec["results"][-2:] == [_loaded("k0", "fdtd", 10, 0, 2, "10"), OK | {
        "names": ["checkpoint_0_step_9", "checkpoint_0_step_10"]}]


@pytest.mark.parametrize("step", [
    {"op": "request", "actor_slot": 2**32},
    {"op": "complete", "request_id": 1, "actor_slot": 0, "success": True, "step": 1},
    {"op": "complete", "request_id": 1, "actor_slot": 0, "success": True, "step": 1,
     "data": "xyz"},
    {"op": "register", "actor_slot": 0, "kernel_id": "k"},
    {"op": "save"},
])
def test_bad_steps_are_refused(step):
    with pytest.raises(SpecError) as e:
        _run({"max_snapshots": 1, "steps": [step]})
    assert e.value.code == "invalid_input"


@pytest.mark.parametrize("eid", ["E19.80", "E19.81", "E19.82"])
def test_every_erratum_reproduces(eid):
    assert check(REGISTRY.errata[eid]) == "reproduced"
