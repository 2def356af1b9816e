"""The proof runner: every obligation proved, then answered from the cache; every mutant
killed; a false obligation is refuted with a counterexample; the CLI's exit codes and report."""

from __future__ import annotations

import json

import pytest
import z3

from crucible_spec.cli import main
from crucible_spec.proofs.core import report, runner
from crucible_spec.proofs.core.obligation import Query
from crucible_spec.spec.core.registry import REGISTRY, Mutant, Obligation


@pytest.fixture
def settings(tmp_path):
    return runner.Settings(cache_root=tmp_path / "cache", jobs=2)


@pytest.mark.slow(seconds=700)
def test_every_obligation_proves_comes_from_the_cache_and_kills_its_mutants(settings):
    """Cold, then cached; then every mutant is killed, the queries a mutant leaves unchanged
    answered from that cache (the same exact query, so the same answer)."""
    first = runner.run(REGISTRY.obligations, mutants=False, settings=settings)
    assert {o.id for o in first} == set(REGISTRY.obligations)
    assert [(o.id, o.status, o.error, [q.model for q in o.queries if q.model])
            for o in first if o.status != runner.PROVED] == []
    second = runner.run(REGISTRY.obligations, mutants=False, settings=settings)
    assert all(o.cached and o.status == runner.PROVED for o in second)
    outcomes = runner.run(REGISTRY.obligations, mutants=True, settings=settings)
    assert len(outcomes) == sum(len(po.mutants) for po in REGISTRY.obligations.values())
    assert [(o.id, o.mutant, o.verdict, o.error) for o in outcomes
            if o.verdict != runner.KILLED] == []


def _claim(f):
    x = z3.BitVec("x", 64)
    return [Query("x * 2 is even", f(x) & 1 != 0)]


FALSE_PO = Obligation("PO99.1", "x + 1 is even", "z3", (), _claim, lambda x: x + 1,
                      (Mutant("m", "m", lambda x: x * 2),))


def test_a_false_obligation_is_refuted_with_a_counterexample(settings):
    out = runner.check_obligation(FALSE_PO, None, settings)
    assert out.status == runner.REFUTED and out.queries[0].model.startswith("[x = ")
    assert runner.check_obligation(FALSE_PO, "m", settings).status == runner.PROVED


def test_a_broken_obligation_is_an_error_not_a_crash(settings):
    broken = Obligation("PO99.2", "broken", "z3", (), lambda f: 1 / 0, None, ())
    out = runner.check_obligation(broken, None, settings)
    assert out.status == runner.ERROR and "ZeroDivisionError" in out.error


def test_witness_queries_are_proved_by_a_model(settings):
    po = Obligation("PO99.3", "some x has x * 3 == 1", "z3", (),
                    lambda s: [Query("exists", z3.BitVec("x", 64) * 3 == 1, expect="sat")],
                    None, ())
    assert runner.check_obligation(po, None, settings).status == runner.PROVED


def test_identical_queries_are_solved_once_by_the_named_logic(settings):
    x = z3.Int("x")
    po = Obligation("PO99.4", "x + 1 is never x", "z3", (),
                    lambda s: [Query("first", x + 1 == x, logic="QF_LIA"),
                               Query("again", x + 1 == x, logic="QF_LIA"),
                               Query("other budget", x + 1 == x, rlimit=10**6)], None, ())
    out = runner.check_obligation(po, None, runner.Settings(settings.cache_root, False))
    assert out.status == runner.PROVED
    assert [q.label for q in out.queries] == ["first", "again", "other budget"]
    assert out.queries[1].seconds == 0.0 and out.queries[2].rlimit is not None


def test_an_obligation_stops_at_its_first_refuted_query(settings):
    x = z3.BitVec("x", 8)
    po = Obligation("PO99.5", "refuted first", "z3", (),
                    lambda s: [Query("false", x == x), Query("never asked", "not a formula")],
                    None, ())
    out = runner.check_obligation(po, None, settings)
    assert out.status == runner.REFUTED and [q.label for q in out.queries] == ["false"]


def test_the_report_names_the_most_expensive_outcomes_first():
    outs = [runner.Outcome(f"PO1.{i}", "s", "z3", None, runner.PROVED, s, False)
            for i, s in enumerate([0.5, 3.0, 0.1, 3.0, 2.0])]
    assert [o.id for o in report.most_expensive(outs, 3)] == ["PO1.1", "PO1.3", "PO1.4"]
    data = json.loads(report.report_json(outs, False, 1.0, 1))
    assert [e["id"] for e in data["most_expensive"]] == ["PO1.1", "PO1.3", "PO1.4", "PO1.0",
                                                          "PO1.2"]


@pytest.mark.slow
def test_prove_cli_exit_codes_and_report(tmp_path, capsys):
    """Chapter 2's obligations and mutants (the cheapest chapter; every chapter is proved by
    the tests above): the report, the exit codes, and progress counted in mutants."""
    report = tmp_path / "r.json"
    args = ["prove", "PO2.*", "--cache", str(tmp_path / "c"), "--report", str(report), "-j", "1"]
    assert main(args) == 0
    data = json.loads(report.read_text())
    chapter = {i for i in REGISTRY.obligations if i.startswith("PO2.")}
    assert data["ok"] and {r["id"] for r in data["results"]} == chapter
    assert {"PO2.20", "PO2.100", "PO2.123"} <= chapter
    capsys.readouterr()
    assert main([*args, "--mutants", "--force"]) == 0
    out, err = capsys.readouterr()
    runs = sum(len(REGISTRY.obligations[i].mutants) for i in chapter)
    assert "killed" in out and runs > 16
    assert err.splitlines()[-1].startswith(f"[{runs}/{runs}] ")
    assert main(["prove", "PO404.*"]) == 2


def test_a_cached_exploration_is_not_reused_once_the_spec_changes(settings, monkeypatch):
    machine = next(iter(REGISTRY.obligations["PO11.5"].build(
        REGISTRY.obligations["PO11.5"].subject)))
    first = runner.check_machine(machine, settings, "PO11.5")
    assert not first.cached and runner.check_machine(machine, settings, "PO11.5").cached
    monkeypatch.setattr(runner, "source_digest", lambda: "another spec")
    assert not runner.check_machine(machine, settings, "PO11.5").cached


def test_contracts_read_plain_asserts_inside_pytest(tmp_path):
    """pytest rewrites the asserts of our whole distribution (it provides a plugin) unless a
    module opts out; crosshair must see the contracts' plain asserts."""
    settings = runner.Settings(tmp_path, use_cache=False)
    out = runner.check_obligation(REGISTRY.obligations["PO5.80"],
                                  "span without the last element", settings)
    assert out.verdict == runner.KILLED


def test_workers_are_spawned_once_a_thread_starting_module_is_loaded(monkeypatch):
    """egglog starts a thread on import: a process holding it must not fork its workers."""
    import sys

    monkeypatch.delitem(sys.modules, "egglog", raising=False)
    fork = runner.start_method()
    monkeypatch.setitem(sys.modules, "egglog", sys)
    assert (fork, runner.start_method()) == ("fork", "spawn")


def test_a_planted_bug_is_checked_in_process_when_workers_would_be_spawned(monkeypatch,
                                                                           tmp_path):
    """A spawned worker imports the spec afresh and would not see a bug planted here."""
    import sys

    from crucible_spec.proofs.core import patch
    from crucible_spec.spec.crucible import tensor_meta

    monkeypatch.setitem(sys.modules, "egglog", sys)
    settings = runner.Settings(tmp_path, use_cache=False, jobs=2)
    with patch.edited(tensor_meta.compute_storage_nbytes, "max_offset - min_offset + 1",
                      "max_offset - min_offset"):
        assert runner.start_method() is None
        outs = runner.run(["PO5.80", "PO5.70"], mutants=False, settings=settings)
    assert runner.REFUTED in {o.status for o in outs}
    assert runner.start_method() == "spawn"
