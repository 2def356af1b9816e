"""Chapter 14: ExprPool's arithmetic constructors (facts §5.7): add, add_n, mul, mul_n, pow,
neg, min/max and the generic make. Each rule is one step, tried in the listed order; integer
folding is the wrapping i64 arithmetic of expr_arith.

add(l, r): 1. neither is ADD, MUL, INTEGER or FLOAT: l is r gives mul(2, l), else ADD(l, r)
  in canonical order; 2. two INTEGERs or two FLOATs fold; 3. a zero INTEGER drops out;
  4. add_n([l, r]).
add_n: 1. flatten one level of ADD, summing INTEGERs; 2. nothing else: the sum;
  3. split each term into (integer coefficient, base), a base of two or more factors being a
  fresh coefficient-free MUL; 4. merge equal bases by summing coefficients (0 drops, 1 is the
  bare base, else mul_n([total, base])); 5. a non-zero sum (or nothing left) joins as an
  INTEGER; 6. one item is itself, else ADD in canonical order.
mul(l, r) and mul_n are the same shape with products; repeated factors are kept.
min/max: equal operands, two INTEGERs, else flatten one level, sort, drop adjacent duplicates.
"""

from __future__ import annotations

import struct as pystruct
from typing import Any

from ...core.errors import InvalidInput
from .arith import add_wrap, mul_wrap, wrap64
from .node import Op

Node = Any  # expr_pool.Node (that module joins these mixins)
MAX_SUM_TERMS = 254
"""add_n / mul_n hold at most 254 terms. Real code: `ExprPool.h`, the 256-entry buffer and
its `< 255` assertion."""
MAX_MINMAX_TERMS = 64
"""min_n / max_n buffer. Real code: `ExprPool.h` (unchecked there; the spec refuses more)."""
POW_FOLD_MAX = 62
"""pow folds INTEGER exponents 0..62 by repeated multiplication."""
_ADDISH = {Op.ADD, Op.MUL, Op.INTEGER, Op.FLOAT}
_MULISH = {Op.MUL, Op.INTEGER, Op.FLOAT}


def _bounded(buf: list, limit: int, what: str) -> None:
    if len(buf) > limit:
        raise InvalidInput(f"args.expr: {what} of more than {limit} terms")


class CanonMixin:
    """add, mul, pow, neg, min, max and make; `self` is an ExprPool."""

    # ── add ──────────────────────────────────────────────────────────────────────────────────

    def add(self, lhs: Node, rhs: Node) -> Node:
        """Rules 1-4 of add."""
        if lhs.op not in _ADDISH and rhs.op not in _ADDISH:  # 1
            return self.mul(self.integer(2), lhs) if lhs is rhs else \
                self.intern_composite(Op.ADD, self.order(lhs, rhs))
        if lhs.op == rhs.op == Op.INTEGER:  # 2
            return self.integer(add_wrap(lhs.payload, rhs.payload))
        if lhs.op == rhs.op == Op.FLOAT:
            return self.float_(self.float_value(lhs) + self.float_value(rhs))
        if lhs.is_int(0):  # 3
            return rhs
        if rhs.is_int(0):
            return lhs
        return self.add_n([lhs, rhs])  # 4

    def add_flatten(self, inputs: list[Node]) -> tuple[int, list[Node]]:
        """add_n step 1: one level of ADD spliced, INTEGERs summed."""
        int_sum, buf = 0, []
        for e in inputs:
            for t in (e.args if e.op == Op.ADD else (e,)):
                if t.op == Op.INTEGER:
                    int_sum = add_wrap(int_sum, t.payload)
                else:
                    buf.append(t)
        _bounded(buf, MAX_SUM_TERMS, "a sum")
        return int_sum, buf

    def coefficient_split(self, t: Node) -> tuple[int, Node | None]:
        """add_n step 3: (coefficient, base); base None when the term is a bare constant."""
        if t.op != Op.MUL:
            return 1, t
        coeff, factors = 1, []
        for c in t.args:
            if c.op == Op.INTEGER:
                coeff = c.payload
            else:
                factors.append(c)
        if not factors:
            return coeff, None
        if len(factors) == 1:
            return coeff, factors[0]
        return coeff, self.intern_composite(Op.MUL, factors)

    def merge_terms(self, pairs: list[tuple[int, Node]]) -> list[Node]:
        """add_n step 4: sum the coefficients of equal bases (in canonical base order)."""
        out: list[Node] = []
        pairs = sorted(pairs, key=lambda p: p[1].seq)
        i = 0
        while i < len(pairs):
            base, total = pairs[i][1], 0
            while i < len(pairs) and pairs[i][1] is base:
                total = add_wrap(total, pairs[i][0])
                i += 1
            if total == 1:
                out.append(base)
            elif total != 0:
                out.append(self.mul_n([self.integer(total), base]))
        return out

    def add_n(self, inputs: list[Node]) -> Node:
        """Steps 1-6 of add_n."""
        int_sum, buf = self.add_flatten(inputs)  # 1
        if not buf:  # 2
            return self.integer(int_sum)
        pairs = []
        for t in buf:  # 3
            coeff, base = self.coefficient_split(t)
            if base is None:
                int_sum = add_wrap(int_sum, coeff)
            else:
                pairs.append((coeff, base))
        items = self.merge_terms(pairs)  # 4
        if int_sum != 0 or not items:  # 5
            items.append(self.integer(int_sum))
        if len(items) == 1:  # 6
            return items[0]
        return self.intern_composite(Op.ADD, self.order(*items))

    # ── mul ──────────────────────────────────────────────────────────────────────────────────

    def mul(self, lhs: Node, rhs: Node) -> Node:
        """Rules 1-5 of mul."""
        if lhs.op not in _MULISH and rhs.op not in _MULISH:  # 1
            return self.intern_composite(Op.MUL, self.order(lhs, rhs))
        if lhs.op == rhs.op == Op.INTEGER:  # 2
            return self.integer(mul_wrap(lhs.payload, rhs.payload))
        if lhs.op == rhs.op == Op.FLOAT:
            return self.float_(self.float_value(lhs) * self.float_value(rhs))
        if lhs.is_int(0) or rhs.is_int(0):  # 3
            return self.integer(0)
        if lhs.is_int(1):  # 4
            return rhs
        if rhs.is_int(1):
            return lhs
        return self.mul_n([lhs, rhs])  # 5

    def mul_n(self, inputs: list[Node]) -> Node:
        """Flatten one level of MUL, multiply the INTEGERs; 0 absorbs; 1 drops unless alone."""
        int_prod, buf = 1, []
        for e in inputs:
            for t in (e.args if e.op == Op.MUL else (e,)):
                if t.op == Op.INTEGER:
                    int_prod = mul_wrap(int_prod, t.payload)
                else:
                    buf.append(t)
        _bounded(buf, MAX_SUM_TERMS, "a product")
        if int_prod == 0:
            return self.integer(0)
        if int_prod != 1 or not buf:
            buf.append(self.integer(int_prod))
        if len(buf) == 1:
            return buf[0]
        return self.intern_composite(Op.MUL, self.order(*buf))

    # ── pow, neg ─────────────────────────────────────────────────────────────────────────────

    def pow(self, b: Node, e: Node) -> Node:
        """x^0 = 1, x^1 = x, INTEGER^(0..62) folds wrapping, else POW(b, e)."""
        if e.is_int(0):
            return self.integer(1)
        if e.is_int(1):
            return b
        if b.op == e.op == Op.INTEGER and 0 <= e.payload <= POW_FOLD_MAX:
            acc = 1
            for _ in range(e.payload):
                acc = mul_wrap(acc, b.payload)
            return self.integer(acc)
        return self.intern_node(Op.POW, (b, e), b.flags & e.flags & 0x0006)

    def neg(self, e: Node) -> Node:
        """-v for constants, else mul(-1, e): no NEG node is ever made."""
        if e.op == Op.INTEGER:
            return self.integer(wrap64(-e.payload))
        if e.op == Op.FLOAT:
            return self.float_(-self.float_value(e))
        return self.mul(self.integer(-1), e)

    # ── min, max ─────────────────────────────────────────────────────────────────────────────

    def min_expr(self, lhs: Node, rhs: Node) -> Node:
        if lhs is rhs:
            return lhs
        if lhs.op == rhs.op == Op.INTEGER:
            return lhs if lhs.payload <= rhs.payload else rhs
        return self.minmax_n(Op.MIN, [lhs, rhs])

    def max_expr(self, lhs: Node, rhs: Node) -> Node:
        if lhs is rhs:
            return lhs
        if lhs.op == rhs.op == Op.INTEGER:
            return lhs if lhs.payload >= rhs.payload else rhs
        return self.minmax_n(Op.MAX, [lhs, rhs])

    def minmax_n(self, op: Op, inputs: list[Node]) -> Node:
        """Flatten one level of `op`, sort, drop adjacent duplicates; no constant folding."""
        buf = [t for e in inputs for t in (e.args if e.op == op else (e,))]
        _bounded(buf, MAX_MINMAX_TERMS, f"a {op.name}")
        kept: list[Node] = []
        for t in self.order(*buf):
            if not kept or kept[-1] is not t:
                kept.append(t)
        if len(kept) == 1:
            return kept[0]
        return self.intern_composite(op, kept)

    def min_n(self, inputs: list[Node]) -> Node:
        return self.minmax_n(Op.MIN, inputs)

    def max_n(self, inputs: list[Node]) -> Node:
        return self.minmax_n(Op.MAX, inputs)

    # ── make ─────────────────────────────────────────────────────────────────────────────────

    def make(self, op: Op, args: list[Node]) -> Node:
        """Dispatch to op's constructor; any other op is interned as given."""
        n_ary = {Op.ADD: self.add_n, Op.MUL: self.mul_n, Op.AND: self.and_n, Op.OR: self.or_n,
                 Op.MIN: self.min_n, Op.MAX: self.max_n}
        if op in n_ary:
            return n_ary[op](list(args))
        fixed = {Op.POW: self.pow, Op.NEG: self.neg, Op.EQ: self.eq, Op.NE: self.ne,
                 Op.LT: self.lt, Op.LE: self.le, Op.GT: self.gt, Op.GE: self.ge,
                 Op.NOT: self.not_, Op.FLOOR_DIV: self.floor_div, Op.CLEAN_DIV: self.clean_div,
                 Op.CEIL_DIV: self.ceil_div, Op.MOD: self.mod, Op.PYTHON_MOD: self.python_mod,
                 Op.MODULAR_INDEXING: self.modular_indexing, Op.WHERE: self.where}
        if op in fixed:
            return fixed[op](*args)
        return self.intern_composite(op, args)

    # ── shared ───────────────────────────────────────────────────────────────────────────────

    def order(self, *nodes: Node) -> list[Node]:
        """Canonical order: creation order (E14.500)."""
        return sorted(nodes, key=lambda n: n.seq)

    def float_value(self, n: Node) -> float:
        return bits_float(n.payload)


def float_bits(v: float) -> int:
    """The f64 bit pattern read as a signed i64 (the FLOAT payload)."""
    return pystruct.unpack("<q", pystruct.pack("<d", v))[0]


def bits_float(payload: int) -> float:
    return pystruct.unpack("<d", pystruct.pack("<q", payload))[0]
