"""Chapter 14: the table of ExprPool's integer rewrite rules (§5.7), one row per numbered rule,
each with the left-hand sides it is checked on (spec/crucible/expr/rules states the check).

Constants come from declared finite sets (DIVIDENDS, DIVISORS, MODULI); x, y are any integer,
p, q positive, e even and o odd. Rows in the order of §5.7, then the identities of a divisor
that may be zero (E14.505).
"""

from __future__ import annotations

from itertools import product

from .divide import E14_501, E14_502, E14_503, E14_504, E14_505, E14_550, E14_551, E14_552
from .pool import ExprPool, Node
from .rules import DIVIDENDS, DIVISORS, MODULI, Rule

P = ExprPool
S = dict[str, Node]


def _ints(pool: P, *vs: int) -> tuple[Node, ...]:
    return tuple(pool.integer(v) for v in vs)


def _small_pairs(pool: P, _s: S) -> list[tuple[Node, ...]]:
    return [_ints(pool, a, b) for a, b in product(DIVIDENDS, (*DIVISORS, 5))]


def _add_n(p: P, s: S) -> list[tuple[Node, ...]]:
    x, y = s["x"], s["y"]
    sum_xy = p.add(x, y)
    return [(x, y, p.integer(3), x), (p.mul(p.integer(2), sum_xy), p.neg(sum_xy), y),
            (sum_xy, p.mul(p.integer(2), sum_xy), p.neg(sum_xy)),
            (p.mul(p.integer(5), p.mul(x, y)), p.mul(p.integer(7), p.mul(y, x))),
            (p.integer(4), p.integer(-4)), (p.mul(p.integer(2), x), p.mul(p.integer(-2), x), y)]


def _floor_div_sum(p: P, s: S) -> list[tuple[Node, ...]]:
    x, y = s["x"], s["y"]
    out = []
    for k, c, d in product((4, 6, -4, 12), (8, 3, -5, 12), DIVISORS):
        out.append((p.add(p.mul(p.integer(k), x), p.integer(c)), p.integer(d)))
    for k, d in product((4, -4, 12), DIVISORS):
        out.append((p.add(p.mul(p.integer(k), x), y), p.integer(d)))
    return out


def _nested(sign: int):
    def build(p: P, s: S) -> list[tuple[Node, ...]]:
        out = [(p.floor_div(s["x"], p.integer(b)), p.integer(c))
               for b, c in product(DIVISORS, DIVISORS)
               if abs(b) != 1 and abs(c) != 1 and c * sign > 0]
        if sign < 0:  # a divisor not known positive: y mod q is non-negative, maybe 0
            out.append((p.floor_div(s["x"], p.integer(2)), p.mod(s["y"], s["q"])))
        return out
    return build


def _gcd(p: P, s: S) -> list[tuple[Node, ...]]:
    x, y, q = s["x"], s["y"], s["q"]
    out = [(p.mul(p.integer(k), x), p.integer(d)) for k, d in product((6, -6, 4), (4, -4, 6))]
    out += [(p.add(p.mul(p.integer(6), x), p.mul(p.integer(9), y)), p.integer(d))
            for d in (6, 3)]
    out.append((p.mul(p.integer(2), x), p.mul(p.integer(4), q)))
    return out + [_ints(p, v, 0) for v in (7, -6, 0)]


def _ceil_div(sign: int):
    def build(p: P, s: S) -> list[tuple[Node, ...]]:
        x, q = s["x"], s["q"]
        ds = [p.integer(d) for d in DIVISORS if d * sign > 0] + ([q] if sign > 0 else [])
        return [(x, d) for d in ds] + [(p.add(x, p.integer(5)), d) for d in ds]
    return build


def _by_zero(p: P, s: S) -> list[tuple[Node, ...]]:
    zero = p.integer(0)
    return [(s["x"], zero), (zero, zero), (p.integer(7), zero), (s["q"], zero)]


def _maybe_zero(p: P, s: S) -> list[tuple[Node, ...]]:
    x, y = s["x"], s["y"]
    return [(p.integer(0), x), (x, x), (p.integer(7), x), (y, x), (p.add(x, y), p.add(x, y))]


def _mi_maybe_zero(p: P, s: S) -> list[tuple[Node, ...]]:
    x, y, q = s["x"], s["y"], s["q"]
    return [(p.integer(0), x, q), (y, x, p.integer(1)), (p.integer(0), q, x),
            (p.integer(7), p.integer(4), x)]


def _mod_identities(p: P, s: S) -> list[tuple[Node, ...]]:
    x, q, e, o = s["x"], s["q"], s["e"], s["o"]
    return [(p.integer(0), q), (q, q), (x, p.integer(1)), (e, p.integer(2)),
            (o, p.integer(2)), (p.integer(7), p.integer(-3)), (x, q)]


def _mi_fold(sign: int):
    def build(p: P, s: S) -> list[tuple[Node, ...]]:
        return [_ints(p, b, d, m) for b, d, m in product(DIVIDENDS, (2, -2, 3), MODULI)
                if m * sign > 0]
    return build


def _mi_gcd(p: P, s: S) -> list[tuple[Node, ...]]:
    x = s["x"]
    out = [(p.mul(p.integer(k), x), p.integer(d), p.integer(5))
           for k, d in product((6, -6), (4, -4, 6))]
    return [*out, _ints(p, 7, 0, 4), _ints(p, 0, 0, 4)]


def _mi_sum(p: P, s: S) -> list[tuple[Node, ...]]:
    x, y = s["x"], s["y"]
    out = []
    for k, d, m in product((8, 12, 24, -8), (1, 2, -2), (4, -4)):
        out.append((p.add(p.mul(p.integer(k), x), y), p.integer(d), p.integer(m)))
        out.append((p.add(p.mul(p.integer(k), x), p.integer(8)), p.integer(d), p.integer(m)))
    return out


def _mi_nested(sign: int):
    def build(p: P, s: S) -> list[tuple[Node, ...]]:
        return [(p.floor_div(s["x"], p.integer(b)), p.integer(d), p.integer(4))
                for b, d in product((2, -2, 3), (-3, -1, 2, 3)) if d * sign > 0]
    return build


RULES: tuple[Rule, ...] = (
    Rule("add", "1", "two non-constant non-sums: x + x = 2x, else ADD(l, r)",
         lambda p, s: [(s["x"], s["x"]), (s["x"], s["y"]), (s["p"], s["x"])]),
    Rule("add", "2", "two INTEGERs fold to their sum",
         lambda p, s: [_ints(p, a, b) for a, b in product(DIVIDENDS, DIVIDENDS)]),
    Rule("add", "3", "0 + r = r, l + 0 = l",
         lambda p, s: [(p.integer(0), p.mul(p.integer(2), s["x"])),
                       (p.add(s["x"], s["y"]), p.integer(0))]),
    Rule("add", "4", "the n-ary sum: flatten, split coefficients, merge equal bases",
         lambda p, s: [(p.mul(p.integer(2), s["x"]), p.mul(p.integer(3), s["x"])),
                       (s["x"], p.neg(s["x"])), (p.add(s["x"], s["y"]), p.integer(3)),
                       (p.mul(p.integer(2), p.mul(s["x"], s["y"])), p.mul(s["x"], s["y"]))]),
    Rule("add_n", "1-6", "phases 1-3: one level flattened, integer coefficients merged per "
         "base (nested sums kept), zero totals dropped, the constant last", _add_n),
    Rule("mul", "1", "two non-constant non-products: MUL(l, r)",
         lambda p, s: [(s["x"], s["y"]), (s["x"], s["x"]), (p.add(s["x"], s["y"]), s["x"])]),
    Rule("mul", "2", "two INTEGERs fold to their product",
         lambda p, s: [_ints(p, a, b) for a, b in product(DIVIDENDS, DIVIDENDS)]),
    Rule("mul", "3-4", "0 * r = 0, 1 * r = r (and mirrored)",
         lambda p, s: [(p.integer(0), p.mul(p.integer(2), s["x"])),
                       (p.mul(s["x"], s["y"]), p.integer(0)),
                       (p.integer(1), p.mul(p.integer(3), s["x"])),
                       (p.mul(p.integer(3), s["x"]), p.integer(1))]),
    Rule("mul", "5", "the n-ary product: flatten one level, fold the constants",
         lambda p, s: [(p.integer(3), p.mul(s["x"], p.integer(4))),
                       (p.mul(p.integer(-1), s["x"]), p.mul(p.integer(-1), s["y"])),
                       (p.mul(p.integer(2), s["x"]), p.mul(p.integer(0), s["y"]))]),
    Rule("mul_n", "1", "repeated factors kept, constants multiplied",
         lambda p, s: [(s["x"], s["y"], p.integer(3), s["x"]),
                       (p.integer(2), s["x"], p.integer(-3), p.mul(s["y"], p.integer(5)))]),
    Rule("pow", "1-4", "x^0 = 1, x^1 = x, INTEGER^(0..62) folds, else POW(b, e)",
         lambda p, s: [(s["x"], p.integer(0)), (s["x"], p.integer(1)), (s["x"], p.integer(2)),
                       *(_ints(p, b, e) for b, e in product((-3, 0, 2, 5), (0, 1, 2, 3)))]),
    Rule("neg", "1-2", "-INTEGER folds; else mul(-1, e), so neg(neg(x)) = x",
         lambda p, s: [(p.integer(7),), (p.integer(-128),), (s["x"],), (p.neg(s["x"]),),
                       (p.add(s["x"], p.integer(3)),)]),
    Rule("floor_div", "1", "two INTEGERs fold to Python's floor quotient", _small_pairs),
    Rule("floor_div", "2-5", "0 // r = 0, l // 1 = l, l // -1 = -l, l // l = 1 (r positive)",
         lambda p, s: [(p.integer(0), s["q"]), (s["x"], p.integer(1)),
                       (s["x"], p.integer(-1)), (s["q"], s["q"]),
                       (p.add(s["x"], s["y"]), p.integer(-1))]),
    Rule("floor_div", "6", "(a // b) // c = a // (b c), c > 0", _nested(1)),
    Rule("floor_div", "6 (c < 0)", "(a // b) // c stays nested for c < 0 or c not known "
         "positive (the seed merges it into a // (b c))", _nested(-1),
         seed=E14_550),
    Rule("floor_div", "7", "(q d + rest) // d = q + rest // d for an INTEGER d",
         _floor_div_sum, seed=E14_501),
    Rule("floor_div", "8", "a common integer factor of both sides cancels (not a zero divisor)",
         _gcd, seed=E14_502),
    Rule("floor_div", "9", "FLOOR_DIV(l, r) as given",
         lambda p, s: [(s["x"], s["q"]), (s["x"], p.integer(3)), (s["x"], p.integer(-3))]),
    Rule("clean_div", "1", "clean_div is floor_div",
         lambda p, s: [(s["x"], s["q"]), (p.add(p.mul(p.integer(4), s["x"]), p.integer(3)),
                                          p.integer(4)), _ints(p, 7, -2), (s["q"], s["x"])]),
    Rule("ceil_div", "1", "two INTEGERs fold to the ceiling", _small_pairs),
    Rule("ceil_div", "2", "else floor_div(l + (r - 1), r), r > 0", _ceil_div(1)),
    Rule("ceil_div", "2 (r < 0)", "else floor_div(l + (r + 1), r), r < 0 (the seed: r - 1)",
         _ceil_div(-1),
         seed=E14_551),
    Rule("mod", "0", "a divisor of INTEGER 0 is left as MOD(l, 0), flagged integer only",
         _by_zero, seed=E14_504),
    Rule("mod", "1", "two INTEGERs with r > 0 fold to the non-negative remainder",
         lambda p, s: [_ints(p, a, b) for a, b in product(DIVIDENDS, (1, 2, 3, 4, 5))],
         seed=E14_503),
    Rule("mod", "2-4", "0 mod r, l mod l, l mod 1 are 0; mod 2 by a parity flag",
         _mod_identities),
    Rule("python_mod", "0", "a divisor of INTEGER 0 is left as PYTHON_MOD(l, 0)", _by_zero,
         seed=E14_504),
    Rule("python_mod", "1", "two INTEGERs fold to Python's %", _small_pairs),
    Rule("python_mod", "2-4", "0 % r, l % l, l % 1 are 0; % 2 by a parity flag",
         _mod_identities),
    Rule("modular_indexing", "1", "b = 0 or m = 1 gives 0",
         lambda p, s: [(p.integer(0), s["p"], s["q"]), (s["x"], s["p"], p.integer(1)),
                       (s["x"], p.integer(-3), p.integer(1))]),
    Rule("modular_indexing", "2", "three INTEGERs fold, m > 0", _mi_fold(1)),
    Rule("modular_indexing", "2 (m < 0)", "three INTEGERs fold into [0, |m|), m < 0",
         _mi_fold(-1),
         seed=E14_552),
    Rule("modular_indexing", "3", "a common factor of b and d cancels (not a zero divisor)",
         _mi_gcd, seed=E14_502),
    Rule("modular_indexing", "4", "terms of a sum whose coefficient m d divides drop",
         _mi_sum),
    Rule("modular_indexing", "5", "(a // c) mod-indexed by d is a mod-indexed by c d, d > 0",
         _mi_nested(1)),
    Rule("modular_indexing", "5 (d < 0)", "(a // c) mod-indexed by d stays nested for d < 0 "
         "(the seed merges it)", _mi_nested(-1), seed=E14_550),
    Rule("min_expr", "1-3", "l == r gives l; INTEGERs fold; else one level flattened, sorted, "
         "deduplicated", lambda p, s: [(s["x"], s["x"]), _ints(p, 3, -7),
                                       (p.integer(3), p.min_expr(s["x"], p.integer(5))),
                                       (s["x"], p.min_expr(s["y"], s["x"]))]),
    Rule("max_expr", "1-3", "l == r gives l; INTEGERs fold; else one level flattened, sorted, "
         "deduplicated", lambda p, s: [(s["x"], s["x"]), _ints(p, 3, -7),
                                       (p.integer(3), p.max_expr(s["x"], p.integer(5))),
                                       (s["x"], p.max_expr(s["y"], s["x"]))]),
    Rule("where", "1-4", "true picks t, false picks f, t == f gives t, else WHERE(c, t, f)",
         lambda p, s: [(p.bool_true(), s["x"], s["y"]), (p.bool_false(), s["x"], s["y"]),
                       (p.lt(s["x"], s["y"]), s["x"], s["x"]),
                       (p.lt(s["x"], s["y"]), s["x"], s["y"])]),
    Rule("eq", "1-3", "l == l is true, INTEGERs compare, else EQ in canonical order",
         lambda p, s: [(s["x"], s["x"]), _ints(p, 3, 4), _ints(p, 4, 4), (s["y"], s["x"])]),
    Rule("lt", "1-3", "l < l is false, INTEGERs compare, else LT as given",
         lambda p, s: [(s["x"], s["x"]), _ints(p, 3, 4), _ints(p, -4, -7), (s["y"], s["x"])]),
    Rule("le", "1-3", "l <= l is true, INTEGERs compare, else LE as given",
         lambda p, s: [(s["x"], s["x"]), _ints(p, 3, 4), _ints(p, 4, 3), (s["y"], s["x"])]),
    Rule("floor_div", "2, 5 (r may be 0)", "0 // r and l // l stay FLOOR_DIV for r not known "
         "non-zero (the seed folds them to 0 and 1)", _maybe_zero, seed=E14_505),
    Rule("mod", "2-3 (r may be 0)", "0 mod r and l mod l stay MOD, flagged integer only, for r "
         "not known non-zero (the seed folds them to 0)", _maybe_zero, seed=E14_505),
    Rule("python_mod", "2-3 (r may be 0)", "0 % r and l % l stay PYTHON_MOD for r not known "
         "non-zero (the seed folds them to 0)", _maybe_zero, seed=E14_505),
    Rule("modular_indexing", "1 (d or m may be 0)", "b = 0 and m = 1 stay MODULAR_INDEXING, "
         "flagged integer only where m may be 0, for d or m not known non-zero (the seed folds "
         "them to 0)", _mi_maybe_zero, seed=E14_505),
)
RULE = {r.name: r for r in RULES}
