"""The conformance runner against our own servers and against misbehaving fakes: a crash, a
hang, garbage output, a flood, a wrong answer. Each is reported clearly and the run goes on."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from crucible_spec.cli import main
from crucible_spec.conformance import report_card, vectors
from crucible_spec.conformance.client import CRASH, FLOOD, GARBAGE, HANG, Client
from crucible_spec.conformance.runner import Xfail, run_suite
from crucible_spec.engine import IMPLS

SERVE = [sys.executable, "-m", "crucible_spec", "serve"]
SCHEMA = json.loads(report_card.SCHEMA_FILE.read_text())


def small_suite(*ops: str, n: int = 4) -> dict:
    suite = vectors.load(vectors.VECTORS_DIR, "crucible")
    return {op: suite[op][:n] for op in ops}


def fake(tmp_path: Path, body: str) -> list[str]:
    """A fake implementation: a Python script whose loop body handles `req` (a dict)."""
    script = tmp_path / "fake.py"
    script.write_text(
        "import json, sys, time\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        + "".join(f"    {x}\n" for x in body.strip().splitlines()))
    return [sys.executable, str(script)]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.slow(seconds=60)
def test_our_own_implementations_pass_the_whole_suite(impl, tmp_path):
    report = tmp_path / "card.json"
    code = main(["conform", "--impl", f"{sys.executable} -m crucible_spec serve --impl {impl}",
                 "--report", str(report)])
    assert code == 0
    card = json.loads(report.read_text())
    jsonschema.validate(card, SCHEMA)
    assert card["ok"] and card["summary"]["failed"] == 0
    assert card["summary"]["passed"] == sum(len(c) for c in
                                            vectors.load(vectors.VECTORS_DIR, "crucible").values())


@pytest.mark.slow(seconds=60)
def test_seed_profile_suite_passes_under_the_seed_profile():
    cmd = f"{sys.executable} -m crucible_spec serve --profile crucible@8d2680a2"
    assert main(["conform", "--impl", cmd, "--profile", "crucible@8d2680a2"]) == 0


@pytest.mark.slow
def test_the_seed_fails_the_default_profile_exactly_on_errata(tmp_path):
    report = tmp_path / "card.json"
    cmd = f"{sys.executable} -m crucible_spec serve --profile crucible@8d2680a2"
    assert main(["conform", "--impl", cmd, "--ops", "hash.*", "--report", str(report)]) == 1
    failing = {op for op, r in json.loads(report.read_text())["ops"].items() if r["failed"]}
    assert failing == {"hash.shape"}


def test_a_profile_mismatch_is_named(capsys, tmp_path):
    report = tmp_path / "card.json"
    cmd = f"{sys.executable} -m crucible_spec serve"
    assert main(["conform", "--impl", cmd, "--ops", "hash.shape",
                 "--profile", "crucible@8d2680a2", "--report", str(report)]) == 1
    assert "EVENT profile-mismatch during hello: the implementation serves profile 'crucible'" \
        in capsys.readouterr().out
    jsonschema.validate(json.loads(report.read_text()), SCHEMA)


def test_a_crashing_implementation_is_reported_and_the_run_goes_on(tmp_path):
    client = Client(fake(tmp_path, "sys.exit(3)"), timeout=5)
    _, results, events = run_suite(client, small_suite("hash.fmix64", "hash.wymix"),
                                   frozenset(), Xfail())
    assert {e["kind"] for e in events} == {CRASH}
    assert "exit status 3" in events[0]["detail"]
    assert [r.op for r in results] == ["hash.fmix64", "hash.wymix"]
    assert all(r.status == "fail" and r.skipped for r in results)


@pytest.mark.slow
def test_a_hanging_implementation_times_out(tmp_path):
    client = Client(fake(tmp_path, "time.sleep(60)"), timeout=0.5, first_timeout=0.5)
    start = time.perf_counter()
    _, results, events = run_suite(client, small_suite("hash.fmix64"), frozenset(), Xfail())
    assert time.perf_counter() - start < 20
    assert {e["kind"] for e in events} == {HANG} and "no response within" in events[0]["detail"]
    assert results[0].failures[0].kind == HANG


SLOW_FIRST_CALL = """
seen = globals().setdefault("seen", set())
if req["op"] not in seen:
    seen.add(req["op"])
    time.sleep(1.0)
print(json.dumps({"id": req["id"], "ok": False, "error": {"code": "unsupported",
                                                         "message": "-"}}), flush=True)
"""


@pytest.mark.slow
def test_the_first_call_of_each_op_may_take_longer(tmp_path):
    client = Client(fake(tmp_path, SLOW_FIRST_CALL), timeout=0.5, first_timeout=30)
    _, results, events = run_suite(client, small_suite("hash.fmix64", "hash.wymix"),
                                   frozenset(), Xfail())
    assert [e["kind"] for e in events] == ["no-hello"]  # answered, not timed out
    assert [r.unsupported for r in results] == [True, True]


def test_garbage_output_is_reported(tmp_path):
    client = Client(fake(tmp_path, "print('hello world', flush=True)"), timeout=5)
    _, _results, events = run_suite(client, small_suite("hash.fmix64"), frozenset(), Xfail())
    assert events[0]["kind"] == GARBAGE and "hello world" in events[0]["detail"]


@pytest.mark.slow
def test_a_flooding_implementation_is_reported(tmp_path):
    body = """
while True:
    print(json.dumps({"id": req["id"], "ok": True, "result": {}}), flush=True)
"""
    client = Client(fake(tmp_path, body), timeout=5)
    start = time.perf_counter()
    _, _results, events = run_suite(client, small_suite("hash.fmix64"), frozenset(), Xfail())
    assert time.perf_counter() - start < 30
    assert events[0]["kind"] == FLOOD and "unrequested output" in events[0]["detail"]


WRONG_BYTE = """
if req["op"] == "hello":
    out = {"id": req["id"], "ok": True, "result": {"impl": "fake"}}
elif req["op"] == "layout.encode" and req["args"].get("struct") == "TensorMeta":
    out = {"id": req["id"], "ok": True, "result": {"hex": "00" * 168}}
else:
    out = {"id": req["id"], "ok": False, "error": {"code": "unsupported", "message": "no"}}
print(json.dumps(out), flush=True)
"""


def test_a_wrong_byte_is_named_with_its_field(tmp_path):
    suite = {"layout.encode": [c for c in vectors.load(vectors.VECTORS_DIR, "crucible")
                               ["layout.encode"] if c.args.get("struct") == "TensorMeta"]}
    greeting, results, _ = run_suite(Client(fake(tmp_path, WRONG_BYTE)), suite, frozenset(),
                                     Xfail())
    assert greeting == {"impl": "fake"}
    d = results[0].failures[0].difference
    assert d.path == "result.hex" and d.byte == 137
    assert d.field.startswith("TensorMeta.dtype") and (d.expected, d.got) == ("ff", "00")


def test_unsupported_ops_and_xfail(tmp_path):
    suite = small_suite("hash.fmix64", "layout.encode")
    suite["layout.encode"] = [c for c in vectors.load(vectors.VECTORS_DIR, "crucible")
                              ["layout.encode"] if c.args.get("struct") == "TensorMeta"]
    xfail = Xfail({"layout.encode": "known: writes zeros"})
    _, results, _ = run_suite(Client(fake(tmp_path, WRONG_BYTE)), suite, frozenset(), xfail)
    status = {r.op: r.status for r in results}
    assert status == {"hash.fmix64": "unsupported", "layout.encode": "xfail"}
    n, unsupported = len(suite["layout.encode"]), len(suite["hash.fmix64"])
    assert report_card.closing_line(results) == \
        f"0 passed, 0 failed, 0 skipped, {unsupported} unsupported, {n} xfail, 0 resource_limit"


def test_usage_errors_are_one_line_not_tracebacks(capsys):
    assert main(["conform", "--impl", "x", "--profile", "nope"]) == 2
    assert main(["conform", "--impl", "x", "--ops", "no.such*"]) == 2
    assert "Traceback" not in capsys.readouterr().err


PLANTED_FNV = """
if req["op"] != "hash.fnv1a":
    print(json.dumps({"id": req["id"], "ok": False, "error": {"code": "unsupported"}}), flush=True)
    continue
h = 0xcbf29ce484222325
for b in bytes.fromhex(req["args"]["data"]):
    h = ((h ^ b) * 0x100000001b5) % 2**64
print(json.dumps({"id": req["id"], "ok": True, "result": {"out": f"0x{h:016x}"}}), flush=True)
"""


def test_fuzzing_shrinks_a_failure_by_asking_the_implementation_again(tmp_path):
    suite = small_suite("hash.fnv1a", n=1)
    _, results, _ = run_suite(Client(fake(tmp_path, PLANTED_FNV)), suite, frozenset(), Xfail(),
                              fuzz=50)
    fuzz = results[0].fuzz
    assert fuzz["failure"]["args"] == {"data": "00"}
    assert fuzz["requests"] > 1 and fuzz["failure"]["difference"]["byte"] == 0
