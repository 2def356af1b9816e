"""`crucible-spec analyze`: what the background thread makes of a recorded .crtrace.

The pipeline (chapter 6) runs through the reference or the numba kernels; both are reduced to
the same per-region facts, from which the report is made: iterations, ops, edges by kind,
slots, the pool against the live-bytes lower bound (the planner's quality, pool / bound) and a
greedy-by-size planner, content and
Merkle hashes, and the DAG the regions form with the kernel cache they would fill.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import pairwise

import numpy as np

from .spec.core.errors import InvalidInput
from .spec.crucible.build_trace import TraceGraph
from .spec.crucible.crtrace import parse_crtrace
from .spec.crucible.kernel_cache import KernelCache, cache_insert, cache_lookup
from .spec.crucible.memory_plan import PlanSlot, greedy_by_size, live_lower_bound
from .spec.crucible.merkle_dag import chained
from .spec.crucible.pipeline import Window, plan_slots_of, recorded_of, run_pipeline
from .spec.crucible.trace_graph import EdgeKind

Progress = Callable[[int, int], None]


@dataclass
class RegionFacts:
    """One region as either implementation reports it: its window, content hash, edge kinds,
    slots as (nbytes, birth, death, external) rows, and its planned pool."""

    window: Window
    content_hash: int
    edge_kinds: list[int]
    slots: np.ndarray
    pool_bytes: int


@dataclass
class RegionReport:
    index: int
    boundary: int
    start: int
    num_ops: int
    content_hash: str
    merkle_hash: str
    num_edges: int
    data_flow_edges: int
    alias_edges: int
    num_slots: int
    num_external: int
    pool_bytes: int
    lower_bound: int
    greedy_pool_bytes: int
    quality: float | None
    """The planner's quality: pool_bytes / lower_bound (1.0 is optimal; None without a bound)."""


@dataclass
class Analysis:
    """The whole report (what `--json` prints)."""

    file: str
    profile: str
    impl: str
    num_ops: int
    num_metas: int
    num_names: int
    boundaries: list[int]
    iteration_lengths: list[int]
    regions: list[RegionReport]
    skipped: list[dict]
    retained: int
    dag: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def _slot_rows(slots: list[PlanSlot]) -> np.ndarray:
    return np.array([[s.nbytes, s.birth_op, s.death_op, s.is_external] for s in slots],
                    dtype=np.int64).reshape(len(slots), 4)


def reference_facts(data: bytes, errata: frozenset[str], progress: Progress
                    ) -> tuple[list[RegionFacts], list[int], list[Window], int, tuple]:
    trace = parse_crtrace(data, errata)
    recorded = recorded_of(trace)
    progress(0, len(recorded))
    run = run_pipeline(recorded, None, errata)
    progress(len(recorded), len(recorded))

    def facts(g: TraceGraph, w: Window, pool: int) -> RegionFacts:
        return RegionFacts(w, g.content_hash, [int(e.kind) for e in g.edges],
                           _slot_rows(plan_slots_of(g)), pool)

    regions = [facts(r.graph, r.window, r.plan.pool_bytes if r.plan else 0)
               for r in run.regions]
    sizes = (len(trace.entries), len(trace.metas), len(trace.names))
    return regions, run.boundaries, run.skipped, run.retained, sizes


def numba_facts(data: bytes, errata: frozenset[str], progress: Progress
                ) -> tuple[list[RegionFacts], list[int], list[Window], int, tuple]:
    from .fast.core.trace_file import load_arrays
    from .fast.numba.crucible.pipeline import run_arrays

    arrays, _, _, names = load_arrays(data, errata)
    run = run_arrays(arrays, errata, progress)
    regions = [RegionFacts(r.window, r.built.content_hash, r.built.edges[:, 4].tolist(),
                           r.built.slots[:, :4], r.pool_bytes) for r in run.regions]
    sizes = (int(arrays.schema.size), int(arrays.ptr.size), len(names))
    return regions, run.boundaries, run.skipped, run.retained, sizes


def _quality(slots: np.ndarray, cache: dict[bytes, tuple[int, int]]) -> tuple[int, int]:
    """(live-bytes lower bound, greedy-by-size pool) of a slot table; equal tables are
    computed once."""
    key = slots.tobytes()
    if key not in cache:
        plan_input = [PlanSlot(int(n), int(b), int(d), bool(x)) for n, b, d, x in slots.tolist()]
        cache[key] = (live_lower_bound(plan_input), greedy_by_size(plan_input).pool_bytes)
    return cache[key]


def report_region(k: int, f: RegionFacts, cache: dict) -> RegionReport:
    lower, greedy = _quality(f.slots, cache)
    kinds = f.edge_kinds
    return RegionReport(
        k, f.window.boundary, f.window.start, f.window.count, f"0x{f.content_hash:016x}",
        f"0x{chained(f.content_hash, None):016x}", len(kinds), kinds.count(EdgeKind.DATA_FLOW),
        kinds.count(EdgeKind.ALIAS), int(f.slots.shape[0]), int(f.slots[:, 3].sum()),
        f.pool_bytes, lower, greedy, round(f.pool_bytes / lower, 4) if lower else None)


def dag_summary(regions: list[RegionReport]) -> dict:
    """The regions as DAG nodes (each a REGION with no continuation, so its Merkle hash is its
    content hash), the kernel cache a compiler would fill (one kernel per new content), and
    whether the last two regions are the same (a steady state)."""
    cache = KernelCache()
    compiled = hits = 0
    for r in regions:
        content = int(r.content_hash, 16)
        if cache_lookup(cache, content, 0) is None:
            cache_insert(cache, content, 0, r.index)
            compiled += 1
        else:
            hits += 1
    last = [r.content_hash for r in regions[-2:]]
    return {"nodes": len(regions), "distinct_merkle_hashes": len({r.merkle_hash for r in regions}),
            "kernel_cache": {"compiled": compiled, "hits": hits},
            "steady_state": len(last) == 2 and last[0] == last[1]}


def internal_total(slots: np.ndarray) -> int:
    """The internal slots' sizes (int64, as the rows hold them), each rounded up to a multiple
    of 256 as align256 rounds a Python int, summed exactly: 256 * ceil(n / 256) with the
    multipliers summed in 28-bit halves, so no int64 sum can wrap."""
    n = slots[slots[:, 3] == 0, 0].astype(np.int64)
    units = (n >> 8) + ((n & 255) != 0)
    return ((int((units >> 28).sum()) << 28) + int((units & ((1 << 28) - 1)).sum())) << 8


def check_pool_fits(k: int, slots: np.ndarray) -> None:
    """A region whose internal slots, each rounded up to 256 bytes, total 2^64 bytes or more
    may need a pool past the u64 pool_bytes; such a trace is rejected, not wrapped."""
    total = internal_total(slots)
    if total >= 1 << 64:
        raise InvalidInput(f"region {k}: its internal slots total {total} bytes; a pool holds "
                           f"less than 2^64")


def analyze(data: bytes, *, file: str, profile: str, errata: frozenset[str],
            impl: str = "numba", progress: Progress = lambda done, total: None) -> Analysis:
    """Run the pipeline over a .crtrace image and report on every region."""
    run = numba_facts if impl == "numba" else reference_facts
    facts, boundaries, skipped, retained, (n_ops, n_metas, n_names) = run(data, errata, progress)
    for k, f in enumerate(facts):
        check_pool_fits(k, f.slots)
    cache: dict[bytes, tuple[int, int]] = {}
    regions = [report_region(k, f, cache) for k, f in enumerate(facts)]
    lengths = [b - a for a, b in pairwise(boundaries)]
    return Analysis(file, profile, impl, n_ops, n_metas, n_names, boundaries, lengths, regions,
                    [asdict(w) for w in skipped], retained, dag_summary(regions))


def steady_state_break(data: bytes, a: Analysis, errata: frozenset[str]) -> dict | None:
    """When the last two regions differ: the first op of the last region that breaks the
    match with the one before, and which hashed field (trace_diff.explain_windows)."""
    if len(a.regions) < 2 or a.dag.get("steady_state", True):
        return None
    from .conformance.trace_diff import explain_windows
    from .conformance.trace_fields import TraceFile
    from .spec.crucible.pipeline import Window

    x, y = a.regions[-2], a.regions[-1]
    c = explain_windows(TraceFile.read(data, errata, arrays=a.impl == "numba"),
                        (x.index, Window(x.boundary, x.start, x.num_ops)),
                        (y.index, Window(y.boundary, y.start, y.num_ops)))
    if c.first is None:
        return None
    return {"regions": [x.index, y.index], "divergent_ops": c.divergent_ops,
            **c.first.to_json()}

