"""Chapter 14: what an ExprPool expression means over the mathematical integers, the yardstick
every rewrite rule of the pool is measured against (§5.7, invariant I5 of §5.9).

1. An integer node denotes an unbounded integer; a comparison or logic node a truth value.
   INTEGER is its payload; SYMBOL a free integer in the range its flags declare (IS_POSITIVE:
   > 0, IS_NEGATIVE: < 0, IS_NONNEGATIVE: >= 0, IS_NONPOSITIVE: <= 0, IS_ZERO: = 0, IS_EVEN /
   IS_ODD: parity), and always within i64 (a symbol stands for a size, stride or offset).
2. ADD, MUL, NEG, MIN, MAX are the integer sum, product, negation, minimum and maximum;
   POW(b, e) with a constant e >= 0 is the product of e copies of b (b**0 = 1, 0**0 included);
   any other POW is an uninterpreted function of (b, e).
3. FLOOR_DIV is Python's floor of a / b; CEIL_DIV is the ceiling, -floor(-a / b); PYTHON_MOD is
   a - b * floor(a / b) (the divisor's sign); MOD is the non-negative remainder modulo |b| (the
   IS_NONNEGATIVE flag every MOD node carries); MODULAR_INDEXING(b, d, m) is MOD(FLOOR_DIV(b, d),
   m), non-negative as its flag states.
4. Division by zero: Python raises and C++ leaves it undefined, so the spec gives it no fixed
   value: a // 0 is an unknown function of the dividend a (likewise a mod 0), the convention z3
   itself uses. A rewrite may therefore neither drop a division by zero nor change its
   dividend: FLOOR_DIV(7, 0) and FLOOR_DIV(1, 0) may differ. On Python ints it raises.
5. EQ .. GE compare; AND, OR, NOT are the logic; WHERE(c, t, f) is t when c holds, else f.
"""

from __future__ import annotations

import functools
from typing import Any

from ...core.lazy_z3 import z3
from .arith import INT64_MAX, INT64_MIN
from .node import ExprFlags, Op

Value = Any  # a Python int / bool, or a z3 ArithRef / BoolRef


@functools.cache
def unknown(name: str, arity: int) -> Any:
    """The uninterpreted integer function `name` of `arity` integers (floor_div_by_zero,
    mod_by_zero, python_mod_by_zero: 1; pow_other: 2), declared once."""
    return z3.Function(name, *[z3.IntSort()] * (arity + 1))


POW_UNROLL = 64
"""The largest constant exponent expanded into a product; a larger one stays uninterpreted."""


def _sym(*xs: Value) -> bool:
    return any(isinstance(x, z3.ExprRef) for x in xs)


def floor_div_value(a: Value, b: Value) -> Value:
    """floor(a / b); a // 0 is floor_div_by_zero(a)."""
    if not _sym(a, b):
        return a // b
    # z3's integer division is Euclidean: the floor for b > 0, so mirror a negative divisor.
    return z3.If(b > 0, a / b, z3.If(b < 0, (-a) / (-b), unknown("floor_div_by_zero", 1)(a)))


def ceil_div_value(a: Value, b: Value) -> Value:
    """ceil(a / b) = -floor(-a / b)."""
    return -floor_div_value(-a, b)


def python_mod_value(a: Value, b: Value) -> Value:
    """Python's a % b: a - b * floor(a / b), with b's sign; a % 0 is python_mod_by_zero(a)."""
    if not _sym(a, b):
        return a % b
    return z3.If(b == 0, unknown("python_mod_by_zero", 1)(a), a - b * floor_div_value(a, b))


def mod_value(a: Value, b: Value) -> Value:
    """The remainder of a modulo |b| in [0, |b|); a mod 0 is mod_by_zero(a)."""
    if not _sym(a, b):
        if b == 0:
            raise ZeroDivisionError("mod by zero is unspecified")
        return a % abs(b)
    # z3's integer remainder is Euclidean: always in [0, |b|).
    return z3.If(b == 0, unknown("mod_by_zero", 1)(a), a % b)


def modular_indexing_value(b: Value, d: Value, m: Value) -> Value:
    """MOD(FLOOR_DIV(b, d), m): (b // d) modulo |m|, non-negative."""
    return mod_value(floor_div_value(b, d), m)


def pow_value(b: Value, e: Value) -> Value:
    """b ** e for a constant natural e (0 ** 0 = 1); any other pair is pow_other(b, e)."""
    if not _sym(e) and 0 <= e <= POW_UNROLL:
        out: Value = 1
        for _ in range(e):
            out = out * b
        return out
    return unknown("pow_other", 2)(b, e)


def min_value(xs: list[Value]) -> Value:
    """The least of xs."""
    out = xs[0]
    for x in xs[1:]:
        out = z3.If(x < out, x, out) if _sym(x, out) else min(out, x)
    return out


def max_value(xs: list[Value]) -> Value:
    """The greatest of xs."""
    out = xs[0]
    for x in xs[1:]:
        out = z3.If(x > out, x, out) if _sym(x, out) else max(out, x)
    return out


def where_value(c: Value, t: Value, f: Value) -> Value:
    """t when c holds, else f."""
    return z3.If(c, t, f) if _sym(c, t, f) else (t if c else f)


def _sum(xs: list[Value]) -> Value:
    out: Value = 0
    for x in xs:
        out = out + x
    return out


def _product(xs: list[Value]) -> Value:
    out: Value = 1
    for x in xs:
        out = out * x
    return out


def _all(xs: list[Value]) -> Value:
    return z3.And(*xs) if _sym(*xs) else all(xs)


def _any(xs: list[Value]) -> Value:
    return z3.Or(*xs) if _sym(*xs) else any(xs)


def _not(x: Value) -> Value:
    return z3.Not(x) if _sym(x) else not x


COMPARE = {
    Op.EQ: lambda a, b: a == b, Op.NE: lambda a, b: a != b, Op.LT: lambda a, b: a < b,
    Op.LE: lambda a, b: a <= b, Op.GT: lambda a, b: a > b, Op.GE: lambda a, b: a >= b,
}
VARIADIC = {Op.ADD: _sum, Op.MUL: _product, Op.MIN: min_value, Op.MAX: max_value,
            Op.AND: _all, Op.OR: _any}
BINARY = {Op.FLOOR_DIV: floor_div_value, Op.CLEAN_DIV: floor_div_value,
          Op.CEIL_DIV: ceil_div_value, Op.MOD: mod_value, Op.PYTHON_MOD: python_mod_value}
ARITY = {Op.POW: 2, Op.NEG: 1, Op.NOT: 1, Op.WHERE: 3, Op.MODULAR_INDEXING: 3,
         **{op: 2 for op in (*COMPARE, *BINARY)}}
MEANT = {*VARIADIC, *ARITY, Op.INTEGER, Op.SYMBOL, Op.BOOL_TRUE, Op.BOOL_FALSE}
"""The operators with an integer (or truth) meaning; any other node has none here."""


def symbol_value(node: Any, symbols: dict[int, Value]) -> Value:
    """The value bound to the node's symbol id: `symbols[id]`, or a fresh z3 Int s<id>."""
    if node.symbol_id not in symbols:
        symbols[node.symbol_id] = z3.Int(f"s{node.symbol_id}")
    return symbols[node.symbol_id]


def evaluate(node: Any, symbols: dict[int, Value], lift: bool = False) -> Value:
    """The meaning of `node`: a Python int/bool when every symbol is bound to an int and not
    `lift`, else a z3 term (unbound symbols become z3 Ints s<id>). ValueError for an op
    without a meaning."""
    op = Op(node.op)
    if op not in MEANT:
        raise ValueError(f"op: {op.name} has no integer meaning")
    if op in ARITY and len(node.args) != ARITY[op]:
        raise ValueError(f"args: {op.name} takes {ARITY[op]} arguments, not {len(node.args)}")
    if op is Op.INTEGER:
        return z3.IntVal(node.payload) if lift else node.payload
    if op is Op.SYMBOL:
        return symbol_value(node, symbols)
    if op in (Op.BOOL_TRUE, Op.BOOL_FALSE):
        return z3.BoolVal(op is Op.BOOL_TRUE) if lift else op is Op.BOOL_TRUE
    if op is Op.POW:
        base, exp = node.args
        power = exp.payload if Op(exp.op) is Op.INTEGER else evaluate(exp, symbols, lift)
        return pow_value(evaluate(base, symbols, lift), power)
    args = [evaluate(a, symbols, lift) for a in node.args]
    if op in VARIADIC:
        if not args:
            raise ValueError(f"args: {op.name} of no arguments")
        return VARIADIC[op](args)
    if op in COMPARE:
        return COMPARE[op](*args)
    if op in BINARY:
        return BINARY[op](*args)
    if op is Op.NEG:
        return -args[0]
    if op is Op.NOT:
        return _not(args[0])
    if op is Op.WHERE:
        return where_value(*args)
    return modular_indexing_value(*args)


def to_z3(node: Any, symbols: dict[int, Value]) -> Value:
    """The meaning of `node` as a z3 term; `symbols` maps symbol ids to z3 Ints (filled as
    symbols are met)."""
    return evaluate(node, symbols, lift=True)


def flag_claims(flags: int, x: Value) -> Value:
    """What the sign, zero and parity flags state about the value x."""
    f = ExprFlags(flags)
    facts = []
    for bit, holds in ((ExprFlags.IS_POSITIVE, x > 0), (ExprFlags.IS_NEGATIVE, x < 0),
                       (ExprFlags.IS_NONNEGATIVE, x >= 0), (ExprFlags.IS_NONPOSITIVE, x <= 0),
                       (ExprFlags.IS_ZERO, x == 0), (ExprFlags.IS_EVEN, x % 2 == 0),
                       (ExprFlags.IS_ODD, x % 2 == 1)):
        if bit in f:
            facts.append(holds)
    return z3.And(True, *facts)


def declared_range(flags: int, x: Value) -> Value:
    """What a symbol's assumption flags declare about its value x, within i64."""
    return z3.And(x >= INT64_MIN, x <= INT64_MAX, flag_claims(flags, x))


def symbols_of(node: Any, out: dict[tuple[int, int], Any] | None = None
               ) -> dict[tuple[int, int], Any]:
    """Every SYMBOL node under `node`, by (symbol id, flags): one id declared with two sets of
    flags is two nodes of one value, bound by both declarations."""
    out = {} if out is None else out
    if Op(node.op) is Op.SYMBOL:
        out.setdefault((node.symbol_id, node.flags), node)
    for a in node.args:
        symbols_of(a, out)
    return out


def ranges(nodes: list[Any], symbols: dict[int, Value]) -> Value:
    """The declared range of every symbol under `nodes`, as one z3 conjunction."""
    found: dict[tuple[int, int], Any] = {}
    for n in nodes:
        symbols_of(n, found)
    return z3.And(True, *(declared_range(s.flags, symbol_value(s, symbols))
                          for s in found.values()))
