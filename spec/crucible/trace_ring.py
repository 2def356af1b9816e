"""Chapter 4: TraceRing, the SPSC ring of 64-byte op entries (one cache line per op).

The producer (foreground) appends one Entry per framework op; the consumer (background
thread) drains them in FIFO order. Parallel arrays carry each op's MetaLog start index and
its scope and callsite hashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..core.bits import BitVal, pow2_index, sub, umin
from ..core.errata import erratum
from ..core.layout import Member, array, bool_, hash64, i64, id32, struct, u8, u16, u64
from .types import NONE32

CAPACITY = 1 << 16
"""Ring capacity in entries (a power of two). Real code: `TraceRing.h`, `TraceRing::CAPACITY`."""

MASK = CAPACITY - 1
"""CAPACITY - 1: an index is a counter masked by it. Real code: `TraceRing.h`,
`TraceRing::MASK`."""
MAX_SCALARS = 5
"""Scalar slots in an Entry; num_scalar_args may say more, only 5 values are stored. Real code:
`TraceRing.h`, the `scalar_values` array of an Entry."""

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


@dataclass
class Ring:
    """A TraceRing's counters and slots; a slot holds (entry image, meta start, scope,
    callsite). Counters are u64: they never wrap in practice."""

    capacity: int = CAPACITY
    head: int = 0
    tail: int = 0
    cached_tail: int = 0
    slots: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.slots = self.slots or [None] * self.capacity


def looks_full(h: int, tail: int, capacity: int) -> bool:
    """The producer's full check against a copy of the consumer's tail."""
    return h - tail >= capacity


@dataclass(frozen=True)
class Append:
    """A try_append in progress: its next step, the head it read, and the item."""

    item: Any
    pc: str = "check"
    h: int = 0
    ok: bool = False


def append_step(r: Ring, a: Append) -> Append:
    """One atomic step of try_append: 1. read head and test the cached tail; 2. when that
    looks full, reload the consumer's tail (acquire), dropping the op if still full;
    3. write the slot; 4. publish head + 1 (release)."""
    if a.pc == "check":
        h = r.head
        return replace(a, h=h, pc="reload" if looks_full(h, r.cached_tail, r.capacity)
                       else "write")
    if a.pc == "reload":
        r.cached_tail = r.tail
        return replace(a, pc="done" if looks_full(a.h, r.cached_tail, r.capacity) else "write")
    if a.pc == "write":
        r.slots[pow2_index(a.h, r.capacity)] = a.item
        return replace(a, pc="publish")
    r.head = a.h + 1
    return replace(a, pc="done", ok=True)


def try_append(r: Ring, item: tuple) -> bool:
    """Append one op, or drop it (False) when the ring is full."""
    a = Append(item)
    while a.pc != "done":
        a = append_step(r, a)
    return a.ok


def drain_split(tail: BitVal, count: BitVal, capacity: BitVal) -> tuple:
    """The two copies of a drain: (start slot, length from there to the end, length from
    slot 0)."""
    start = pow2_index(tail, capacity)
    first = umin(count, sub(capacity, start))
    return start, first, sub(count, first)


def copied(r: Ring, t: int, count: int) -> tuple:
    """The `count` items from tail t: the drain split's two parts, copied in order."""
    start, first, second = drain_split(t, count, r.capacity)
    return tuple(r.slots[start:start + first] + r.slots[:second])


@dataclass(frozen=True)
class Drain:
    """A drain in progress: its next step, the tail and count it read, the items copied."""

    max_count: int
    pc: str = "load"
    t: int = 0
    count: int = 0
    items: tuple = ()


def drain_step(r: Ring, d: Drain) -> Drain:
    """One atomic step of drain: 1. read tail and head (acquire), count = min(head - tail,
    max); 2. split at the end of the array and copy both parts; 3. release tail + count."""
    if d.pc == "load":
        t = r.tail
        return replace(d, t=t, count=min(r.head - t, d.max_count), pc="copy")
    if d.pc == "copy":
        d = replace(d, items=copied(r, d.t, d.count))
        return replace(d, pc="release")
    r.tail = d.t + d.count
    return replace(d, pc="done")


def drain(r: Ring, max_count: int) -> list[tuple]:
    """Take up to max_count ops, oldest first."""
    d = Drain(max_count)
    while d.pc != "done":
        d = drain_step(r, d)
    return list(d.items)


def reset(r: Ring) -> None:
    r.head = r.tail = r.cached_tail = 0
