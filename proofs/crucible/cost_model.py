"""Chapter 13 obligations of Crucible's cost model: z3's synthesis equals an exhaustive search
over the spec's own cost function on small spaces (PO13.500); no returned configuration breaks
a constraint, and validate_config is exactly the C++'s C1-C8 (PO13.501); the roofline is
monotone in flops and bytes with efficiency and occupancy in [0, 1] (PO13.502); the C++
header's worked numbers and the bottleneck order (PO13.503)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.crucible.cost_model import (
    NAMES,
    Bounds,
    KernelConfig,
    Matmul,
    brute_force,
    constraints,
    cost_terms,
    evaluate_cost,
    profile,
    resident_threads,
    sm_occupancy,
    synthesize,
    tie_rank,
    wave_efficiency,
)
from ..core.obligation import Property, property_obligation

SPACES = (("h100_sxm", Matmul(64, 64, 64, 2), Bounds(16, 64, 8)),
          ("mi300x", Matmul(100, 300, 70, 2), Bounds(16, 64, 32)),
          ("a100_sxm", Matmul(1024, 1024, 1024, 1), Bounds(32, 128, 8)),
          ("b200", Matmul(4096, 4096, 4096, 0), Bounds(64, 256, 4)),
          ("h100_sxm", Matmul(8, 8, 8192, 2), Bounds(16, 32, 16)),
          ("cpu_measured", Matmul(64, 64, 64, 1), Bounds(16, 64, 4)),
          ("mi300x", Matmul(512, 64, 512, 0), Bounds(16, 32, 32)))
"""(profile, problem, space): f16, f32, f64 on every profile, skinny and padded problems,
spaces of 24 to 2880 feasible points; MI300X's wave64 makes C4 bind above 16 warps."""


def independent_breaks(c: KernelConfig, hw) -> list[str]:
    """The C++ validate_config's conditions, restated here apart from the spec's list."""
    out = []
    if c.smem_bytes > hw.smem_per_sm:
        out.append("C1")
    if c.regs_per_thread > hw.max_regs_per_thread:
        out.append("C2")
    if c.warps_per_block == 0:
        out.append("C3")
    if c.warps_per_block * hw.warp_size > 1024:
        out.append("C4")
    if c.tile_m == 0 or c.tile_n == 0 or c.tile_k == 0:
        out.append("C5-C7")
    if c.pipeline_stages == 0 or c.pipeline_stages > 7:
        out.append("C8")
    return out


def _same(case) -> None:
    name, p, b = case
    hw = profile(name)
    z, bf = synthesize(p, hw, b), brute_force(p, hw, b)
    assert bf is not None
    assert (z.config, z.cost, z.feasible) == (bf.config, bf.cost, bf.feasible), (case, z, bf)


@property_obligation(
    "PO13.500",
    "On 7 small spaces (every profile, f16/f32/f64, 24 to 2880 feasible points) the z3 "
    "synthesis returns the configuration, cost and feasible count of an exhaustive search that "
    "evaluates the spec's evaluate_cost at every point meeting C1-C8 (least total, then the "
    "stated tie order).",
    covers=("cost.synthesize",),
    subject=synthesize,
    mutants=(
        Mutant.edit("no time objective", "the choice ranks by the tie order alone", synthesize,
                    "tied = [point for t, point in times if t == least]",
                    "tied = [point for t, point in times]"),
        Mutant.edit("registers without base", "the encoding counts accumulators only",
                    cost_terms, "REG_BASE + _zdiv_up(z3, tm * tn * words, threads)",
                    "_zdiv_up(z3, tm * tn * words, threads)"),
        Mutant.edit("no latency in z3", "the encoding's memory time drops the latency",
                    cost_terms, "memory = z3.RealVal(hw.hbm_latency_ns) + ", "memory = "),
        Mutant.edit("deepest pipeline first", "ties go to the most shared memory",
                    tie_rank, "rank = ((cfg.smem_bytes * len(b.warps())",
                    "rank = ((-cfg.smem_bytes * len(b.warps())"),
    ),
)
def synthesis_is_optimal(_subject):
    return [Property("z3 = exhaustive", _same, cases=lambda: SPACES)]


def _grid():
    for name in NAMES:
        for smem in (0, 1, 65536, 65537, 167936, 233472, 233473, 2 * 1024 * 1024 + 1):
            for regs in (0, 32, 255, 256):
                for warps in (0, 1, 16, 17, 32, 255):
                    for stages in (0, 1, 7, 8):
                        for tiles in ((128, 128, 32), (0, 16, 16), (16, 0, 16), (16, 16, 0)):
                            yield name, KernelConfig(*tiles, stages, warps, smem, regs, 4)


def _validate(case) -> None:
    name, c = case
    hw = profile(name)
    spec_ok = all(holds(c) for _label, holds in constraints(hw))
    assert spec_ok == (not independent_breaks(c, hw)), (name, c, independent_breaks(c, hw))


def _returned(case) -> None:
    name, p, b = case
    hw = profile(name)
    z = synthesize(p, hw, b)
    assert not independent_breaks(z.config, hw), (case, z.config)


def _drop(n: int, first: str, last: str) -> Mutant:
    return Mutant.edit(f"C{n} dropped", f"the constraint list loses C{n}", constraints,
                       first, last)


@property_obligation(
    "PO13.501",
    "validate_config (the spec's list C1-C8) accepts exactly the configurations the C++ "
    "conditions accept, over a grid of 30720 configurations per profile straddling every "
    "bound; and no configuration the synthesis returns on the 7 spaces breaks one.",
    covers=("cost.synthesize", "cost.roofline"),
    subject=constraints,
    mutants=(
        _drop(1, '("C1 smem fits the SM", lambda c: c.smem_bytes <= hw.smem_per_sm),',
              '("C1 smem fits the SM", lambda c: True),'),
        _drop(4, "lambda c: c.warps_per_block * hw.warp_size <= MAX_THREADS_PER_BLOCK",
              "lambda c: True"),
        _drop(8, "lambda c: both(c.pipeline_stages >= 1, c.pipeline_stages <= MAX_STAGES)",
              "lambda c: True"),
        Mutant.edit("C8 up to 8", "stages may reach 8", constraints,
                    "c.pipeline_stages <= MAX_STAGES", "c.pipeline_stages <= MAX_STAGES + 1"),
        Mutant.edit("C2 strict", "registers must stay below the cap", constraints,
                    "c.regs_per_thread <= hw.max_regs_per_thread",
                    "c.regs_per_thread < hw.max_regs_per_thread"),
    ),
)
def constraints_hold(_subject):
    return [Property("validate_config = C++ conditions", _validate, cases=lambda: list(_grid())),
            Property("returned configurations", _returned, cases=lambda: SPACES[:5])]


COUNTS = st.integers(0, 1 << 63)


@st.composite
def _roof_case(draw):
    name = draw(st.sampled_from(NAMES[:4]))
    cfg = KernelConfig(16, 16, 16, 1, draw(st.integers(1, 16)), draw(st.integers(0, 65536)),
                       draw(st.integers(0, 255)), 4)
    return (name, draw(COUNTS), draw(COUNTS), draw(st.integers(1, 1 << 40)),
            draw(st.sampled_from([0, 1, 2, 3, 6])), cfg, draw(COUNTS), draw(COUNTS))


def _monotone(case) -> None:
    name, flops, nbytes, elements, dtype, cfg, more_f, more_b = case
    hw = profile(name)
    base = evaluate_cost(flops, nbytes, elements, dtype, cfg, hw)
    up_f = evaluate_cost(flops + more_f, nbytes, elements, dtype, cfg, hw)
    up_b = evaluate_cost(flops, nbytes + more_b, elements, dtype, cfg, hw)
    assert up_f.compute_ns >= base.compute_ns and up_f.total_ns >= base.total_ns
    assert up_b.memory_ns >= base.memory_ns and up_b.total_ns >= base.total_ns
    assert base.total_ns == max(base.compute_ns, base.memory_ns) + base.launch_ns
    for v in (base.wave_efficiency, base.occupancy):
        assert 0 <= v <= 1, case


@property_obligation(
    "PO13.502",
    "The roofline time never falls when flops or bytes grow (compute and memory each), total "
    "is max(compute, memory) + launch, and wave efficiency and occupancy lie in [0, 1], over "
    "counts up to 2^63 on the four GPU profiles.",
    covers=("cost.roofline",),
    subject=evaluate_cost,
    mutants=(
        Mutant.edit("serial sum", "total adds compute and memory", evaluate_cost,
                    "total = busy + launch", "total = compute + memory + launch"),
        Mutant.edit("bytes discount", "memory time falls with bytes", evaluate_cost,
                    "Fraction(nbytes * G, hw.hbm_bw)", "Fraction(G, hw.hbm_bw + nbytes)"),
        Mutant.edit("unrounded waves", "efficiency = elements / one wave", wave_efficiency,
                    "ceil_div(elements, tpw) * tpw", "tpw"),
        Mutant.edit("occupancy uncapped", "the most, not the least, of the limits",
                    resident_threads, "min(reg_limited, smem_limited, max_threads)",
                    "max(reg_limited, smem_limited)"),
    ),
)
def roofline_monotone(_subject):
    return [Property("monotone, bounded", _monotone, strategy=_roof_case, examples=300)]


def _worked(_case) -> None:
    """The header's examples (B200 at the seed's 128 SMs, then the spec's 148) and values
    worked by hand."""
    seed_b200 = profile("b200", frozenset({"E13.500"}))
    assert wave_efficiency(2048, seed_b200) == Fraction(1, 2)
    b200 = profile("b200")
    assert wave_efficiency(2048, b200) == Fraction(2048, 4736)
    assert wave_efficiency(0, b200) == 0 and wave_efficiency(4736 * 3, b200) == 1
    for regs, occ in ((32, 1), (64, Fraction(1, 2)), (128, Fraction(1, 4)),
                      (255, Fraction(1, 8))):
        assert sm_occupancy(regs, 0, 8, b200) == occ, regs
    # 233472 // 100000 = 2 blocks x 8 warps x 32 = 512 of 2048 threads
    assert sm_occupancy(32, 100_000, 8, b200) == Fraction(1, 4)
    h100 = profile("h100_sxm")
    cfg = KernelConfig()
    c = evaluate_cost(1 << 30, 1 << 24, 1 << 20, 2, cfg, h100)
    # 2^30 x 10^9 / (989.4e12 x 8192/8217 x 1/2) ns; 400 + 2^24 / 3350 ns
    assert c.compute_ns == Fraction((1 << 30) * 10**9 * 8217 * 2, 989_400_000_000_000 * 8192)
    assert c.memory_ns == 400 + Fraction(1 << 24, 3350)
    assert c.bottleneck == 1  # memory: launch 4000 < 2 x 5408
    assert evaluate_cost(1, 1, 1, 2, cfg, h100).bottleneck == 2  # launch
    assert evaluate_cost(1 << 40, 1 << 20, 100, 2, cfg, h100).bottleneck == 3  # 100/4224 < 1/10
    assert evaluate_cost(1 << 44, 1 << 20, 1 << 20, 2, cfg, h100).bottleneck == 0
    i8 = evaluate_cost(1 << 40, 1 << 20, 1 << 20, 6, cfg, h100)
    assert i8.compute_ns * h100.peak_int8 == evaluate_cost(
        1 << 40, 1 << 20, 1 << 20, 2, cfg, h100).compute_ns * h100.peak_fp16


@property_obligation(
    "PO13.503",
    "The C++ header's worked examples hold (B200 2048 elements: efficiency 1/2 at 128 SMs; "
    "32/64/128/255 registers: occupancy 1, 1/2, 1/4, 1/8) with the spec's 148 SMs giving "
    "2048/4736; hand-worked H100 compute and memory times; the bottleneck order launch, "
    "underutil, compute, memory; int8 at the int8 peak.",
    covers=("cost.roofline",),
    subject=evaluate_cost,
    mutants=(
        Mutant.edit("launch never", "the launch class is never chosen", evaluate_cost,
                    "if launch > 2 * busy:", "if False:"),
        Mutant.edit("underutil before launch", "the 1/10 test comes first", evaluate_cost,
                    "if launch > 2 * busy:", "if launch > 2 * busy and eff >= Fraction(1, 10):"),
        Mutant.edit("no warp rounding", "register-limited threads not whole warps",
                    resident_threads, " // hw.warp_size * hw.warp_size", ""),
        Mutant.edit("memory without latency", "the latency is dropped", evaluate_cost,
                    "hw.hbm_latency_ns + Fraction", "Fraction"),
        Mutant.edit("i8 at fp32", "int8 priced at the fp32 peak (E13.504)", evaluate_cost,
                    "peak = peak_for(hw, dtype, errata)",
                    "peak = peak_for(hw, dtype, errata | {'E13.504'})"),
    ),
)
def header_examples(_subject):
    return [Property("worked examples", _worked, cases=lambda: [None])]
