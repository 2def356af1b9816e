"""Chapter 14: ExprPool's relational and logical constructors (facts §5.7).

eq/ne: 1. the same node: true/false; 2. two INTEGERs compare; 3. the node, operands in
  canonical order. lt/le/gt/ge: the same, operands kept as given (a node compared with itself
  is false for lt/gt, true for le/ge).
and_: 1. false absorbs; 2. true is the identity; 3. l and l is l; 4. and_n: splice one level of
  AND, false absorbs, true drops; none is true, one is itself, else AND in canonical order
  (duplicates kept). or_ and or_n are the duals. not_: constants flip, NOT(NOT(x)) is x.
where(c, t, f): a constant condition picks its arm; equal arms are the arm; else the node,
  flagged with what both arms share.
"""

from __future__ import annotations

import operator

from ...core.errors import InvalidInput
from .canon import Node
from .node import Op

MAX_LOGIC_TERMS = 64
"""and_n / or_n buffer. Real code: `ExprPool.h` (asserted there)."""
BOOLEAN = 0x1000


class LogicMixin:
    """eq, ne, lt, le, gt, ge, and_, or_, not_, where; `self` is an ExprPool."""

    def compare(self, op: Op, lhs: Node, rhs: Node, same: bool, fold, symmetric: bool) -> Node:
        """Steps 1-3 of a relational constructor."""
        if lhs is rhs:  # 1
            return self.boolean(same)
        if lhs.op == rhs.op == Op.INTEGER:  # 2
            return self.boolean(fold(lhs.payload, rhs.payload))
        args = self.order(lhs, rhs) if symmetric else (lhs, rhs)  # 3
        return self.intern_node(op, tuple(args), BOOLEAN)

    def eq(self, lhs: Node, rhs: Node) -> Node:
        return self.compare(Op.EQ, lhs, rhs, True, operator.eq, True)

    def ne(self, lhs: Node, rhs: Node) -> Node:
        return self.compare(Op.NE, lhs, rhs, False, operator.ne, True)

    def lt(self, lhs: Node, rhs: Node) -> Node:
        return self.compare(Op.LT, lhs, rhs, False, operator.lt, False)

    def le(self, lhs: Node, rhs: Node) -> Node:
        return self.compare(Op.LE, lhs, rhs, True, operator.le, False)

    def gt(self, lhs: Node, rhs: Node) -> Node:
        return self.compare(Op.GT, lhs, rhs, False, operator.gt, False)

    def ge(self, lhs: Node, rhs: Node) -> Node:
        return self.compare(Op.GE, lhs, rhs, True, operator.ge, False)

    def and_(self, lhs: Node, rhs: Node) -> Node:
        return self.junction(Op.AND, lhs, rhs)

    def or_(self, lhs: Node, rhs: Node) -> Node:
        return self.junction(Op.OR, lhs, rhs)

    def and_n(self, inputs: list[Node]) -> Node:
        return self.junction_n(Op.AND, inputs)

    def or_n(self, inputs: list[Node]) -> Node:
        return self.junction_n(Op.OR, inputs)

    def junction(self, op: Op, lhs: Node, rhs: Node) -> Node:
        """Steps 1-4 of and_ (or_: with true and false swapped)."""
        zero, unit = self.absorbing(op), self.boolean(op == Op.AND)
        if lhs is zero or rhs is zero:  # 1
            return zero
        if lhs is unit:  # 2
            return rhs
        if rhs is unit:
            return lhs
        if lhs is rhs:  # 3
            return lhs
        return self.junction_n(op, [lhs, rhs])  # 4

    def absorbing(self, op: Op) -> Node:
        """false for AND, true for OR."""
        return self.boolean(op == Op.OR)

    def junction_n(self, op: Op, inputs: list[Node]) -> Node:
        """Step 4: splice, absorb, drop identities; duplicates stay."""
        zero, unit = self.absorbing(op), self.boolean(op == Op.AND)
        buf: list[Node] = []
        for e in inputs:
            for t in (e.args if e.op == op else (e,)):
                if t is zero:
                    return zero
                if t is not unit:
                    buf.append(t)
        if len(buf) > MAX_LOGIC_TERMS:
            raise InvalidInput(f"args.expr: an {op.name} of more than {MAX_LOGIC_TERMS} terms")
        if not buf:
            return unit
        if len(buf) == 1:
            return buf[0]
        return self.intern_node(op, tuple(self.order(*buf)), BOOLEAN)

    def not_(self, e: Node) -> Node:
        if e is self.true_:
            return self.false_
        if e is self.false_:
            return self.true_
        if e.op == Op.NOT:
            return e.args[0]
        return self.intern_node(Op.NOT, (e,), BOOLEAN)

    def where(self, c: Node, t: Node, f: Node) -> Node:
        if c is self.true_:
            return t
        if c is self.false_:
            return f
        if t is f:
            return t
        return self.intern_node(Op.WHERE, (c, t, f), t.flags & f.flags)
