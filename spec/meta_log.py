"""Chapter 4: MetaLog, the SPSC buffer of 168-byte TensorMeta records.

Indices are absolute u32 counters; the slot of index i is i & MASK. The producer appends the
metas of one op in bulk and gets back the absolute start index it stores in the ring entry.
"""

from __future__ import annotations

from .layout import Member, ptr, struct, u32

CAPACITY = 1 << 20
"""MetaLog capacity in TensorMeta records (a power of two)."""

MASK = CAPACITY - 1

META_LOG = struct("MetaLog", [
    Member("head", u32, alignas=64, doc="total appended (atomic u32)"),
    Member("cached_tail_", u32, doc="producer-local copy of tail"),
    Member("entries", ptr, doc="aligned buffer of CAPACITY TensorMeta"),
    Member("tail", u32, alignas=64, doc="total consumed (atomic u32)"),
], size=128, align=64, chapter=4,
   doc="The MetaLog object; its 176,160,768-byte buffer is separate.")
