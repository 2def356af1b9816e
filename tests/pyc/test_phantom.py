"""PyC's phantom graph: its match score and float64 average (facts sheet §1.9).
Expected values are PyC fdf1563's own answers (cmake Release build, gcc 12.2, -O3), from
small C drivers calling its functions, or its own test
(tests/compiler_next/test_speculative_plans.c)."""

from __future__ import annotations

import numpy as np
import pytest

from crucible_spec import load_all
from tests.pyc.wire import ask, f64_hex

load_all()


# ── phantom graph ─────────────────────────────────────────────────────────────────────────────

B2, S2, B4, S4 = "tiny:i2:b32", "1:r2x2x2;1:r2x2x2", "tiny:i2:b128", "1:r2x4x4;1:r2x4x4"


def _obs(b: str, s: str, err: bool = False) -> dict:
    return {"bucket": b, "signature": s, "runtime_error": err}


def _track(obs: list[dict], horizon=1, conf=1.0, bucket=B2, sig=S2, impl="reference") -> dict:
    return ask("pyc.phantom.track", {"expected_bucket": bucket, "expected_signature": sig,
                                      "confidence": f64_hex(conf), "horizon": horizon,
                                      "observations": obs}, impl=impl)


def test_pycs_own_speculative_test_sequence():
    out = _track([_obs(B2, S2), _obs(B4, S4), _obs("tiny:i2:b72", "1:r2x3x3;1:r2x3x3", True)])
    assert [s["match"] for s in out["steps"]] == [True, False, False]
    assert [s["confidence"] for s in out["steps"]] == [f64_hex(1.0), f64_hex(0.7), f64_hex(0.7)]
    assert (out["match_count"], out["mismatch_count"], out["reshape_count"]) == (1, 2, 1)
    assert out["expected_signature"] == S4


@pytest.mark.parametrize("es,os,eb,ob,score", [
    (S2, S2, B2, B4, 1.0), (S2, S4, B2, B2, 0.75), (S2, S4, B2, B4, 0.25), ("", S4, "", "", 0.25),
    ("", "", B2, B2, 0.75), ("", "", B2, B4, 0.0), (S2, S2, "", "", 1.0),
])
def test_match_score(es, os, eb, ob, score):
    step = _track([_obs(ob, os)], bucket=eb, sig=es)["steps"][0]
    assert step["score"] == f64_hex(score) and step["match"] == (score == 1.0)


def test_the_average_is_pycs_float64_bit_for_bit_and_float32_is_not():
    out = _track([_obs(B2, S2)] * 40, conf=0.3)
    assert out["confidence"] == "0x3feff7629cb5e403"  # PyC: 0.998948389125076
    c = np.float32(0.3)
    for _ in range(40):
        c = np.float32(c * np.float32(0.85) + np.float32(0.15))
    assert f64_hex(float(c)) != out["confidence"]


def test_a_horizon_of_three_reshapes_on_every_third_mismatch():
    out = _track([_obs(B4, S4)] * 5 + [_obs(B2, S2)] * 3, horizon=3, conf=0.3)
    assert [s["confidence"] for s in out["steps"]] == [
        "0x3fd23d70a3d70a3d", "0x3fd1916872b020c4", "0x3fd0f0d844d013a9", "0x3fd7ffeb074a771c",
        "0x3fddffee2c98e53e", "0x3fd9ccc0526b06de", "0x3fd6dc2039b1519b", "0x3fd41dacef6a642a"]
    assert (out["match_count"], out["mismatch_count"], out["reshape_count"]) == (2, 6, 2)


def test_numba_kernel_agrees_on_a_long_sequence():
    rng = np.random.default_rng(5)
    shapes = [(B2, S2), (B4, S4), ("", ""), (B2, "")]
    obs = [_obs(*shapes[int(k)], bool(e)) for k, e in zip(rng.integers(0, 4, 3000),
                                                          rng.random(3000) < 0.1, strict=True)]
    assert _track(obs, 4, 0.5, impl="numba") == _track(obs, 4, 0.5)
