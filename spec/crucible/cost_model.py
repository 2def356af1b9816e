"""Chapter 13: Crucible's cost model (C++ `CostModel.h`): hardware profiles, the roofline time
of one kernel, the kernel configuration constraints C1-C8, and the synthesis of the cheapest
configuration of a matmul-like problem by z3. (The header is first committed at 9cf2c965,
after the seed commit 8d2680a2; the errata describe that first version.)

Units. Every quantity is exact: counts and bytes are integers, peaks are FLOP/s and bandwidths
B/s (integers), times are `Fraction`s of a nanosecond. (The C++ carries TFLOPS, GB/s and ns in
floats; its numbers are the same quantities, so a preset's 1125 TFLOPS is 1_125 x 10^12 here.)

Roofline of a kernel doing `flops` operations on `bytes` of HBM traffic over `elements`
threads of work, with element type `dtype` and configuration `cfg`, on profile `hw`:
1. wave efficiency: tpw = SMs x warp size threads make a wave; waves = ceil(elements / tpw);
   efficiency = elements / (waves x tpw); 0 when there are no elements.
2. occupancy: the threads an SM keeps resident, the least of
   a. the register file's: (regs per SM div regs per thread) rounded down to whole warps
      (no limit when the thread uses no register);
   b. shared memory's: (smem per SM div smem per block) blocks x threads per block (no limit
      when the block uses none);
   c. the SM's maximum, warps x warp size;
   divided by (c).
3. peak = the profile's peak for dtype (f64, f32, f16, bf16, the fp8 peak for both fp8 kinds,
   the int8 peak for i8).
4. compute = flops x 10^9 / (peak x efficiency x occupancy) ns, 0 when flops = 0; a kernel
   with flops > 0 and no throughput (a dtype the profile has no peak for, no elements, no
   resident thread) has no time at all: `invalid_input`. The seed answers 0 ns (E13.505).
5. memory = HBM latency + bytes x 10^9 / bandwidth ns (the latency is paid even when bytes
   = 0, as in the C++).
6. total = max(compute, memory) + launch.
7. bottleneck, first that holds: launch if launch > 2 x max(compute, memory); underutil if
   efficiency < 1/10; compute if compute > memory; else memory.
8. arithmetic intensity = flops / bytes (0 when bytes = 0).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from fractions import Fraction

from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput

E13_500 = "E13.500"
E13_501 = "E13.501"
E13_502 = "E13.502"
E13_503 = "E13.503"
E13_504 = "E13.504"
E13_505 = "E13.505"

T = 10**12
G = 10**9
KIB = 1024
MIB = 1 << 20
GIB = 1 << 30

DTYPES = ("f64", "f32", "f16", "bf16", "f8_e5m2", "f8_e4m3fn", "i8")
"""Element types on the wire (C++ ScalarType Double, Float, Half, BFloat16, the Float8 kinds,
Char)."""
DTYPE_BYTES = (8, 4, 2, 2, 1, 1, 1)
PEAK_FIELD = ("peak_fp64", "peak_fp32", "peak_fp16", "peak_bf16", "peak_fp8", "peak_fp8",
              "peak_int8")
"""The profile field whose peak prices each dtype (step 3)."""
BOTTLENECKS = ("compute", "memory", "launch", "underutil")
"""C++ CostBreakdown::Bottleneck, in its declaration order (the ordinals)."""
MAX_THREADS_PER_BLOCK = 1024
"""C4's bound: 1024 threads per block on NVIDIA and AMD alike."""
MAX_STAGES = 7
"""C8's bound on the async-copy pipeline depth."""


@dataclass(frozen=True)
class HardwareProfile:
    """One device as the cost model sees it: compute fabric, register file, on-chip memory,
    memory hierarchy, latencies, and peaks. Peaks are FLOP/s (OP/s for int8), bandwidth B/s,
    latencies Fractions of a ns, memory sizes bytes."""

    name: str
    num_sms: int
    warp_size: int
    max_warps_per_sm: int
    regs_per_sm: int
    max_regs_per_thread: int
    smem_per_sm: int
    l2_bytes: int
    hbm_bytes: int
    hbm_bw: int
    hbm_latency_ns: Fraction
    launch_ns: Fraction
    peak_fp64: int
    peak_fp32: int
    peak_tf32: int
    peak_fp16: int
    peak_bf16: int
    peak_fp8: int
    peak_fp4: int
    peak_int8: int
    sm_version: int

    @property
    def max_threads_per_sm(self) -> int:
        return self.warp_size * self.max_warps_per_sm


def tf(x: str) -> int:
    """TFLOPS written as a decimal string -> FLOP/s, exactly."""
    return int(Fraction(x) * T)


H100_SXM = HardwareProfile(
    "h100_sxm", num_sms=132, warp_size=32, max_warps_per_sm=64, regs_per_sm=65536,
    max_regs_per_thread=255, smem_per_sm=228 * KIB, l2_bytes=50 * MIB, hbm_bytes=80 * GIB,
    hbm_bw=3_350 * G, hbm_latency_ns=Fraction(400), launch_ns=Fraction(4000),
    peak_fp64=tf("67"), peak_fp32=tf("67"), peak_tf32=tf("494.7"), peak_fp16=tf("989.4"),
    peak_bf16=tf("989.4"), peak_fp8=tf("1978.9"), peak_fp4=0, peak_int8=tf("1978.9"),
    sm_version=90)
"""NVIDIA H100 SXM5. NVIDIA H100 Tensor Core GPU Architecture whitepaper, table "NVIDIA H100
SXM5 ... compared to A100" (dense columns): 132 SMs, FP64 tensor 66.9 (datasheet 67), FP32 66.9
(datasheet 67), TF32 494.7, FP16/BF16 989.4, FP8 1978.9 TFLOPS, INT8 1978.9 TOPS; no FP4; 50 MB
L2. NVIDIA H100 datasheet, SXM column: 80 GB HBM3 at 3.35 TB/s, FP64 tensor 67 TFLOPS. CUDA C++
Programming Guide, compute capability 9.0: 64 resident warps, 64 K registers per SM, 255 per
thread, 228 KB shared memory per SM. Latencies and launch overhead: the seed's (no vendor
figure)."""

B200 = HardwareProfile(
    "b200", num_sms=148, warp_size=32, max_warps_per_sm=64, regs_per_sm=65536,
    max_regs_per_thread=255, smem_per_sm=228 * KIB, l2_bytes=50 * MIB, hbm_bytes=180 * G,
    hbm_bw=8_000 * G, hbm_latency_ns=Fraction(350), launch_ns=Fraction(3000),
    peak_fp64=tf("37"), peak_fp32=tf("75"), peak_tf32=tf("1100"), peak_fp16=tf("2250"),
    peak_bf16=tf("2250"), peak_fp8=tf("4500"), peak_fp4=tf("9000"), peak_int8=tf("4500"),
    sm_version=100)
"""NVIDIA B200 (HGX). NVIDIA HGX B200 datasheet, table "Individual Blackwell GPU
Specifications" (sparse figures halved for dense): FP4 18 -> 9 PFLOPS, FP8/FP6 9 -> 4.5,
INT8 9 -> 4.5 POPS, FP16/BF16 4.5 -> 2.25, TF32 2.2 -> 1.1 PFLOPS, FP32 75 TFLOPS,
FP64/FP64 tensor 37 TFLOPS, 180 GB HBM3e; 64 TB/s per 8 GPUs, 8 TB/s each (as
spec/symplex/hardware_target.py). 148 SMs (spec/symplex/hardware_target.py: Chips and Cheese, 2 x
74). CUDA C++
Programming Guide, compute capability 10.0: 64 warps, 64 K registers, 228 KB shared memory per
SM. L2 size, latencies and launch overhead: the seed's (no vendor figure). The seed's preset
differs (E13.500)."""

MI300X = HardwareProfile(
    "mi300x", num_sms=304, warp_size=64, max_warps_per_sm=32, regs_per_sm=65536,
    max_regs_per_thread=255, smem_per_sm=64 * KIB, l2_bytes=256 * MIB, hbm_bytes=192 * GIB,
    hbm_bw=5_300 * G, hbm_latency_ns=Fraction(380), launch_ns=Fraction(4000),
    peak_fp64=tf("163.4"), peak_fp32=tf("163.4"), peak_tf32=tf("653.7"),
    peak_fp16=tf("1307.4"), peak_bf16=tf("1307.4"), peak_fp8=tf("2614.9"), peak_fp4=0,
    peak_int8=tf("2614.9"), sm_version=0)
"""AMD Instinct MI300X. AMD Instinct MI300X accelerator datasheet, "Peak theoretical
performance" (dense): FP64 matrix 163.4, FP32 vector/matrix 163.4, TF32 matrix 653.7, FP16 and
BF16 1307.4, FP8 2614.9 TFLOPS, INT8 2614.9 TOPS; 304 CUs, 192 GB HBM3 at 5.3 TB/s, 256 MB
Infinity Cache. AMD CDNA 3 ISA / ROCm "MI300 microarchitecture": wave64, 64 KB LDS per CU.
Waves per CU, registers, latencies and launch overhead: the seed's. The seed's preset differs
(E13.501)."""

A100_SXM = HardwareProfile(
    "a100_sxm", num_sms=108, warp_size=32, max_warps_per_sm=64, regs_per_sm=65536,
    max_regs_per_thread=255, smem_per_sm=164 * KIB, l2_bytes=40 * MIB, hbm_bytes=80 * GIB,
    hbm_bw=2_039 * G, hbm_latency_ns=Fraction(450), launch_ns=Fraction(5000),
    peak_fp64=tf("19.5"), peak_fp32=tf("19.5"), peak_tf32=tf("156"), peak_fp16=tf("312"),
    peak_bf16=tf("312"), peak_fp8=0, peak_fp4=0, peak_int8=tf("624"), sm_version=80)
"""NVIDIA A100 SXM 80 GB. NVIDIA A100 Tensor Core GPU datasheet, SXM column (dense): FP64
tensor 19.5, FP32 19.5, TF32 156, BF16/FP16 312 TFLOPS, INT8 624 TOPS, no FP8/FP4, 80 GB HBM2e
at 2,039 GB/s. NVIDIA A100 Tensor Core GPU Architecture whitepaper: 108 SMs, 40 MB L2. CUDA C++
Programming Guide, compute capability 8.0: 64 warps, 64 K registers, 164 KB shared memory per
SM. Latencies and launch overhead: the seed's. The seed's preset differs (E13.503)."""

CPU_MEASURED = HardwareProfile(
    "cpu_measured", num_sms=2, warp_size=16, max_warps_per_sm=1, regs_per_sm=16 * 255,
    max_regs_per_thread=255, smem_per_sm=2 * MIB, l2_bytes=480 * MIB, hbm_bytes=0,
    hbm_bw=11_900_000_000, hbm_latency_ns=Fraction(0), launch_ns=Fraction(290),
    peak_fp64=0, peak_fp32=343 * G, peak_tf32=0, peak_fp16=0, peak_bf16=0, peak_fp8=0,
    peak_fp4=0, peak_int8=0, sm_version=0)
"""The 2-core x86-64 (AVX-512) machine the spec was written on, measured 2026-11-26 with
numpy on 2 threads, best of 5 after a warm-up: a 1024^3 float32 matmul ran at 343 GFLOP/s
(2 n^3 / time); np.copyto of 128 MiB float32 moved 11.9 GB/s (bytes read + written / time);
a 4-element np.add with out= took 290 ns a call (the launch overhead). An "SM" is a core, a
"warp" the 16 float32 lanes of a zmm register, one resident per core, and the register file is
sized so that registers never limit it (16 x 255); "shared memory" is the 2 MiB L2 per core
and "L2" the 480 MiB L3 (lscpu). No latency was measured (a pointer chase from Python
measures the interpreter): 0. Only f32 has a peak; other dtypes have no throughput here."""

PROFILES = {p.name: p for p in (H100_SXM, B200, MI300X, A100_SXM, CPU_MEASURED)}
NAMES = tuple(PROFILES)
"""Profile names on the wire."""

SEED_PRESETS = {
    "h100_sxm": {"peak_fp64": tf("34"), "peak_fp32": tf("67"), "peak_tf32": tf("495"),
                 "peak_fp16": tf("990"), "peak_bf16": tf("990"), "peak_fp8": tf("1979"),
                 "peak_int8": tf("1979")},
    "b200": {"num_sms": 128, "hbm_bytes": 192 * GIB, "peak_fp64": tf("45"),
             "peak_fp32": tf("90"), "peak_tf32": tf("225"), "peak_fp16": tf("1125"),
             "peak_bf16": tf("1125"), "peak_fp8": tf("2250"), "peak_fp4": tf("4500"),
             "peak_int8": tf("2250")},
    "mi300x": {"peak_fp64": tf("81"), "peak_fp32": tf("164"), "peak_tf32": 0,
               "peak_fp16": tf("1300"), "peak_bf16": tf("1300"), "peak_fp8": tf("2600"),
               "peak_int8": tf("2600")},
    "a100_sxm": {"peak_fp64": tf("19"), "peak_fp32": tf("19")},
}
"""The seed's preset numbers where they differ from the spec's (hopper_h100, blackwell_b200,
mi300x, ampere_a100 in CostModel.h)."""
PRESET_ERRATUM = {"h100_sxm": E13_502, "b200": E13_500, "mi300x": E13_501,
                  "a100_sxm": E13_503}


def profile(name: str, errata: frozenset[str] = NO_ERRATA) -> HardwareProfile:
    """The preset `name`, with the seed's numbers under its preset's erratum."""
    hw = PROFILES[name]
    e = PRESET_ERRATUM.get(name)
    if e is not None and e in errata:
        hw = replace(hw, **SEED_PRESETS[name])
    return hw


def profile_fields(hw: HardwareProfile) -> dict:
    return {f.name: getattr(hw, f.name) for f in fields(hw)}


def peak_for(hw: HardwareProfile, dtype: int, errata: frozenset[str] = NO_ERRATA) -> int:
    """Step 3; the seed prices i8 at the fp32 peak (E13.504)."""
    if E13_504 in errata and DTYPES[dtype] == "i8":
        return hw.peak_fp32
    return getattr(hw, PEAK_FIELD[dtype])


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def wave_efficiency(elements: int, hw: HardwareProfile) -> Fraction:
    """Step 1."""
    tpw = hw.num_sms * hw.warp_size
    if tpw == 0 or elements == 0:
        return Fraction(0)
    return Fraction(elements, ceil_div(elements, tpw) * tpw)


def resident_threads(regs_per_thread: int, smem_per_block: int, warps_per_block: int,
                     hw: HardwareProfile) -> int:
    """Step 2's least of (a), (b), (c)."""
    max_threads = hw.max_threads_per_sm
    reg_limited = max_threads
    if regs_per_thread > 0:
        reg_limited = hw.regs_per_sm // regs_per_thread // hw.warp_size * hw.warp_size
    smem_limited = max_threads
    if smem_per_block > 0:
        smem_limited = hw.smem_per_sm // smem_per_block * warps_per_block * hw.warp_size
    return min(reg_limited, smem_limited, max_threads)


def sm_occupancy(regs_per_thread: int, smem_per_block: int, warps_per_block: int,
                 hw: HardwareProfile) -> Fraction:
    """Step 2."""
    if hw.max_threads_per_sm == 0:
        return Fraction(0)
    return Fraction(resident_threads(regs_per_thread, smem_per_block, warps_per_block, hw),
                    hw.max_threads_per_sm)


@dataclass(frozen=True)
class KernelConfig:
    """The variables the synthesis chooses (C++ defaults: 128 x 128 x 32 tiles, 3 stages,
    8 warps, no shared memory declared, 64 registers, 4-wide vectors)."""

    tile_m: int = 128
    tile_n: int = 128
    tile_k: int = 32
    pipeline_stages: int = 3
    warps_per_block: int = 8
    smem_bytes: int = 0
    regs_per_thread: int = 64
    vec_width: int = 4


CONFIG_FIELDS = tuple(f.name for f in fields(KernelConfig))


def both(a, b):
    """a and b, for ints (bools) and z3 terms alike."""
    if isinstance(a, bool) and isinstance(b, bool):
        return a and b
    import z3
    return z3.And(a, b)


def constraints(hw: HardwareProfile) -> tuple:
    """C1-C8 as (label, predicate of a config); the predicates take ints or z3 terms."""
    return (
        ("C1 smem fits the SM", lambda c: c.smem_bytes <= hw.smem_per_sm),
        ("C2 registers within the cap", lambda c: c.regs_per_thread <= hw.max_regs_per_thread),
        ("C3 at least one warp", lambda c: c.warps_per_block >= 1),
        ("C4 at most 1024 threads a block",
         lambda c: c.warps_per_block * hw.warp_size <= MAX_THREADS_PER_BLOCK),
        ("C5 tile_m positive", lambda c: c.tile_m > 0),
        ("C6 tile_n positive", lambda c: c.tile_n > 0),
        ("C7 tile_k positive", lambda c: c.tile_k > 0),
        ("C8 stages in 1..7",
         lambda c: both(c.pipeline_stages >= 1, c.pipeline_stages <= MAX_STAGES)),
    )


def violated(cfg: KernelConfig, hw: HardwareProfile) -> tuple[str, ...]:
    """The labels of the constraints `cfg` breaks, in order."""
    return tuple(label for label, holds in constraints(hw) if not holds(cfg))


def validate_config(cfg: KernelConfig, hw: HardwareProfile) -> bool:
    """C++ validate_config: every constraint holds."""
    return not violated(cfg, hw)


@dataclass(frozen=True)
class CostBreakdown:
    compute_ns: Fraction
    memory_ns: Fraction
    launch_ns: Fraction
    total_ns: Fraction
    flops: int
    bytes: int
    arithmetic_intensity: Fraction
    wave_efficiency: Fraction
    occupancy: Fraction
    bottleneck: int


def evaluate_cost(flops: int, nbytes: int, elements: int, dtype: int, cfg: KernelConfig,
                  hw: HardwareProfile, errata: frozenset[str] = NO_ERRATA) -> CostBreakdown:
    """Steps 1-8 (module docstring)."""
    eff = wave_efficiency(elements, hw)
    occ = sm_occupancy(cfg.regs_per_thread, cfg.smem_bytes, cfg.warps_per_block, hw)
    peak = peak_for(hw, dtype, errata)
    throughput = peak * eff * occ
    if flops == 0:
        compute = Fraction(0)
    elif throughput > 0:
        compute = Fraction(flops * G) / throughput
    elif E13_505 in errata:
        compute = Fraction(0)
    else:
        why = ("no peak for " + DTYPES[dtype] if peak == 0 else
               "no elements" if eff == 0 else "no thread resident on an SM")
        raise InvalidInput(f"args: {flops} flops with no throughput ({why}) take no finite "
                           f"time on {hw.name}")
    memory = hw.hbm_latency_ns + Fraction(nbytes * G, hw.hbm_bw) if hw.hbm_bw > 0 \
        else Fraction(0)
    launch = hw.launch_ns
    busy = max(compute, memory)
    total = busy + launch
    if launch > 2 * busy:
        bottleneck = 2
    elif eff < Fraction(1, 10):
        bottleneck = 3
    elif compute > memory:
        bottleneck = 0
    else:
        bottleneck = 1
    intensity = Fraction(flops, nbytes) if nbytes > 0 else Fraction(0)
    return CostBreakdown(compute, memory, launch, total, flops, nbytes, intensity, eff, occ,
                         bottleneck)


# ── synthesis ─────────────────────────────────────────────────────────────────────────────

REG_BASE = 32
"""Registers a thread of the spec's matmul kernel holds besides its accumulators (addresses,
indices, loop state, operand fragments): the spec's own estimate."""
VEC_BYTES = 16
"""A vectorised load moves 16 bytes (vec_width = 16 / element size, at least 1)."""


@dataclass(frozen=True)
class Bounds:
    """The search space: tile extents are the powers of two in tile_min..tile_max (each of
    tile_m, tile_n, tile_k); the pipeline_stages field ranges over 0..MAX_STAGES + 1 and
    warps_per_block over 0..warps_max, so that C3 and C8 carve the feasible values."""

    tile_min: int = 16
    tile_max: int = 128
    warps_max: int = 32

    def tiles(self) -> tuple[int, ...]:
        out, t = [], 1
        while t <= self.tile_max:
            if t >= self.tile_min:
                out.append(t)
            t *= 2
        return tuple(out)

    def stages(self) -> range:
        return range(0, MAX_STAGES + 2)

    def warps(self) -> range:
        return range(0, self.warps_max + 1)


@dataclass(frozen=True)
class Matmul:
    """C[M, N] = A[M, K] @ B[K, N] in `dtype`."""

    m: int
    n: int
    k: int
    dtype: int


def derive(p: Matmul, hw: HardwareProfile, tm: int, tn: int, tk: int, stages: int,
           warps: int) -> tuple[KernelConfig, int, int, int]:
    """A point of the space as a config and its work: (config, flops, bytes, elements).
    1. grid: ceil(M / tm) x ceil(N / tn) blocks of ceil(K / tk) steps.
    2. smem = (tm tk + tk tn) x element size x stages (the A and B tiles of each stage).
    3. threads = warps x warp size; regs = REG_BASE + ceil(tm tn x words / threads), one
       accumulator per output element (two 32-bit words for f64); 0 with no thread.
    4. flops = 2 (gm tm)(gn tn)(gk tk) (padded tiles compute too); bytes = gm gn (gk (tm tk +
       tk tn) + tm tn) x element size; elements = gm gn threads."""
    bpe = DTYPE_BYTES[p.dtype]
    gm, gn, gk = ceil_div(p.m, tm), ceil_div(p.n, tn), ceil_div(p.k, tk)
    smem = (tm * tk + tk * tn) * bpe * stages
    threads = warps * hw.warp_size
    words = 2 if bpe == 8 else 1
    regs = REG_BASE + ceil_div(tm * tn * words, threads) if threads else 0
    cfg = KernelConfig(tm, tn, tk, stages, warps, smem, regs, max(1, VEC_BYTES // bpe))
    flops = 2 * (gm * tm) * (gn * tn) * (gk * tk)
    nbytes = gm * gn * (gk * (tm * tk + tk * tn) + tm * tn) * bpe
    return cfg, flops, nbytes, gm * gn * threads


def tie_key(cfg: KernelConfig) -> tuple:
    """After the least total time: the least shared memory, then fewest warps, fewest stages,
    then the smallest tile_m, tile_n, tile_k."""
    return (cfg.smem_bytes, cfg.warps_per_block, cfg.pipeline_stages, cfg.tile_m, cfg.tile_n,
            cfg.tile_k)


@dataclass(frozen=True)
class Synthesis:
    config: KernelConfig
    cost: CostBreakdown
    feasible: int


def brute_force(p: Matmul, hw: HardwareProfile, b: Bounds = Bounds(),
                errata: frozenset[str] = NO_ERRATA) -> Synthesis | None:
    """Every point of the space that meets C1-C8 and runs (step 4 gives it a time), evaluated by
    `evaluate_cost`; the least (total, tie_key)."""
    best, count = None, 0
    for tm in b.tiles():
        for tn in b.tiles():
            for tk in b.tiles():
                for s in b.stages():
                    for w in b.warps():
                        cfg, flops, nbytes, elements = derive(p, hw, tm, tn, tk, s, w)
                        if not validate_config(cfg, hw):
                            continue
                        try:
                            c = evaluate_cost(flops, nbytes, elements, p.dtype, cfg, hw, errata)
                        except InvalidInput:
                            continue
                        count += 1
                        key = (c.total_ns, tie_key(cfg))
                        if best is None or key < best[0]:
                            best = (key, cfg, c)
    return None if best is None else Synthesis(best[1], best[2], count)


def _zdiv_up(z3, num, den):
    """ceil(num / den) as a z3 Int term (den > 0 where it matters)."""
    return (num + den - 1) / den


def cost_terms(p: Matmul, hw: HardwareProfile, errata: frozenset[str] = NO_ERRATA):
    """The z3 encoding of `derive` and steps 1-7 over five Int fields: returns (fields, the
    config as terms, runs: the kernel gets a time, total_ns: a Real term). Divisions are z3's
    integer division on Ints and exact division on Reals."""
    import z3
    tm, tn, tk, s, w = z3.Ints("tile_m tile_n tile_k pipeline_stages warps_per_block")
    bpe = DTYPE_BYTES[p.dtype]
    words = 2 if bpe == 8 else 1
    gm, gn, gk = (_zdiv_up(z3, e, t) for e, t in ((p.m, tm), (p.n, tn), (p.k, tk)))
    smem = (tm * tk + tk * tn) * bpe * s
    threads = w * hw.warp_size
    regs = z3.If(threads > 0, REG_BASE + _zdiv_up(z3, tm * tn * words, threads), 0)
    cfg = KernelConfig(tm, tn, tk, s, w, smem, regs, max(1, VEC_BYTES // bpe))
    flops = 2 * (gm * tm) * (gn * tn) * (gk * tk)
    nbytes = gm * gn * (gk * (tm * tk + tk * tn) + tm * tn) * bpe
    elements = gm * gn * threads
    tpw = hw.num_sms * hw.warp_size
    waves = _zdiv_up(z3, elements, tpw)
    max_t = hw.max_threads_per_sm
    reg_lim = z3.If(regs > 0, hw.regs_per_sm / regs / hw.warp_size * hw.warp_size, max_t)
    smem_lim = z3.If(smem > 0, hw.smem_per_sm / smem * threads, max_t)
    lo = z3.If(reg_lim < smem_lim, reg_lim, smem_lim)
    actual = z3.If(lo < max_t, lo, max_t)
    peak = peak_for(hw, p.dtype, errata)
    runs = z3.And(elements > 0, actual > 0, z3.BoolVal(peak > 0))
    compute = z3.If(runs, z3.ToReal(flops * G * waves * tpw * max_t)
                    / z3.ToReal(peak * elements * actual), z3.RealVal(0))
    memory = z3.RealVal(hw.hbm_latency_ns) + z3.ToReal(nbytes * G) / hw.hbm_bw
    total = z3.If(compute > memory, compute, memory) + z3.RealVal(hw.launch_ns)
    return (tm, tn, tk, s, w), cfg, runs, total


def _at(term, pairs):
    """`term` with each (variable, int) of `pairs` substituted, simplified by z3."""
    import z3
    return z3.simplify(z3.substitute(term, *[(v, z3.IntVal(x)) for v, x in pairs]))


def synthesis_times(p: Matmul, hw: HardwareProfile, b: Bounds = Bounds(),
                    errata: frozenset[str] = NO_ERRATA) -> list[tuple[Fraction, tuple]]:
    """z3 evaluates the encoding (`cost_terms`, C1-C8 through `constraints`) at every point of
    the space by substitution and simplification (exact integer and rational arithmetic): the
    tiles first, then the stages, then the warps. Returns (total time, point) of every point
    whose constraints and `runs` simplify to true, in the order of the space."""
    import z3
    (tm_, tn_, tk_, s_, w_), cfg, runs, total = cost_terms(p, hw, errata)
    ok = z3.And(runs, *[holds(cfg) for _label, holds in constraints(hw)])
    timed = z3.If(ok, total, z3.RealVal(-1))
    out = []
    tiles = b.tiles()
    for tm in tiles:
        for tn in tiles:
            for tk in tiles:
                at_tiles = _at(timed, ((tm_, tm), (tn_, tn), (tk_, tk)))
                for s in b.stages():
                    at_stage = _at(at_tiles, ((s_, s),))
                    for w in b.warps():
                        t = _at(at_stage, ((w_, w),)).as_fraction()
                        if t >= 0:
                            out.append((t, (tm, tn, tk, s, w)))
    return out


def tie_rank(p: Matmul, hw: HardwareProfile, b: Bounds, point: tuple) -> int:
    """tie_key as one integer, from the z3 encoding at `point`: shared memory, warps, stages,
    then the tiles' positions in the space (mixed radix)."""
    (tm_, tn_, tk_, s_, w_), cfg, _runs, _total = cost_terms(p, hw)
    tiles = b.tiles()
    nt = len(tiles)
    rank = ((cfg.smem_bytes * len(b.warps()) + w_) * len(b.stages()) + s_) * nt ** 3
    at = _at(rank, zip((tm_, tn_, tk_, s_, w_), point, strict=True)).as_long()
    a, c, d = (tiles.index(t) for t in point[:3])
    return at + (a * nt + c) * nt + d


def synthesize(p: Matmul, hw: HardwareProfile, b: Bounds = Bounds(),
               errata: frozenset[str] = NO_ERRATA) -> Synthesis:
    """1. z3 evaluates the time of every feasible point (`synthesis_times`).
    2. The points of the least time are kept; of those, the least `tie_rank` is chosen.
    3. Its cost is `evaluate_cost`'s. No feasible point: `invalid_input`."""
    times = synthesis_times(p, hw, b, errata)
    if not times:
        raise InvalidInput(f"args: no configuration of tiles {b.tile_min}..{b.tile_max}, "
                           f"1..{b.warps_max} warps and 1..{MAX_STAGES} stages meets C1-C8 "
                           f"and runs {DTYPES[p.dtype]} on {hw.name}")
    least = min(t for t, _ in times)
    tied = [point for t, point in times if t == least]
    point = min(tied, key=lambda pt: tie_rank(p, hw, b, pt))
    cfg, flops, nbytes, elements = derive(p, hw, *point)
    return Synthesis(cfg, evaluate_cost(flops, nbytes, elements, p.dtype, cfg, hw, errata),
                     len(times))
