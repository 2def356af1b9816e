"""Chapter 13: the hardware targets of SympleX's tile search (C++ `hardware_target.h`), with
the spec's corrected constants.

1. A target is a GPU's per-SM resources, its HBM bandwidth and its dense FP16/BF16 tensor
   peak. The peak is the vendor's dense number (no sparsity); the spec derives nothing
   from the MMA shape.
2. SympleX's table (E13.400, E13.405, E13.406) computes the peak as
   SMs x tensor cores per SM x (m n k of one MMA) x 2 x 1.83 GHz, as if each tensor core
   finished one whole m16n8k16 MMA every clock: four times the real rate on Hopper.
3. The ridge point (roofline knee) is peak / bandwidth, in FLOP per byte.

Every constant is an integer (FLOP/s, B/s, bytes), so the search can compare costs exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.errata import NO_ERRATA

E13_400 = "E13.400"
E13_405 = "E13.405"
E13_406 = "E13.406"

TARGETS = ("h100", "b200", "generic")
"""The target names on the wire (SympleX: H100, B200, Generic)."""
SYMPLEX_CLOCK_HZ = 1_830_000_000
"""The clock SympleX's peak formula uses for every target (hardware_target.h)."""
KIB = 1024


@dataclass(frozen=True)
class Target:
    """One GPU as the cost model sees it."""

    name: str
    sms: int
    tensor_cores_per_sm: int
    mma: tuple[int, int, int]
    hbm_bytes_per_s: int
    sram_per_sm: int
    max_warps: int
    regfile_bytes: int
    stages: int
    tma: bool
    peak_flops: int
    bytes_per_element: int = 2
    memory_alignment: int = 128


H100_SMS = 132
"""NVIDIA H100 Tensor Core GPU Architecture whitepaper, H100 SXM5: 132 SMs."""
H100_PEAK = 989_400_000_000_000
"""NVIDIA H100 datasheet / whitepaper, H100 SXM5: FP16 and BF16 tensor 989.4 TFLOPS dense
(1,979 with sparsity) = 132 SMs x 4 tensor cores x 512 FMA/clock x 2 x 1.83 GHz."""
H100_HBM = 3_350_000_000_000
"""NVIDIA H100 datasheet, H100 SXM: HBM3, 3.35 TB/s."""
H100_SRAM = 228 * KIB
"""NVIDIA Hopper Tuning Guide: up to 228 KB of shared memory per SM (compute capability 9.0)."""
MAX_WARPS_SM90 = 64
"""CUDA C++ Programming Guide, compute capability 9.0 and 10.0: 2048 resident threads
(64 warps) per SM."""
REGFILE = 256 * KIB
"""CUDA C++ Programming Guide: 64 K 32-bit registers per SM (compute capability 8.0-10.0)."""
MMA_F16 = (16, 8, 16)
"""PTX ISA: `mma.sync.aligned.m16n8k16` is the f16/bf16 warp MMA from sm_80 on."""

B200_SMS = 148
"""Chips and Cheese, "Nvidia's B200": two dies of 80 SMs with 74 enabled each, 148 SMs."""
B200_TC = 4
"""Cornell Virtual Workshop, "Inside a Blackwell B200 SM": 4 fifth-generation tensor cores."""
B200_PEAK = 2_250_000_000_000_000
"""NVIDIA HGX B200 datasheet: FP16/BF16 tensor 36 PFLOPS per 8 GPUs with sparsity, so
2.25 PFLOPS dense per GPU."""
B200_HBM = 8_000_000_000_000
"""NVIDIA HGX B200 datasheet: HBM3e, 64 TB/s per 8 GPUs, 8 TB/s per GPU."""
B200_SRAM = 228 * KIB
"""NVIDIA Blackwell Tuning Guide / CUDA C++ Programming Guide, compute capability 10.0:
228 KB of shared memory per SM."""

GENERIC_PEAK = 84 * 4 * 256 * 2 * 1_410_000_000
"""SympleX's Generic device (84 SMs, 4 tensor cores each, 2 TB/s, 164 KiB) is no product; the
spec gives it A100-class tensor cores: NVIDIA A100 whitepaper, 256 dense FP16 FMA per clock per
tensor core at the A100's 1.41 GHz boost (242.6 TFLOPS)."""

SPEC_TARGETS = {
    "h100": Target("h100", H100_SMS, 4, MMA_F16, H100_HBM, H100_SRAM, MAX_WARPS_SM90, REGFILE,
                   2, True, H100_PEAK),
    "b200": Target("b200", B200_SMS, B200_TC, MMA_F16, B200_HBM, B200_SRAM, MAX_WARPS_SM90,
                   REGFILE, 3, True, B200_PEAK),
    "generic": Target("generic", 84, 4, MMA_F16, 2_000_000_000_000, 164 * KIB, 48, REGFILE,
                      2, False, GENERIC_PEAK),
}
"""The spec's targets. Stages (2, 3, 2) are SympleX's default pipeline depths."""


def symplex_peak(t: Target) -> int:
    """SympleX's peak: SMs x TC/SM x (m n k) x 2 x 1.83 GHz (E13.400)."""
    m, n, k = t.mma
    return t.sms * t.tensor_cores_per_sm * (m * n * k) * 2 * SYMPLEX_CLOCK_HZ


def target(name: str, errata: frozenset[str] = NO_ERRATA) -> Target:
    """The target `name`; SympleX's table entries under its errata."""
    t = SPEC_TARGETS[name]
    if E13_405 in errata and name == "b200":
        t = replace(t, sms=160, tensor_cores_per_sm=8, mma=(16, 8, 32), sram_per_sm=304 * KIB,
                    regfile_bytes=512 * KIB)
    if E13_406 in errata and name == "h100":
        t = replace(t, max_warps=48)
    if E13_400 in errata:
        t = replace(t, peak_flops=symplex_peak(t))
    return t


def ridge(t: Target) -> float:
    """The roofline knee, FLOP per byte: peak / bandwidth."""
    return t.peak_flops / t.hbm_bytes_per_s
