"""Chapter 4: MetaLog, the SPSC buffer of 168-byte TensorMeta records.

Indices are absolute u32 counters; the slot of index i is i & MASK. The producer appends the
metas of one op in bulk and gets back the absolute start index it stores in the ring entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..core.bits import BitVal, add, pow2_index, sub, ule
from ..core.errata import NO_ERRATA, erratum
from ..core.layout import Member, ptr, struct, u32
from .types import NONE32

CAPACITY = 1 << 20
"""MetaLog capacity in TensorMeta records (a power of two). Real code: `MetaLog.h`,
`MetaLog::CAPACITY`."""

MASK = CAPACITY - 1
"""CAPACITY - 1. Real code: `MetaLog.h`, `MetaLog::MASK`."""

META_LOG = struct("MetaLog", [
    Member("head", u32, alignas=64, doc="total appended (atomic u32)"),
    Member("cached_tail_", u32, doc="producer-local copy of tail"),
    Member("entries", ptr, doc="aligned buffer of CAPACITY TensorMeta"),
    Member("tail", u32, alignas=64, doc="total consumed (atomic u32)"),
], size=128, align=64, chapter=4,
   doc="The MetaLog object; its 176,160,768-byte buffer is separate.")

E4_2 = "E4.2"


@dataclass
class MetaLogState:
    """A MetaLog's counters, `bits` wide (u32 in the code), and the metas by slot when the
    caller passes them (the simulator's appends carry none: payload is not modelled)."""

    capacity: int = CAPACITY
    head: int = 0
    tail: int = 0
    cached_tail: int = 0
    bits: int = 32
    slots: list = field(default_factory=list)


def fits_u32(h: BitVal, cached_tail: BitVal, n: BitVal, capacity: BitVal, bits: int = 32
             ) -> Any:
    """The code's space check: (u32)(h - cached_tail + n) <= capacity."""
    return ule(add(sub(h, cached_tail, bits), n, bits), capacity)


def fits_exact(h: int, cached_tail: int, n: int, capacity: int, bits: int = 32) -> bool:
    """The intended check: the slots in use plus n fit."""
    return (h - cached_tail) % (1 << bits) + n <= capacity


def fits(h: int, cached_tail: int, n: int, capacity: int, errata: frozenset[str],
         bits: int = 32) -> bool:
    """The spec checks exactly; the u32 sum of the code wraps for n >= 2^32 - used (E4.2)."""
    check = fits_u32 if E4_2 in errata else fits_exact
    return check(h, cached_tail, n, capacity, bits)


def copy_in(m: MetaLogState, h: int, metas: tuple) -> None:
    """Copy the metas to the slots of indices h, h + 1, ... (split at the end of the
    buffer)."""
    for j, meta in enumerate(metas):
        m.slots[pow2_index(h + j, m.capacity)] = meta


@dataclass(frozen=True)
class Append:
    """A try_append in progress: its next step, the head it read, n and the metas (if
    modelled), and the start index once published."""

    n: int
    metas: tuple = ()
    pc: str = "check"
    h: int = 0
    start: int = NONE32


def append_step(m: MetaLogState, a: Append, errata: frozenset[str] = NO_ERRATA) -> Append:
    """One atomic step of try_append: 1. n = 0 appends nothing, else read head and test the
    cached tail; 2. when that does not fit, reload the consumer's tail (acquire), giving up
    if it still does not; 3. copy the metas (split at the end of the buffer); 4. publish
    head + n (release)."""
    if a.pc == "check":
        if a.n == 0:
            return replace(a, pc="done")
        h = m.head
        return replace(a, h=h, pc="write" if fits(h, m.cached_tail, a.n, m.capacity, errata,
                                                  m.bits) else "reload")
    if a.pc == "reload":
        m.cached_tail = m.tail
        return replace(a, pc="write" if fits(a.h, m.cached_tail, a.n, m.capacity, errata,
                                             m.bits) else "done")
    if a.pc == "write":
        copy_in(m, a.h, a.metas)
        return replace(a, pc="publish")
    m.head = add(a.h, a.n, m.bits)
    return replace(a, pc="done", start=a.h)


def try_append(m: MetaLogState, n: int, errata: frozenset[str] = NO_ERRATA) -> int:
    """Append n metas at once; the absolute (unmasked) start index, or none if n is 0 or they
    do not fit."""
    a = Append(n)
    while a.pc != "done":
        a = append_step(m, a, errata)
    return a.start


def used(m: MetaLogState) -> int:
    """Metas appended and not yet consumed: head - tail in `bits`-wide arithmetic."""
    return sub(m.head, m.tail, m.bits)


def advance_tail(m: MetaLogState, count: int) -> None:
    """The consumer releases `count` metas (release store of tail + count)."""
    m.tail = add(m.tail, count, m.bits)


def try_contiguous(m: MetaLogState, start: int, count: int) -> int | None:
    """The buffer slot of `count` metas from absolute index `start` when they lie in one run
    (zero-copy read), else None (a count of 0, or a run that wraps)."""
    if count == 0:
        return None
    pos = pow2_index(start, m.capacity)
    return pos if pos + count <= m.capacity else None


erratum(
    E4_2, "MetaLog's 32-bit space check accepts an append of 2^32 - used or more metas",
    seed="crucible@8d2680a2", location="include/crucible/MetaLog.h try_append",
    ops=("metalog.simulate",),
    witness={"args": {"capacity": 4, "steps": [{"op": "append", "n": 1},
                                               {"op": "append", "n": 4294967295}]},
             "spec": {"results": [{"start": 0}, {"start": 4294967295}], "head": 1},
             "seed": {"results": [{"start": 0}, {"start": 1}], "head": 0}},
    flag="result",
    detail="(u32)(head - cached_tail + n) wraps, so a huge n passes the check and the copy "
           "overruns the buffer. The check is sound exactly when n <= 2^32 - 1 - capacity "
           "(proof obligation PO4.4; z3 finds the witness of PO4.5). Every caller passes "
           "n = num_inputs + num_outputs <= 131070, so the runtime never reaches it.",
)
