"""Chapter 14: ExprPool's division and modulus constructors (facts §5.7), each rule one step
in the listed order; constants fold through expr_arith (Python floor division and modulo
built on C's truncating `/` and `%`).

floor_div(l, r): 0. a divisor of INTEGER 0 is left as FLOOR_DIV(l, 0) (E14.502); 1. two
  INTEGERs fold; 2. 0 // r = 0 for r known non-zero (positive or negative; the seed: any r,
  E14.505); 3. l // 1 = l; 4. l // -1 = neg(l); 5. l // l = 1, l known non-zero (E14.505);
  6. (a // b) // r = a // (b * r) for a positive r (E14.550); 7. a sum over a positive
  INTEGER d (E14.501): terms whose coefficient d divides leave as quotients, the rest stay
  under the division; 8. a common integer factor g > 1 of both sides cancels;
  9. FLOOR_DIV(l, r).
ceil_div: two INTEGERs fold; else floor_div(l + (r - 1), r) for a positive r,
  floor_div(l + (r + 1), r) for a negative one, -floor_div(-l, r) for a divisor of unknown
  sign (E14.551). clean_div is floor_div.
mod / python_mod: 0. a divisor of INTEGER 0 is left as the node, flagged integer only
  (E14.504); 1. fold (mod: for r > 0, non-negative, E14.503; python_mod: r's sign); 2-4.
  0 % r and l % l are 0 for r known non-zero (E14.505), l % 1 is 0, a parity flag answers
  % 2; 5. the node (MOD: non-negative for r known non-zero, E14.505).
modular_indexing(b, d, m) = (b // d) mod m: 0. d of INTEGER 0 is left (E14.502); 1. b = 0 or
  m = 1: 0, for d and m known non-zero (E14.505); 2. three INTEGERs fold, never below zero
  (E14.552); 3. a common factor of b and d cancels; 4. terms of a sum that m*d divides drop;
  5. (a // c) // d = a // (c * d) for a positive d (E14.550); 6. the node (non-negative for
  m known non-zero, E14.505).
"""

from __future__ import annotations

from .arith import (
    c_div,
    c_rem,
    ceil_div_fold,
    floor_div_fold,
    modular_indexing_fold,
    modular_indexing_fold_seed,
    mul_wrap,
    python_mod_fold,
)
from .canon import Node
from .node import ExprFlags, Op

E14_501 = "E14.501"
E14_502 = "E14.502"
E14_503 = "E14.503"
E14_504 = "E14.504"
E14_505 = "E14.505"
E14_550 = "E14.550"
E14_551 = "E14.551"
E14_552 = "E14.552"
_DIVS = (Op.FLOOR_DIV, Op.CLEAN_DIV)


def gcd(a: int, b: int) -> int:
    """Euclid on |a|, |b|: gcd(x, 0) = |x|, gcd(0, 0) = 0."""
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a


def integer_coefficient(e: Node) -> int:
    """INTEGER: its value; MUL: its first INTEGER child's value, else 1; anything else: 1."""
    if e.op == Op.INTEGER:
        return e.payload
    if e.op == Op.MUL:
        return next((c.payload for c in e.args if c.op == Op.INTEGER), 1)
    return 1


def integer_factor(e: Node) -> int:
    """ADD: the gcd of its terms' |coefficients| (0 becomes 1); else |coefficient|."""
    if e.op == Op.ADD:
        g = 0
        for t in e.args:
            g = gcd(g, integer_coefficient(t))
        return g or 1
    return abs(integer_coefficient(e))


class DivideMixin:
    """floor_div, clean_div, ceil_div, mod, python_mod, modular_indexing; `self` is a pool."""

    def divide_coefficients(self, e: Node, g: int) -> Node:
        """e with its integer coefficients divided (truncating) by g; g <= 1 leaves e."""
        if g <= 1:
            return e
        if e.op == Op.INTEGER:
            return self.integer(c_div(e.payload, g))
        if e.op == Op.MUL:
            i = next((i for i, c in enumerate(e.args) if c.op == Op.INTEGER), None)
            if i is None:
                return e
            new = c_div(e.args[i].payload, g)
            if new == 1 and len(e.args) == 2:
                return e.args[1 - i]
            return self.mul_n([*e.args[:i], self.integer(new), *e.args[i + 1:]])
        if e.op == Op.ADD:
            return self.add_n([self.divide_coefficients(t, g) for t in e.args])
        return e

    # ── floor_div ────────────────────────────────────────────────────────────────────────────

    def floor_div(self, lhs: Node, rhs: Node) -> Node:
        """Rules 0-9 of floor_div."""
        if rhs.is_int(0) and E14_502 not in self.errata:  # 0
            return self.floor_div_node(lhs, rhs)
        if lhs.op == rhs.op == Op.INTEGER and rhs.payload != 0:  # 1
            return self.integer(floor_div_fold(lhs.payload, rhs.payload))
        if lhs.is_int(0) and self.nonzero(rhs):  # 2
            return self.integer(0)
        if rhs.is_int(1):  # 3
            return lhs
        if rhs.is_int(-1):  # 4
            return self.neg(lhs)
        if lhs is rhs and self.nonzero(rhs):  # 5
            return self.integer(1)
        if lhs.op in _DIVS and self.merges_divisors(rhs):  # 6
            return self.floor_div(lhs.args[0], self.mul(lhs.args[1], rhs))
        if lhs.op == Op.ADD and rhs.op == Op.INTEGER and self.sum_rule_applies(rhs.payload):  # 7
            split = self.floor_div_sum(lhs, rhs)
            if split is not None:
                return split
        g = gcd(integer_factor(lhs), integer_factor(rhs))  # 8
        if g > 1:
            return self.floor_div(self.divide_coefficients(lhs, g),
                                  self.divide_coefficients(rhs, g))
        return self.floor_div_node(lhs, rhs)  # 9

    def merges_divisors(self, outer: Node) -> bool:
        """Rule 6 needs a positive outer divisor (the seed: any, E14.550)."""
        return bool(outer.flags & ExprFlags.IS_POSITIVE) or E14_550 in self.errata

    def sum_rule_applies(self, d: int) -> bool:
        """Rule 7 needs a positive divisor (the seed: any non-zero one, E14.501)."""
        return d > 0 or (d != 0 and E14_501 in self.errata)

    def floor_div_sum(self, lhs: Node, rhs: Node) -> Node | None:
        """Rule 7: (q*d + rest) // d = q + rest // d over the terms whose coefficient d
        divides; None when there is no such term."""
        d = rhs.payload
        quotients, remainders = [], []
        for t in lhs.args:
            c = integer_coefficient(t)
            if c != 0 and c_rem(c, d) == 0:
                quotients.append(self.divide_coefficients(t, d))
            else:
                remainders.append(t)
        if not quotients:
            return None
        qsum = quotients[0] if len(quotients) == 1 else self.add_n(quotients)
        if not remainders:
            return qsum
        rsum = remainders[0] if len(remainders) == 1 else self.add_n(remainders)
        return self.add(qsum, self.floor_div(rsum, rhs))

    def floor_div_node(self, lhs: Node, rhs: Node) -> Node:
        """Rule 9: FLOOR_DIV(lhs, rhs), integer, non-negative when lhs is and rhs is positive."""
        nonneg = lhs.flags & ExprFlags.IS_NONNEGATIVE and rhs.flags & ExprFlags.IS_POSITIVE
        flags = int(ExprFlags.IS_INTEGER) | (int(ExprFlags.IS_NONNEGATIVE) if nonneg else 0)
        return self.intern_node(Op.FLOOR_DIV, (lhs, rhs), flags)

    def clean_div(self, lhs: Node, rhs: Node) -> Node:
        """floor_div: no CLEAN_DIV node is ever made."""
        return self.floor_div(lhs, rhs)

    def ceil_div(self, lhs: Node, rhs: Node) -> Node:
        """Two INTEGERs fold to the ceiling; else a floor division by the divisor's sign:
        (lhs + (rhs - 1)) // rhs for rhs > 0 (the seed's for any rhs, E14.551),
        (lhs + (rhs + 1)) // rhs for rhs < 0, -((-lhs) // rhs) when the sign is unknown."""
        if lhs.op == rhs.op == Op.INTEGER and rhs.payload != 0:
            return self.integer(ceil_div_fold(lhs.payload, rhs.payload))
        if rhs.flags & ExprFlags.IS_POSITIVE or E14_551 in self.errata:
            return self.floor_div(self.add(lhs, self.add(rhs, self.integer(-1))), rhs)
        if rhs.flags & ExprFlags.IS_NEGATIVE:
            return self.floor_div(self.add(lhs, self.add(rhs, self.integer(1))), rhs)
        return self.neg(self.floor_div(self.neg(lhs), rhs))

    # ── mod, python_mod ──────────────────────────────────────────────────────────────────────

    def mod(self, lhs: Node, rhs: Node) -> Node:
        """A zero divisor left as MOD(lhs, 0), flagged integer only (E14.504); fold for rhs > 0
        (floor modulo, non-negative; the seed: C's remainder, E14.503), then the shared
        identities, else MOD(lhs, rhs) flagged integer, and non-negative where rhs is known
        non-zero (the seed: always, E14.505)."""
        if self.by_zero(rhs):
            return self.intern_node(Op.MOD, (lhs, rhs), ExprFlags.IS_INTEGER)
        if lhs.op == rhs.op == Op.INTEGER and rhs.payload > 0:
            fold = c_rem if E14_503 in self.errata else python_mod_fold
            return self.integer(fold(lhs.payload, rhs.payload))
        flags = 0x0021 if self.nonzero(rhs) else ExprFlags.IS_INTEGER
        return self.mod_identities(lhs, rhs) or self.intern_node(Op.MOD, (lhs, rhs), flags)

    def python_mod(self, lhs: Node, rhs: Node) -> Node:
        """A zero divisor left (E14.504); fold with rhs's sign, then the shared identities, else
        PYTHON_MOD(lhs, rhs) (integer)."""
        if self.by_zero(rhs):
            return self.intern_node(Op.PYTHON_MOD, (lhs, rhs), ExprFlags.IS_INTEGER)
        if lhs.op == rhs.op == Op.INTEGER and rhs.payload != 0:
            return self.integer(python_mod_fold(lhs.payload, rhs.payload))
        return self.mod_identities(lhs, rhs) or self.intern_node(Op.PYTHON_MOD, (lhs, rhs), 0x0001)

    def by_zero(self, rhs: Node) -> bool:
        """Rule 0 of mod and python_mod: the divisor is INTEGER 0, whose remainder has no value
        to simplify towards (the seed simplifies it all the same, E14.504)."""
        return rhs.is_int(0) and E14_504 not in self.errata

    def nonzero(self, rhs: Node) -> bool:
        """Rules 2 and 5 of floor_div and the zero remainders need a divisor flagged positive
        or negative: 0 // z and z // z have no value at z = 0 (the seed: any divisor,
        E14.505)."""
        sign = ExprFlags.IS_POSITIVE | ExprFlags.IS_NEGATIVE
        return bool(rhs.flags & sign) or E14_505 in self.errata

    def mod_identities(self, lhs: Node, rhs: Node) -> Node | None:
        """0 % r and l % l are 0 for r known non-zero, l % 1 is 0; l % 2 is 0 or 1 when l
        carries a parity flag."""
        if ((lhs.is_int(0) or lhs is rhs) and self.nonzero(rhs)) or rhs.is_int(1):
            return self.integer(0)
        if rhs.is_int(2) and lhs.flags & ExprFlags.IS_EVEN:
            return self.integer(0)
        if rhs.is_int(2) and lhs.flags & ExprFlags.IS_ODD:
            return self.integer(1)
        return None

    # ── modular_indexing ─────────────────────────────────────────────────────────────────────

    def modular_indexing(self, b: Node, d: Node, m: Node) -> Node:
        """Rules 0-6 of modular_indexing."""
        node = self.intern_node(Op.MODULAR_INDEXING, (b, d, m), self.index_flags(m)) \
            if d.is_int(0) and E14_502 not in self.errata else None  # 0
        if node is not None:
            return node
        if (b.is_int(0) or m.is_int(1)) and self.nonzero(d) and self.nonzero(m):  # 1
            return self.integer(0)
        if b.op == d.op == m.op == Op.INTEGER and d.payload != 0 and m.payload != 0:  # 2
            fold = modular_indexing_fold_seed if E14_552 in self.errata \
                else modular_indexing_fold
            return self.integer(fold(b.payload, d.payload, m.payload))
        if not d.is_int(1):  # 3
            g = gcd(integer_factor(b), integer_factor(d))
            if g > 1:
                return self.modular_indexing(self.divide_coefficients(b, g),
                                             self.divide_coefficients(d, g), m)
        if b.op == Op.ADD and m.op == d.op == Op.INTEGER:  # 4
            md = mul_wrap(m.payload, d.payload)
            kept = [t for t in b.args if md <= 0 or integer_coefficient(t) == 0
                    or c_rem(integer_coefficient(t), md) != 0]
            if md > 0 and len(kept) < len(b.args):
                if not kept:
                    return self.integer(0)
                rest = kept[0] if len(kept) == 1 else self.add_n(kept)
                return self.modular_indexing(rest, d, m)
        if b.op in _DIVS and self.merges_divisors(d):  # 5
            return self.modular_indexing(b.args[0], self.mul(b.args[1], d), m)
        return self.intern_node(Op.MODULAR_INDEXING, (b, d, m), self.index_flags(m))  # 6

    def index_flags(self, m: Node) -> int:
        """A MODULAR_INDEXING node is non-negative where its modulus is known non-zero (the
        seed: any modulus, E14.505)."""
        return 0x0021 if self.nonzero(m) else ExprFlags.IS_INTEGER
