"""Chapter 14: the symbol table: per-symbol kind, hint and value range (SymbolTable.h).

1. `add(kind, expr_flags, backed)` appends an entry and returns its index as the SymbolId:
   no hint (INT64_MIN), sym_flags IS_BACKED when backed, the given ExprFlags, and a default
   range by kind: SIZE [2, +inf]; UNBACKED_INT [-inf, +inf] (INT64_MIN + 1, INT64_MAX);
   FLOAT and UNBACKED_FLOAT the bit patterns of -inf and +inf as i64.
2. `set_hint(id, v)` stores v and sets HAS_HINT; `set_hint_float` stores a double's bits.
3. `tighten_range(id, lo, hi)` only narrows: lower = max(lower, lo), upper = min(upper, hi),
   as signed integers for integer kinds and as doubles for float kinds (E14.701: the seed
   compares a float symbol's bit patterns as signed integers too).
4. `set_size_like(id)` sets IS_SIZE_LIKE.
5. Queries: range_contains(id, lo, hi) iff lower >= lo and upper <= hi; is_positive iff
   lower > 0; is_nonnegative iff lower >= 0 (signed comparisons of the stored words).
An id that no add returned is refused (the seed indexes its vector unchecked: E14.702).
"""

from __future__ import annotations

import enum
import struct as pystruct
from dataclasses import dataclass

from ..core.bits import to_signed, to_unsigned
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.layout import Member, enum_of, i64, pad, struct, u8, u16

INT_POS_INF = (1 << 63) - 1
"""+infinity of an integer range (INT64_MAX). Real code: `SymbolTable.h`, `kIntPosInf`."""
INT_NEG_INF = -(1 << 63) + 1
"""-infinity of an integer range (INT64_MIN + 1). Real code: `SymbolTable.h`, `kIntNegInf`."""
NO_HINT = -(1 << 63)
"""'No hint' (INT64_MIN). Real code: `SymbolTable.h`, `kNoHint`."""


class SymKind(enum.IntEnum):
    """What a symbol stands for."""

    SIZE = 0
    FLOAT = 1
    UNBACKED_INT = 2
    UNBACKED_FLOAT = 3


SYMBOL_ENTRY = struct("SymbolEntry", [
    Member("hint", i64, default=NO_HINT, doc="INT64_MIN = no hint"),
    Member("range_lower", i64),
    Member("range_upper", i64),
    Member("kind", enum_of(SymKind, u8), default=SymKind.SIZE),
    Member("sym_flags", u8, doc="IS_SIZE_LIKE 1, HAS_HINT 2, IS_BACKED 4"),
    Member("expr_flags", u16),
    Member("_pad", pad(4)),
], size=32, align=8, chapter=14, doc="One symbol.")

IS_SIZE_LIKE, HAS_HINT, IS_BACKED = 0x01, 0x02, 0x04
"""SymFlags bits. Real code: `SymbolTable.h`, `SymFlags`."""
SIZE_LOWER = 2
"""A SIZE symbol's default lower bound. Real code: `SymbolTable.h`, `add`."""
NEG_INF_BITS, POS_INF_BITS = 0xFFF0000000000000, 0x7FF0000000000000
"""The f64 bit patterns of -inf and +inf."""
FLOAT_KINDS = (SymKind.FLOAT, SymKind.UNBACKED_FLOAT)
E14_701 = "E14.701"


@dataclass
class SymbolEntry:
    hint: int = NO_HINT
    range_lower: int = 0
    range_upper: int = 0
    kind: SymKind = SymKind.SIZE
    sym_flags: int = 0
    expr_flags: int = 0


def default_range(kind: SymKind) -> tuple[int, int]:
    """Step 1's range by kind (float bounds as signed i64 words)."""
    if kind == SymKind.SIZE:
        return SIZE_LOWER, INT_POS_INF
    if kind == SymKind.UNBACKED_INT:
        return INT_NEG_INF, INT_POS_INF
    return to_signed(NEG_INF_BITS, 64), to_signed(POS_INF_BITS, 64)


def add(table: list[SymbolEntry], kind: SymKind, expr_flags: int, backed: bool = True) -> int:
    """Step 1: the new entry's id."""
    lower, upper = default_range(kind)
    table.append(SymbolEntry(NO_HINT, lower, upper, kind, IS_BACKED if backed else 0,
                             expr_flags))
    return len(table) - 1


def set_hint(e: SymbolEntry, hint: int) -> None:
    """Step 2 (set_hint_float passes the double's bits)."""
    e.hint = hint
    e.sym_flags |= HAS_HINT


def as_double(word: int) -> float:
    """The double whose bits are the i64 word."""
    return pystruct.unpack("<d", to_unsigned(word, 64).to_bytes(8, "little"))[0]


def bound_key(e: SymbolEntry, word: int, errata: frozenset[str] = NO_ERRATA):
    """The order step 3 compares bounds in: the double for float kinds, else the integer."""
    if e.kind in FLOAT_KINDS and E14_701 not in errata:
        return as_double(word)
    return word


def tighten_range(e: SymbolEntry, lo: int, hi: int,
                  errata: frozenset[str] = NO_ERRATA) -> None:
    """Step 3: only narrows."""
    if bound_key(e, lo, errata) > bound_key(e, e.range_lower, errata):
        e.range_lower = lo
    if bound_key(e, hi, errata) < bound_key(e, e.range_upper, errata):
        e.range_upper = hi


def range_contains(e: SymbolEntry, lo: int, hi: int) -> bool:
    """Step 5."""
    return e.range_lower >= lo and e.range_upper <= hi


def is_positive(e: SymbolEntry) -> bool:
    return e.range_lower > 0


def is_nonnegative(e: SymbolEntry) -> bool:
    return e.range_lower >= 0


def entry_bytes(e: SymbolEntry) -> bytes:
    """The 32-byte SymbolEntry."""
    return SYMBOL_ENTRY.pack({"hint": e.hint, "range_lower": e.range_lower,
                              "range_upper": e.range_upper, "kind": int(e.kind),
                              "sym_flags": e.sym_flags, "expr_flags": e.expr_flags,
                              "_pad": bytes(4)})


def entry_of(table: list[SymbolEntry], sid: int, path: str) -> SymbolEntry:
    """The entry of an id some add returned."""
    if sid >= len(table):
        raise InvalidInput(f"{path}: symbol {sid} was never added")
    return table[sid]
