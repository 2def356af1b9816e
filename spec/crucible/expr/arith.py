"""Chapter 14: the signed 64-bit arithmetic of ExprPool's constant folding, written once for
Python ints and z3 bit-vectors (as chapter 1's bit helpers are), so a proof obligation runs
the very folding the constructors run.

A Python value is a signed int in [-2**63, 2**63); a z3 value is a 64-bit vector read as
signed. Sums and products wrap; `/` and `%` are C++'s: the quotient truncates toward zero and
the remainder takes the dividend's sign. The floor, ceiling and Python forms are built from
them exactly as the constructors of §5.7 state:
1. q = trunc(l / r), rem = l - r*q.
2. floor: q - 1 when rem != 0 and rem, r differ in sign; ceiling: q + 1 when they agree.
3. Python modulo: rem + r when rem != 0 and rem, r differ in sign.
"""

from __future__ import annotations

from typing import Any

from ...core.bits import is_symbolic, select, z3_module

I64 = Any  # a Python int in [-2**63, 2**63) or a z3 BitVecRef of width 64
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1


def wrap64(x: I64) -> I64:
    """Reduce to a signed 64-bit value (two's-complement wrap); z3 vectors wrap already."""
    if is_symbolic(x):
        return x
    return ((x - INT64_MIN) & ((1 << 64) - 1)) + INT64_MIN


def both(p: Any, q: Any) -> Any:
    """p and q, as a Python bool or a z3 conjunction."""
    if is_symbolic(p) or is_symbolic(q):
        return z3_module().And(p, q)
    return p and q


def c_div(a: I64, b: I64) -> I64:
    """C++ `a / b` on i64: truncates toward zero (INT64_MIN / -1 wraps; C++ leaves it undefined)."""
    if is_symbolic(a) or is_symbolic(b):
        return a / b
    q = abs(a) // abs(b)
    return wrap64(q if (a < 0) == (b < 0) else -q)


def c_rem(a: I64, b: I64) -> I64:
    """C++ `a % b` on i64: a - b * (a / b), with the dividend's sign."""
    if is_symbolic(a) or is_symbolic(b):
        return z3_module().SRem(a, b)
    return wrap64(a - b * c_div(a, b))


def floor_div_fold(a: I64, b: I64) -> I64:
    """Python's a // b from C's quotient: one less when the remainder and b differ in sign."""
    q, rem = c_div(a, b), c_rem(a, b)
    return wrap64(select(both(rem != 0, (rem ^ b) < 0), q - 1, q))


def ceil_div_fold(a: I64, b: I64) -> I64:
    """The ceiling of a / b from C's quotient: one more when the remainder and b agree in sign."""
    q, rem = c_div(a, b), c_rem(a, b)
    return wrap64(select(both(rem != 0, (rem ^ b) > 0), q + 1, q))


def python_mod_fold(a: I64, b: I64) -> I64:
    """Python's a % b from C's remainder: plus b when the remainder and b differ in sign."""
    rem = c_rem(a, b)
    return wrap64(select(both(rem != 0, (rem ^ b) < 0), rem + b, rem))


def modular_indexing_fold(b: I64, d: I64, m: I64) -> I64:
    """(b // d) mod |m|: Python's floor quotient, then C's remainder moved up by |m| when
    negative, so the result is never negative (as MODULAR_INDEXING's flag states)."""
    v = c_rem(floor_div_fold(b, d), m)
    return wrap64(select(v < 0, v + select(m < 0, -m, m), v))


def modular_indexing_fold_seed(b: I64, d: I64, m: I64) -> I64:
    """The seed's fold: C's remainder moved up by m, so a negative m can give a negative
    result (E14.552)."""
    v = c_rem(floor_div_fold(b, d), m)
    return wrap64(select(v < 0, v + m, v))


def add_wrap(a: I64, b: I64) -> I64:
    """a + b on i64, wrapping (INT64_MAX + 1 is INT64_MIN)."""
    return wrap64(a + b)


def mul_wrap(a: I64, b: I64) -> I64:
    """a * b on i64, wrapping."""
    return wrap64(a * b)
