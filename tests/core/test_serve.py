"""`crucible-spec serve` over a real pipe, for every implementation: golden values, errors,
ordering, and exit status 0 at EOF."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from crucible_spec.conformance import golden
from crucible_spec.engine import IMPLS
from crucible_spec.spec.core.registry import REGISTRY


def serve(impl: str, lines: list[str], *extra: str) -> tuple[list[dict], Any]:
    proc = subprocess.run([sys.executable, "-m", "crucible_spec", "serve", "--impl", impl, *extra],
                          input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=300)
    return [json.loads(x) for x in proc.stdout.splitlines()], proc


@pytest.mark.parametrize("impl", IMPLS)
def test_golden_values_and_errors_over_the_wire(impl):
    cases = golden.cases()
    lines = [json.dumps({"id": 0, "op": "hello", "args": {}})]
    lines += [json.dumps({"id": i + 1, "op": c.op, "args": c.args}) for i, c in enumerate(cases)]
    n = len(cases)
    lines += [
        "this is not json",
        json.dumps({"id": n + 1, "op": "no.such_op", "args": {}}),
        json.dumps({"id": n + 2, "op": "types.element_size", "args": {"dtype": 12}}),
        json.dumps({"id": n + 3, "op": "hash.fmix64"}),
        json.dumps([1, 2]),
        json.dumps({"id": "seven", "op": "hello", "args": {}}),
        "",
        json.dumps({"id": n + 4, "op": "hash.fmix64", "args": {"x": "0x2"}}),
    ]
    responses, proc = serve(impl, lines, "--profile", golden.PROFILE)
    assert proc.returncode == 0, proc.stderr
    hello = responses[0]["result"]
    assert hello["impl"] == impl and hello["profile"] == golden.PROFILE
    assert "hash.fmix64" in hello["ops"] and hello["spec_version"]
    if impl == "cupy":
        assert hello["device"].startswith(("cpu-emulated", "cuda"))
    if impl != "reference":
        assert "layout.info" in hello["fallbacks"]
    for i, case in enumerate(cases):
        r = responses[i + 1]
        assert r == {"id": i + 1, "ok": True, "result": case.result}, (case.op, case.args)
    tail = responses[n + 1:]
    assert [(r["id"], r["ok"], r.get("error", {}).get("code")) for r in tail] == [
        (None, False, "bad_request"),
        (n + 1, False, "unknown_op"),
        (n + 2, False, "invalid_input"),
        (n + 3, False, "bad_request"),
        (None, False, "bad_request"),
        ("seven", True, None),
        (n + 4, True, None),
    ]
    assert tail[-1]["result"] == {"out": "0x3abf2a20650683e7"}


@pytest.mark.parametrize("rid", ["seven", "", "\u2028", 2**80, -1])
def test_integer_and_string_ids_are_echoed_exactly(rid):
    line = json.dumps({"id": rid, "op": "hash.fmix64", "args": {"x": "0x1"}})
    responses, proc = serve("reference", [line])
    assert proc.returncode == 0
    assert responses == [{"id": rid, "ok": True, "result": {"out": "0xb456bcfc34c2cb2c"}}]


@pytest.mark.parametrize("rid", [1.5, True, None, [1], {"a": 1}, -0.0])
def test_any_other_id_is_a_bad_request_with_a_null_id(rid):
    responses, proc = serve("reference", [json.dumps({"id": rid, "op": "hello", "args": {}})])
    assert proc.returncode == 0
    assert [(r["id"], r["error"]["code"]) for r in responses] == [(None, "bad_request")]


def test_blank_lines_are_not_requests():
    lines = ["", "   ", json.dumps({"id": 3, "op": "hash.fmix64", "args": {"x": "0x0"}}), ""]
    responses, proc = serve("reference", lines)
    assert proc.returncode == 0 and [r["id"] for r in responses] == [3]


def test_empty_input_exits_zero_and_unknown_profile_is_a_usage_error():
    responses, proc = serve("reference", [])
    assert proc.returncode == 0 and responses == []
    _, proc = serve("reference", [], "--profile", "nope")
    assert proc.returncode == 2 and "unknown profile" in proc.stderr and "Traceback" not in \
        proc.stderr


def test_non_utf8_line_is_a_bad_request():
    proc = subprocess.run([sys.executable, "-m", "crucible_spec", "serve"],
                          input=b"\xff\xfe\n", capture_output=True, timeout=120)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["error"]["code"] == "bad_request"


def test_deep_nesting_and_huge_integers_are_answered_not_fatal():
    deep = '{"id": 1, "op": "hash.fmix64", "args": {"x": ' + "[" * 5000 + "]" * 5000 + "}}"
    huge = '{"id": 2, "op": "hash.fmix64", "args": {"x": 1' + "0" * 5000 + "}}"
    unbalanced = '{"id": 3, "op": "hash.fmix64", "args": {"x": ' + "[" * 5000 + "}}"
    responses, proc = serve("reference", [deep, huge, unbalanced])
    assert proc.returncode == 0, proc.stderr
    assert [r["error"]["code"] for r in responses] == ["invalid_input", "invalid_input",
                                                       "bad_request"]
    assert responses[0]["id"] == 1
    assert responses[0]["error"]["message"].startswith("args.x[0][0]")


def test_an_expression_1e5_deep_is_invalid_input_naming_the_field():
    expr = '["add", ' * 100_000 + '"x"' + ", 1]" * 100_000
    line = ('{"id": 4, "op": "expr.canon", "args": {"symbols": [{"name": "x", "flags": 7}], '
            '"expr": ' + expr + "}}")
    graph = ('{"id": 5, "op": "ir.dce", "args": {"graph": {"outputs": [], "nodes": [{"id": 0, '
             '"kind": 0, "inputs": [], "sizes": ' + "[" * 3000 + "]" * 3000 + "}]}}}")
    responses, proc = serve("reference", [line, graph])
    assert proc.returncode == 0, proc.stderr
    assert [(r["id"], r["error"]["code"]) for r in responses] == [
        (4, "invalid_input"), (5, "invalid_input")]
    assert responses[0]["error"]["message"] == \
        "args.expr[1][1][1][1][1][1]...: nested deeper than 512 levels"
    assert responses[1]["error"]["message"].startswith("args.graph.nodes[0].sizes[0]")


CLIENT_MISTAKES = [
    ("dag.merkle", {"dag": {"nodes": [{"kind": []}], "root": 0}}, "args.dag.nodes[0].kind"),
    ("dag.replay", {"dag": {"nodes": [{"kind": "terminal"}], "root": 0}, "choices": []},
     "args.choices"),
    ("dag.add_branch", {"dag": {"nodes": [{"kind": ["terminal"]}], "root": 0},
                        "divergence_point": 0, "existing_suffix": None, "new_ops": [],
                        "old_value": 0, "new_value": 1, "guard": {"kind": []}}, "args."),
    ("context.simulate", {"regions": [], "steps": [{"op": ["activate"]}]}, "args.steps[0].op"),
    ("ring.simulate", {"steps": [{"op": []}]}, "args.steps[0].op"),
    ("crtrace.encode", {"num_ops": 0, "num_metas": 0, "entries": [], "meta_starts": [],
                        "scope_hashes": [], "callsite_hashes": [], "metas": None},
     "args.metas"),
    ("hash.fmix64", {"x": "0x" + "f" * 100_000}, "args.x"),
    ("types.element_size", {"dtype": [6]}, "args.dtype"),
]


def test_client_mistakes_are_answered_as_such_naming_the_field():
    lines = [json.dumps({"id": i, "op": op, "args": args})
             for i, (op, args, _) in enumerate(CLIENT_MISTAKES)]
    responses, proc = serve("reference", lines)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    for (op, _, field), r in zip(CLIENT_MISTAKES, responses, strict=True):
        assert r["error"]["code"] in ("bad_request", "invalid_input"), (op, r)
        assert r["error"]["message"].startswith(field), (op, r)
        assert len(r["error"]["message"]) < 400


def test_a_line_over_the_limit_is_a_bad_request_and_the_next_one_is_answered():
    long = json.dumps({"id": 1, "op": "hash.fnv1a", "args": {"data": "ab" * 5000}})
    short = json.dumps({"id": 2, "op": "hash.fmix64", "args": {"x": 1}})
    responses, proc = serve("reference", [long, short, long], "--max-line-bytes", "1000")
    assert proc.returncode == 0
    assert [(r["id"], r.get("error", {}).get("code")) for r in responses] == [
        (None, "bad_request"), (2, None), (None, "bad_request")]
    assert "longer than 1000 bytes" in responses[0]["error"]["message"]
    for bad in ("0", str(2**64 + 1)):
        _, proc = serve("reference", [], "--max-line-bytes", bad)
        assert proc.returncode == 2, bad


BATCHED_OPS = ("hash.fmix64", "hash.wymix", "kernel.mm", "kernel.softmax", "philox.block")


def test_requests_answered_together_get_the_answers_they_get_alone():
    """Lines that arrive together are answered in one call per run of one op: mixed with bad
    lines and other ops, every response (errors in mid-run included) is the vector's expected
    answer, and the same as each line's answer when it is sent on its own."""
    from crucible_spec.conformance import vectors
    from crucible_spec.conformance.serve import answer_all
    from crucible_spec.engine import Implementation

    by_op = vectors.load(vectors.VECTORS_DIR, "crucible")
    lines, expected = [], []
    for name in BATCHED_OPS:
        for case in by_op[name]:
            lines.append(json.dumps({"id": len(lines), "op": name, "args": case.args}))
            expected.append(case.error or case.result)
        lines.append("not json")
        expected.append("bad_request")
    assert any(isinstance(e, str) for e in expected[:-1]), "no error case inside a run"
    together = answer_all(lines, Implementation("numba"), "crucible")
    assert [r["result"] if r["ok"] else r["error"]["code"] for r in together] == expected
    piped, proc = serve("numba", lines)
    assert proc.returncode == 0, proc.stderr
    assert piped == together
    assert [serve("numba", [line])[0][0] for line in lines[:3]] == together[:3]


def test_only_kernel_runs_are_held_for_one_write():
    """A run a kernel answers is one chunk (one write and flush); a request answered from the
    reference, such as a slow z3 synthesis, is written as soon as it is done."""
    from crucible_spec.conformance.serve import answer_chunks
    from crucible_spec.engine import Implementation

    impl = Implementation("numba")
    fmix = [json.dumps({"id": i, "op": "hash.fmix64", "args": {"x": hex(i)}}) for i in range(3)]
    fallback = [json.dumps({"id": 9 + i, "op": "hlc.pack", "args": {"physical": i, "logical": 1,
                                                                     "node_id": 2}})
                for i in range(2)]
    assert impl.route(REGISTRY.ops["hlc.pack"]).how == "reference"
    chunks = list(answer_chunks([*fmix, *fallback, "nope", *fmix[:1]], impl, "crucible"))
    assert [len(c) for c in chunks] == [3, 1, 1, 1, 1]
    assert [r["id"] for c in chunks for r in c] == [0, 1, 2, 9, 10, None, 0]


PLANTED_FAILURE = ("import sys\n"
                   "from crucible_spec.conformance import serve\n"
                   "def planted(*args, **kwargs):\n"
                   "    raise TypeError('planted')\n"
                   "serve.answer_chunks = planted\n"
                   "from crucible_spec.cli import main\n"
                   "sys.exit(main(['serve', '--impl', 'reference']))\n")


def test_an_internal_error_exits_70_while_the_client_keeps_its_pipe_open():
    """serve's reading thread is still blocked on the open pipe when the error ends the
    process: the exit is the catch-all's status 70 and its one line, never an abort."""
    proc = subprocess.Popen([sys.executable, "-c", PLANTED_FAILURE], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    proc.stdin.write(b'{"id":1,"op":"hash.fmix64","args":{"x":"0x1"}}\n')
    proc.stdin.flush()
    code = proc.wait(timeout=60)
    err = proc.stderr.read()
    proc.stdin.close()
    proc.stderr.close()
    assert code == 70, err
    assert b"internal error: TypeError: planted" in err and b"Fatal Python error" not in err
