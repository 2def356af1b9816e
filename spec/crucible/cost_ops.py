"""Chapter 13 ops of Crucible's cost model: a hardware profile's numbers (`cost.profile`), the
roofline cost of one kernel (`cost.roofline`) and the z3 synthesis of a matmul's cheapest
configuration (`cost.synthesize`), with the seed's errata.

1. Arguments are decoded. A profile name or dtype that is not a string is `bad_request`; an
   unknown one is `invalid_input` naming the field. flops, bytes and elements above 2^63 (or
   negative) are `invalid_input`; so are M, N, K outside 1..MAX_EXTENT, tile bounds that are
   not powers of two in 1..MAX_TILE with tile_min <= tile_max, warps_max outside 1..32, a
   configuration breaking C1-C8 (the message names the constraints), and a space with no
   feasible point.
2. Times, efficiency, occupancy and intensity travel as exact rationals: the string "p/q" in
   lowest terms, or "p" when the denominator is 1 (times in nanoseconds).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import BadRequest, InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import U8, U16, U32, U64, Field, Int, Optional, Type, json_kind, record
from ..core.strategies import st
from ..pyc.wire import Named
from .cost_model import (
    BOTTLENECKS,
    CONFIG_FIELDS,
    DTYPES,
    E13_500,
    E13_501,
    E13_502,
    E13_503,
    E13_504,
    E13_505,
    NAMES,
    Bounds,
    KernelConfig,
    Matmul,
    evaluate_cost,
    profile_fields,
    synthesize,
    violated,
)
from .cost_model import profile as preset

SEED = SEEDS["crucible cost model"]
HEADER = "include/crucible/CostModel.h (first committed at 9cf2c965, after 8d2680a2): "
"""The seed has no cost model at 8d2680a2: the header's first version (9cf2c965) is what these
errata are read from, and the profile crucible@9cf2c965 holds only them (the rest of the seed
stays pinned at 8d2680a2)."""
LIMIT = 1 << 63
"""flops, bytes and elements are at most 2^63 (the C++ carries them in uint64)."""
MAX_EXTENT = 1 << 20
MAX_TILE = 256


class Rational(Type):
    """An exact rational: "p/q" in lowest terms, or "p"."""

    def decode(self, value: Any, path: str) -> Fraction:
        if not isinstance(value, str):
            raise BadRequest(f"{path}: expected a rational string, got {json_kind(value)}")
        try:
            return Fraction(value)
        except ValueError:
            raise BadRequest(f"{path}: {value!r} is not p/q") from None

    def encode(self, value: Fraction) -> str:
        return str(Fraction(value))

    def strategy(self) -> st.SearchStrategy:
        return st.fractions(min_value=0, max_value=10**6)

    def describe(self) -> str:
        return "exact rational \"p/q\""

    def json_schema(self, result: bool = False) -> dict:
        return {"type": "string", "pattern": "^-?[0-9]+(/[0-9]+)?$",
                "description": self.describe()}


class Name(Named):
    """A profile or dtype name; an unknown one is `invalid_input` naming the field (listed in
    the schema's description, as symplex.target's names)."""

    def json_schema(self, result: bool = False) -> dict:
        out = super().json_schema(result)
        return out if result else {"type": "string", "description": out["description"]}


RATIONAL = Rational()
PROFILE = Field(Name(NAMES, "hardware profile"), "the hardware profile")
DTYPE = Field(Name(DTYPES, "element type"), "element type (prices the matching peak)")
COUNT = Int(64)
CONFIG = record(tile_m=U16, tile_n=U16, tile_k=U16, pipeline_stages=U8, warps_per_block=U8,
                smem_bytes=U32, regs_per_thread=U16, vec_width=U8)


def _count(name: str, v: int) -> int:
    if v > LIMIT:
        raise InvalidInput(f"args.{name}: {v} exceeds 2^63")
    return v


def _config(cfg: dict | None) -> KernelConfig:
    return KernelConfig() if cfg is None else KernelConfig(**cfg)


def _breakdown(c) -> dict:
    return {"compute_ns": c.compute_ns, "memory_ns": c.memory_ns, "launch_ns": c.launch_ns,
            "total_ns": c.total_ns, "bottleneck": c.bottleneck,
            "arithmetic_intensity": c.arithmetic_intensity,
            "wave_efficiency": c.wave_efficiency, "occupancy": c.occupancy}


def profile_op(name: int, errata: frozenset[str] = NO_ERRATA) -> dict:
    out = profile_fields(preset(NAMES[name], errata))
    del out["name"]
    return out


def roofline_op(profile: int, flops: int, bytes: int, elements: int, dtype: int,
                config: dict | None = None, errata: frozenset[str] = NO_ERRATA) -> dict:
    hw = preset(NAMES[profile], errata)
    for name, v in (("flops", flops), ("bytes", bytes), ("elements", elements)):
        _count(name, v)
    cfg = _config(config)
    broken = violated(cfg, hw)
    if broken:
        raise InvalidInput(f"args.config: breaks {'; '.join(broken)} on {hw.name}")
    return _breakdown(evaluate_cost(flops, bytes, elements, dtype, cfg, hw, errata))


def synthesize_op(profile: int, m: int, n: int, k: int, dtype: int,
                  tile_min: int | None = None, tile_max: int | None = None,
                  warps_max: int | None = None, errata: frozenset[str] = NO_ERRATA) -> dict:
    hw = preset(NAMES[profile], errata)
    for name, v in (("m", m), ("n", n), ("k", k)):
        if not 1 <= v <= MAX_EXTENT:
            raise InvalidInput(f"args.{name}: {v} is not in 1..{MAX_EXTENT}")
    d = Bounds()
    lo = d.tile_min if tile_min is None else tile_min
    hi = d.tile_max if tile_max is None else tile_max
    wm = d.warps_max if warps_max is None else warps_max
    for name, v in (("tile_min", lo), ("tile_max", hi)):
        if not 1 <= v <= MAX_TILE or v & (v - 1):
            raise InvalidInput(f"args.{name}: {v} is not a power of two in 1..{MAX_TILE}")
    if lo > hi:
        raise InvalidInput(f"args.tile_min: {lo} exceeds tile_max {hi}")
    if not 1 <= wm <= 32:
        raise InvalidInput(f"args.warps_max: {wm} is not in 1..32")
    r = synthesize(Matmul(m, n, k, dtype), hw, Bounds(lo, hi, wm), errata)
    return {"config": {f: getattr(r.config, f) for f in CONFIG_FIELDS}, **_breakdown(r.cost),
            "feasible": r.feasible}


# ── declarations ──────────────────────────────────────────────────────────────────────────

BREAKDOWN = {
    "compute_ns": Field(RATIONAL, "flops / (peak x wave efficiency x occupancy), ns"),
    "memory_ns": Field(RATIONAL, "HBM latency + bytes / bandwidth, ns"),
    "launch_ns": Field(RATIONAL, "kernel launch overhead, ns"),
    "total_ns": Field(RATIONAL, "max(compute, memory) + launch, ns"),
    "bottleneck": Field(Named(BOTTLENECKS, "bottleneck"), "what bounds the kernel"),
    "arithmetic_intensity": Field(RATIONAL, "flops / bytes (0 without bytes)"),
    "wave_efficiency": Field(RATIONAL, "elements / (waves x SMs x warp size)"),
    "occupancy": Field(RATIONAL, "resident threads / the SM's maximum"),
}
PEAK = U64


def _roof(name="h100_sxm", flops=1 << 30, nbytes=1 << 24, elements=1 << 20, dtype="f16",
          config=None) -> dict:
    out = {"profile": name, "flops": flops, "bytes": nbytes, "elements": elements,
           "dtype": dtype}
    return out if config is None else {**out, "config": config}


def _syn(name="h100_sxm", m=256, n=256, k=256, dtype="f16", **kw) -> dict:
    return {"profile": name, "m": m, "n": n, "k": k, "dtype": dtype, **kw}


def _cfg(**kw) -> dict:
    base = {f: getattr(KernelConfig(), f) for f in CONFIG_FIELDS}
    return {**base, **kw}


def roofline_edges() -> list[dict]:
    """Each profile at its default config, a tiny launch-bound kernel, no bytes, no flops, an
    underfilled wave, the counts at 2^63, i8 (E13.504) and the smem-bound occupancy."""
    out = [_roof(n) for n in NAMES if n != "cpu_measured"]
    out += [_roof("cpu_measured", dtype="f32"), _roof(flops=1, nbytes=1, elements=1),
            _roof(nbytes=0), _roof(flops=0), _roof(elements=100), _roof(dtype="i8"),
            _roof(flops=LIMIT, nbytes=LIMIT, elements=LIMIT),
            _roof(config=_cfg(smem_bytes=100_000, regs_per_thread=32)),
            _roof("mi300x", config=_cfg(warps_per_block=16, smem_bytes=65536)),
            _roof("b200", flops=1 << 44, nbytes=1 << 32, elements=1 << 24, dtype="f8_e4m3fn")]
    return out


def synth_edges() -> list[dict]:
    """Small and skinny problems on every GPU profile, f64 and i8, narrow spaces, and the
    CPU."""
    return [_syn(n, tile_max=64, warps_max=8) for n in NAMES if n != "cpu_measured"] + [
        _syn(m=1, n=1, k=1, tile_max=32), _syn(m=8, n=8, k=8192, tile_max=32, warps_max=16),
        _syn("mi300x", m=100, n=300, k=70, tile_max=64, warps_max=16),
        _syn(dtype="f64", tile_max=64, warps_max=8),
        _syn("a100_sxm", m=1024, n=1024, k=1024, dtype="i8", tile_min=32, warps_max=8),
        _syn("cpu_measured", m=64, n=64, k=64, dtype="f32", tile_max=64, warps_max=4),
        _syn("b200", m=4096, n=4096, k=4096, tile_min=64, tile_max=256, warps_max=4)]


@st.composite
def _roof_args(draw) -> dict:
    return {"profile": draw(st.integers(0, len(NAMES) - 2)),
            "flops": draw(st.integers(0, 1 << 50) | st.integers(0, LIMIT)),
            "bytes": draw(st.integers(0, 1 << 40) | st.integers(0, LIMIT)),
            "elements": draw(st.integers(1, 1 << 30)),
            "dtype": draw(st.sampled_from([0, 1, 2, 3, 6])),
            "config": draw(st.none() | st.builds(
                lambda tm, tn, tk, s, w, smem, r: {
                    "tile_m": tm, "tile_n": tn, "tile_k": tk, "pipeline_stages": s,
                    "warps_per_block": w, "smem_bytes": smem, "regs_per_thread": r,
                    "vec_width": 4},
                st.integers(1, 256), st.integers(1, 256), st.integers(1, 128),
                st.integers(1, 7), st.integers(1, 16), st.integers(0, 65536),
                st.integers(0, 255)))}


@st.composite
def _syn_args(draw) -> dict:
    return {"profile": draw(st.integers(0, len(NAMES) - 2)),
            **{d: draw(st.integers(1, 512)) for d in "mnk"},
            "dtype": draw(st.sampled_from([1, 2, 3])),
            "tile_min": 16, "tile_max": draw(st.sampled_from([16, 32, 64])),
            "warps_max": draw(st.integers(1, 8))}


declare(
    "cost.profile", chapter=13,
    summary="A hardware profile's numbers: SMs, warps, registers, shared memory, caches, HBM "
            "bandwidth and latency, launch overhead and the dense peak per precision.",
    args=record(name=PROFILE),
    result=record(num_sms=U32, warp_size=U16, max_warps_per_sm=U16, regs_per_sm=U32,
                  max_regs_per_thread=U16, smem_per_sm=U32, l2_bytes=U64, hbm_bytes=U64,
                  hbm_bw=Field(U64, "HBM bandwidth, B/s"),
                  hbm_latency_ns=Field(RATIONAL, "HBM latency, ns"),
                  launch_ns=Field(RATIONAL, "kernel launch overhead, ns"),
                  peak_fp64=PEAK, peak_fp32=PEAK, peak_tf32=PEAK, peak_fp16=PEAK,
                  peak_bf16=PEAK, peak_fp8=PEAK, peak_fp4=PEAK,
                  peak_int8=Field(PEAK, "dense peaks, FLOP/s (OP/s for int8)"),
                  sm_version=U32),
    spec=(preset,), errata=(E13_500, E13_501, E13_502, E13_503),
    proof_note="a table of cited numbers; the seed's differences are errata E13.500-503",
    domain=lambda: st.fixed_dictionaries({"name": st.integers(0, len(NAMES) - 1)}),
    edges=lambda: [{"name": n} for n in NAMES],
    invalid=(InvalidCase("an unknown profile", lambda: st.just({"name": "v100"})),
             InvalidCase("a profile number", lambda: st.just({"name": 3}), "bad_request")),
    not_applicable={"numba": "a table lookup", "cupy": "a table lookup"},
)
declare(
    "cost.roofline", chapter=13,
    summary="The roofline time of one kernel on a profile: compute, memory, launch and total "
            "nanoseconds as exact rationals, wave efficiency, occupancy and the bottleneck.",
    args=record(profile=PROFILE, flops=Field(COUNT, "floating-point operations"),
                bytes=Field(COUNT, "HBM bytes moved"),
                elements=Field(COUNT, "threads of work (wave efficiency)"), dtype=DTYPE,
                config=Field(Optional(CONFIG, None), "the kernel configuration; null: the "
                             "C++ default (128 x 128 x 32, 3 stages, 8 warps, 64 registers)",
                             None)),
    result=record(**BREAKDOWN),
    spec=(evaluate_cost,), errata=(E13_500, E13_501, E13_502, E13_503, E13_504, E13_505),
    domain=_roof_args, edges=roofline_edges,
    obligations=("PO13.502", "PO13.503"),
    invalid=(InvalidCase("an unknown profile", lambda: st.just(_roof("v100"))),
             InvalidCase("a profile number", lambda: st.just({**_roof(), "profile": 1}),
                         "bad_request"),
             InvalidCase("negative flops", lambda: st.just(_roof(flops=-1))),
             InvalidCase("bytes above 2^63", lambda: st.just(_roof(nbytes=LIMIT + 1))),
             InvalidCase("flops = 2^64", lambda: st.just(_roof(flops=1 << 64))),
             InvalidCase("an unknown dtype", lambda: st.just(_roof(dtype="f4"))),
             InvalidCase("no fp8 on A100", lambda: st.just(_roof("a100_sxm",
                                                                 dtype="f8_e5m2"))),
             InvalidCase("no elements", lambda: st.just(_roof(elements=0))),
             InvalidCase("C1: smem over the SM", lambda: st.just(
                 _roof(config=_cfg(smem_bytes=300_000)))),
             InvalidCase("C8: 0 stages", lambda: st.just(_roof(config=_cfg(
                 pipeline_stages=0)))),
             InvalidCase("C4: 2048 threads on MI300X", lambda: st.just(_roof(
                 "mi300x", config=_cfg(warps_per_block=32))))),
    not_applicable={"numba": "a few exact rational operations per call: nothing to compile",
                    "cupy": "a few exact rational operations per call: nothing to spread over "
                            "a device"},
)
declare(
    "cost.synthesize", chapter=13,
    summary="The matmul configuration (power-of-two tiles, stages, warps; shared memory and "
            "registers derived) with the least roofline time under C1-C8, every point's time "
            "evaluated by z3.",
    args=record(profile=PROFILE, m=Field(COUNT, "rows of A and C"),
                n=Field(COUNT, "columns of B and C"), k=Field(COUNT, "the contraction"),
                dtype=DTYPE,
                tile_min=Field(Optional(U16, 0), "least tile extent (power of two); null: 16",
                               None),
                tile_max=Field(Optional(U16, 0), "largest tile extent; null: 128", None),
                warps_max=Field(Optional(U8, 0), "most warps per block; null: 32", None)),
    result=record(config=Field(CONFIG, "the best configuration"), **BREAKDOWN,
                  feasible=Field(U32, "points of the space meeting C1-C8 that run")),
    spec=(synthesize,), domain=_syn_args, edges=synth_edges,
    obligations=("PO13.500", "PO13.501"),
    invalid=(InvalidCase("an unknown profile", lambda: st.just(_syn("v100"))),
             InvalidCase("m = 0", lambda: st.just(_syn(m=0))),
             InvalidCase("k above 2^20", lambda: st.just(_syn(k=MAX_EXTENT + 1))),
             InvalidCase("tile_max not a power of two", lambda: st.just(_syn(tile_max=48))),
             InvalidCase("tile_min above tile_max", lambda: st.just(_syn(tile_min=64,
                                                                         tile_max=32))),
             InvalidCase("warps_max = 0", lambda: st.just(_syn(warps_max=0))),
             InvalidCase("no fp8 peak on A100 (infeasible)", lambda: st.just(
                 _syn("a100_sxm", dtype="f8_e5m2", tile_max=32))),
             InvalidCase("MI300X LDS below one stage (infeasible)", lambda: st.just(
                 _syn("mi300x", dtype="f64", tile_min=256, tile_max=256)))),
    not_applicable={"numba": "a z3 optimisation: nothing to compile",
                    "cupy": "one z3 optimisation per call: nothing to spread over a device"},
)

T = 10**12
_I8 = _roof(flops=1 << 40, nbytes=1 << 20, dtype="i8")
_B200 = _roof("b200", flops=1 << 40, nbytes=1 << 24, dtype="f16")

erratum(
    E13_500, "B200's preset: 128 SMs and half the dense peaks",
    seed=SEED, location=HEADER + "blackwell_b200", ops=("cost.profile",
                                                                            "cost.roofline"),
    witness={"args": {"name": "b200"},
             "spec": {"num_sms": 148, "peak_fp16": 2250 * T, "peak_fp8": 4500 * T,
                      "peak_tf32": 1100 * T, "hbm_bytes": 180_000_000_000},
             "seed": {"num_sms": 128, "peak_fp16": 1125 * T, "peak_fp8": 2250 * T,
                      "peak_tf32": 225 * T, "hbm_bytes": 192 << 30}},
    also=({"op": "cost.roofline", "args": _B200,
           "spec": {"compute_ns": "45936017408/46875", "wave_efficiency": "4096/4107"},
           "seed": {"compute_ns": "274877906944/140625", "wave_efficiency": "1"}},),
    flag="result",
    detail="The seed's B200 has 128 SMs and FP16/BF16 1125, FP8 2250, FP4 4500, INT8 2250, "
           "TF32 225, FP32 90, FP64 45 TFLOPS. The HGX B200 datasheet gives per GPU 148 SMs "
           "enabled and dense FP16/BF16 2250, FP8 4500, FP4 9000, INT8 4500, TF32 1100, FP32 "
           "75, FP64 37 TFLOPS (its sparse figures halved), 180 GB. Every compute-bound time "
           "on B200 comes out twice the spec's or more.",
)
erratum(
    E13_501, "MI300X's preset: no TF32 and rounded peaks",
    seed=SEED, location=HEADER + "mi300x", ops=("cost.profile", "cost.roofline"),
    witness={"args": {"name": "mi300x"},
             "spec": {"peak_tf32": 653_700_000_000_000, "peak_fp16": 1_307_400_000_000_000,
                      "peak_fp64": 163_400_000_000_000, "peak_fp8": 2_614_900_000_000_000},
             "seed": {"peak_tf32": 0, "peak_fp16": 1300 * T, "peak_fp64": 81 * T,
                      "peak_fp8": 2600 * T}},
    also=({"op": "cost.roofline", "args": _roof("mi300x", flops=1 << 40, nbytes=1 << 20,
                                                 dtype="f64"),
           "spec": {"compute_ns": "14495514624/1075"},
           "seed": {"compute_ns": "10200547328/375"}},),
    flag="result",
    detail="AMD's MI300X datasheet lists TF32 matrix 653.7, FP16/BF16 1307.4, FP8 and INT8 "
           "2614.9, FP64 matrix 163.4 and FP32 163.4 TFLOPS; the seed says TF32 is absent on "
           "AMD (0), rounds the others to 1300 / 2600 / 164 and takes the FP64 vector rate "
           "(81) where its other presets take the tensor rate.",
)
erratum(
    E13_502, "H100's preset: FP64 at the vector rate, tensor peaks rounded",
    seed=SEED, location=HEADER + "hopper_h100", ops=("cost.profile",
                                                                         "cost.roofline"),
    witness={"args": {"name": "h100_sxm"},
             "spec": {"peak_fp64": 67 * T, "peak_fp16": 989_400_000_000_000,
                      "peak_tf32": 494_700_000_000_000},
             "seed": {"peak_fp64": 34 * T, "peak_fp16": 990 * T, "peak_tf32": 495 * T}},
    also=({"op": "cost.roofline", "args": _roof(flops=1 << 40, nbytes=1 << 20, dtype="f64"),
           "spec": {"compute_ns": "275716767744/8375"},
           "seed": {"compute_ns": "137858383872/2125"}},),
    flag="result",
    detail="The H100 whitepaper's dense tensor peaks are FP16/BF16 989.4, TF32 494.7, FP8 and "
           "INT8 1978.9 TFLOPS; the datasheet's FP64 tensor core rate is 67. The seed rounds "
           "the first to 990 / 495 / 1979 and prices FP64 at the vector 34, unlike its A100 "
           "(tensor 19).",
)
erratum(
    E13_503, "A100's preset: FP64 and FP32 at 19 instead of 19.5",
    seed=SEED, location=HEADER + "ampere_a100", ops=("cost.profile", "cost.roofline"),
    witness={"args": {"name": "a100_sxm"},
             "spec": {"peak_fp64": 19_500_000_000_000, "peak_fp32": 19_500_000_000_000},
             "seed": {"peak_fp64": 19 * T, "peak_fp32": 19 * T}},
    also=({"op": "cost.roofline", "args": _roof("a100_sxm", flops=1 << 40, nbytes=1 << 20,
                                                 dtype="f32"),
           "spec": {"compute_ns": "183609851904/1625"},
           "seed": {"compute_ns": "14495514624/125"}},),
    flag="result",
    detail="The A100 datasheet gives FP64 tensor core 19.5 and FP32 19.5 TFLOPS.",
)
erratum(
    E13_504, "int8 kernels are priced at the FP32 peak",
    seed=SEED, location=HEADER + "HardwareProfile::peak_tflops",
    ops=("cost.roofline",),
    witness={"args": _I8, "spec": {"compute_ns": "50130321408/44975"},
             "seed": {"compute_ns": "275716767744/8375"}},
    flag="result",
    detail="peak_tflops maps Double, Float, Half, BFloat16 and the Float8 kinds and sends "
           "every other ScalarType, Char (int8) included, to peak_fp32, so the profile's "
           "peak_int8 is never read: an int8 GEMM on H100 costs 29.5 x the spec's time. "
           "(cost.synthesize is the spec's own: the seed has no synthesiser, so no profile "
           "changes it.)",
)
erratum(
    E13_505, "A kernel with no throughput costs no compute time",
    seed=SEED, location=HEADER + "evaluate_cost",
    ops=("cost.roofline",),
    witness={"args": _roof("a100_sxm", dtype="f8_e5m2"), "spec": {"error": "invalid_input"},
             "seed": {"compute_ns": "0", "memory_ns": "17694766/2039", "bottleneck": "memory"}},
    flag="result",
    detail="evaluate_cost leaves compute_ns at 0 when the dtype's peak, the wave efficiency or "
           "the occupancy is 0 (an fp8 kernel on A100, zero elements, a block too big for an "
           "SM), so a kernel the hardware cannot run at all looks free of compute and wins "
           "every comparison. The spec refuses it.",
)
