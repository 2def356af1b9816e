"""`conform --workers`: the run split into shards on a local Dask cluster gives the table,
report card and exit status of the single-process run; a results file makes it resumable; fuzz
blocks draw the same inputs whichever process sends them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from crucible_spec.cli import main
from crucible_spec.conformance import report_card, sharded
from crucible_spec.conformance.client import OK, Reply
from crucible_spec.conformance.runner import Run, Xfail, block_seed, fuzz_block, fuzz_op
from crucible_spec.spec.core.registry import REGISTRY

SCHEMA = json.loads(report_card.SCHEMA_FILE.read_text())
REFERENCE = f"{sys.executable} -m crucible_spec serve --impl reference"
TIMINGS = ("seconds", "impl_seconds", "reference_seconds", "ratio_to_reference")

PLANTED = """
import json, sys
import crucible_spec
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata

crucible_spec.load_all()
impl = Implementation("reference", profile_errata("crucible"))
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] not in ("hello", "hash.fnv1a", "hash.fmix64"):
        out = {"id": req["id"], "ok": False, "error": {"code": "unsupported", "message": "-"}}
    else:
        if req["op"] == "hash.fnv1a" and len(req["args"]["data"]) >= 8:
            req["args"]["data"] = req["args"]["data"][:-2]  # planted: drops the last byte
        out = answer(json.dumps(req), impl, "crucible")
    print(json.dumps(out), flush=True)
"""


def conform(tmp_path: Path, name: str, impl: str, *options: str) -> tuple[int, dict]:
    """Exit status and report card (validated, then without its timings)."""
    report = tmp_path / f"{name}.json"
    code = main(["conform", "--impl", impl, "--report", str(report), *options])
    card = json.loads(report.read_text())
    jsonschema.validate(card, SCHEMA)
    for op in card["ops"].values():
        for key in TIMINGS:
            op.pop(key)
    return code, card


def table(out: str) -> list[str]:
    """The printed lines without the timing columns and the report card line."""
    return [" ".join(line.split()[:7]) for line in out.splitlines()
            if not line.startswith("report card:")]


@pytest.mark.slow
def test_two_workers_give_the_single_process_table_and_card(tmp_path, capsys):
    options = ["--ops", "hash.*", "--fuzz", "20"]
    single = conform(tmp_path, "single", REFERENCE, *options)
    single_out = capsys.readouterr().out
    sharded_run = conform(tmp_path, "sharded", REFERENCE, *options, "--workers", "2")
    captured = capsys.readouterr()
    assert sharded_run == single
    assert single[0] == 0 and single[1]["summary"]["passed"] > 0
    assert all(op["fuzz"]["examples"] == 20 for op in single[1]["ops"].values())
    assert table(captured.out) == table(single_out)
    assert "shards (0 reused)" in captured.err and "cases/s" in captured.err


@pytest.mark.slow
def test_a_rerun_with_results_does_no_work(tmp_path, capsys, monkeypatch):
    results = tmp_path / "shards.jsonl"
    options = ["--ops", "hash.fmix64", "hash.wymix", "--fuzz", "120", "--workers", "2",
               "--results", str(results)]
    first = conform(tmp_path, "first", REFERENCE, *options)
    lines = results.read_text().splitlines()
    assert len(lines) == 1 + 2 + 2 * 2  # hello, the vectors and two fuzz blocks of each op
    results.write_text("\n".join(lines[:3]) + "\n")  # interrupted after three shards
    assert conform(tmp_path, "resumed", REFERENCE, *options) == first
    assert len(results.read_text().splitlines()) == len(lines)
    capsys.readouterr()

    def no_cluster(*args):
        raise AssertionError("a rerun started a cluster")

    monkeypatch.setattr(sharded, "_start", no_cluster)
    assert conform(tmp_path, "again", REFERENCE, *options) == first
    assert "7 shards (7 reused)" in capsys.readouterr().err
    other_seed = [*options, "--seed", "1"]
    assert main(["conform", "--impl", REFERENCE, *other_seed]) == 70
    assert "a rerun started a cluster" in capsys.readouterr().err


@pytest.mark.slow
def test_a_failing_implementation_fails_on_the_same_first_case(tmp_path):
    script = tmp_path / "planted.py"
    script.write_text(PLANTED)
    impl = f"{sys.executable} {script}"
    options = ["--ops", "hash.fnv1a", "hash.fmix64", "hash.wymix", "--fuzz", "150"]
    single = conform(tmp_path, "single", impl, *options)
    assert conform(tmp_path, "sharded", impl, *options, "--workers", "2") == single
    code, card = single
    assert code == 1
    fnv = card["ops"]["hash.fnv1a"]
    assert fnv["status"] == "fail" and fnv["failures"][0]["source"] != "fuzz"
    assert len(fnv["failures"][0]["args"]["data"]) >= 8
    assert fnv["fuzz"]["failure"]["args"] == {"data": "00000000"}
    assert card["ops"]["hash.fmix64"]["status"] == "pass"
    assert card["ops"]["hash.wymix"]["status"] == "unsupported"
    assert card["ops"]["hash.wymix"]["fuzz"] is None


class Answering:
    """A client that records every request and answers it with an empty result."""

    def __init__(self) -> None:
        self.sent: list[dict] = []

    def request(self, rid: int, op: str, args: dict, deadline: float | None = None) -> Reply:
        self.sent.append(args)
        return Reply(OK, {"id": rid, "ok": True, "result": {}}, 0.0)


def test_a_fuzz_block_draws_the_same_inputs_alone_or_after_the_others(monkeypatch):
    import crucible_spec.conformance.runner as runner

    monkeypatch.setattr(runner, "compare", lambda *a: None)  # every answer is right
    op = REGISTRY.ops["hash.fmix64"]
    whole, first, second = (Run(Answering(), frozenset(), Xfail()) for _ in range(3))
    fuzz_op(whole, op, 150, 7)
    fuzz_block(first, op, 100, block_seed(7, 0))
    fuzz_block(second, op, 50, block_seed(7, 1))
    assert len(second.client.sent) == 50
    assert whole.client.sent == first.client.sent + second.client.sent
    assert first.client.sent[:50] != second.client.sent


def test_the_merge_stops_at_the_first_failing_fuzz_block():
    setup = sharded.Setup(("impl",), frozenset())
    job = sharded.Campaign(setup, {"hash.fmix64": []}, fuzz=250)
    failure = {"op": "hash.fmix64", "case": -1, "source": "fuzz", "args": {"x": 1},
               "kind": "crash", "detail": "", "text": "t", "difference": None}
    vectors = {"op": "hash.fmix64", "cases": 0, "passed": 0, "failed": 0, "xfailed": 0,
               "xpassed": 0, "skipped": 0, "unsupported": False, "impl_seconds": 0.0,
               "reference_seconds": 0.0, "failures": [], "fuzz": None, "note": ""}
    parts = [(100, None), (130, failure), (90, dict(failure, args={"x": 2}))]
    job.records = {sharded.Shard("hello").id:
                   {"greeting": {"impl": "x"}, "events": [{"e": "hello"}]},
                   sharded.Shard("vectors", "hash.fmix64").id:
                   {"result": vectors, "events": [{"e": "vectors"}]}}
    for block, (requests, fail) in enumerate(parts):
        shard = sharded.Shard("fuzz", "hash.fmix64", block, [100, 100, 50][block])
        job.records[shard.id] = {"result": {"examples": 1, "requests": requests,
                                            "failure": fail}, "events": [{"e": block}]}
    greeting, results, events = job.merge()
    assert greeting == {"impl": "x"}
    assert results[0].fuzz == {"examples": 250, "requests": 230, "failure": failure,
                               "resource_limit": 0, "note": ""}
    assert events == [{"e": "hello"}, {"e": "vectors"}, {"e": 0}, {"e": 1}]
    assert job.moot(sharded.Shard("fuzz", "hash.fmix64", 2, 50))
    assert not job.moot(sharded.Shard("fuzz", "hash.fmix64", 1, 100))
