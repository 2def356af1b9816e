"""`crucible-spec fuzz`'s time rules: a call is a hang past its limit stretched by the machine's
load, never because the machine is busy; a reader's time is its budget, a call still running
at its end cut short, no finding; --help lists every reader."""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Iterator

import numpy as np
import pytest

from crucible_spec import fuzz
from crucible_spec.cli import main
from crucible_spec.commands import fuzz as command


def _sleeper(nap: float, first: float | None = None):
    """A reader whose every input is one call that sleeps `nap` seconds (the first one
    `first`, if given)."""

    def reader(rng: np.random.Generator) -> Iterator[list[fuzz.Finding]]:
        naps = itertools.chain([nap if first is None else first], itertools.repeat(nap))
        while True:
            wait = next(naps)
            got = fuzz.outcome(functools.partial(time.sleep, wait))
            yield [fuzz.finding("sleep", got.kind, str(got.value), "", "")] \
                if got.kind != "ok" else []

    return reader


def _run(monkeypatch, nap: float, seconds: float, call_limit: float,
         first: float | None = None) -> tuple[fuzz.ReaderRun, float]:
    monkeypatch.setitem(fuzz.READERS, "sleep", _sleeper(nap, first))
    start = time.monotonic()
    run = fuzz.run_reader("sleep", seconds, 0, call_limit=call_limit)
    return run, time.monotonic() - start


def test_a_call_running_at_the_end_of_the_budget_is_cut_short_and_no_finding(monkeypatch):
    """Budget 1 s, a first call of 0.1 s, then calls of 5 s: the run ends at 1 s (the old loop
    waited for the call, up to the 30 s hang limit), with one input counted and no hang."""
    monkeypatch.setattr(fuzz.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    run, wall = _run(monkeypatch, nap=5, seconds=1, call_limit=30, first=0.1)
    assert wall < 2
    assert run.findings == [] and run.tried == 1
    assert 1 <= run.seconds < 2


def test_the_first_input_is_never_cut_short(monkeypatch):
    """The first call may compile kernels (cached for the next run): it runs past the budget
    rather than be cut and compiled again on every run."""
    monkeypatch.setattr(fuzz.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    run, wall = _run(monkeypatch, nap=0.1, seconds=0.2, call_limit=30, first=0.6)
    assert run.tried == 1 and run.findings == [] and 0.6 <= wall < 1.5


def test_a_call_past_its_limit_is_a_hang(monkeypatch):
    monkeypatch.setattr(fuzz.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    run, _ = _run(monkeypatch, nap=5, seconds=3, call_limit=0.2)
    assert run.findings and {f.kind for f in run.findings} == {"hang"}
    assert run.findings[0].detail == "no answer in 0.2 s"


def test_a_loaded_machine_stretches_the_limit(monkeypatch):
    """Load 8 on 2 CPUs is 4 times oversubscribed: a 0.2 s limit becomes 0.8 s, and a call
    of 0.4 s is no hang."""
    monkeypatch.setattr(fuzz.os, "getloadavg", lambda: (8.0, 8.0, 8.0))
    monkeypatch.setattr(fuzz.os, "cpu_count", lambda: 2)
    assert fuzz.load_scaled(0.2) == pytest.approx(0.8)
    assert fuzz.load_scaled(30) == pytest.approx(120)
    run, _ = _run(monkeypatch, nap=0.4, seconds=1.5, call_limit=0.2)
    assert run.findings == [] and run.tried >= 2


def test_an_idle_machine_keeps_the_limit(monkeypatch):
    monkeypatch.setattr(fuzz.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    monkeypatch.setattr(fuzz.os, "cpu_count", lambda: 2)
    assert fuzz.load_scaled(30) == 30


def test_help_lists_every_reader_and_the_call_limit(capsys):
    assert tuple(fuzz.READERS) == command.READERS
    assert fuzz.CALL_LIMIT_S == command.CALL_LIMIT_S
    with pytest.raises(SystemExit):
        main(["fuzz", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--reader NAME crtrace, cdag, checkpoint, wire" in out
    assert "--call-limit S" in out


def test_a_time_limit_that_ctypes_wraps_is_no_crash():
    """The alarm can fire while ctypes converts a C call's argument (z3's, in cost.synthesize:
    a CI run reported 'ArgumentError: argument 1: BudgetSpent:' as an internal crash): the
    wrapped BudgetSpent ends the run and a wrapped Hang is a hang, as unwrapped ones are."""
    import ctypes

    def wrapped(alarm):
        def call():
            raise ctypes.ArgumentError(f"argument 1: {alarm.__name__}: ")
        return call

    with pytest.raises(fuzz.BudgetSpent):
        fuzz.outcome(wrapped(fuzz.BudgetSpent))
    assert fuzz.outcome(wrapped(fuzz.Hang)).kind == "hang"
    assert fuzz.outcome(wrapped(KeyError)).kind == "crash"


def test_serves_internal_answer_to_a_wrapped_alarm_names_the_alarm():
    """The wire reader meets the same alarm through serve, answered `internal` with the
    ArgumentError's text (a CI run's fuzz stage, twice, on cost.synthesize)."""
    assert fuzz.alarm_in("ArgumentError: argument 2: BudgetSpent: ") is fuzz.BudgetSpent
    assert fuzz.alarm_in("ArgumentError: argument 1: Hang: no answer in 5 s") is fuzz.Hang
    assert fuzz.alarm_in("KeyError: 'x'") is None
