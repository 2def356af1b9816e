"""Chapter 14: the symbol table: per-symbol kind, hint and value range."""

from __future__ import annotations

import enum

from .layout import Member, enum_of, i64, pad, struct, u8, u16

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
