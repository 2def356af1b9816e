"""SympleX's e-graph (facts sheet §2.2-2.3, §2.10) through `serve`: the evaluator, the cost,
every rule's verdict, refusal of the planted unsound rules, and saturation with extraction of
A@B + A@C, a 2-layer MLP and an attention block. Expected values are worked out by hand."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.symplex.egraph.ops import FACTOR, MLP, attention, matmul_sum
from crucible_spec.spec.symplex.tensor_expr import evaluate, symbols, term_from_wire

load_all()


def _ask(op: str, args: dict) -> dict:
    impl = Implementation("reference", profile_errata("crucible"))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, "crucible")


def _ok(op: str, args: dict) -> dict:
    out = _ask(op, args)
    assert out["ok"], out
    return out["result"]


def _err(op: str, args: dict) -> str:
    out = _ask(op, args)
    assert not out["ok"] and out["error"]["code"] == "invalid_input", out
    return out["error"]["message"]


def _s(name, *shape, dtype="f32"):
    return {"sym": name, "shape": list(shape), "dtype": dtype}


def _o(op, *args, **kw):
    return {"op": op, "args": list(args), **kw}


def _f64(bits: str) -> float:
    return struct.unpack("<d", struct.pack("<Q", int(bits, 16)))[0]


def test_eval_matmul_by_hand():
    r = _ok("egraph.eval", {"term": _o("matmul", _s("A", 2, 4), _s("B", 4, 2)),
                            "inputs": {"A": list(range(1, 9)), "B": list(range(1, 9))}})
    assert r["shape"] == [2, 2]
    assert [_f64(b) for b in r["values"]] == [50.0, 60.0, 114.0, 140.0]


def test_eval_fused_relu_and_reduction():
    r = _ok("egraph.eval", {"term": _o("fused_matmul_relu", _s("A", 1, 2), _s("B", 2, 2)),
                            "inputs": {"A": [1, -1], "B": [1, 2, 3, 1]}})
    assert [_f64(b) for b in r["values"]] == [0.0, 1.0]  # relu([-2, 1])
    r = _ok("egraph.eval", {"term": _o("reducesum", _s("A", 2, 3), axis=0),
                            "inputs": {"A": [1, 2, 3, 4, 5, 6]}})
    assert r["shape"] == [1, 3] and [_f64(b) for b in r["values"]] == [5.0, 7.0, 9.0]


def test_eval_zero_over_zero_is_nan():
    r = _ok("egraph.eval", {"term": _o("div", _s("A", 1, 1), {"const": 0}), "inputs": {"A": [0]}})
    assert np.isnan(_f64(r["values"][0]))


def test_bad_shapes_name_their_path():
    bad = _o("add", _s("X", 2, 2), _o("relu", _o("matmul", _s("A", 2, 3), _s("B", 2, 3))))
    assert _err("egraph.cost", {"term": bad}).startswith("args.term.args[1].args[0]: matmul")
    assert "mixes dtypes" in _err("egraph.cost", {"term": _o("add", _s("A", 2, 2),
                                                             _s("B", 2, 2, dtype="f16"))})
    assert "broadcast" in _err("egraph.cost", {"term": _o("add", _s("A", 2, 3), _s("B", 2))})


def test_cost_by_hand():
    # relu(A@B), A [8,4], B [4,4] f32: matmul 256 flops + 295 x 320 bytes = 94656;
    # relu 32 flops + 295 x 256 bytes = 75552. Fused: 288 + 295 x 320 = 94688.
    a, b = _s("A", 8, 4), _s("B", 4, 4)
    assert _ok("egraph.cost", {"term": _o("relu", _o("matmul", a, b))}) == \
        {"bytes": 576, "flops": 288, "cost": 170208}
    assert _ok("egraph.cost", {"term": _o("fused_matmul_relu", a, b)}) == \
        {"bytes": 320, "flops": 288, "cost": 94688}


def test_every_rule_has_a_verdict():
    rules = {r["name"]: r for r in _ok("egraph.rules", {})["rules"]}
    assert len(rules) == 23
    symplex = [n for n, r in rules.items() if r["source"] == "symplex"]
    assert symplex == ["add-assoc", "add-comm", "mul-assoc", "mul-comm", "mul-dist-right",
                       "mul-dist-left", "matmul-factor", "matmul-dist", "relu-idempotent",
                       "silu-expand", "neg-cancel", "sub-to-add-neg"]
    for name in ("add-assoc", "mul-dist-right", "matmul-factor"):
        assert rules[name]["verdict"] == "sound" and rules[name]["ieee"] == "rounding"
        assert "exact over the reals only" in rules[name]["caveat"]
    for name in ("add-comm", "relu-idempotent", "transpose-involution", "matmul-transpose"):
        assert rules[name]["verdict"] == "sound" and rules[name]["ieee"] == "exact"
    for name in ("fuse-matmul-relu", "fuse-matmul-add", "softmax-decompose",
                 "layernorm-decompose", "silu-expand"):
        assert rules[name]["verdict"] == "definition" and rules[name]["ieee"] == "exact"
    for name in ("mul-zero", "div-self"):
        r = rules[name]
        assert r["verdict"] == "unsound" and r["ieee"] == "refuted"
        assert "nan" in json.dumps(r["counterexample"]["lhs"])
    assert rules["mul-zero"]["reals"] == "proved"  # A * 0 = 0 over the reals, not in IEEE
    assert rules["div-self"]["reals"] == "refuted"  # x / x is not 1 at 0 even over the reals


@pytest.mark.parametrize("rules", [["mul-zero"], ["add-comm", "div-self"]])
def test_planted_unsound_rule_refused(rules):
    msg = _err("egraph.saturate", {"term": FACTOR, "rules": rules})
    assert "unsound" in msg and "counterexample" in msg


def test_factor_extracts_as_matmul_of_sum():
    r = _ok("egraph.saturate", {"term": FACTOR})
    assert r["term"]["op"] == "matmul" and r["term"]["args"][0]["sym"] == "A"
    assert r["term"]["args"][1]["op"] == "add"
    # input: 2 x 94656 + add (32 + 295 x 384) = 302624; A@(B+C): 56656 + 94656 = 151312
    assert (r["input_cost"], r["cost"]) == (302624, 151312)
    assert r["stop_reason"] == "saturated"


def _same_value(before: dict, after: dict) -> None:
    t0, t1 = term_from_wire(before), term_from_wire(after)
    rng = np.random.default_rng(3)
    for _ in range(3):
        env = {n: rng.normal(size=s.shape) for n, s in symbols(t0).items()}
        assert np.allclose(evaluate(t0, env), evaluate(t1, env), rtol=1e-9, atol=1e-9)


def _ops(t: dict) -> set[str]:
    return {t["op"], *(o for a in t["args"] for o in _ops(a))} if "op" in t else set()


def test_mlp_fuses_and_keeps_its_value():
    r = _ok("egraph.saturate", {"term": MLP})
    assert r["stop_reason"] == "saturated" and r["iterations"] <= 30 and r["nodes"] <= 10_000
    assert r["cost"] < r["input_cost"] and "fused_matmul_add" in _ops(r["term"])
    _same_value(MLP, r["term"])


def test_attention_within_limits():
    term = attention()
    r = _ok("egraph.saturate", {"term": term})
    assert r["iterations"] <= 30 and r["stop_reason"] in ("saturated", "node_limit")
    assert r["cost"] < r["input_cost"]
    _same_value(term, r["term"])


def test_limits_stop_saturation():
    r = _ok("egraph.saturate", {"term": matmul_sum(100), "limits": {"iterations": 1}})
    assert (r["iterations"], r["stop_reason"]) == (1, "iteration_limit")
    r = _ok("egraph.saturate", {"term": matmul_sum(100), "limits": {"nodes": 200}})
    assert r["stop_reason"] == "node_limit" and r["nodes"] > 200
    assert "limits.nodes" in _err("egraph.saturate", {"term": FACTOR, "limits": {"nodes": 0}})


def test_symplex_profile_has_doc_errata_only():
    assert {"E14.400", "E14.401", "E14.402", "E14.403", "E14.404"} <= \
        profile_errata("symplex@1.0.0")


def test_ops_rules_listing():
    from crucible_spec.commands.ops import rule_table

    text = rule_table()
    for name, verdict in (("matmul-factor", "sound"), ("fuse-matmul-add", "definition"),
                          ("mul-zero", "unsound")):
        line = next(x for x in text.splitlines() if x.startswith(name + " "))
        assert f" {verdict} " in line
