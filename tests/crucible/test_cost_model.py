"""Crucible's cost model (chapter 13): cost.profile, cost.roofline and cost.synthesize through
`serve`, exact rationals on the wire, the errata under the seed's profile, and the synthesis
against an exhaustive search."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.cost_model import (
    DTYPES,
    NAMES,
    Bounds,
    KernelConfig,
    Matmul,
    brute_force,
    evaluate_cost,
    profile,
    validate_config,
)
from crucible_spec.spec.crucible.cost_ops import LIMIT, _cfg, _roof, _syn

load_all()
SEED = "crucible@9cf2c965"
MINE = ("E13.500", "E13.501", "E13.502", "E13.503", "E13.504", "E13.505")


def _ask(op: str, args: dict, profile_name: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile_name))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, profile_name)


def _ok(op: str, args: dict, profile_name: str = "crucible") -> dict:
    out = _ask(op, args, profile_name)
    assert out["ok"], out
    return out["result"]


def _code(op: str, args: dict) -> str:
    out = _ask(op, args)
    assert not out["ok"], out
    return out["error"]["code"]


def test_roofline_default_config_by_hand():
    """H100, 2^30 flops, 2^24 bytes, 2^20 elements, f16, the C++ default config: every field
    worked out by hand."""
    r = _ok("cost.roofline", _roof())
    eff = Fraction(1 << 20, 249 * 4224)
    compute = Fraction((1 << 30) * 10**9) / (989_400_000_000_000 * eff * Fraction(1, 2))
    memory = 400 + Fraction(1 << 24, 3350)
    assert r["wave_efficiency"] == str(eff) == "8192/8217"
    assert r["occupancy"] == "1/2"
    assert r["compute_ns"] == str(compute) and r["memory_ns"] == str(memory)
    assert r["total_ns"] == str(max(compute, memory) + 4000)
    assert r["bottleneck"] == "memory" and r["arithmetic_intensity"] == "64"


def test_roofline_bottleneck_classes():
    """Launch for a one-flop kernel, underutil below 1/10 efficiency, compute for a dense one."""
    assert _ok("cost.roofline", _roof(flops=1, nbytes=1, elements=1))["bottleneck"] == "launch"
    assert _ok("cost.roofline", _roof(flops=1 << 40, nbytes=1 << 20, elements=100)
               )["bottleneck"] == "underutil"
    assert _ok("cost.roofline", _roof(flops=1 << 44, nbytes=1 << 20))["bottleneck"] == "compute"


def test_roofline_bad_input():
    """Unknown names, non-string names, negative and over-2^63 counts, a config breaking C1,
    C4 or C8, and a dtype the profile has no peak for."""
    assert _code("cost.roofline", _roof("v100")) == "invalid_input"
    assert _code("cost.roofline", {**_roof(), "profile": 1}) == "bad_request"
    assert _code("cost.roofline", _roof(dtype="f4")) == "invalid_input"
    assert _code("cost.roofline", _roof(flops=-1)) == "invalid_input"
    assert _code("cost.roofline", _roof(nbytes=LIMIT + 1)) == "invalid_input"
    assert _code("cost.roofline", _roof(flops=1 << 64)) == "invalid_input"
    assert _code("cost.roofline", _roof(elements=0)) == "invalid_input"
    assert _code("cost.roofline", _roof("a100_sxm", dtype="f8_e5m2")) == "invalid_input"
    for cfg in (_cfg(smem_bytes=300_000), _cfg(pipeline_stages=0), _cfg(pipeline_stages=8)):
        assert _code("cost.roofline", _roof(config=cfg)) == "invalid_input"
    out = _ask("cost.roofline", _roof("mi300x", config=_cfg(warps_per_block=32)))
    assert "C4" in out["error"]["message"]
    assert _ok("cost.roofline", _roof(flops=LIMIT, nbytes=LIMIT, elements=LIMIT))


def test_rationals_in_lowest_terms():
    """Every rational on the wire parses and prints back identically (lowest terms)."""
    for args in (_roof(), _roof("b200", dtype="bf16"), _roof("cpu_measured", dtype="f32")):
        for k, v in _ok("cost.roofline", args).items():
            if k != "bottleneck":
                assert str(Fraction(v)) == v


def test_errata_witnesses():
    """Each cost-model erratum's witnesses: the spec's answer under the default profile, the
    seed's under crucible@8d2680a2."""
    for eid in MINE:
        e = REGISTRY.errata[eid]
        for w in ({"op": e.ops[0], **e.witness}, *e.also):
            for prof, want in (("crucible", w["spec"]), (SEED, w["seed"])):
                out = _ask(w["op"], w["args"], prof)
                if "error" in want:
                    assert out["error"]["code"] == want["error"], (eid, out)
                    continue
                got = out["result"]
                assert {k: got[k] for k in want} == want, (eid, prof, got)


def test_profile_op():
    """The spec's B200 (148 SMs, dense FP16 2.25 PFLOPS) and the seed's (128, 1125 TFLOPS)."""
    assert _ok("cost.profile", {"name": "b200"})["peak_fp16"] == 2_250 * 10**12
    seed = _ok("cost.profile", {"name": "b200"}, SEED)
    assert (seed["num_sms"], seed["peak_fp16"]) == (128, 1_125 * 10**12)
    assert _ok("cost.profile", {"name": "cpu_measured"})["peak_fp32"] == 343 * 10**9
    assert _code("cost.profile", {"name": "v100"}) == "invalid_input"


def test_synthesize_equals_exhaustive():
    """cost.synthesize through serve returns the exhaustive search's best config and time."""
    r = _ok("cost.synthesize", _syn(tile_max=64, warps_max=8))
    bf = brute_force(Matmul(256, 256, 256, 2), profile("h100_sxm"), Bounds(16, 64, 8))
    assert r["config"] == {f: getattr(bf.config, f) for f in r["config"]}
    assert r["total_ns"] == str(bf.cost.total_ns) and r["feasible"] == bf.feasible
    assert validate_config(KernelConfig(**r["config"]), profile("h100_sxm"))


def test_synthesize_bad_input():
    """Unknown profile, extents out of range, bad tile bounds and infeasible spaces."""
    for args in (_syn("v100"), _syn(m=0), _syn(k=(1 << 20) + 1), _syn(tile_max=48),
                 _syn(tile_min=64, tile_max=32), _syn(warps_max=0), _syn(warps_max=33),
                 _syn("a100_sxm", dtype="f8_e5m2", tile_max=32),
                 _syn("mi300x", dtype="f64", tile_min=256, tile_max=256)):
        assert _code("cost.synthesize", args) == "invalid_input", args
    out = _ask("cost.synthesize", _syn("mi300x", dtype="f64", tile_min=256, tile_max=256))
    assert "no configuration" in out["error"]["message"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NAMES[:4]), st.integers(0, 1 << 50), st.integers(0, 1 << 40),
       st.integers(1, 1 << 30), st.sampled_from([0, 1, 2, 3, 6]))
def test_roofline_seed_answers_only_where_errata_reach(name, flops, nbytes, elements, dtype):
    """Under the seed's errata the memory time never changes (no preset's bandwidth or latency
    differs), and f16/bf16 on A100 (whose peaks the seed shares) answers the same."""
    cfg = KernelConfig()
    spec = evaluate_cost(flops, nbytes, elements, dtype, cfg, profile(name))
    seed_errata = frozenset(MINE)
    seed = evaluate_cost(flops, nbytes, elements, dtype, cfg, profile(name, seed_errata),
                         seed_errata)
    if name == "a100_sxm" and DTYPES[dtype] in ("f16", "bf16"):
        assert seed == spec
    assert seed.memory_ns == spec.memory_ns


def test_measured_profile_is_documented():
    """The measured CPU preset says when and how it was measured."""
    from crucible_spec.spec.crucible import cost_model
    with open(cost_model.__file__) as f:
        src = f.read()
    assert "2026-11-26" in src and "343 GFLOP/s" in src and "11.9 GB/s" in src


@pytest.mark.parametrize("name", NAMES)
def test_every_profile_synthesizes_f32(name):
    """Every profile, the CPU included, has a feasible f32 configuration in a small space."""
    r = _ok("cost.synthesize", _syn(name, m=64, n=64, k=64, dtype="f32", tile_max=32,
                                    warps_max=4))
    assert r["feasible"] > 0
