"""PyC's speculative plans and their selection (facts sheet §1.9).
Expected values are PyC fdf1563's own answers (cmake Release build, gcc 12.2, -O3), from
small C drivers calling its functions, or its own test
(tests/compiler_next/test_speculative_plans.c)."""

from __future__ import annotations

import pytest

from crucible_spec import load_all
from crucible_spec.spec.pyc.fingerprint import wire_op
from tests.pyc.wire import SEED, ask, f64_hex

load_all()


MM = {"ops": [wire_op("input", "a", [2, 3]), wire_op("input", "b", [3, 4]),
              wire_op("matmul", "op_2", [2, 4], [0, 1]), wire_op("output", "op_3", [2, 4], [2])]}
CONST_MM = {"ops": [wire_op("input", "a", [2, 3]), wire_op("const", "w", [3, 4]),
                    wire_op("matmul", "op_2", [2, 4], [0, 1]),
                    wire_op("output", "op_3", [2, 4], [2])]}


def _plans(module=MM, max_plans=0, report=3, conf=1.0, mode="balanced", profile="crucible"):
    return ask("pyc.speculative.plans", {"module": module, "max_plans": max_plans,
                                          "report_plans": report, "confidence": f64_hex(conf),
                                          "mode": mode}, profile)


# ── speculative plans ─────────────────────────────────────────────────────────────────────────

def test_the_golden_module_has_pycs_three_variants():
    plans = _plans()["plans"]
    assert [(p["scale"], p["bucket"], p["signature"]) for p in plans] == [
        (1, "tiny:i2:b72", "1:r2x2x3;1:r2x3x4"), (2, "small:i2:b288", "1:r2x4x6;1:r2x6x8"),
        (4, "small:i2:b1152", "1:r2x8x12;1:r2x12x16")]
    assert [p["confidence"] for p in plans] == [f64_hex(1.0), f64_hex(0.95), f64_hex(0.85)]


@pytest.mark.parametrize("max_plans,report,conf,want", [
    (2, 3, 0.7, [f64_hex(0.7), f64_hex(0.6649999999999999)]),
    (0, 0, 0.3, [f64_hex(0.3), f64_hex(0.285), f64_hex(0.255)]),
    (0, 1, 1.0, [f64_hex(1.0)]),
    (9, 1, 1.0, [f64_hex(1.0), f64_hex(0.95), f64_hex(0.85)]),
])
def test_the_count_and_discounts_are_pycs(max_plans, report, conf, want):
    plans = _plans(MM, max_plans, report, conf, "memory_first")["plans"]
    assert [p["confidence"] for p in plans] == want
    assert {p["mode"] for p in plans} == {"memory_first"}


def test_a_matmul_of_a_const_fails_pycs_compile_but_not_the_spec():
    assert _plans(CONST_MM, 0, 2, profile=SEED) == {"compiles": False, "plans": []}
    spec = _plans(CONST_MM, 0, 2)
    assert spec["compiles"] and [p["scale"] for p in spec["plans"]] == [1]


def test_a_scalar_input_gives_three_equal_variants():
    plans = _plans({"ops": [wire_op("input", "s", []), wire_op("output", "o", [], [0])]})
    assert {(p["bucket"], p["signature"]) for p in plans["plans"]} == {("small:i1:b0", "1:r0")}


@pytest.mark.parametrize("mode,sig,bucket,want", [
    ("balanced", "A", "x", 1), ("utilization_first", "A", "x", 0),
    ("memory_first", "C", "b288", 2), ("utilization_first", "C", "b288", 2),
    ("balanced", "", "b72", 1), ("balanced", "B", "", 2), ("balanced", "", "", 4294967295),
])
def test_selection_order_as_pycs_find_speculative_plan(mode, sig, bucket, want):
    plans = [{"mode": "memory_first", "signature": "A", "bucket": "b72"},
             {"mode": "balanced", "signature": "A", "bucket": "b72"},
             {"mode": "balanced", "signature": "B", "bucket": "b288"}]
    got = ask("pyc.speculative.select", {"plans": plans, "mode": mode, "signature": sig,
                                          "bucket": bucket})
    assert got == {"plan": want}
