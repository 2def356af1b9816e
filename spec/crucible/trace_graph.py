"""Chapter 6: the trace graph, a CSR property graph over one iteration's ops."""

from __future__ import annotations

import enum

from ..core.layout import Member, enum_of, hash64, id32, pad, ptr, struct, u8, u32
from .types import NONE32


class EdgeKind(enum.IntEnum):
    """Edge kinds; only DATA_FLOW and ALIAS are ever produced."""

    DATA_FLOW = 0
    ALIAS = 1
    CONTROL_FLOW = 2
    SCALAR_FLOW = 3


EDGE = struct("Edge", [
    Member("src", id32, default=NONE32),
    Member("dst", id32, default=NONE32),
    Member("src_port", u8, doc="output index of src"),
    Member("dst_port", u8, doc="input index of dst (output index for ALIAS)"),
    Member("kind", enum_of(EdgeKind, u8), default=EdgeKind.DATA_FLOW),
    Member("pad", pad(1)),
], size=12, align=4, chapter=6, doc="A dependence between two ops; src < dst always.")

TRACE_GRAPH = struct("TraceGraph", [
    Member("ops", ptr, doc="TraceEntry[num_ops]"),
    Member("num_ops", u32),
    Member("fwd_edges", ptr),
    Member("fwd_offsets", ptr, doc="u32[num_ops + 1]"),
    Member("rev_edges", ptr),
    Member("rev_offsets", ptr),
    Member("num_edges", u32),
    Member("slots", ptr, doc="TensorSlot[num_slots]"),
    Member("num_slots", u32),
    Member("content_hash", hash64),
    Member("max_meta_end", u32),
    Member("pad_tg", u32),
], size=88, align=8, chapter=6, doc="One iteration: ops, bidirectional CSR, slots, content hash.")
