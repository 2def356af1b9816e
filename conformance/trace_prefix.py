"""Two .crtrace files of which one does not load (cut short, say): the fields of the ops both
files hold whole, compared op by op, and where the one that does not load ends.

That file is read as far as its bytes go: its header, its complete op records, and the metas
that are there, laid out as its header claims with the meta record size and op names of the
file that loads. Only what both files hold is compared; no pipeline runs over a part.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..spec.core.errata import NO_ERRATA
from ..spec.core.errors import InvalidInput
from ..spec.crucible.crtrace import (
    HEADER_SIZE,
    TRACE_OP_RECORD,
    Frame,
    LoadedTrace,
    entry_of,
    meta_starts_of,
)
from .trace_diff import HEADER_FIELDS, Divergence, TraceComparison, field_divergence
from .trace_fields import TraceFile


@dataclass(frozen=True)
class Side:
    """One of the two files: its bytes, its load (None if it does not load) and why not."""

    label: str
    data: bytes
    loaded: TraceFile | None
    problem: str = ""


def load_side(label: str, data: bytes, errata: frozenset[str] = NO_ERRATA) -> Side:
    """A file loaded whole, or its reason for not loading."""
    try:
        return Side(label, data, TraceFile.read(data, errata))
    except InvalidInput as e:
        return Side(label, data, None, e.message)


def claimed(data: bytes) -> tuple[int, int]:
    """(num_ops, num_metas) as the header says; 0 for a header cut short."""
    return struct.unpack_from("<II", data, 8) if len(data) >= HEADER_SIZE else (0, 0)


def held_part(data: bytes, meta_size: int, names: dict[int, str]) -> TraceFile:
    """What a file that does not load holds: its complete op records (as the loader makes
    entries of them) and the metas present at the places the header implies."""
    num_ops, num_metas = claimed(data)
    meta_start = HEADER_SIZE + TRACE_OP_RECORD.size * num_ops
    whole = min(num_ops, max(len(data) - HEADER_SIZE, 0) // TRACE_OP_RECORD.size)
    trace = LoadedTrace(names=names)
    for i in range(whole):
        at = HEADER_SIZE + i * TRACE_OP_RECORD.size
        trace.entries.append(entry_of(TRACE_OP_RECORD.unpack(
            data[at:at + TRACE_OP_RECORD.size])))
    trace.meta_starts = meta_starts_of([e["num_inputs"] + e["num_outputs"]
                                        for e in trace.entries])
    frame = Frame(whole, num_metas, meta_start, meta_size, meta_start + meta_size * num_metas)
    return TraceFile(data, frame, trace)


def where_it_ends(data: bytes, meta_size: int) -> str:
    """The part of a .crtrace laid out as its header claims that its last byte falls short
    in: the header, an op record, a meta, or the name table after them."""
    n, num_ops, num_metas = len(data), *claimed(data)
    records_end = HEADER_SIZE + TRACE_OP_RECORD.size * num_ops
    if n < HEADER_SIZE:
        part = "inside the 16-byte header"
    elif n < records_end:
        part = f"inside op record {(n - HEADER_SIZE) // TRACE_OP_RECORD.size} of {num_ops}"
    elif n < records_end + meta_size * num_metas:
        part = f"inside meta {(n - records_end) // meta_size} of {num_metas}"
    else:
        part = "after the metas, in or past the name table"
    return f"ends at byte {n}, {part}"


def _header_divergence(a: bytes, b: bytes) -> Divergence | None:
    """The first header field both files hold whole that differs."""
    for name, at, size in HEADER_FIELDS:
        x, y = a[at:at + size], b[at:at + size]
        if len(x) == len(y) == size and x != y:
            return Divergence(None, "", f"header.{name}", str(int.from_bytes(x, "little")),
                              str(int.from_bytes(y, "little")), at, at)
    return None


def held_divergence(a: TraceFile, b: TraceFile) -> tuple[Divergence | None, list[int]]:
    """The first field of the ops both hold that differs, among the fields both hold whole,
    and every op with such a field."""
    first, ops = None, []
    for i in range(min(a.num_ops, b.num_ops)):
        if a.op_bytes(i) == b.op_bytes(i):
            continue
        fa, fb = a.fields(i), b.fields(i)
        n = min(len(fa), len(fb))
        d = field_divergence(i, a.op_name(i), fa[:n], fb[:n], f"ops[{i}]")
        if d is not None:
            ops.append(i)
            first = first or d
    return first, ops


def compare_held(a: Side, b: Side) -> TraceComparison:
    """Two files of which exactly one loads: the first divergence among what both hold, then
    why the other does not load, and where it ends."""
    whole = a.loaded or b.loaded
    if whole is None:
        raise ValueError("compare_held needs one file that loads")
    meta_size, names = whole.frame.meta_size, whole.names
    ta, tb = (s.loaded or held_part(s.data, meta_size, names) for s in (a, b))
    first, ops = held_divergence(ta, tb)
    first = _header_divergence(a.data, b.data) or first
    lines = []
    for side, t in ((a, ta), (b, tb)):
        if side.loaded is None:
            lines.append(f"{side.label} does not load ({side.problem}); it "
                         f"{where_it_ends(side.data, meta_size)} and holds "
                         f"{t.num_ops} whole op records")
    if first is None and a.data != b.data:
        lines.append(f"the {min(ta.num_ops, tb.num_ops)} ops both hold agree in every field "
                     f"both hold")
        first = _byte_divergence(a.data, b.data)
    return TraceComparison(first, ops, lines)


def _byte_divergence(a: bytes, b: bytes) -> Divergence:
    """The first byte at which two different files differ, or where the shorter one ends."""
    at = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
              min(len(a), len(b)))
    return Divergence(None, "", f"byte {at}", a[at:at + 1].hex() or "end of file",
                      b[at:at + 1].hex() or "end of file", at, at,
                      note=f"lengths {len(a)} and {len(b)}" if len(a) != len(b) else "")
