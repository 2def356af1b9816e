"""Chapter 6: the background thread's pipeline, modelled synchronously, one drained op at a time.

Every op is appended to the current trace and its schema hash fed to the iteration detector.
At a boundary the ops before the K signature ops of the new iteration are the completed
iteration (less any warm-up the detector's last length excludes): it is built into a trace
graph, planned, and becomes a region whose Merkle hash is its content hash (it has no
continuation). The last K ops are kept for the next iteration.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from .build_trace import RecordedOp, TraceGraph, build_trace, slot_cap_max
from .crtrace import LoadedTrace, meta_starts_of
from .iteration_detector import K, run_detector
from .memory_plan import Plan, PlanSlot, compute_memory_plan
from .merkle_dag import chained
from .trace_ring import MAX_SCALARS
from .types import NONE32


@dataclass(frozen=True)
class Window:
    """The ops of one completed iteration, [start, start + count) in stream order; `boundary`
    is the stream index of the op that ended it."""

    boundary: int
    start: int
    count: int


@dataclass
class Region:
    """A region node made at a boundary: its window, trace graph, plan (none without slots)
    and Merkle hash."""

    window: Window
    graph: TraceGraph
    plan: Plan | None
    merkle_hash: int


@dataclass
class PipelineRun:
    """Everything the background thread did with a stream."""

    boundaries: list[int] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    skipped: list[Window] = field(default_factory=list)
    retained: int = 0


def sat(x: int) -> int:
    """Saturating subtraction's result: never below zero."""
    return max(x, 0)


def iteration_windows(boundaries: list[dict], n: int) -> tuple[list[Window], int]:
    """The completed iterations of a stream of n ops with these detector boundaries, and how
    many ops the current trace holds at the end. The current trace is always the stream's
    ops [lo, i]; at a boundary, warm-up = (total - K) - last_completed_len ops are dropped
    from its front, the first total - K are the iteration, and the last K stay."""
    windows, lo = [], 0
    for b in boundaries:
        i, length = b["index"], b["last_completed_len"]
        total = i + 1 - lo
        warmup = sat(sat(total - K) - length)
        lo, total = lo + warmup, total - warmup
        completed = sat(total - K)
        if completed > 0:
            windows.append(Window(i, lo, completed))
        lo = max(lo, i + 1 - K)
    return windows, n - lo


def metalog_overflow(ops: list[RecordedOp]) -> bool:
    """An op with tensors but no MetaLog entry: build_trace returns no graph."""
    return any(r.metas is None and r.num_inputs + r.num_outputs > 0 for r in ops)


def plan_slots_of(g: TraceGraph) -> list[PlanSlot]:
    """What the planner reads of a graph's slots."""
    return [PlanSlot(s.nbytes, s.birth_op, s.death_op, s.is_external, s.meta["device_type"],
                     s.meta["device_idx"]) for s in g.slots]


def run_pipeline(recorded: list[RecordedOp], kernels: dict[int, int] | None = None,
                 errata: frozenset[str] = NO_ERRATA) -> PipelineRun:
    """The synchronous model of BackgroundThread::run over a whole stream (no resets, no
    ring drops): detect, then build, plan and hash every completed iteration in order."""
    found, _ = run_detector([r.schema_hash for r in recorded], errata)  # 1. boundaries
    windows, retained = iteration_windows(found, len(recorded))  # 2. iterations
    out = PipelineRun([b["index"] for b in found], retained=retained)
    scratch = 0
    for w in windows:  # 3. one region per iteration
        ops = recorded[w.start:w.start + w.count]
        if metalog_overflow(ops):
            out.skipped.append(w)
            continue
        out.regions.append(build_region(w, ops, kernels, errata, scratch))
        scratch = slot_cap_max(ops, scratch)
    return out


def build_region(w: Window, ops: list[RecordedOp], kernels: dict[int, int] | None,
                 errata: frozenset[str], scratch: int) -> Region:
    """One iteration's region: its graph built with the scratch buffer the earlier builds
    left, planned when it has slots, and its Merkle hash."""
    graph = build_trace(ops, kernels, errata, scratch)
    plan = compute_memory_plan(plan_slots_of(graph), errata) if graph.slots else None
    return Region(w, graph, plan, chained(graph.content_hash, None))


def metas_past_end(op: int, n: int, start: int, total: int) -> InvalidInput:
    """An op whose metas run past the trace's (a file the seed profile loads, E18.4)."""
    return InvalidInput(f"op {op}: its {n} metas from {start} run past the {total} metas of "
                        f"the trace")


def recorded_of(trace: LoadedTrace) -> list[RecordedOp]:
    """The drained ops of a loaded trace: each entry with its metas taken from the MetaLog
    at its meta start (none when it has no start)."""
    out = []
    for i, e in enumerate(trace.entries):
        start, n = trace.meta_starts[i], e["num_inputs"] + e["num_outputs"]
        metas = None
        if start != NONE32:
            metas = trace.metas[start:start + n]
            if len(metas) < n:
                raise metas_past_end(i, n, start, len(trace.metas))
        count = min(e["num_scalar_args"], MAX_SCALARS)
        out.append(RecordedOp(
            e["schema_hash"], e["shape_hash"], e["num_inputs"], e["num_outputs"],
            e["scalar_values"][:count], e["grad_enabled"], e["op_flags"], metas,
            trace.scope_hashes[i], trace.callsite_hashes[i]))
    return out


def trace_of(recorded: list[RecordedOp]) -> LoadedTrace:
    """The loaded trace whose recorded_of is these drained ops (what a recorder writes)."""
    entries = [{"schema_hash": r.schema_hash, "shape_hash": r.shape_hash,
                "num_inputs": r.num_inputs, "num_outputs": r.num_outputs,
                "num_scalar_args": len(r.scalars), "grad_enabled": r.grad_enabled,
                "op_flags": r.op_flags,
                "scalar_values": (r.scalars[:MAX_SCALARS] + [0] * MAX_SCALARS)[:MAX_SCALARS]}
               for r in recorded]
    return LoadedTrace(entries, meta_starts_of([len(r.metas or []) for r in recorded]),
                       [r.scope_hash for r in recorded], [r.callsite_hash for r in recorded],
                       [m for r in recorded for m in (r.metas or [])], {})
