"""Chapter 12: PyC's kernel registry, rails, dispatch, decision log and autotune database.
Every expected value below is written from the facts sheet (other-seeds.md §1.5, §1.7-1.9,
§6) or worked out by hand from its formulas, never taken from the code under test."""

from __future__ import annotations

import pytest

from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError

SEED = profile_errata("pyc@fdf1563")
SPEC_IMPL, SEED_IMPL = Implementation("reference"), Implementation("reference", SEED)
H = {204.5: "0x4069900000000000", 103.3: "0x4059d33333333333", 3.0: "0x4008000000000000",
     10.0: "0x4024000000000000", 20.0: "0x4034000000000000", 0.5: "0x3fe0000000000000",
     0.75: "0x3fe8000000000000", 1.0: "0x3ff0000000000000", 0.0: "0x0000000000000000"}
"""float64 bit patterns, written out by hand."""


def call(op: str, args: dict, impl: Implementation = SPEC_IMPL) -> dict:
    return impl.call(op, args)


# ── workload family ───────────────────────────────────────────────────────────────────────────

@pytest.mark.parametrize(("m", "n", "k", "family"), [
    (512, 512, 4096, "small"), (4096, 4096, 8, "small"), (513, 513, 512, "square"),
    (512, 4096, 4096, "wide_skinny"),
    (4096, 1024, 512, "tall_skinny"), (3072, 1024, 512, "tall_skinny"),
    (1024, 3072, 512, "wide_skinny"), (1024, 2048, 512, "large_square"),
    (1024, 2049, 512, "square"), (1024, 1024, 511, "square"), (1023, 1500, 1024, "square"),
    (0, 4, 4, "any"), (4, 4, 0, "any"),
])
def test_workload_family_by_the_rules(m, n, k, family):
    assert call("pyc.workload_family", {"m": m, "n": n, "k": k}) == {"family": family}


def test_workload_family_wraps_in_the_seed_e12_2():
    args = {"m": 1024, "n": 6148914691236517206, "k": 1024}
    assert call("pyc.workload_family", args) == {"family": "wide_skinny"}
    assert call("pyc.workload_family", args, SEED_IMPL) == {"family": "tall_skinny"}


# ── scores and selection ──────────────────────────────────────────────────────────────────────

def test_default_cpu_catalog_selects_the_tuned_kernel_at_204_5():
    r = call("pyc.kernel.select", {})
    assert (r["found"], r["index"], r["symbol"], r["score"]) == (
        True, 1, "matmul_cpu_tuned", H[204.5])
    assert r["scores"] == [{"symbol": "matmul_cpu_ref", "score": H[103.3]},
                           {"symbol": "matmul_cpu_tuned", "score": H[204.5]}]
    assert r["utilization"] == H[0.75]


def test_reuse_bonus_of_the_tuned_kernel_is_8_over_3():
    r = call("pyc.kernel.select", {"context": {"reused": 1, "total_requested_bytes": 4096}})
    # reuse = 1/(1+0+1) · 1/(1+3+0.5) · 24 = 8/3; score 204.5 + 8/3
    assert r["reuse_bonus"] == "0x4005555555555555"
    assert r["score"] == "0x4069e55555555555"


def test_cuda_catalog_adds_tensor_cores():
    r = call("pyc.kernel.select", {"backend": "cuda"})
    assert r["symbol"] == "matmul_cuda_tuned"
    assert r["score"] == "0x406cb00000000000"  # 200 + 4.5 + 25 = 229.5


def test_utilization_first_weighs_occupancy_twelve():
    r = call("pyc.kernel.select", {"mode": "utilization_first"})
    assert r["score"] == "0x406a200000000000"  # 200 + 12 · 0.75 = 209


def test_exact_tie_goes_to_the_smaller_symbol_in_any_order():
    for cat in (["b", "ab", "a"], ["a", "b", "ab"], ["ab", "a", "b"]):
        r = call("pyc.kernel.select", {"catalog": [{"symbol": s, "priority": 1} for s in cat]})
        assert r["symbol"] == "a" and r["index"] == cat.index("a")
        assert [s["symbol"] for s in r["scores"]] == ["a", "ab", "b"]


def test_a_benchmarked_time_costs_100_per_ms():
    r = call("pyc.kernel.select", {"catalog": [
        {"symbol": "x", "priority": 1, "best_ms": H[0.5]}, {"symbol": "y", "priority": 1}]})
    assert r["symbol"] == "y"
    assert r["scores"][0] == {"symbol": "x", "score": "0x4049000000000000"}  # 100 - 50


@pytest.mark.parametrize(("kernel_hw", "device_hw", "score"), [
    ("hopper", "hopper", "0x4048000000000000"),  # +48
    ("hopper", "generic", "0xc020000000000000"),  # -8
    ("generic", "ada", "0x4024000000000000"),  # +10
    ("ada", "hopper", "0xc038000000000000"),  # -24
    ("any", "hopper", "0x0000000000000000"),
])
def test_hardware_affinity(kernel_hw, device_hw, score):
    r = call("pyc.kernel.select", {"catalog": [{"symbol": "k", "hardware": kernel_hw}],
                                   "context": {"hardware": device_hw}})
    assert r["score"] == score


def test_workload_affinity():
    r = call("pyc.kernel.select", {"catalog": [{"symbol": "s", "workload": "small"},
                                               {"symbol": "t", "workload": "square"}],
                                   "context": {"workload": "square"}})
    assert r["symbol"] == "t"
    assert r["scores"] == [{"symbol": "s", "score": "0xc032000000000000"},  # -18
                           {"symbol": "t", "score": "0x4042000000000000"}]  # +36


def test_empty_catalog_selects_nothing():
    r = call("pyc.kernel.select", {"catalog": []})
    assert (r["found"], r["index"], r["symbol"], r["scores"]) == (False, -1, "", [])


# ── rails ─────────────────────────────────────────────────────────────────────────────────────

def _run(ms: str) -> dict:
    return {"ms": ms}


def _modes(r: dict) -> list[tuple]:
    return [(s["mode"], s["reason"], s["rollbacks"], s["cooldown"]) for s in r["states"]]


def test_strict_mode_only_shadows():
    r = call("pyc.rails.simulate", {"runs": [_run(H[10.0])] + [_run(H[20.0])] * 3})
    assert [s["mode"] for s in r["states"]] == ["balanced"] * 4
    assert [s["breaches"] for s in r["states"]] == [0, 1, 2, 3]
    assert r["states"][-1]["reason"] == "latency"


def test_hard_rollback_after_two_breaches():
    r = call("pyc.rails.simulate", {"strict": False,
                                    "runs": [_run(H[10.0])] + [_run(H[20.0])] * 3})
    assert _modes(r) == [("balanced", "none", 0, 0), ("balanced", "latency", 0, 0),
                         ("balanced", "latency", 1, 2), ("balanced", "latency", 1, 1)]
    assert r["states"][2]["rollback_reason"] == "latency"
    assert (r["states"][2]["steps_in_mode"], r["states"][2]["breaches"]) == (0, 0)


def test_dwell_then_switch_back_to_balanced_with_cooldown():
    r = call("pyc.rails.simulate", {"strict": False, "initial_mode": "memory_first",
                                    "runs": [_run(H[10.0])] * 6})
    assert [s["mode"] for s in r["states"]] == ["memory_first"] * 3 + ["balanced"] * 3
    assert [s["cooldown"] for s in r["states"]] == [0, 0, 0, 2, 1, 0]
    assert [s["recommended"] for s in r["states"]][:3] == ["balanced"] * 3


def test_pressure_recommends_memory_first():
    r = call("pyc.rails.simulate", {"strict": False, "rails": {
        "hard_rollback": False, "dwell": 1, "cooldown": 0},
        "runs": [_run(H[10.0]), {"ms": H[10.0], "pressure_events": 1}]})
    assert _modes(r)[1] == ("memory_first", "pressure", 0, 0)


def test_out_of_range_rails_take_the_defaults():
    r = call("pyc.rails.simulate", {"strict": False, "rails": {"windows": 0, "dwell": 0},
                                    "runs": [_run(H[10.0])] + [_run(H[20.0])] * 2})
    assert r["states"][2]["rollbacks"] == 1


# ── dispatch ──────────────────────────────────────────────────────────────────────────────────

def _dispatch(impl: Implementation = SPEC_IMPL, **args) -> tuple:
    r = call("pyc.dispatch", args, impl)
    return r["status"], r["reason"]


def test_dispatch_reasons():
    det = {"runtime": "detected"}
    assert _dispatch(env={"force_error": True}) == ("error", "forced_error")
    assert _dispatch() == ("fallback", "cuda_runtime_not_built")
    assert _dispatch(env={"disable": True}) == ("fallback", "disabled_by_env")
    assert _dispatch(runtime="error", runtime_error=35) == ("fallback", "cuda_runtime_error_35")
    assert _dispatch(runtime="no_device") == ("fallback", "cuda_runtime_no_device")
    assert _dispatch(**det) == ("ok", "cuda_native_cublas_graph_capture")
    assert _dispatch(**det, native_graph="replayed") == ("ok", "cuda_native_cublas_graph_replay")
    assert _dispatch(**det, env={"graph_replay": False}) == ("ok", "cuda_native_cublas")
    assert _dispatch(**det, dtype="f16") == ("ok", "cuda_native_half_graph_capture")
    assert _dispatch(**det, dtype="bf16", cutlass_symbol="cb") == ("ok", "cuda_cutlass_bf16:cb")
    assert _dispatch(**det, env={"promoted_gemm": True}, promoted_symbol="p",
                     promoted_graph="replayed") == ("ok", "cuda_promoted_gemm_graph:p")
    assert _dispatch(env={"simulate_available": True}) == ("ok", "cuda_native_simulated")
    assert _dispatch(**det, env={"force_fallback": True}) == ("fallback", "cuda_forced_fallback")
    assert _dispatch(**det, native_executable=False) == (
        "fallback", "cuda_native_unsupported_fallback")
    assert _dispatch(**det, prepared=False) == ("fallback", "cuda_native_failed_fallback")
    assert _dispatch(cpu_ok=False) == ("error", "cpu_fallback_failed")
    assert _dispatch(**det, native_graph="g:x", native_plain="cuda_sync_failed:e",
                     cpu_ok=False) == ("error", "cuda_sync_failed:e;cpu_fallback_failed")


def test_plain_run_after_a_failed_graph_e12_4():
    args = {"runtime": "detected", "native_graph": "cuda_graph_launch_failed:x"}
    assert _dispatch(**args) == ("ok", "cuda_native_cublas")
    assert _dispatch(SEED_IMPL, **args) == ("ok", "cuda_native_cublas_graph_capture")


def test_a_long_reason_is_clipped_to_127_bytes():
    status, reason = _dispatch(runtime="detected", dtype="bf16", cutlass_symbol="c",
                               promoted_graph="e:1", promoted_plain="p" * 100,
                               native_graph="e:2", native_plain="n" * 40, cpu_ok=False)
    assert status == "error" and reason == "p" * 100 + ";" + "n" * 26


# ── decision log ──────────────────────────────────────────────────────────────────────────────

def test_decision_log_reads_back_with_spaces_in_a_value():
    log = ("mode=0 budget=0 pressure=0.000000 kernel=matmul_cpu_tuned score=204.500000 "
           "util=0.750000 alloc_penalty=0.000000 reuse_bonus=0.000000 kernel_candidates=2 "
           "det=1 cache_hit=0 compile_ms=0.1 budget_ms=0.000000 budget_exceeded=0 "
           "graph_breaks=0 break_first=none@-1 break_counts=0,0,0,0,0 compilability=1.0 "
           "autotune_loaded=0 spec_plans=0 spec_bucket=a b spec_conf=0.000000")
    r = call("pyc.decision_log.parse", {"log": log})
    assert r["kind"] == "compile" and not r["truncated"] and len(r["entries"]) == 22
    assert r["entries"][3] == {"key": "kernel", "value": "matmul_cpu_tuned"}
    assert r["entries"][20] == {"key": "spec_bucket", "value": "a b"}
    assert call("pyc.decision_log.parse", {"log": ""}) == {
        "kind": "none", "entries": [], "truncated": False}


def test_a_full_buffer_is_flagged_cut():
    log = "mode=0 budget=" + "9" * 2033
    assert len(log) == 2047
    r = call("pyc.decision_log.parse", {"log": log})
    assert r["truncated"] and r["entries"] == [{"key": "mode", "value": "0"},
                                              {"key": "budget", "value": "9" * 2033}]


# ── autotune ──────────────────────────────────────────────────────────────────────────────────

def test_min_compaction_in_first_seen_order():
    db = ("matmul_fused|0|b|0.5\nmatmul_fused|0|a|2\njunk\nmatmul_fused|0|b|0.25\n"
          "matmul_fused|1|b|0.1\nmatmul_fused|0|a|-1\n")
    r = call("pyc.autotune.db", {"db": db, "record": {
        "op": "matmul_fused", "backend": 0, "symbol": "a", "best_ms": H[0.75]},
        "load": {"op": "matmul_fused", "backend": 1}})
    assert r["db"] == ("matmul_fused|0|b|0.250000\nmatmul_fused|0|a|0.750000\n"
                       "matmul_fused|1|b|0.100000\n")
    assert r["loaded"] == [{"op": "matmul_fused", "backend": 1, "symbol": "b",
                            "best_ms": "0x3fb999999999999a"}]


def test_the_cap_is_512_keys():
    db = "".join(f"op|0|s{i}|1\n" for i in range(513))
    r = call("pyc.autotune.db", {"db": db})
    assert len(r["entries"]) == 512 and r["entries"][-1]["symbol"] == "s511"


def test_nan_poisons_a_key_in_the_seed_e12_3():
    db = "matmul_fused|0|k|nan\nmatmul_fused|0|k|0.5\n"
    assert call("pyc.autotune.db", {"db": db})["db"] == "matmul_fused|0|k|0.500000\n"
    assert call("pyc.autotune.db", {"db": db}, SEED_IMPL)["db"] == "matmul_fused|0|k|nan\n"


def test_autotune_records_the_measured_time_e12_1():
    args = {"run_count": 1, "run_ms": H[10.0], "measured_ms": H[3.0]}
    assert call("pyc.autotune.record", args) == {
        "symbol": "matmul_cpu_ref", "best_ms": H[3.0],
        "line": "matmul_fused|0|matmul_cpu_ref|3.000000\n"}
    # the seed: 10 · (1 + 0.08 · (1 - 0.55)) = 10.36
    assert call("pyc.autotune.record", args, SEED_IMPL)["line"] == \
        "matmul_fused|0|matmul_cpu_ref|10.360000\n"
    # run 2 takes the next candidate by symbol: 10 · (1 + 0.08 · 0.25) = 10.2
    assert call("pyc.autotune.record", {**args, "run_count": 2}, SEED_IMPL)["line"] == \
        "matmul_fused|0|matmul_cpu_tuned|10.200000\n"


# The answers below are PyC's own: its autotune code at fdf1563, called through its C API.

@pytest.mark.parametrize(("line", "backend"), [("op|9999999999|s|1\n", 1410065407),
                                               ("op|99999999999999999999|s|1\n", -1),
                                               ("op|-99999999999999999999|s|1\n", 0)])
def test_a_backend_past_int_wraps_in_the_seed_e12_5(line, backend):
    assert call("pyc.autotune.db", {"db": line})["entries"] == []
    got = call("pyc.autotune.db", {"db": line}, SEED_IMPL)
    assert got["db"] == f"op|{backend}|s|1.000000\n"
    assert [e["backend"] for e in got["entries"]] == [backend]


def test_a_seventeenth_kernel_is_never_a_candidate_in_the_seed_e12_6():
    args = {"run_count": 1, "run_ms": H[10.0], "measured_ms": H[3.0],
            "catalog": [{"symbol": f"k{i:02d}"} for i in range(16)] + [{"symbol": "a"}]}
    assert call("pyc.autotune.record", args)["symbol"] == "a"
    assert call("pyc.autotune.record", args, SEED_IMPL) == {
        "symbol": "k00", "best_ms": "0x402599999999999a",
        "line": "matmul_fused|0|k00|10.800000\n"}


@pytest.mark.parametrize("impl", [SPEC_IMPL, SEED_IMPL])
def test_an_empty_catalog_persists_nothing(impl):
    args = {"run_count": 1, "run_ms": H[10.0], "measured_ms": H[3.0], "catalog": []}
    assert call("pyc.autotune.record", args, impl) == {
        "symbol": "matmul_cpu_ref", "best_ms": H[10.0], "line": ""}


# ── bad input ─────────────────────────────────────────────────────────────────────────────────

@pytest.mark.parametrize(("op", "args", "code", "path"), [
    ("pyc.workload_family", {"m": -1, "n": 1, "k": 1}, "invalid_input", "args.m"),
    ("pyc.workload_family", {"m": "x", "n": 1, "k": 1}, "bad_request", "args.m"),
    ("pyc.kernel.select", {"mode": "fast"}, "bad_request", "args.mode"),
    ("pyc.kernel.select", {"catalog": [{"symbol": "k", "reg_class": -1}]}, "invalid_input",
     "args.catalog[0].reg_class"),
    ("pyc.kernel.select", {"catalog": [{"symbol": "k", "workload": "huge"}]}, "bad_request",
     "args.catalog[0].workload"),
    ("pyc.rails.simulate", {"runs": [{"ms": "0xbff0000000000000"}]}, "invalid_input",
     "args.runs[0].ms"),
    ("pyc.dispatch", {"native_graph": "ok"}, "invalid_input", "args.native_graph"),
    ("pyc.dispatch", {"runtime": 3}, "bad_request", "args.runtime"),
    ("pyc.decision_log.parse", {"log": "kernel=x"}, "invalid_input", "args.log"),
    ("pyc.autotune.db", {"db": "", "record": {"op": "m", "backend": 0, "symbol": "s",
                                              "best_ms": "0x0"}}, "invalid_input",
     "args.record.best_ms"),
    ("pyc.autotune.record", {"run_count": 1, "run_ms": "0x7ff8000000000000",
                             "measured_ms": "0x0"}, "invalid_input", "args.run_ms"),
])
def test_bad_input_names_the_field(op, args, code, path):
    with pytest.raises(SpecError) as e:
        call(op, args)
    assert e.value.code == code and path in e.value.message
