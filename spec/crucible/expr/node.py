"""Chapter 14: symbolic expressions: the 32-byte interned node and its operators."""

from __future__ import annotations

import enum

from ...core.layout import Member, enum_of, hash64, i64, id32, ptr, struct, u8, u16
from ..types import NONE32

Op = enum.IntEnum("Op", [
    "INTEGER", "FLOAT", "SYMBOL", "BOOL_TRUE", "BOOL_FALSE", "ADD", "MUL", "POW", "EQ", "NE",
    "LT", "LE", "GT", "GE", "AND", "OR", "NOT", "FLOOR_DIV", "CLEAN_DIV", "CEIL_DIV",
    "INT_TRUE_DIV", "FLOAT_TRUE_DIV", "MOD", "PYTHON_MOD", "MODULAR_INDEXING", "CEIL_TO_INT",
    "FLOOR_TO_INT", "TRUNC_TO_FLOAT", "TRUNC_TO_INT", "ROUND_TO_INT", "ROUND_DECIMAL",
    "TO_FLOAT", "LSHIFT", "RSHIFT", "POW_BY_NATURAL", "FLOAT_POW", "WHERE", "IDENTITY", "MIN",
    "MAX", "IS_NON_OVERLAPPING_AND_DENSE", "SQRT", "COS", "COSH", "SIN", "SINH", "TAN", "TANH",
    "ASIN", "ACOS", "ATAN", "EXP", "LOG", "ASINH", "LOG2", "ABS", "BITWISE_AND", "BITWISE_OR",
    "BITWISE_XOR", "NEG", "NUM_OPS"], start=0)
Op.__doc__ = "Symbolic operator (u8): 60 operators and the NUM_OPS sentinel."


class ExprFlags(enum.IntFlag):
    """Assumption bits of an expression (u16); bits 13-15 are unused."""

    IS_INTEGER = 0x0001
    IS_REAL = 0x0002
    IS_FINITE = 0x0004
    IS_POSITIVE = 0x0008
    IS_NEGATIVE = 0x0010
    IS_NONNEGATIVE = 0x0020
    IS_NONPOSITIVE = 0x0040
    IS_ZERO = 0x0080
    IS_EVEN = 0x0100
    IS_ODD = 0x0200
    IS_NUMBER = 0x0400
    IS_SYMBOL = 0x0800
    IS_BOOLEAN = 0x1000


EXPR = struct("Expr", [
    Member("op", enum_of(Op, u8), default=Op.INTEGER),
    Member("nargs", u8),
    Member("flags", u16, doc="ExprFlags"),
    Member("symbol_id", id32, default=NONE32),
    Member("hash", hash64, doc="structural hash, set at interning"),
    Member("payload", i64, doc="integer value, float bits or symbol-name address"),
    Member("args", ptr, doc="const Expr*[nargs]"),
], size=32, align=8, chapter=14, doc="One interned expression node.")
