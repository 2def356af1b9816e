"""Chapter 12: PyC's kernel registry (runtime/kernel_registry.c): how a kernel descriptor is
scored against an objective mode and a co-selection context, and which one is selected.

A descriptor carries a priority, an estimated occupancy, tensor-core eligibility, its shared
memory and register-pressure class, and the workload and hardware families it prefers. Its
base score rewards priority, occupancy, tensor cores and a measured time; a co-selection
context (the allocator's pressure, rematerialisation, budget excess and reuse, the matmul's
workload family and the device's hardware family) then adjusts it. Selection keeps the
strictly highest score; an exact tie goes to the lexicographically smaller symbol (bytewise,
as strcmp), whatever order the kernels were registered in. Every sum below is evaluated left
to right in float64, as PyC does, so scores agree to the bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.errata import NO_ERRATA
from .wire import Named

WORKLOAD = Named(("any", "small", "square", "large_square", "tall_skinny", "wide_skinny"),
                 "workload family")
"""pyc_kernel_workload_family in ordinal order. Real code: include/pyc/kernel_registry.h."""
HARDWARE = Named(("any", "generic", "ada", "hopper"), "hardware family")
"""pyc_kernel_hardware_family in ordinal order. Real code: include/pyc/kernel_registry.h."""
MODE = Named(("balanced", "memory_first", "utilization_first"), "objective mode")
"""pyc_objective_mode in ordinal order. Real code: include/pyc/optimizer_policy.h."""
BACKEND = Named(("cpu", "cuda"), "backend")
"""pyc_backend in ordinal order (the DB writes the ordinal). Real code: kernel_registry.h."""

ANY, SMALL, SQUARE, LARGE_SQUARE, TALL_SKINNY, WIDE_SKINNY = range(6)
HW_ANY, GENERIC, ADA, HOPPER = range(4)
BALANCED, MEMORY_FIRST, UTILIZATION_FIRST = range(3)
CPU, CUDA = range(2)

KERNEL_MAX = 512
"""Slots of the global registry (PYC_KERNEL_MAX). Real code: include/pyc/kernel_registry.h."""
SYMBOL_MAX = 127
"""Bytes of a symbol before its NUL (PYC_KERNEL_SYMBOL_MAX - 1). Real code: kernel_registry.h."""
OP_KEY_MAX = 63
"""Bytes of an op key before its NUL (PYC_KERNEL_OP_KEY_MAX - 1). Real code: kernel_registry.h."""
DBL_MAX = 1.7976931348623157e308
"""A kernel never benchmarked has best time DBL_MAX. Real code: kernel_registry.c (register)."""
TENSOR_CORE_BONUS = 25.0
"""Added to the base score of a tensor-core-eligible kernel. Real code: kernel_registry.c."""
WORKLOAD_MATCH, WORKLOAD_MISMATCH = 36.0, -18.0
"""Workload affinity: exact family match, and any other pair of concrete families."""
HW_MATCH, HW_ON_GENERIC, HW_GENERIC_KERNEL, HW_MISMATCH = 48.0, -8.0, 10.0, -24.0
"""Hardware affinity: a match; a specific kernel on a generic device; a generic kernel on a
specific device; two different specific families. Real code: kernel_registry.c."""
PRESSURE_WEIGHTS = {MEMORY_FIRST: (10.0, 16.0, 120.0), BALANCED: (7.0, 10.0, 90.0)}
"""Allocator-penalty weights (pressure event, rematerialised tensor, budget excess) per mode;
UTILIZATION_FIRST pays no allocator penalty. Real code: kernel_registry.c."""
REUSE_WEIGHT = {MEMORY_FIRST: 42.0, BALANCED: 24.0}
"""Weight of the reuse bonus per mode (none under UTILIZATION_FIRST).
Real code: kernel_registry.c."""


E12_2 = "E12.2"
SMALL_MAX_DIM = 512
"""A matmul whose larger of m and n is at most this is SMALL. Real code: compiler_api.c."""
SMALL_MAX_FLOPS = 512 ** 3
"""A matmul with m·n·k at most this is SMALL. Real code: compiler_api.c."""
SKINNY_RATIO = 3
"""One side at least this many times the other is skinny. Real code: compiler_api.c."""
LARGE_MIN_DIM, LARGE_MIN_K = 1024, 512
"""LARGE_SQUARE needs min(m, n) and k at least these (and max at most twice min)."""
U64 = 1 << 64


def workload_family(m: int, n: int, k: int, errata: frozenset[str] = NO_ERRATA) -> int:
    """The family of an (m x k) @ (k x n) matmul: the first rule that holds; ANY if a
    dimension is 0. E12.2: the seed computes m·n·k and the 3x products modulo 2^64."""
    if m == 0 or n == 0 or k == 0:  # 1. no shape, no family
        return ANY
    wrap = (lambda x: x % U64) if E12_2 in errata else (lambda x: x)
    hi, lo = max(m, n), min(m, n)
    if hi <= SMALL_MAX_DIM or wrap(m * n * k) <= SMALL_MAX_FLOPS:  # 2. small
        return SMALL
    if m >= wrap(n * SKINNY_RATIO):  # 3. tall: m at least 3n
        return TALL_SKINNY
    if n >= wrap(m * SKINNY_RATIO):  # 4. wide: n at least 3m
        return WIDE_SKINNY
    if lo >= LARGE_MIN_DIM and hi <= wrap(lo * 2) and k >= LARGE_MIN_K:  # 5. large square
        return LARGE_SQUARE
    return SQUARE  # 6. anything else


@dataclass(frozen=True)
class Kernel:
    """A kernel descriptor (pyc_kernel_desc, less its op key and backend) and its best time."""

    symbol: str
    priority: int = 0
    occupancy: float = 0.0
    tensor_core: bool = False
    shared_mem_bytes: int = 0
    reg_class: int = 0
    workload: int = ANY
    hardware: int = HW_ANY
    best_ms: float = DBL_MAX


@dataclass(frozen=True)
class Context:
    """The co-selection context (pyc_kernel_coselect_context): allocator figures and families."""

    pressure_score: float = 0.0
    pressure_events: int = 0
    remat_tensors: int = 0
    reused: int = 0
    total_requested_bytes: int = 0
    peak_bytes: int = 0
    budget_bytes: int = 0
    workload: int = ANY
    hardware: int = HW_ANY


@dataclass(frozen=True)
class Score:
    """A kernel's joint score and its parts, as the selection trace reports them."""

    score: float
    pressure_penalty: float
    allocator_penalty: float
    reuse_bonus: float


def default_catalog(backend: int) -> tuple[Kernel, ...]:
    """The two matmul_fused kernels PyC installs when none is registered (ref, then tuned)."""
    name, tc = ("cuda", True) if backend == CUDA else ("cpu", False)
    return (Kernel(f"matmul_{name}_ref", 1, 0.55, tc, 8 * 1024, 2),
            Kernel(f"matmul_{name}_tuned", 2, 0.75, tc, 16 * 1024, 3))


def time_component(best_ms: float) -> float:
    """-100 per millisecond of best time; 0 when never benchmarked or not positive."""
    if best_ms <= 0.0 or best_ms == DBL_MAX:
        return 0.0
    return -100.0 * best_ms


def pressure_penalty(k: Kernel, mode: int, pressure_score: float) -> float:
    """pressure · (whole KiB of shared memory + 8 · register class); 0 for UTILIZATION_FIRST."""
    if pressure_score <= 0.0 or mode == UTILIZATION_FIRST:
        return 0.0
    return pressure_score * float(k.shared_mem_bytes // 1024 + k.reg_class * 8)


def base_score(k: Kernel, mode: int, pressure_score: float) -> float:
    """100 · priority + occupancy weight · occupancy + tensor cores + time - pressure penalty."""
    occ_weight = 12.0 if mode == UTILIZATION_FIRST else 6.0
    bonus = TENSOR_CORE_BONUS if k.tensor_core else 0.0
    return (float(k.priority) * 100.0 + occ_weight * k.occupancy + bonus
            + time_component(k.best_ms) - pressure_penalty(k, mode, pressure_score))


def allocator_penalty(k: Kernel, mode: int, c: Context) -> float:
    """What the allocator's pressure events, rematerialisations and budget excess cost `k`."""
    if mode == UTILIZATION_FIRST:
        return 0.0
    w_events, w_remat, w_budget = PRESSURE_WEIGHTS[mode]
    kb, reg, penalty = k.shared_mem_bytes / 1024.0, float(k.reg_class), 0.0
    if c.pressure_events > 0:  # 1. each pressure event
        penalty += float(c.pressure_events) * (w_events + kb * 0.5 + reg * 4.0)
    if c.remat_tensors > 0:  # 2. each rematerialised tensor
        penalty += float(c.remat_tensors) * (w_remat + kb * 0.35 + reg * 3.0)
    if c.budget_bytes > 0 and c.peak_bytes > c.budget_bytes:  # 3. the peak's excess ratio
        excess = float(c.peak_bytes - c.budget_bytes) / float(c.budget_bytes)
        penalty += excess * (w_budget + kb * 1.5 + reg * 12.0)
    return penalty


def reuse_bonus(k: Kernel, mode: int, c: Context) -> float:
    """reuse ratio · friendliness (fewer registers and less shared memory) · mode weight."""
    if c.total_requested_bytes == 0 or c.reused == 0 or mode == UTILIZATION_FIRST:
        return 0.0
    ratio = float(c.reused) / float(c.reused + c.pressure_events + 1)
    friendliness = 1.0 / (1.0 + float(k.reg_class) + float(k.shared_mem_bytes) / (32.0 * 1024.0))
    return ratio * friendliness * REUSE_WEIGHT[mode]


def workload_adjustment(k: Kernel, c: Context) -> float:
    """+36 on the same family, -18 on another; 0 when either side is ANY."""
    if k.workload == ANY or c.workload == ANY:
        return 0.0
    return WORKLOAD_MATCH if k.workload == c.workload else WORKLOAD_MISMATCH


def hardware_adjustment(k: Kernel, c: Context) -> float:
    """+48 on a match; on a generic device -8 for a specific kernel; +10 for a generic kernel
    on a specific device; -24 for two different specific families; 0 when either is ANY."""
    if k.hardware == HW_ANY or c.hardware == HW_ANY:
        return 0.0
    if k.hardware == c.hardware:
        return HW_MATCH
    if c.hardware == GENERIC:
        return HW_ON_GENERIC
    if k.hardware == GENERIC:
        return HW_GENERIC_KERNEL
    return HW_MISMATCH


def joint_score(k: Kernel, mode: int, c: Context) -> Score:
    """base - allocator penalty + reuse bonus + workload and hardware adjustments."""
    alloc, reuse = allocator_penalty(k, mode, c), reuse_bonus(k, mode, c)
    total = (base_score(k, mode, c.pressure_score) - alloc + reuse
             + workload_adjustment(k, c) + hardware_adjustment(k, c))
    return Score(total, pressure_penalty(k, mode, c.pressure_score), alloc, reuse)


def symbol_key(symbol: str) -> bytes:
    """The order strcmp gives symbols: bytewise on their UTF-8."""
    return symbol.encode("utf-8")


def select(catalog: Sequence[Kernel], mode: int, c: Context) -> int | None:
    """The index of the selected kernel, None for an empty catalog."""
    best: int | None = None
    best_score = 0.0
    for i, k in enumerate(catalog):  # 1. registration order
        s = joint_score(k, mode, c).score
        if best is None or s > best_score:  # 2. a strictly higher score replaces
            best, best_score = i, s
        elif s == best_score and symbol_key(k.symbol) < symbol_key(catalog[best].symbol):
            best = i  # 3. an exact tie goes to the smaller symbol
    return best


def collect_order(catalog: Sequence[Kernel]) -> list[int]:
    """Indices in the order `collect` lists candidates: by symbol, equal ones as registered."""
    return sorted(range(len(catalog)), key=lambda i: symbol_key(catalog[i].symbol))
