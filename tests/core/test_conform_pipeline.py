"""The pipelined runner: a window of requests in flight gives the results of one request at a
time, against implementations that misbehave on purpose (tests/core/misbehaving_impl.py); answers
out of order are a protocol violation; a request's clock starts when it is written, not when
it was queued behind others; the reference runs only when the run times it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import crucible_spec.conformance.runner as runner
from crucible_spec.cli import main
from crucible_spec.conformance import vectors
from crucible_spec.conformance.client import WRONG_ID, Client
from crucible_spec.conformance.runner import Limits, Xfail, run_suite

SCRIPT = Path(__file__).with_name("misbehaving_impl.py")


def impl(mode: str, every: int = 1) -> list[str]:
    return [sys.executable, str(SCRIPT), mode, str(every)]


def suite(*ops: str, n: int = 4) -> dict:
    loaded = vectors.load(vectors.VECTORS_DIR, "crucible")
    return {op: loaded[op][:n] for op in ops}


def run(command: list[str], cases: dict, window: int, timeout: float = 0.3, **options):
    limits = Limits(timeout, timeout)
    return run_suite(Client(command, timeout, timeout, window=window), cases, frozenset(),
                     Xfail(), limits=limits, **options)


def outcome(results, events) -> list:
    """What a run found, without timings or request ids."""
    return [[(r.op, r.passed, r.failed, r.skipped, r.resource_limit, r.note, r.failed_cases,
              [(f.index, f.kind) for f in r.failures]) for r in results],
            [e["kind"] for e in events]]


@pytest.mark.parametrize(("mode", "every"), [
    ("null-id", 3), ("wrong-id", 4), ("crash", 3), ("garbage", 5), ("extra-line", 4),
    ("resource-limit", 2), ("null-id", 10**6),
])
def test_a_window_gives_the_results_of_one_request_at_a_time(mode, every):
    cases = suite("hash.fmix64", "hash.wymix", n=14)
    _, *lockstep = run(impl(mode, every), cases, window=1)
    _, *pipelined = run(impl(mode, every), cases, window=64)
    _, *small = run(impl(mode, every), cases, window=3)
    assert outcome(*pipelined) == outcome(*small) == outcome(*lockstep)
    assert sum(r.passed for r in lockstep[0]) > 0


def test_an_answer_out_of_order_is_a_wrong_id_named_as_such():
    """Every second request's answer is held back until the next one is answered."""
    _, results, events = run(impl("swap", every=2), suite("hash.fmix64", n=5), window=64)
    res = results[0]
    assert (res.passed, res.failed_cases, res.status) == (3, [1, 3], "fail")
    assert {f.kind for f in res.failures} == {e["kind"] for e in events} == {WRONG_ID}
    assert "answers out of request order" in events[0]["detail"]


def test_a_slow_answer_queued_behind_others_is_not_a_hang():
    """Each answer takes 0.15 s against a timeout of 0.3 s: the eighth request of a window
    waits over a second in all, but its clock starts at the answer before it."""
    _, results, events = run(impl("slow"), suite("hash.fmix64", n=8), window=8)
    assert events == [] and (results[0].passed, results[0].failed) == (8, 0)


def test_a_hang_is_reported_on_the_oldest_request_in_flight():
    _, results, events = run(impl("hang", every=3), suite("hash.fmix64", n=9), window=64,
                             timeout=0.2)
    assert results[0].failed_cases == [2, 5, 8]
    assert [e["kind"] for e in events] == ["hang"] * 3


class Counting:
    """Stands in for the reference implementation and counts its calls."""

    calls = 0

    def __init__(self, *_) -> None:
        pass

    def call(self, op: str, args: dict) -> dict:
        Counting.calls += 1
        return {}


@pytest.mark.parametrize("timed", [False, True])
def test_the_reference_runs_only_when_the_run_times_it(monkeypatch, timed):
    monkeypatch.setattr(runner, "Implementation", Counting)
    Counting.calls = 0
    _, results, _ = run(impl("null-id", 10**6), suite("hash.fmix64", n=5), window=64,
                        time_reference=timed)
    assert results[0].passed == 5
    assert Counting.calls == (4 if timed else 0)  # the first case is never timed
    assert (results[0].reference_seconds > 0) is timed


def test_the_window_is_an_option_and_must_be_positive(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["conform", "--impl", "x", "--window", "0"])
    assert exit_.value.code == 2
    assert "argument --window: 0 is out of range" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["conform", "--help"])
    out = capsys.readouterr().out
    assert "--window N" in out and "--time-reference" in out
