"""The batch form of the wire protocol (design §4, protocol version 2): a batch request answers,
item by item, exactly what each item gets sent alone on a line of its own (the expected
answers here always come from those single-line answers); malformed batches are bad_request,
never internal; `serve --no-batch` and the C example stay single-line; `conform` and its
fuzzing give the report a single-line run gives; bench times batches against the json
module; the contract states the envelopes as JSON Schema."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec import PROTOCOL_VERSION, bench
from crucible_spec.bench_wire import batch_lines, item_answers, serve_impl
from crucible_spec.cli import main
from crucible_spec.conformance import vectors
from crucible_spec.conformance.client import Client
from crucible_spec.conformance.contract import SCHEMA_DIR
from crucible_spec.conformance.protocol import PROTOCOL_FILE
from crucible_spec.conformance.runner import Run, Xfail, fuzz_op
from crucible_spec.conformance.serve import Encoded, answer, answer_chunks
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.registry import REGISTRY

from .test_c_example import build

SUITE = vectors.load(vectors.VECTORS_DIR, "crucible")
IMPLS = {name: Implementation(name) for name in ("reference", "numba")}
SERVE = [sys.executable, "-m", "crucible_spec", "serve"]
PROTOCOL = json.loads((SCHEMA_DIR / PROTOCOL_FILE).read_text())


def alone(impl: str, op: str, items: list, batch: bool = True) -> list[dict]:
    """Each item's answer sent alone, one request per line, without its id."""
    answers = [answer(json.dumps({"id": i, "op": op, "args": a}), IMPLS[impl], "crucible", batch)
               for i, a in enumerate(items)]
    return [{k: v for k, v in r.items() if k != "id"} for r in answers]


def batched(impl: str, op: str, items: list, rid: int | str = 7) -> dict:
    return answer(json.dumps({"id": rid, "op": op, "batch": items}), IMPLS[impl], "crucible")


def some_cases(op: str) -> list:
    """Up to two error cases and two result cases of the op's vectors, the shortest first."""
    cases = sorted(SUITE[op], key=lambda c: len(json.dumps(c.args)))
    return [c for c in cases if c.error][:2] + [c for c in cases if not c.error][:2]


def conforms(instance: dict, name: str) -> bool:
    schema = {"$schema": PROTOCOL["$schema"], "$defs": PROTOCOL["$defs"],
              "$ref": f"#/$defs/{name}"}
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


@pytest.mark.slow
def test_a_batch_answers_what_each_item_answers_alone_for_every_op():
    """Every op's vectors (errors included) through the reference, and through numba where a
    kernel answers the op: the mixed batch, and its result cases alone as one batch (which
    the kernel answers whole, written straight from its result columns)."""
    assert set(SUITE) <= set(REGISTRY.ops) and len(SUITE) > 100
    written = set()
    for op in SUITE:
        items = [c.args for c in some_cases(op)]
        impls = ["reference"] + ["numba"] * (IMPLS["numba"].route(REGISTRY.ops[op]).how
                                             == "kernel")
        for impl in impls:
            want = alone(impl, op, items)
            got = batched(impl, op, items)
            assert got == {"id": 7, "ok": True, "results": want}, (impl, op)
            assert conforms(got, "response"), (impl, op)
        if "numba" in impls:
            valid = [c.args for c in some_cases(op) if not c.error]
            line = json.dumps({"id": 8, "op": op, "batch": valid})
            [[whole]] = answer_chunks([line], IMPLS["numba"], "crucible")
            if isinstance(whole, Encoded):
                written.add(op)
                assert whole.text == json.dumps(json.loads(whole.text), separators=(",", ":"))
                whole = json.loads(whole.text)
            assert whole["results"] == alone("numba", op, valid), op
    assert {"hash.fmix64", "hash.wymix", "philox.to_uniform"} <= written


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-2, 2**65),
                 st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6),
                 st.sampled_from(["0x", "0x1", "0XfF", "0x" + "f" * 17, "0x" + "0" * 40 + "1",
                                  "1x2"]))
ITEMS = st.lists(st.one_of(st.fixed_dictionaries({"x": JUNK}),
                           st.dictionaries(st.sampled_from(["x", "y"]), JUNK, max_size=2),
                           JUNK, st.lists(JUNK, max_size=2)), max_size=12)


@settings(max_examples=40, deadline=None)
@given(items=ITEMS, impl=st.sampled_from(sorted(IMPLS)))
def test_random_batches_answer_what_their_items_answer_alone(items, impl):
    """Valid and invalid args, values of every JSON kind and items that are no object, mixed:
    each fails alone, the others still answer, and none is internal."""
    got = batched(impl, "hash.fmix64", items)
    assert got == {"id": 7, "ok": True, "results": alone(impl, "hash.fmix64", items)}
    assert all(r.get("error", {}).get("code") != "internal" for r in got["results"])


@pytest.mark.parametrize(("request_", "message"), [
    ({"batch": [{"x": 1}], "args": {"x": 1}}, "'args' or 'batch', not both"),
    ({"batch": {"x": 1}}, "'batch' must be a list of args objects, got an object"),
    ({"batch": "0x1"}, "'batch' must be a list of args objects, got a string"),
    ({"batch": None}, "'batch' must be a list of args objects, got null"),
])
def test_a_malformed_batch_is_a_bad_request_naming_the_mistake(request_, message):
    line = json.dumps({"id": "b", "op": "hash.fmix64", **request_})
    for impl in IMPLS:
        got = answer(line, IMPLS[impl], "crucible")
        assert (got["id"], got["ok"], got["error"]["code"]) == ("b", False, "bad_request")
        assert message in got["error"]["message"]


def test_a_batch_to_a_server_without_the_form_is_a_bad_request():
    """Without the form, a request carrying only `batch` is the single-line protocol's missing
    args, saying why; one that also carries `args` is answered as it always was."""
    line = json.dumps({"id": 1, "op": "hash.fmix64", "batch": [{"x": 1}]})
    got = answer(line, IMPLS["numba"], "crucible", batch=False)
    assert got["error"]["code"] == "bad_request"
    assert "does not take the batch form" in got["error"]["message"]
    both = json.dumps({"id": 2, "op": "hash.fmix64", "batch": [], "args": {"x": 1}})
    assert answer(both, IMPLS["numba"], "crucible", batch=False) == {
        "id": 2, "ok": True, "result": {"out": "0xb456bcfc34c2cb2c"}}


def test_empty_unknown_and_hello_batches():
    assert batched("numba", "hash.fmix64", []) == {"id": 7, "ok": True, "results": []}
    unknown = batched("numba", "no.such_op", [{}, 3])
    assert unknown["results"] == alone("numba", "no.such_op", [{}, 3])
    assert unknown["results"][0]["error"]["code"] == "unknown_op"
    hello = batched("reference", "hello", [{}])["results"][0]["result"]
    assert hello["batch"] is True and hello["protocol_version"] == PROTOCOL_VERSION


def _deep(depth: int) -> str:
    """An args object whose value `x` makes the request alone nest `depth` levels."""
    return '{"x": ' + "[" * (depth - 2) + "]" * (depth - 2) + "}"


@pytest.mark.parametrize("depth", [511, 512, 513, 600])
def test_items_nested_deep_are_answered_as_they_are_alone(depth):
    """Each item's depth counts as the request alone counts it: the batch's own list adds no
    level, and a value too deep fails its item only, naming its path from `args`."""
    items = [_deep(depth), '{"x": "0x1"}', _deep(513), "7"]
    line = '{"id": 1, "op": "hash.fmix64", "batch": [' + ", ".join(items) + "]}"
    got = answer(line, IMPLS["numba"], "crucible")
    want = [answer('{"id": 1, "op": "hash.fmix64", "args": ' + text + "}", IMPLS["numba"],
                   "crucible") for text in items]
    assert got["results"] == [{k: v for k, v in w.items() if k != "id"} for w in want]
    assert got["results"][1]["ok"] and got["results"][2]["error"]["code"] == "invalid_input"
    assert got["results"][2]["error"]["message"].startswith("args.x")


def test_a_value_too_deep_outside_the_items_fails_the_request():
    line = '{"id": 1, "op": "hash.fmix64", "batch": [], "extra": ' + "[" * 600 + "]" * 600 + "}"
    got = answer(line, IMPLS["numba"], "crucible")
    assert (got["id"], got["error"]["code"]) == (1, "invalid_input")
    assert got["error"]["message"].startswith("extra")


def test_serve_declares_the_form_and_answers_batches_over_a_pipe():
    lines = [{"id": 0, "op": "hello", "args": {}},
             {"id": 1, "op": "hash.fmix64", "batch": [{"x": "0x1"}, {"x": "zz"}, {"x": 2}]},
             {"id": 2, "op": "hash.fmix64", "args": {"x": "0x2"}}]
    text = "".join(json.dumps(x) + "\n" for x in lines)
    for flags in ([], ["--no-batch"]):
        proc = subprocess.run([*SERVE, "--impl", "numba", *flags], input=text,
                              capture_output=True, text=True, timeout=300, check=True)
        out = proc.stdout.splitlines()
        hello, first, single = (json.loads(x) for x in out)
        assert hello["result"]["protocol_version"] == PROTOCOL_VERSION
        assert conforms(hello["result"], "hello_result")
        assert single == {"id": 2, "ok": True, "result": {"out": "0x3abf2a20650683e7"}}
        if flags:
            assert "batch" not in hello["result"] and first["error"]["code"] == "bad_request"
            continue
        assert hello["result"]["batch"] is True
        assert first["results"] == alone("numba", "hash.fmix64", lines[1]["batch"])
        assert out[1] == json.dumps(first, separators=(",", ":"))


def test_the_c_example_stays_single_line(tmp_path):
    binary = build(tmp_path)
    lines = ['{"id": 0, "op": "hello", "args": {}}',
             '{"id": 1, "op": "hash.fmix64", "batch": [{"x": "0x1"}]}']
    proc = subprocess.run([binary], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=30, check=True)
    hello, batch = (json.loads(x) for x in proc.stdout.splitlines())
    assert "batch" not in hello["result"]
    assert (batch["id"], batch["error"]["code"]) == (1, "bad_request")


TIMINGS = ("seconds", "impl_seconds", "reference_seconds", "ratio_to_reference")


def conform_card(tmp_path: Path, name: str, *serve_flags: str) -> dict:
    """The report card of `conform` over `serve --impl numba` with these flags, without its
    timings and its implementation (command and hello)."""
    report = tmp_path / f"{name}.json"
    command = " ".join([*SERVE, "--impl", "numba", *serve_flags])
    assert main(["conform", "--impl", command, "--ops", "hash.*", "philox.*", "types.*",
                 "layout.decode", "kernel.mm", "--fuzz", "30", "--report", str(report)]) == 0
    card = json.loads(report.read_text())
    for op in card["ops"].values():
        for key in TIMINGS:
            op.pop(key)
    card.pop("implementation")
    return card


@pytest.fixture
def sent(monkeypatch) -> list[int]:
    """The items of each request the clients send (0: a request alone), as they are sent."""
    items: list[int] = []
    send = Client.send

    def counting(self, rid, op, args, deadline=None, n=0):
        items.append(n)
        return send(self, rid, op, args, deadline, n)

    monkeypatch.setattr(Client, "send", counting)
    return items


@pytest.mark.slow
def test_conform_reports_the_same_batched_and_one_request_a_line(tmp_path, sent):
    batched_card = conform_card(tmp_path, "batched")
    batches, sent[:] = sum(1 for k in sent if k), []
    single_card = conform_card(tmp_path, "single", "--no-batch")
    assert batches and not any(sent)
    assert batched_card == single_card


PLANTED = """
import json, sys
import crucible_spec
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation

crucible_spec.load_all(("spec", "reference"))
impl = Implementation("reference")

def planted(args):
    if len(args.get("data", "")) >= 8:
        args = args | {"data": args["data"][:-2]}  # planted: drops the last byte
    return args

for line in sys.stdin:
    req = json.loads(line)
    if "batch" in req:
        req["batch"] = [planted(a) for a in req["batch"]]
    elif req["op"] == "hash.fnv1a":
        req["args"] = planted(req["args"])
    print(json.dumps(answer(json.dumps(req), impl, "crucible")), flush=True)
"""


@pytest.mark.slow
def test_fuzzing_in_batches_finds_and_shrinks_what_one_request_a_line_does(sent):
    """A bug met in a batch is shrunk by single requests to the same minimal input, after as
    many requests, with no event."""
    op = REGISTRY.ops["hash.fnv1a"]
    found, batches = [], []
    for batch in (True, False):
        client = Client([sys.executable, "-c", PLANTED])
        run = Run(client, frozenset(), Xfail(), batch=batch)
        found.append((fuzz_op(run, op, 150, 0), run.events))
        client.close()
        batches.append(sum(1 for n in sent if n))
    assert batches[0] > 0 and batches[1] == batches[0]
    assert found[0] == found[1]
    assert found[0][0]["failure"]["args"] == {"data": "00000000"}


GARBLED = """
import json, sys
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
import crucible_spec

crucible_spec.load_all(("spec", "reference"))
impl = Implementation("reference")
for line in sys.stdin:
    req = json.loads(line)
    out = answer(line, impl, "crucible")
    if "batch" in req:
        out["results"] = out["results"][1:]  # one answer short
    print(json.dumps(out), flush=True)
"""


@pytest.mark.slow
def test_a_malformed_batch_answer_is_garbage_and_its_cases_go_one_a_line(tmp_path):
    report = tmp_path / "card.json"
    command = f"{sys.executable} -c {shlex.quote(GARBLED)}"
    assert main(["conform", "--impl", command, "--ops", "hash.wymix", "--report",
                 str(report)]) == 0
    card = json.loads(report.read_text())
    assert card["ops"]["hash.wymix"]["status"] == "pass"
    assert [e["kind"] for e in card["events"]] == ["garbage"]
    assert "answered without 'ok': true and 'results' of" in card["events"][0]["detail"]


def test_batch_lines_keep_to_the_size_and_bytes_and_split_back():
    op = REGISTRY.ops["hash.fmix64"]
    items = [{"x": i} for i in range(10)]
    lines, counts = batch_lines(op, items, size=4)
    assert counts == [4, 4, 2]
    assert [json.loads(x)["id"] for x in lines] == [1, 2, 3]
    assert [a for x in lines for a in json.loads(x)["batch"]] == [op.args.encode(a)
                                                                  for a in items]
    one = len(json.dumps(op.args.encode(items[0]), separators=(",", ":")))
    assert batch_lines(op, items, max_bytes=2 * one)[1] == [2] * 5
    good = json.dumps({"id": 1, "ok": True, "results": [{"ok": True, "result": {}}]})
    wrong_id = json.dumps({"id": 5, "ok": True, "results": [{"ok": True, "result": {}}]})
    answers = item_answers([good.encode(), wrong_id.encode(), b"garbage\n", b""],
                           [1, 1, 2, 1])
    assert answers == [{"id": 1, "ok": True, "result": {}}, None, None, None, None]


def test_bench_serve_times_batches_against_the_json_module():
    row = bench.bench_op(REGISTRY.ops["hash.fmix64"], 50, ["numba"], ref_max=100, repeat=1,
                         seed=0, wires=[serve_impl("reference")])
    assert row.mismatch == [] and row.wire_json["serve reference"] > 0
    text = bench.render([row], ["numba"])
    assert "json: hash.fmix64 n=50: serve reference in batches of up to 4096" in text
    assert "the json module's parse and write of the same lines" in text


def test_the_contract_states_the_envelopes_and_the_version():
    jsonschema.Draft202012Validator.check_schema(PROTOCOL)
    index = json.loads((SCHEMA_DIR / "index.json").read_text())
    assert index["protocol"] == PROTOCOL_FILE
    assert PROTOCOL["$defs"]["hello_result"]["properties"]["protocol_version"] == {
        "const": PROTOCOL_VERSION}
    assert conforms({"id": 1, "op": "hash.fmix64", "batch": [{"x": "0x1"}]}, "request")
    assert not conforms({"id": 1, "op": "hash.fmix64", "batch": [], "args": {}}, "request")
    assert conforms({"id": 1, "op": "hash.fmix64", "args": {"x": "0x1"}}, "request")
    assert not conforms({"id": 1, "ok": True, "results": [{"ok": True}]}, "response")
