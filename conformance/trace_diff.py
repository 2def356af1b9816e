"""Where two .crtrace files (or two regions of one) first diverge: the op by index and name, the
field by path (`ops[40].inputs[1].sizes[0]`) and its byte offset in each file, then what the
change does downstream (iteration boundaries, regions, content and Merkle hashes, slots, plan
offsets).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..spec.core.errata import NO_ERRATA
from ..spec.crucible.build_trace import slot_caps
from ..spec.crucible.crtrace import HEADER_SIZE, TRACE_OP_RECORD
from ..spec.crucible.merkle_dag import chained
from ..spec.crucible.pipeline import (
    PipelineRun,
    Window,
    build_region,
    recorded_of,
    run_pipeline,
)
from ..spec.crucible.trace_build_ops import graph_to_wire
from .diff import index_runs
from .oracle_graphs import plan_diff
from .oracle_graphs import trace_diff as graph_diff
from .trace_fields import CONTEXT_FIELDS, Field, TraceFile

HEADER_FIELDS = (("magic", 0, 4), ("version", 4, 4), ("num_ops", 8, 4), ("num_metas", 12, 4))


@dataclass(frozen=True)
class Divergence:
    """The first place two traces differ: an op's field, or (op None) a part of the file."""

    op: int | None
    name: str
    path: str
    expected: str
    got: str
    offset_a: int | None
    offset_b: int | None
    note: str = ""

    def describe(self) -> str:
        where = f"op {self.op} ({self.name}): " if self.op is not None else ""
        at = [f"{side} byte {o}" for side, o in (("A", self.offset_a), ("B", self.offset_b))
              if o is not None]
        text = f"{where}{self.path}: expected {self.expected}, got {self.got}"
        return text + (f" [{', '.join(at)}]" if at else "") + \
            (f"; {self.note}" if self.note else "")

    def to_json(self) -> dict:
        return {"op": self.op, "name": self.name, "path": self.path, "expected": self.expected,
                "got": self.got, "offset_a": self.offset_a, "offset_b": self.offset_b,
                "note": self.note, "text": self.describe()}


@dataclass
class TraceComparison:
    """The first divergence, every op that differs (by index, the first's included), and the
    consequences (lines)."""

    first: Divergence | None
    divergent: list[int] = field(default_factory=list)
    consequences: list[str] = field(default_factory=list)

    @property
    def divergent_ops(self) -> int:
        return len(self.divergent)

    def others(self) -> list[int]:
        """The divergent ops after the first."""
        return [i for i in self.divergent if i != self.first.op] if self.first else []

    def lines(self) -> list[str]:
        if self.first is None:
            return []
        more = self.others()
        tail = [f"{len(more)} more op{'s differ' if len(more) != 1 else ' differs'}: "
                f"{'ops' if len(more) != 1 else 'op'} {index_runs(more)}"] if more else []
        return [self.first.describe(), *self.consequences, *tail]

    def to_json(self) -> dict:
        return {"first": self.first.to_json() if self.first else None,
                "divergent_ops": self.divergent_ops, "divergent_op_indices": self.divergent,
                "consequences": self.consequences}


def field_divergence(i: int, name: str, fa: list[Field], fb: list[Field],
                      path: str) -> Divergence | None:
    """The first of op i's fields that differs between two field lists (aligned by path)."""
    for x, y in zip(fa, fb, strict=False):
        if x.raw != y.raw or x.path != y.path:
            return Divergence(i, name, f"{path}.{x.path}", x.text, y.text, x.offset, y.offset)
    if len(fa) != len(fb):
        longer = fa if len(fa) > len(fb) else fb
        extra = longer[min(len(fa), len(fb))]
        return Divergence(i, name, f"{path}.{extra.path}", "present" if fa is longer else
                          "absent", "absent" if fa is longer else "present", None, None)
    return None


def _file_part(t: TraceFile, offset: int) -> str:
    """Which part of a .crtrace a byte offset falls in."""
    f = t.frame
    if offset < HEADER_SIZE:
        return "header"
    if offset < f.meta_start:
        return f"op record {(offset - HEADER_SIZE) // 80}"
    if offset < f.meta_end:
        return f"meta {(offset - f.meta_start) // f.meta_size} (used by no op)"
    return "name table"


def _whole_file_divergence(a: TraceFile, b: TraceFile) -> Divergence | None:
    """A difference no op field shows: the header, the name table, metas no op uses, or
    trailing bytes; named by the first differing byte."""
    for name, at, size in HEADER_FIELDS:
        x, y = a.data[at:at + size], b.data[at:at + size]
        if x != y:
            return Divergence(None, "", f"header.{name}",
                              str(int.from_bytes(x, "little")), str(int.from_bytes(y, "little")),
                              at, at)
    if a.names != b.names:
        key = next(k for k in sorted(set(a.names) | set(b.names))
                   if a.names.get(k) != b.names.get(k))
        return Divergence(None, "", f"names[0x{key:016x}]", repr(a.names.get(key)),
                          repr(b.names.get(key)), a.frame.meta_end, b.frame.meta_end)
    if a.data == b.data:
        return None
    at = next((k for k, (x, y) in enumerate(zip(a.data, b.data, strict=False)) if x != y),
              min(len(a.data), len(b.data)))
    return Divergence(None, "", f"byte {at} ({_file_part(a, at)})",
                      a.data[at:at + 1].hex() or "end of file",
                      b.data[at:at + 1].hex() or "end of file", at, at,
                      note=f"lengths {len(a.data)} and {len(b.data)}"
                      if len(a.data) != len(b.data) else "")


def maybe_divergent(a: TraceFile, b: TraceFile, n: int) -> list[int] | range:
    """The ops below n whose op_bytes may differ: every one, unless both files were read into
    columns with metas of one size; then those whose record or meta start differs or whose
    metas hold a differing row (a screen: op_bytes decides)."""
    if not (a.columns and b.columns) or a.frame.meta_size != b.frame.meta_size:
        return range(n)
    size, meta_size = TRACE_OP_RECORD.size, a.frame.meta_size
    rec_a, rec_b = (np.frombuffer(t.data, np.uint8, count=n * size, offset=HEADER_SIZE)
                    .reshape(n, size) for t in (a, b))
    m = min(a.frame.num_metas, b.frame.num_metas)
    meta_a, meta_b = (np.frombuffer(t.data, np.uint8, count=m * meta_size,
                                    offset=t.frame.meta_start).reshape(m, meta_size)
                      for t in (a, b))
    rows = np.zeros(m + 1, dtype=np.int64)
    np.cumsum((meta_a != meta_b).any(axis=1), out=rows[1:])
    cols = a.columns[0]
    lo, other = cols.meta_start[:n], b.columns[0].meta_start[:n]
    hi = np.minimum(lo + cols.n_in[:n] + cols.n_out[:n], m)
    held = lo >= 0
    out = (rec_a != rec_b).any(axis=1) | (lo != other)
    out[held] |= rows[hi[held]] > rows[lo[held]]
    return np.flatnonzero(out | (held & (lo + cols.n_in[:n] + cols.n_out[:n] > m))).tolist()


def op_divergence(a: TraceFile, b: TraceFile) -> tuple[Divergence | None, list[int]]:
    """1. Walk the ops both files hold, field by field: the first that differs, and every op
    that differs. 2. Else the first op only one file holds, and all such ops."""
    first, ops = None, []
    for i in maybe_divergent(a, b, min(a.num_ops, b.num_ops)):
        if a.op_bytes(i) == b.op_bytes(i):
            continue
        d = field_divergence(i, a.op_name(i), a.fields(i), b.fields(i), f"ops[{i}]")
        if d is not None:
            ops.append(i)
            first = first or d
    if first is None and a.num_ops != b.num_ops:
        i = min(a.num_ops, b.num_ops)
        only = a if a.num_ops > b.num_ops else b
        first = Divergence(i, only.op_name(i), f"ops[{i}]", "present" if only is a else
                           "absent", "absent" if only is a else "present", None, None,
                           note=f"A has {a.num_ops} ops, B has {b.num_ops}")
        ops = list(range(i, only.num_ops))
    return first, ops


def first_divergence(a: TraceFile, b: TraceFile) -> tuple[Divergence | None, list[int]]:
    """op_divergence, else (3.) the header, names or bytes."""
    first, ops = op_divergence(a, b)
    return first or _whole_file_divergence(a, b), ops


def pipeline_of(t: TraceFile, errata: frozenset[str]) -> PipelineRun:
    """The reference background thread's run over a loaded trace."""
    return run_pipeline(recorded_of(t.trace), None, errata)


@dataclass(frozen=True)
class RegionKey:
    """What the consequences compare of a region: its window, content hash, and its plan's
    (pool, offsets) (empty without a plan)."""

    window: Window
    content_hash: int
    offsets: tuple

    @property
    def merkle_hash(self) -> int:
        return chained(self.content_hash, None)


@dataclass
class RunFacts:
    """A pipeline run as the consequences read it: boundaries, region keys, and region k in
    trace.build's result form (graph and plan), asked for only where a region changes."""

    boundaries: list[int]
    regions: list[RegionKey]
    wire: Callable[[int], dict]


def reference_facts(t: TraceFile, errata: frozenset[str]) -> RunFacts:
    """The facts of the reference pipeline's run."""
    run = pipeline_of(t, errata)
    keys = [RegionKey(r.window, r.graph.content_hash,
                      (r.plan.pool_bytes, tuple(r.plan.offsets)) if r.plan else ())
            for r in run.regions]
    return RunFacts(run.boundaries, keys,
                    lambda k: graph_to_wire(run.regions[k].graph, run.regions[k].plan))


def numba_facts(t: TraceFile, errata: frozenset[str]) -> RunFacts:
    """The same facts from the numba pipeline over the file's columns; a region asked for in
    full is built by the reference from its window alone, with the scratch buffer (E6.5) the
    regions before it leave (tests/core/test_trace_diff_fast.py holds the two equal)."""
    from ..fast.numba.crucible.pipeline import run_arrays

    arrays = t.columns[0]
    run = run_arrays(arrays, errata)
    keys = [RegionKey(r.window, r.built.content_hash,
                      (r.pool_bytes, tuple(r.offsets.tolist())) if r.built.slots.shape[0]
                      else ()) for r in run.regions]

    def wire(k: int) -> dict:
        scratch = 0
        for key in keys[:k]:
            w = key.window
            scratch = slot_caps(0, int(arrays.n_out[w.start:w.start + w.count].sum()),
                                scratch)[1]
        w = keys[k].window
        r = build_region(w, recorded_of(t.window_trace(w.start, w.count)), None, errata,
                         scratch)
        return graph_to_wire(r.graph, r.plan)

    return RunFacts(run.boundaries, keys, wire)


def run_facts(t: TraceFile, errata: frozenset[str]) -> RunFacts:
    """The numba pipeline's facts where the array loader read the file, else the
    reference's."""
    return (numba_facts if t.columns else reference_facts)(t, errata)


def _span(w) -> str:
    return f"ops {w.start}..{w.start + w.count - 1}"


def where_is(op: int, run: RunFacts) -> str:
    """The region (by its window) an op index lies in, or 'outside every region'."""
    for k, r in enumerate(run.regions):
        if r.window.start <= op < r.window.start + r.window.count:
            return f"op {op} lies in region {k} ({_span(r.window)})"
    return f"op {op} lies outside every region"


def region_consequences(ra: RunFacts, rb: RunFacts) -> list[str]:
    """What differs between two pipeline runs: boundaries, then per region its window, content
    and Merkle hashes, and its first divergent op, edge and slot and plan offset."""
    out = []
    if ra.boundaries != rb.boundaries:
        out.append(f"iteration boundaries: {ra.boundaries} -> {rb.boundaries}")
    if len(ra.regions) != len(rb.regions):
        out.append(f"regions: {len(ra.regions)} -> {len(rb.regions)}")
    for k, (x, y) in enumerate(zip(ra.regions, rb.regions, strict=False)):
        changes = []
        if x.window != y.window:
            changes.append(f"{_span(x.window)} -> {_span(y.window)}")
        if x.content_hash != y.content_hash:
            changes.append(f"content hash 0x{x.content_hash:016x} -> 0x{y.content_hash:016x}")
        if x.merkle_hash != y.merkle_hash:
            changes.append(f"Merkle hash 0x{x.merkle_hash:016x} -> 0x{y.merkle_hash:016x}")
        if changes or x.offsets != y.offsets:
            wa, wb = ra.wire(k), rb.wire(k)
            plan = plan_diff(wa, wb)
            told = {f.where for f in plan} | {"content_hash"}  # each said once, plan's way
            changes.extend(f.describe() for f in graph_diff(wa, wb) + plan
                           if f in plan or f.where not in told)
        if changes:
            out.append(f"region {k}: " + "; ".join(dict.fromkeys(changes)))
    return out or ["no region, hash, slot or plan offset changes"]


def compare_traces(a: TraceFile, b: TraceFile,
                   errata: frozenset[str] = NO_ERRATA) -> TraceComparison:
    """The first divergence of B from A, the count of divergent ops, and the consequences."""
    first, ops = first_divergence(a, b)
    if first is None:
        return TraceComparison(None)
    ra, rb = run_facts(a, errata), run_facts(b, errata)
    lines = [where_is(first.op, ra)] if first.op is not None else []
    return TraceComparison(first, ops, lines + region_consequences(ra, rb))


def compare_regions(t: TraceFile, i: int, j: int,
                    errata: frozenset[str] = NO_ERRATA) -> TraceComparison:
    """Why region j of one trace is not region i (see explain_windows), with both regions'
    content hashes."""
    run = run_facts(t, errata)
    if not (0 <= i < len(run.regions) and 0 <= j < len(run.regions)):
        raise IndexError(f"the trace has {len(run.regions)} regions; no region "
                         f"{max(i, j)}")
    c = explain_windows(t, (i, run.regions[i].window), (j, run.regions[j].window))
    if c.first is not None:
        c.consequences.append(
            f"content hash 0x{run.regions[i].content_hash:016x} (region {i}) vs "
            f"0x{run.regions[j].content_hash:016x} (region {j})")
    return c


def explain_windows(t: TraceFile, a: tuple[int, Window], b: tuple[int, Window]
                    ) -> TraceComparison:
    """Regions a and b of one trace, (index, window) each, aligned op by op: the first op of b
    whose hashed fields (schema, inputs' shapes, dtypes, devices, scalars) differ from a's, with
    the unhashed context (shape, scope, callsite hash) that also differs."""
    (i, wi), (j, wj) = a, b
    first, ops = None, []
    for k in range(min(wi.count, wj.count)):
        x, y = wi.start + k, wj.start + k
        d = field_divergence(x, t.op_name(x), t.content_fields(x), t.content_fields(y),
                              f"ops[{y}]")
        if d is not None:
            ops.append(y)
            where = f"op {k} of region {j}, against ops[{x}] of region {i}"
            first = first or Divergence(y, t.op_name(y), d.path, d.expected, d.got,
                                        d.offset_a, d.offset_b,
                                        note="; ".join(filter(None, (where, _context(t, x, y)))))
    if first is None and wi.count != wj.count:
        first = Divergence(None, "", f"region {j} length", str(wi.count), str(wj.count),
                           None, None, note=f"region {i} has {wi.count} ops")
    return TraceComparison(first, ops)


def _context(t: TraceFile, x: int, y: int) -> str:
    """The unhashed hashes of two ops that also differ, as context for a reader."""
    fx = {f.path: f for f in t.fields(x)}
    fy = {f.path: f for f in t.fields(y)}
    diffs = [f"{n} {fx[n].text} vs {fy[n].text}" for n in CONTEXT_FIELDS
             if fx[n].raw != fy[n].raw]
    return ("also " + ", ".join(diffs)) if diffs else ""
