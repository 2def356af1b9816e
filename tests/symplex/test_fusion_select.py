"""SympleX's fusion candidates and their global selection (facts §2.3): speedups as SympleX's
own Rust computes them (values from fusion_engine.rs built with rustc), selections worked by
hand, and E13.410 (the ILP adds factors whose product is the decision's total)."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.symplex.fusion_select import PATTERNS

load_all()
SEED = "symplex@1.0.0"
MB = 1 << 20


def _ask(op: str, args: dict, profile: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, profile)


def _cand(pattern: str, ops: list[int], ranks: list[int], saved: int, factor=False) -> dict:
    return {"pattern": pattern, "op_indices": ops, "ranks": ranks, "saved_bytes": saved,
            "factorization": factor}


def _speedup(pattern: str, ranks: list[int], saved: int, factor=False) -> dict:
    return _ask("symplex.fusion_speedup", {"pattern": pattern, "ranks": ranks,
                                           "saved_bytes": saved, "factorization": factor})


@pytest.mark.parametrize(("pattern", "ranks", "saved", "factor", "want"), [
    ("elementwise_chain", [2, 2], MB, False,
     ("0x3feb333333333334", "0x3ff0000000000000", "0x3fedac37dac37dac")),
    ("horizontal_elementwise", [1, 1], 5000, False,
     ("0x3fe3333333333334", "0x3ff0000000000000", "0x3fe3358ae9fe22ef")),
    ("attention_block", [2, 2], 0, True,
     ("0x3fe3333333333333", "0x3ff3333333333333", "0x3fe70a3d70a3d70a")),
    ("optimizer_step", [2, 3], 0, False,
     ("0x3fe4cccccccccccd", "0x3ff3333333333333", "0x3fe8f5c28f5c28f6")),
])
def test_speedup_bits_as_rustc_built_seed_answers(pattern, ranks, saved, factor, want):
    out = _speedup(pattern, ranks, saved, factor)["result"]
    assert (out["confidence"], out["compute_savings"], out["speedup"]) == want


def test_rank_bonus_by_hand():
    """0.80 + 0.05 for two ops of one rank; none for one op, for two ranks, or all scalars."""
    conf = [_speedup("elementwise_chain", r, 0)["result"]["confidence"]
            for r in ([3, 3], [0, 3], [3], [2, 3], [0, 0])]
    bonus, plain = "0x3feb333333333334", "0x3fe999999999999a"
    assert conf == [bonus, bonus, plain, plain, plain]


def _selected(cands: list[dict], profile: str = "crucible") -> list[int]:
    return _ask("symplex.fusion_select", {"candidates": cands}, profile)["result"]["selected"]


def test_selection_by_hand():
    """matmul_bias_relu over 0-2 (1.1 x 1.444 x 0.8 = 1.271) beats the chain over 1-2
    (1 x 1.286 x 0.85 = 1.093); the horizontal pair on 3-4 (0.60) would slow things down."""
    cands = [_cand("matmul_bias_relu", [0, 1, 2], [2, 2, 2], 8 * MB),
             _cand("elementwise_chain", [1, 2], [2, 2], 4 * MB),
             _cand("horizontal_elementwise", [3, 4], [1, 1], 5000)]
    assert _selected(cands) == [0]
    assert _selected(cands, SEED) == [0, 2]


def test_nothing_is_chosen_from_nothing_and_ties_keep_the_earlier():
    assert _ask("symplex.fusion_select", {"candidates": []})["result"] == {
        "selected": [], "total": "0x3ff0000000000000", "total_sum": "0x0000000000000000"}
    twins = [_cand("attention_block", [0, 1], [2, 2], 64 * MB)] * 2
    assert _selected(twins) == [0] and _selected(twins, SEED) == [0]


def test_e13_410_witnesses():
    e = REGISTRY.errata["E13.410"]
    for w in (e.witness, *e.also):
        assert _ask("symplex.fusion_select", w["args"])["result"] == w["spec"]
        assert _ask("symplex.fusion_select", w["args"], SEED)["result"] == w["seed"]


@pytest.mark.parametrize("cands", [
    [_cand("elementwise_chain", [1, 1], [2, 2], 0)], [_cand("elementwise_chain", [64], [2], 0)],
    [_cand("elementwise_chain", [0, 1], [2], 0)], [_cand("elementwise_chain", [], [], 0)]])
def test_bad_candidates_are_invalid(cands):
    assert _ask("symplex.fusion_select", {"candidates": cands})["error"]["code"] == \
        "invalid_input"


def test_unknown_pattern_is_invalid():
    assert PATTERNS[0] == "matmul_bias_relu"
    out = _ask("symplex.fusion_speedup", {"pattern": "conv_bn", "ranks": [2],
                                          "saved_bytes": 0, "factorization": False})
    assert out["error"]["code"] in ("invalid_input", "bad_request")
