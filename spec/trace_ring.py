"""Chapter 4: TraceRing, the SPSC ring of 64-byte op entries (one cache line per op).

The producer (foreground) appends one Entry per framework op; the consumer (background
thread) drains them in FIFO order. Parallel arrays carry each op's MetaLog start index and
its scope and callsite hashes.
"""

from __future__ import annotations

from .errata import erratum
from .layout import Member, array, bool_, hash64, i64, id32, struct, u8, u16, u64
from .types import NONE32

CAPACITY = 1 << 16
"""Ring capacity in entries (a power of two)."""

MASK = CAPACITY - 1
MAX_SCALARS = 5
"""Scalar slots in an Entry; num_scalar_args may say more, only 5 values are stored."""

ENTRY = struct("TraceRing::Entry", [
    Member("schema_hash", hash64, doc="SchemaHash: FNV-1a of the op name"),
    Member("shape_hash", hash64, doc="ShapeHash of the input shapes"),
    Member("num_inputs", u16),
    Member("num_outputs", u16),
    Member("num_scalar_args", u16, doc="may exceed 5; only 5 values are stored"),
    Member("grad_enabled", bool_),
    Member("op_flags", u8, doc="OpFlag bits: inference, mutable, phase<<2, torch_function"),
    Member("scalar_values", array(i64, MAX_SCALARS), doc="scalars bit-cast to int64"),
], size=64, align=64, alignas=64, chapter=4, doc="One recorded op: 64 bytes, one cache line.")

TRACE_RING = struct("TraceRing", [
    Member("head", u64, alignas=64, doc="total produced (atomic, monotonic)"),
    Member("tail", u64, alignas=64, doc="total consumed (atomic)"),
    Member("cached_tail_", u64, alignas=64, doc="producer-local copy of tail"),
    Member("entries", array(ENTRY, CAPACITY)),
    Member("meta_starts", array(id32, CAPACITY), default=[NONE32] * CAPACITY,
           doc="MetaIndex of each op's first TensorMeta, none if it has none"),
    Member("scope_hashes", array(hash64, CAPACITY)),
    Member("callsite_hashes", array(hash64, CAPACITY)),
], size=5_505_216, align=64, chapter=4, doc="The whole ring object with its cache-line placement.")

erratum(
    "E4.1", "Entry byte 23 is the op_flags bitfield; the yellowpaper says inference_mode",
    seed="crucible@8d2680a2", location="include/crucible/TraceRing.h Entry",
    ops=("layout.decode", "layout.encode"),
    witness={"args": {"struct": "TraceRing::Entry"}, "byte": 23, "code": "op_flags",
             "documents": "inference_mode (bool)"},
    flag="doc",
    detail="Byte 23 packs inference mode (bit 0), mutability (bit 1), the training phase "
           "(bits 2-3) and torch_function (bit 4); bits 5-7 are zero.",
)
