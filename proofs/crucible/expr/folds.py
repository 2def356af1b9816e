"""Chapter 14 obligation PO14.550: ExprPool's constant folding (spec/crucible/expr/arith, run on z3
64-bit vectors) is the mathematical operation wherever the result fits i64, and z3 finds the
places where it is not: C's truncating remainder is not the non-negative modulus (mod's seed
fold, E14.503), INT64_MAX + 1 wraps to INT64_MIN, and INT64_MIN // -1 wraps to itself.

The mathematical side is stated without division, by the defining inequalities on 128-bit
vectors (no product of two 64-bit values overflows them): q is floor(a / r) iff
r q <= a < r q + r for r > 0 (mirrored for r < 0); c is the ceiling iff r c - r < a <= r c.
Divisors are the constants of the rule families and the i64 extremes; the dividend is any i64,
asked about as two halves, negative and not, each bit-blasted straight to the SAT solver.

For a divisor in BY_DEFINITION the query states C's quotient and remainder by their
definition (SMT-LIB's bvsdiv and bvsrem for a non-zero divisor, which the folds' `/` and `%`
are): fresh q and rem with a = r q + rem, |rem| < |r| and rem zero or of a's sign, in 128 bits.
That pair is unique, so the question is the same; the SAT solver answers it without
bit-blasting a 64-bit divider (26 s to about 2 s for r = 3). A fold whose division is not
that very term keeps its divider, so a change to the folds can only make the query slower.
"""

from __future__ import annotations

import z3

from ....spec.core.registry import Mutant
from ....spec.crucible.expr.arith import (
    INT64_MAX,
    INT64_MIN,
    add_wrap,
    c_rem,
    ceil_div_fold,
    floor_div_fold,
    modular_indexing_fold,
    modular_indexing_fold_seed,
    mul_wrap,
    python_mod_fold,
)
from ....spec.crucible.expr.rules import DIVISORS
from ...core.obligation import BIT_BLAST, Query, z3_obligation

FOLD_DIVISORS = (*DIVISORS, INT64_MAX, INT64_MIN)
MODULI = (1, 4, -4)
RLIMIT = 400_000_000
BY_DEFINITION = (3,)
"""Divisors whose bit-blasted divider dominates the obligation (the powers of two fold to
shifts, and the extremes' quotients are -1, 0 or 1)."""


def wide(x) -> z3.BitVecRef:
    """A 64-bit vector sign-extended to 128 bits."""
    return z3.SignExt(64, x)


def is_floor(q, a, r: int):
    """q is floor(a / r) (128-bit, r a non-zero constant)."""
    Q, L, R = wide(q), wide(a), z3.BitVecVal(r, 128)
    return z3.And(R * Q <= L, L < R * Q + R) if r > 0 else z3.And(R * Q >= L, L > R * Q + R)


def is_ceil(c, a, r: int):
    """c is ceil(a / r) (128-bit, r a non-zero constant)."""
    C, L, R = wide(c), wide(a), z3.BitVecVal(r, 128)
    return z3.And(R * C - R < L, L <= R * C) if r > 0 else z3.And(R * C - R > L, L >= R * C)


def fits(a, r: int):
    """The quotient fits i64: all but INT64_MIN / -1."""
    return z3.BoolVal(True) if r != -1 else a != INT64_MIN


def by_sign(label: str, a, counterexample) -> list[Query]:
    """Two queries asking for `counterexample` with a >= 0 and with a < 0: together the same
    question over every dividend (the bit-blasted divider is found unsat about five times
    faster in two halves than whole)."""
    return [Query(f"{label} (a {side})", z3.And(counterexample, half), rlimit=RLIMIT,
                  logic=BIT_BLAST)
            for side, half in ((">= 0", a >= 0), ("< 0", a < 0))]


def truncating(a, r: int):
    """The map of a formula to itself with C's a / r and a % r replaced by fresh q and rem held
    to their definition: a = r q + rem, |rem| < |r|, rem zero or of a's sign (128 bits)."""
    rv = z3.BitVecVal(r, 64)
    q, rem = z3.BitVecs(f"q{r} rem{r}", 64)
    A, REM = wide(a), wide(rem)
    defined = z3.And(z3.BitVecVal(r, 128) * wide(q) + REM == A, abs(r) > REM, -abs(r) < REM,
                     z3.Or(rem == 0, (rem < 0) == (a < 0)))

    def apply(formula):
        return z3.And(z3.substitute(formula, (a / rv, q), (z3.SRem(a, rv), rem)), defined)
    return apply


def division_queries(a) -> list[Query]:
    """floor_div_fold, ceil_div_fold and python_mod_fold against their definitions, for every
    divisor of FOLD_DIVISORS."""
    out = []
    for r in FOLD_DIVISORS:
        rv = z3.BitVecVal(r, 64)
        state = truncating(a, r) if r in BY_DEFINITION else (lambda formula: formula)
        m = python_mod_fold(a, rv)
        q = floor_div_fold(a, rv)
        in_range = z3.And(m >= 0, m < rv) if r > 0 else z3.And(m <= 0, m > rv)
        exact = wide(m) == wide(a) - z3.BitVecVal(r, 128) * wide(q)
        for label, wrong in (
                (f"floor_div_fold(a, {r}) is the floor", z3.Not(is_floor(q, a, r))),
                (f"ceil_div_fold(a, {r}) is the ceiling",
                 z3.Not(is_ceil(ceil_div_fold(a, rv), a, r))),
                (f"python_mod_fold(a, {r}) is a - {r} * (a // {r}), with {r}'s sign",
                 z3.Not(z3.And(in_range, exact)))):
            out += by_sign(label, a, state(z3.And(fits(a, r), wrong)))
    return out


def fold_queries(_subject) -> list[Query]:
    """The other folds and the witnesses first (seconds in all), then the divisions (the
    bulk of the time): a mutant is met by the cheap queries before the dear ones."""
    a, b = z3.BitVecs("a b", 64)
    out = []
    for d in (2, -2, -4):
        for mod in MODULI:
            v = modular_indexing_fold(a, z3.BitVecVal(d, 64), z3.BitVecVal(mod, 64))
            q = floor_div_fold(a, z3.BitVecVal(d, 64))
            ok = z3.And(v >= 0, v < abs(mod), z3.SRem(q - v, mod) == 0)
            out.append(Query(f"modular_indexing_fold(b, {d}, {mod}) is (b // {d}) mod {abs(mod)}",
                             z3.Not(ok), rlimit=RLIMIT))
    total = wide(a) + wide(b)
    out.append(Query("add_wrap is the sum when it fits i64",
                     z3.And(total >= INT64_MIN, total <= INT64_MAX,
                            wide(add_wrap(a, b)) != total)))
    for k in (3, -4):
        product = wide(a) * k
        out.append(Query(f"mul_wrap(a, {k}) is the product when it fits i64",
                         z3.And(product >= INT64_MIN, product <= INT64_MAX,
                                wide(mul_wrap(a, z3.BitVecVal(k, 64))) != product)))
    three = z3.BitVecVal(3, 64)
    out += [
        Query("C's remainder by 3 is negative for some dividend (mod's seed fold, E14.503)",
              c_rem(a, three) < 0, expect="sat"),
        Query("the seed's fold of a negative modulus can be negative (E14.552)",
              modular_indexing_fold_seed(a, z3.BitVecVal(2, 64), z3.BitVecVal(-4, 64)) < 0,
              expect="sat"),
        Query("INT64_MAX + 1 wraps to INT64_MIN",
              add_wrap(z3.BitVecVal(INT64_MAX, 64), z3.BitVecVal(1, 64)) == INT64_MIN,
              expect="sat"),
        Query("INT64_MIN // -1 wraps to INT64_MIN",
              floor_div_fold(z3.BitVecVal(INT64_MIN, 64), z3.BitVecVal(-1, 64)) == INT64_MIN,
              expect="sat"),
    ]
    return out + division_queries(a)


@z3_obligation(
    "PO14.550",
    "ExprPool's constant folding on i64 (floor_div_fold, ceil_div_fold, python_mod_fold, "
    "modular_indexing_fold, add_wrap, mul_wrap) is the mathematical floor, ceiling, Python "
    "modulo, (b // d) mod |m|, sum and product wherever the result fits i64, for every i64 "
    "dividend and the rules' divisors and the i64 extremes; C's remainder by 3 is negative for "
    "some dividend, the seed's fold of a negative modulus is negative for some (E14.552), "
    "INT64_MAX + 1 is INT64_MIN and INT64_MIN // -1 is INT64_MIN.",
    covers=("expr.canon",),
    subject=floor_div_fold,
    mutants=(
        Mutant.edit("floor one up", "the floor correction adds one", floor_div_fold,
                    "q - 1, q)", "q + 1, q)"),
        Mutant.edit("ceiling on disagreement", "the ceiling steps when the signs differ",
                    ceil_div_fold, "(rem ^ b) > 0", "(rem ^ b) < 0"),
        Mutant.edit("modulo moved down", "the Python correction subtracts b", python_mod_fold,
                    "rem + b, rem)", "rem - b, rem)"),
        Mutant.edit("modular index left negative", "a negative remainder is kept",
                    modular_indexing_fold, "v + select(m < 0, -m, m), v)", "v, v)"),
        Mutant.edit("sum as difference", "add_wrap subtracts", add_wrap, "wrap64(a + b)",
                    "wrap64(a - b)"),
        Mutant.edit("product as sum", "mul_wrap adds", mul_wrap, "wrap64(a * b)",
                    "wrap64(a + b)"),
    ),
    timeout_s=600.0,
)
def folds_are_exact(subject):
    return fold_queries(subject)
