"""Where two .crtrace files (or two regions of one) first diverge: the op by index and name, the
field by path (`ops[40].inputs[1].sizes[0]`) and its byte offset in each file, then what the
change does downstream (iteration boundaries, regions, content and Merkle hashes, slots, plan
offsets).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..spec.core.errata import NO_ERRATA
from ..spec.crucible.crtrace import HEADER_SIZE
from ..spec.crucible.pipeline import PipelineRun, Window, recorded_of, run_pipeline
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
    if a.trace.names != b.trace.names:
        key = next(k for k in sorted(set(a.trace.names) | set(b.trace.names))
                   if a.trace.names.get(k) != b.trace.names.get(k))
        return Divergence(None, "", f"names[0x{key:016x}]", repr(a.trace.names.get(key)),
                          repr(b.trace.names.get(key)), a.frame.meta_end, b.frame.meta_end)
    if a.data == b.data:
        return None
    at = next((k for k, (x, y) in enumerate(zip(a.data, b.data, strict=False)) if x != y),
              min(len(a.data), len(b.data)))
    return Divergence(None, "", f"byte {at} ({_file_part(a, at)})",
                      a.data[at:at + 1].hex() or "end of file",
                      b.data[at:at + 1].hex() or "end of file", at, at,
                      note=f"lengths {len(a.data)} and {len(b.data)}"
                      if len(a.data) != len(b.data) else "")


def op_divergence(a: TraceFile, b: TraceFile) -> tuple[Divergence | None, list[int]]:
    """1. Walk the ops both files hold, field by field: the first that differs, and every op
    that differs. 2. Else the first op only one file holds, and all such ops."""
    first, ops = None, []
    for i in range(min(a.num_ops, b.num_ops)):
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


def _span(w) -> str:
    return f"ops {w.start}..{w.start + w.count - 1}"


def where_is(op: int, run: PipelineRun) -> str:
    """The region (by its window) an op index lies in, or 'outside every region'."""
    for k, r in enumerate(run.regions):
        if r.window.start <= op < r.window.start + r.window.count:
            return f"op {op} lies in region {k} ({_span(r.window)})"
    return f"op {op} lies outside every region"


def region_consequences(ra: PipelineRun, rb: PipelineRun) -> list[str]:
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
        if x.graph.content_hash != y.graph.content_hash:
            changes.append(f"content hash 0x{x.graph.content_hash:016x} -> "
                           f"0x{y.graph.content_hash:016x}")
        if x.merkle_hash != y.merkle_hash:
            changes.append(f"Merkle hash 0x{x.merkle_hash:016x} -> 0x{y.merkle_hash:016x}")
        if changes or _offsets(x) != _offsets(y):
            wa, wb = graph_to_wire(x.graph, x.plan), graph_to_wire(y.graph, y.plan)
            plan = plan_diff(wa, wb)
            told = {f.where for f in plan} | {"content_hash"}  # each said once, plan's way
            changes.extend(f.describe() for f in graph_diff(wa, wb) + plan
                           if f in plan or f.where not in told)
        if changes:
            out.append(f"region {k}: " + "; ".join(dict.fromkeys(changes)))
    return out or ["no region, hash, slot or plan offset changes"]


def _offsets(r) -> tuple:
    return (r.plan.pool_bytes, tuple(r.plan.offsets)) if r.plan else ()


def compare_traces(a: TraceFile, b: TraceFile,
                   errata: frozenset[str] = NO_ERRATA) -> TraceComparison:
    """The first divergence of B from A, the count of divergent ops, and the consequences."""
    first, ops = first_divergence(a, b)
    if first is None:
        return TraceComparison(None)
    ra, rb = pipeline_of(a, errata), pipeline_of(b, errata)
    lines = [where_is(first.op, ra)] if first.op is not None else []
    return TraceComparison(first, ops, lines + region_consequences(ra, rb))


def compare_regions(t: TraceFile, i: int, j: int,
                    errata: frozenset[str] = NO_ERRATA) -> TraceComparison:
    """Why region j of one trace is not region i (see explain_windows), with both regions'
    content hashes."""
    run = pipeline_of(t, errata)
    if not (0 <= i < len(run.regions) and 0 <= j < len(run.regions)):
        raise IndexError(f"the trace has {len(run.regions)} regions; no region "
                         f"{max(i, j)}")
    c = explain_windows(t, (i, run.regions[i].window), (j, run.regions[j].window))
    if c.first is not None:
        c.consequences.append(
            f"content hash 0x{run.regions[i].graph.content_hash:016x} (region {i}) vs "
            f"0x{run.regions[j].graph.content_hash:016x} (region {j})")
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
