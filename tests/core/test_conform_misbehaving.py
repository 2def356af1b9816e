"""The conformance runner against implementations that misbehave on purpose
(tests/core/misbehaving_impl.py, started as a subprocess like any implementation binary): each
misbehaviour is named as such, never passed; hangs and time budgets end an op or the run;
`resource_limit` answers are counted apart."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from crucible_spec.cli import main
from crucible_spec.conformance import report_card, vectors
from crucible_spec.conformance.client import (
    CRASH,
    FLOOD,
    GARBAGE,
    HANG,
    NULL_ID,
    OK,
    WRONG_ID,
    Client,
    Reply,
)
from crucible_spec.conformance.runner import Limits, Run, Xfail, fuzz_block, run_suite
from crucible_spec.spec.core.registry import REGISTRY

SCRIPT = Path(__file__).with_name("misbehaving_impl.py")
SCHEMA = json.loads(report_card.SCHEMA_FILE.read_text())
QUICK = {"timeout": 0.3, "first_timeout": 0.3}


def impl(mode: str, every: int = 1) -> list[str]:
    return [sys.executable, str(SCRIPT), mode, str(every)]


def suite(*ops: str, n: int = 4) -> dict:
    loaded = vectors.load(vectors.VECTORS_DIR, "crucible")
    return {op: loaded[op][:n] for op in ops}


def run(command: list[str], cases: dict, **limits):
    """(hello, results, events) of a run with small timeouts and the given limits."""
    chosen = Limits(**QUICK | limits)
    return run_suite(Client(command, chosen.timeout, chosen.first_timeout), cases, frozenset(),
                     Xfail(), limits=chosen)


def test_a_well_behaved_run_of_the_fake_passes():
    greeting, results, events = run(impl("null-id", every=10**6), suite("hash.fmix64"))
    assert greeting["impl"] == "misbehaving" and events == []
    assert (results[0].status, results[0].passed) == ("pass", 4)


@pytest.mark.parametrize(("mode", "kind", "words"), [
    ("null-id", NULL_ID, "with a null id"),
    ("wrong-id", WRONG_ID, "response for id 1001 while waiting for 1"),
    ("crash", CRASH, "exit status 3"),
    ("garbage", GARBAGE, "not JSON"),
])
def test_every_answer_misbehaving_is_named_and_never_passes(mode, kind, words):
    _, results, events = run(impl(mode), suite("hash.fmix64"))
    res = results[0]
    assert res.passed == 0 and res.failed + res.skipped == 4 and res.status == "fail"
    assert {f.kind for f in res.failures} == {e["kind"] for e in events} == {kind}
    assert words in events[0]["detail"]


@pytest.mark.parametrize("mode", ["extra-line", "flood"])
def test_lines_nobody_asked_for_are_a_flood(mode):
    """Each process answers its first request right, then writes more: the next request
    finds that output and is a flood, whichever moment the extra lines arrive."""
    _, results, events = run(impl(mode), suite("hash.fmix64"))
    res = results[0]
    assert (res.passed, res.failed) == (2, 2)
    assert [e["kind"] for e in events] == [FLOOD, FLOOD]
    assert all("unrequested output" in e["detail"] for e in events)


def test_resource_limit_answers_are_counted_apart_never_passed():
    _, results, events = run(impl("resource-limit", every=2), suite("hash.fmix64", n=6))
    res = results[0]
    assert (res.passed, res.failed, res.resource_limit) == (3, 0, 3) and events == []
    assert res.status == "incomplete"
    assert report_card.totals(results)["resource_limit"] == 3
    assert report_card.closing_line(results).endswith(", 0 xfail, 3 resource_limit")


def test_resource_limit_in_place_of_a_spec_error_is_a_mismatch():
    rejected = [c for c in vectors.load(vectors.VECTORS_DIR, "crucible")["types.element_size"]
                if c.error][:2]
    _, results, _ = run(impl("resource-limit"), {"types.element_size": rejected})
    res = results[0]
    assert (res.failed, res.resource_limit) == (2, 0)
    assert res.failures[0].difference.path == "error.code"
    assert res.failures[0].difference.got == "resource_limit"


@pytest.mark.slow
def test_an_op_is_given_up_after_max_hangs_in_all_not_only_in_a_row():
    """Hanging on every other request never makes three failures in a row."""
    _, results, events = run(impl("hang", every=2), suite("hash.fmix64", "hash.wymix", n=12),
                             max_hangs=3)
    for res in results:
        assert (res.passed, res.failed, res.skipped) == (3, 3, 6)
        assert res.note == "gave up after 3 hangs"
        assert {f.kind for f in res.failures} == {HANG}
    assert [e["kind"] for e in events] == [HANG] * 6


@pytest.mark.slow
def test_a_restart_does_not_give_a_hung_op_the_long_first_wait_again():
    """The first request waits --first-timeout and hangs; the restarted processes' first
    requests of the same op wait --timeout only."""
    _, results, _ = run(impl("hang"), suite("hash.fmix64"), timeout=0.2, first_timeout=1.5)
    assert [f.detail for f in results[0].failures] == [
        "no response within 1.5 s", "no response within 0.2 s", "no response within 0.2 s"]


def test_the_op_budget_ends_an_op_that_always_hangs():
    """A second wait of 0.3 s does not fit in 0.5 s: it is cut short, and not a failure."""
    _, results, _ = run(impl("hang"), suite("hash.fmix64", "hash.wymix", n=12), max_hangs=100,
                        op_budget=0.5, run_budget=100.0)
    for res in results:
        assert res.passed == 0 and res.failed >= 1 and res.skipped >= 1
        assert res.failed + res.skipped == 12
        assert res.note == "the op budget of 0.5 s was spent"
        assert {f.kind for f in res.failures} == {HANG}


def test_the_run_budget_ends_the_run():
    """Two waits of 0.3 s do not fit in a run budget of 0.5 s: the second op sends nothing."""
    _, results, _ = run(impl("hang"), suite("hash.fmix64", "hash.wymix", n=12), max_hangs=100,
                        op_budget=100.0, run_budget=0.5)
    first, second = results
    assert first.skipped >= 1 and first.note == "the run budget of 0.5 s was spent"
    assert (second.skipped, second.failed, second.note) == (
        12, 0, "the run budget of 0.5 s was spent")


class Scripted:
    """A client whose every reply is of one kind (a hang, or a resource_limit answer)."""

    def __init__(self, kind: str, error: str = "") -> None:
        self.kind, self.error, self.sent = kind, error, 0

    def request(self, rid: int, op: str, args: dict, deadline: float | None = None) -> Reply:
        self.sent += 1
        if self.kind != OK:
            return Reply(self.kind, None, 0.0, "scripted")
        return Reply(OK, {"id": rid, "ok": False, "error": {"code": self.error}}, 0.0)


def test_fuzzing_stops_at_a_hang_instead_of_shrinking_with_more_requests():
    client = Scripted(HANG)
    result = fuzz_block(Run(client, frozenset(), Xfail()), REGISTRY.ops["hash.fmix64"], 50, 0)
    assert client.sent == 1 and result["requests"] == 1
    assert result["failure"]["kind"] == HANG


def test_fuzz_inputs_answered_resource_limit_are_counted_not_failed():
    client = Scripted(OK, "resource_limit")
    result = fuzz_block(Run(client, frozenset(), Xfail()), REGISTRY.ops["hash.fmix64"], 30, 0)
    assert result["failure"] is None
    assert result["resource_limit"] == result["requests"] == client.sent > 0


def conform(tmp_path: Path, name: str, command: list[str], *options: str) -> tuple[int, dict]:
    report = tmp_path / f"{name}.json"
    code = main(["conform", "--impl", " ".join(command), "--report", str(report),
                 "--timeout", "0.3", "--first-timeout", "0.3", *options])
    card = json.loads(report.read_text())
    jsonschema.validate(card, SCHEMA)
    return code, card


@pytest.mark.slow
def test_hash_ops_against_a_hang_on_every_other_request_end_with_limits_stated(tmp_path,
                                                                              capsys):
    options = ["--ops", "hash.*", "--max-hangs", "2", "--op-budget", "5", "--run-budget", "60"]
    code, card = conform(tmp_path, "hangs", impl("hang", every=2), *options)
    out = capsys.readouterr().out
    assert code == 1
    assert card["suite"]["limits"] == {"timeout": 0.3, "first_timeout": 0.3, "op_budget": 5.0,
                                       "run_budget": 60.0, "max_hangs": 2}
    assert "limits: 0.3 s a response (0.3 s the first of an op), 5 s an op, 60 s the run, " \
           "2 hangs an op" in out
    assert len(card["ops"]) == 7
    for op in card["ops"].values():
        assert (op["passed"], op["failed"], op["note"]) == (2, 2, "gave up after 2 hangs")
        assert op["skipped"] == op["cases"] - 4


@pytest.mark.slow
def test_the_sharded_run_honours_the_same_limits_and_ids(tmp_path):
    """The same cards, ids checked and hangs counted as in one process; null ids named."""
    options = ["--ops", "hash.fmix64", "hash.wymix", "--max-hangs", "2"]
    single = conform(tmp_path, "single", impl("hang", every=2), *options)
    sharded = conform(tmp_path, "sharded", impl("hang", every=2), *options, "--workers", "2")
    for _, card in (single, sharded):
        for op in card["ops"].values():
            for key in ("seconds", "impl_seconds", "reference_seconds", "ratio_to_reference"):
                op.pop(key)
    assert sharded == single
    assert all(op["note"] == "gave up after 2 hangs" for op in single[1]["ops"].values())


def test_budgets_and_hang_limits_must_be_positive(capsys):
    for option, value in [("--op-budget", "0"), ("--run-budget", "-1"), ("--timeout", "nan"),
                          ("--max-hangs", "0")]:
        with pytest.raises(SystemExit) as exit_:
            main(["conform", "--impl", "x", option, value])
        assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --op-budget: 0 is out of range: it must be > 0" in err
    assert "argument --max-hangs: 0 is out of range: it must be >= 1" in err
    assert "Traceback" not in err
    assert main(["conform", "--impl", "x", "--run-budget", "inf"]) == 2
    assert "--run-budget must be a finite number of seconds" in capsys.readouterr().err
