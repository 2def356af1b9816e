"""RingKernel's hybrid logical clock (facts sheet §3.2) through `serve`: the host vectors, the
tick and receive rules, the skew bound, packing, the errata under each profile, bad input,
and real threads ticking the spec's clock."""

from __future__ import annotations

import json
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.ringkernel.hlc.concurrency import PackedClock

load_all()
SEED = "ringkernel@1.1.0"
MAX = 2**64 - 1


def _ask(op: str, args: dict, profile: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, profile)


def _t(p: int, l: int, n: int = 1) -> dict:  # noqa: E741
    return {"physical": p, "logical": l, "node_id": n}


def _tick(clock: dict, wall: int, profile: str = "crucible") -> dict:
    return _ask("hlc.tick", {"clock": clock, "wall": wall}, profile)["result"]


def _update(clock: dict, recv: dict, wall: int, drift: int = 60_000_000,
            profile: str = "crucible", op: str = "hlc.update") -> dict:
    args = {"clock": clock, "recv": recv, "wall": wall, "max_drift_us": drift}
    return _ask(op, args, profile)["result"]


def _device(clock: dict, recv: dict, wall: int, drift: int = 60_000_000,
            profile: str = "crucible") -> dict:
    return _update(clock, recv, wall, drift, profile, "hlc.device_update")


def _stamp(r: dict) -> tuple:
    return r["ok"], r["outcome"], r["physical"], r["logical"], r["node_id"]


def test_layouts():
    ts, state = REGISTRY.layout("HlcTimestamp"), REGISTRY.layout("HlcState")
    assert (ts.size, ts.align, ts.offsets) == (24, 8, {"physical": 0, "logical": 8,
                                                        "node_id": 16})
    assert (state.size, state.align, state.offsets) == (16, 16, {"physical": 0, "logical": 8})


@pytest.mark.parametrize("a,b,order", [
    (_t(100, 0, 1), _t(100, 1, 1), -1), (_t(100, 1, 1), _t(101, 0, 1), -1),
    (_t(100, 0, 1), _t(101, 0, 1), -1), (_t(100, 5, 1), _t(100, 5, 2), -1),
    (_t(101, 0, 1), _t(100, 9, 9), 1), (_t(100, 5, 2), _t(100, 5, 2), 0),
    (_t(MAX, 0, 0), _t(0, MAX, MAX), 1),
])
def test_host_order(a, b, order):
    assert _ask("hlc.compare", {"a": a, "b": b})["result"] == {"order": order}
    assert _ask("hlc.compare", {"a": b, "b": a})["result"] == {"order": -order}


@pytest.mark.parametrize("clock,wall,expected", [
    (_t(100, 0, 3), 101, (True, "ok", 101, 0, 3)),
    (_t(100, 4, 3), 100, (True, "ok", 100, 5, 3)),
    (_t(100, 4, 3), 99, (True, "ok", 100, 5, 3)),
    (_t(5, MAX), 6, (True, "ok", 6, 0, 1)),
    (_t(5, MAX), 5, (False, "logical_overflow", 5, MAX, 1)),
])
def test_tick(clock, wall, expected):
    assert _stamp(_tick(clock, wall)) == expected


def test_tick_overflow_wraps_in_ringkernel():
    assert _stamp(_tick(_t(5, MAX), 5, SEED)) == (True, "ok", 5, 0, 1)


@pytest.mark.parametrize("clock,recv,wall,expected", [
    (_t(10, 3), _t(10, 5, 2), 10, (10, 6)),     # p == P == recv.p: max(3, 5) + 1
    (_t(10, 6), _t(10, 5, 2), 9, (10, 7)),      # all equal but the wall: max(6, 5) + 1
    (_t(10, 3), _t(8, 9, 2), 9, (10, 4)),       # local wins: L + 1
    (_t(8, 3), _t(10, 5, 2), 9, (10, 6)),       # received wins: recv.l + 1
    (_t(8, 3), _t(9, 5, 2), 12, (12, 0)),       # the wall clock wins: 0
    (_t(5, 0), _t(5, 7, 2), 5, (5, 8)),         # the facts sheet's counterexample, host rule
])
def test_update_rule(clock, recv, wall, expected):
    assert _stamp(_update(clock, recv, wall)) == (True, "ok", *expected, 1)


def test_skew_facts_vector():
    """Max drift 100 ms, a message 200 s in the future: ClockSkew (skew 200000 ms, max 100)."""
    wall = 1_700_000_000_000_000
    out = _update(_t(wall, 0), _t(wall + 200_000_000, 0, 2), wall, 100_000)
    assert (out["ok"], out["outcome"], out["skew_ms"], out["max_ms"]) == \
        (False, "clock_skew", 200_000, 100)
    assert (out["physical"], out["logical"]) == (wall, 0)


def test_skew_boundary_is_exact():
    assert _update(_t(8, 3), _t(110, 5, 2), 10, 100)["outcome"] == "ok"
    out = _update(_t(8, 3), _t(111, 5, 2), 10, 100)
    assert (out["outcome"], out["skew_us"], out["skew_ms"], out["max_ms"]) == \
        ("clock_skew", 101, 0, 0)
    # wall + max_drift_us past 2^64 is not wrapped: no bound at all accepts the largest clock
    assert _update(_t(1, 0), _t(MAX, 0, 2), 5, MAX)["outcome"] == "ok"


def test_device_rule_under_both_profiles():
    """Local (5, 0) receiving (5, 7) with wall 5: the spec gives (5, 8), RingKernel's kernel
    (5, 1), which is before the message."""
    assert _stamp(_device(_t(5, 0), _t(5, 7, 2), 5)) == (True, "ok", 5, 8, 1)
    assert _stamp(_device(_t(5, 0), _t(5, 7, 2), 5, profile=SEED)) == (True, "ok", 5, 1, 1)
    # a message ahead: (recv.p, 0) then l++; the wall clock and the bound are not read
    assert _stamp(_device(_t(5, 9), _t(7, 4, 2), 100, 0, SEED)) == (True, "ok", 7, 1, 1)
    assert _device(_t(5, 9), _t(7, 4, 2), 1, 0)["outcome"] == "clock_skew"


def test_host_update_under_the_seed_profile():
    """hlc.update is HlcClock::update: the real code at 6c1ecbd (rustc -O) answered these."""
    assert _stamp(_update(_t(5, 0), _t(5, 7, 2), 5, profile=SEED)) == (True, "ok", 5, 8, 1)
    assert _stamp(_update(_t(5, 9), _t(7, 4, 2), 100, 0, SEED)) == (True, "ok", 100, 0, 1)
    out = _update(_t(5, 9), _t(7, 4, 2), 1, 0, SEED)
    assert (_stamp(out), out["skew_ms"], out["max_ms"]) == ((False, "clock_skew", 5, 9, 1), 0, 0)


def test_skew_sum_wraps_in_the_release_build():
    """E19.6: wall + max_drift_us past 2^64 wraps; the real code at 6c1ecbd (rustc -O) refused
    both messages with these ClockSkew values (a debug build panics)."""
    out = _update(_t(1, 0), _t(MAX, 0, 2), 5, MAX, SEED)
    assert (_stamp(out), out["skew_ms"], out["max_ms"]) == (
        (False, "clock_skew", 1, 0, 1), 18446744073709551, 18446744073709551)
    out = _update(_t(1, 0), _t(7, 0, 2), 10, MAX - 4, SEED)
    assert (_stamp(out), out["skew_us"], out["skew_ms"]) == (
        (False, "clock_skew", 1, 0, 1), MAX - 2, 18446744073709551)
    assert _stamp(_update(_t(1, 0), _t(7, 0, 2), 10, MAX - 4)) == (True, "ok", 10, 0, 1)


def test_update_overflow():
    assert _update(_t(5, MAX), _t(5, 0, 2), 5)["outcome"] == "logical_overflow"
    assert _update(_t(1, 0), _t(5, MAX, 2), 5)["outcome"] == "logical_overflow"
    assert _stamp(_update(_t(5, MAX), _t(5, 0, 2), 5, profile=SEED)) == (True, "ok", 5, 0, 1)


def _pack(p: int, l: int, n: int, profile: str = "crucible") -> dict:  # noqa: E741
    return _ask("hlc.pack", _t(p, l, n), profile)


def test_pack_and_unpack():
    assert _pack(100, 5, 1)["result"] == {"packed": "0x0000000000000064" "000000000005" "0001"}
    top = _pack(MAX, 2**48 - 1, 2**16 - 1)["result"]["packed"]
    assert top == "0x" + "f" * 32
    assert _ask("hlc.unpack", {"packed": top})["result"] == _t(MAX, 2**48 - 1, 2**16 - 1)
    assert _ask("hlc.unpack", {"packed": "0x64" + "000000000005" "0001"})["result"] == \
        _t(100, 5, 1)


def test_pack_spill_under_both_profiles():
    """(2, 2^48, 1): refused by the spec; RingKernel ors bit 64 into physical: (3, 0, 1)."""
    error = _pack(2, 2**48, 1)["error"]
    assert error["code"] == "invalid_input" and "args.logical" in error["message"]
    spilled = _pack(2, 2**48, 1, SEED)["result"]["packed"]
    assert spilled == "0x0000000000000003" "000000000000" "0001"
    assert _ask("hlc.unpack", {"packed": spilled})["result"] == _t(3, 0, 1)


def test_pack_node_truncation_under_both_profiles():
    error = _pack(100, 5, 65537)["error"]
    assert error["code"] == "invalid_input" and "args.node_id" in error["message"]
    assert _pack(100, 5, 65537, SEED)["result"] == _pack(100, 5, 1)["result"]


@pytest.mark.parametrize("op,args,code,field", [
    ("hlc.tick", {"clock": {**_t(1, 0), "physical": "soon"}, "wall": 1}, "bad_request",
     "args.clock.physical"),
    ("hlc.tick", {"clock": _t(1, 0), "wall": -1}, "invalid_input", "args.wall"),
    ("hlc.tick", {"clock": _t(1, 2**64), "wall": 1}, "invalid_input", "args.clock.logical"),
    ("hlc.update", {"clock": _t(1, 0), "recv": {**_t(1, 0), "logical": "7"}, "wall": 1},
     "bad_request", "args.recv.logical"),
    ("hlc.update", {"clock": _t(1, 0), "recv": _t(2**64, 0), "wall": 1}, "invalid_input",
     "args.recv.physical"),
    ("hlc.update", {"clock": _t(1, 0), "recv": _t(1, 0), "wall": 1, "max_drift_us": -5},
     "invalid_input", "args.max_drift_us"),
    ("hlc.compare", {"a": _t(1, 0, -1), "b": _t(1, 0)}, "invalid_input", "args.a.node_id"),
    ("hlc.unpack", {"packed": "0x1" + "0" * 32}, "invalid_input", "args.packed"),
    ("hlc.pack", {"physical": 1, "logical": 0}, "bad_request", "node_id"),
])
def test_bad_input(op, args, code, field):
    error = _ask(op, args)["error"]
    assert error["code"] == code and field in error["message"], error


THREADS, PER_THREAD = 4, 25_000


@settings(max_examples=2, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(start=st.integers(0, 2**40), slow=st.sampled_from([1, 64, 10**9]))
def test_threads_never_share_a_timestamp(start, slow):
    """4 threads tick one spec clock 10^5 times against a wall clock that advances once every
    `slow` ticks: every timestamp is issued once, and each thread's are increasing."""
    clock = PackedClock(start, 0, 7)
    counter = iter(range(10**9))
    issued: list[list[tuple[int, int]]] = [[] for _ in range(THREADS)]

    def work(k: int) -> None:
        out = issued[k]
        for _ in range(PER_THREAD):
            c = clock.tick(start + next(counter) // slow)
            out.append((c.physical, c.logical))

    began = time.monotonic()
    workers = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert time.monotonic() - began < 5
    every = [ts for out in issued for ts in out]
    assert len(every) == THREADS * PER_THREAD == len(set(every))
    assert all(out == sorted(out) for out in issued)
