"""PyC's stable-repeat fast path (facts sheet §1.7) and pyc_run_stats (§1.9).
Expected values are PyC fdf1563's own answers (cmake Release build, gcc 12.2, -O3), from
small C drivers calling its functions, or its own test
(tests/compiler_next/test_speculative_plans.c)."""

from __future__ import annotations

import numpy as np
import pytest

from crucible_spec import load_all
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.pyc.fingerprint import wire_op
from tests.pyc.wire import SEED, ask, f64_hex

load_all()


MM_2X2 = {"ops": [wire_op("input", "a", [2, 2]), wire_op("input", "b", [2, 2]),
                  wire_op("matmul", "mm", [2, 2], [0, 1]), wire_op("output", "out", [2, 2], [2])]}


# ── stable-repeat fast path ───────────────────────────────────────────────────────────────────

B2, S4, B4 = "tiny:i2:b32", "1:r2x4x4;1:r2x4x4", "tiny:i2:b128"


def _d(shape=(2, 2), data=1, dtype=1, size=None) -> dict:
    return {"dtype": dtype, "shape": list(shape),
            "size_bytes": 4 * int(np.prod(shape)) if size is None else size, "data": data}


def _square(n: int, a: int = 1) -> dict:
    return {"inputs": [_d((n, n), a), _d((n, n), 2)], "outputs": [_d((n, n), 3)]}


def _stats(runs, module=MM_2X2, backend="cpu", spec=True, phantom=True, max_plans=3,
           horizon=1, env=True, profile="crucible") -> dict:
    return ask("pyc.run_stats", {"module": module, "backend": backend, "speculative": spec,
                                  "phantom": phantom, "max_plans": max_plans, "horizon": horizon,
                                  "fastpath_env": env, "runs": runs}, profile)


@pytest.mark.parametrize("profile,stable", [
    (SEED, [False, True, True, True, True]), ("crucible", [False, True, True, False, True])])
def test_cuda_repeats_skip_the_controller(profile, stable):
    runs = [_square(2)] * 3 + [_square(2, 4)] * 2
    out = _stats(runs, backend="cuda", spec=False, phantom=False, profile=profile)["runs"]
    assert [r["stable_repeat"] for r in out] == stable
    assert [r["fallback_count"] for r in out] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("backend,env", [("cpu", True), ("cuda", False)])
def test_no_fast_path_on_cpu_or_with_the_switch_off(backend, env):
    out = _stats([_square(2)] * 3, backend=backend, spec=False, phantom=False, env=env)
    assert not any(r["stable_repeat"] for r in out["runs"])


def test_repeat_kinds():
    last = {"inputs": [_d((4, 4))], "outputs": [_d((4, 4), 2)]}

    def rep(inputs, **kw):
        return ask("pyc.repeat", {"backend": "cuda", "last": last, "inputs": inputs,
                                   "outputs": [_d((4, 4), 2)], **kw}, SEED)
    assert rep([_d((4, 4))])["cached_by"] == "exact_repeat"
    assert rep([_d((4, 4))], backend="cpu")["cached_by"] == "descriptors"
    assert rep([_d((4, 4), 9)])["cached_by"] == "shape_hash"
    assert rep([_d((4, 4), 9)], phantom=True)["cached_by"] == "none"


# ── pyc_run_stats ─────────────────────────────────────────────────────────────────────────────

REAL_OFFSETS = {"compile_ms": 0, "active_mode": 104, "workload_family": 128,
                "selected_kernel_candidates": 200, "execution_path": 336,
                "model_fingerprint": 536, "first_graph_break_op_name": 684,
                "compilability_score": 752, "speculative_plan_hit": 904,
                "speculative_plan_miss_count": 912, "phantom_graph_enabled": 1000,
                "phantom_graph_observed_signature": 1240}
"""offsetof in PyC's header, compiled with its cmake flags (gcc 12.2, -O3 -fopenmp)."""


def test_layout_is_the_real_builds():
    info = ask("layout.info", {"struct": "pyc_run_stats"})
    assert (info["sizeof"], info["alignof"]) == (1368, 8) and len(info["offsets"]) == 68
    assert {k: info["offsets"][k] for k in REAL_OFFSETS} == REAL_OFFSETS


@pytest.mark.parametrize("profile,misses", [(SEED, [0, 0, 2]), ("crucible", [0, 0, 1])])
def test_pycs_own_test_counters(profile, misses):
    out = _stats([_square(2), _square(4), _square(3)], profile=profile)
    assert out["plan_count"] == 3
    runs = out["runs"]
    assert [r["status"] for r in runs] == ["ok", "ok", "runtime_failed"]
    assert [r["speculative_plan_hit"] for r in runs] == [True, True, False]
    assert [r["speculative_plan_miss_count"] for r in runs] == misses
    assert [r["speculative_guard_miss_count"] for r in runs] == [0, 0, 1]
    assert runs[2]["contract_reason"] == "input_shape_mismatch"
    assert [r["speculative_confidence"] for r in runs] == [f64_hex(c) for c in (1.0, 0.95, 0.95)]
    assert runs[2]["phantom_graph_expected_signature"] == S4
    assert runs[2]["phantom_graph_observed_signature"] == "1:r2x3x3;1:r2x3x3"


def test_a_drift_with_a_horizon_of_two():
    runs = _stats([_square(n) for n in (2, 4, 4, 8, 2)], horizon=2)["runs"]
    assert [r["speculative_shape_bucket"] for r in runs] == [
        B2, B4, B4, "small:i2:b512", B2]
    assert [r["phantom_graph_confidence"] for r in runs] == [
        f64_hex(1.0), f64_hex(0.7749999999999999), f64_hex(0.565), f64_hex(0.4705), f64_hex(0.3823)]


def test_guard_misses_count_as_speculative_without_plans_only_in_pyc():
    runs = [_square(2), _square(3)]
    for profile, want in ((SEED, 1), ("crucible", 0)):
        out = _stats(runs, spec=False, phantom=False, profile=profile)["runs"]
        assert out[1]["guard_miss_count"] == 1
        assert out[1]["speculative_guard_miss_count"] == want


def test_every_new_op_is_declared_with_its_kernels_or_reasons():
    for name in ("pyc.speculative.plans", "pyc.speculative.select", "pyc.phantom.track",
                 "pyc.repeat", "pyc.run_stats"):
        op = REGISTRY.ops[name]
        assert op.edges() and op.invalid
        assert "numba" in op.not_applicable or name in REGISTRY.kernels["numba"]
