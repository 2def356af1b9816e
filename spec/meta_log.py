"""Chapter 4: MetaLog, the SPSC buffer of 168-byte TensorMeta records.

Indices are absolute u32 counters; the slot of index i is i & MASK. The producer appends the
metas of one op in bulk and gets back the absolute start index it stores in the ring entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .bits import BitVal, add, sub, ule
from .errata import NO_ERRATA, erratum
from .layout import Member, ptr, struct, u32
from .types import NONE32

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

E4_2 = "E4.2"
U32_MOD = 1 << 32


@dataclass
class MetaLogState:
    """A MetaLog's u32 counters (the metas themselves are payload and not modelled)."""

    capacity: int = CAPACITY
    head: int = 0
    tail: int = 0
    cached_tail: int = 0


def fits_u32(h: BitVal, cached_tail: BitVal, n: BitVal, capacity: BitVal) -> Any:
    """The code's space check: (u32)(h - cached_tail + n) <= capacity."""
    return ule(add(sub(h, cached_tail, 32), n, 32), capacity)


def fits_exact(h: int, cached_tail: int, n: int, capacity: int) -> bool:
    """The intended check: the slots in use plus n fit."""
    return (h - cached_tail) % U32_MOD + n <= capacity


def fits(h: int, cached_tail: int, n: int, capacity: int, errata: frozenset[str]) -> bool:
    """The spec checks exactly; the u32 sum of the code wraps for n >= 2^32 - used (E4.2)."""
    check = fits_u32 if E4_2 in errata else fits_exact
    return check(h, cached_tail, n, capacity)


def try_append(m: MetaLogState, n: int, errata: frozenset[str] = NO_ERRATA) -> int:
    """Append n metas at once; the absolute (unmasked) start index, or none if n is 0 or they
    do not fit."""
    if n == 0:
        return NONE32  # 1
    h = m.head
    if not fits(h, m.cached_tail, n, m.capacity, errata):  # 2. looks full: reload
        m.cached_tail = m.tail
        if not fits(h, m.cached_tail, n, m.capacity, errata):
            return NONE32
    m.head = (h + n) % U32_MOD  # 3. copy (split at the end of the buffer), 4. publish
    return h


def try_contiguous(m: MetaLogState, start: int, count: int) -> int | None:
    """The buffer slot of `count` metas from absolute index `start` when they lie in one run
    (zero-copy read), else None (a count of 0, or a run that wraps)."""
    if count == 0:
        return None
    pos = start & (m.capacity - 1)
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
