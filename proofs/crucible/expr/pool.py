"""Chapter 14 obligations of ExprPool (facts §5.9, I1-I4), checked over random sequences of
constructor calls on one pool: interning, the three node kinds no constructor leaves, the
canonical order and shape of n-ary nodes, and the table's load and capacity; and the facts'
measured atoms: their hashes and flags (PO14.504)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import strategies as st

from ....spec.core.registry import Mutant
from ....spec.crucible.expr.canon import CanonMixin
from ....spec.crucible.expr.divide import DivideMixin
from ....spec.crucible.expr.logic import LogicMixin
from ....spec.crucible.expr.node import Op
from ....spec.crucible.expr.pool import (
    ExprPool,
    G,
    Node,
    composite_flags,
    expr_hash,
    float_flags,
    initial_capacity_of,
    packed_word,
)
from ...core.obligation import Property, property_obligation

BINARY = ("add", "mul", "pow", "floor_div", "clean_div", "ceil_div", "mod", "python_mod",
          "min_expr", "max_expr", "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_")
UNARY = ("neg", "not_")
TERNARY = ("modular_indexing", "where")
N_ARY = ("add_n", "mul_n", "and_n", "or_n", "min_n", "max_n")
MAKE_OPS = tuple(op for op in Op if op not in (Op.INTEGER, Op.FLOAT, Op.SYMBOL, Op.BOOL_TRUE,
                                               Op.BOOL_FALSE, Op.NUM_OPS))
STEP = st.tuples(st.sampled_from(BINARY + UNARY + TERNARY + N_ARY + ("make",)),
                 st.lists(st.integers(0, 1 << 16), min_size=3, max_size=5),
                 st.sampled_from(MAKE_OPS))
CASE = st.tuples(st.sampled_from([1, 16, 64, 300]), st.lists(STEP, max_size=40))


def seed_nodes(pool: ExprPool) -> list[Node]:
    """Three symbols (even, odd, unassumed), small and large integers, floats, booleans."""
    return [pool.symbol("x", 0, 0x012F), pool.symbol("y", 1, 0x022F), pool.symbol("z", 2, 0),
            pool.symbol("x", 0, 0), *(pool.integer(v) for v in (-4, -1, 0, 1, 2, 3, 4, 6, 1000)),
            pool.float_(1.5), pool.float_(0.0), pool.bool_true(), pool.bool_false()]


def call(pool: ExprPool, step: tuple, nodes: list[Node]) -> Node:
    """One constructor call on operands picked from the nodes made so far."""
    name, picks, op = step
    args = [nodes[i % len(nodes)] for i in picks]
    if name in BINARY:
        return getattr(pool, name)(*args[:2])
    if name in UNARY:
        return getattr(pool, name)(args[0])
    if name in TERNARY:
        return getattr(pool, name)(*args[:3])
    if name in N_ARY:
        return getattr(pool, name)(args)
    arity = {Op.MODULAR_INDEXING: 3, Op.WHERE: 3}.get(op, 2 if op in BINARY_MAKE else 1)
    return pool.make(op, args if op in VARIADIC_MAKE else args[:arity])


BINARY_MAKE = {Op.POW, Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE, Op.FLOOR_DIV, Op.CLEAN_DIV,
               Op.CEIL_DIV, Op.MOD, Op.PYTHON_MOD, Op.INT_TRUE_DIV, Op.BITWISE_XOR, Op.LSHIFT}
VARIADIC_MAKE = {Op.ADD, Op.MUL, Op.AND, Op.OR, Op.MIN, Op.MAX}


def run(case: tuple, each=None) -> ExprPool:
    """A pool of the case's initial capacity, seeded, then each step; `each(pool, node)` runs
    after every call."""
    cap, steps = case
    pool = ExprPool(cap)
    nodes = seed_nodes(pool)
    for step in steps:
        out = call(pool, step, nodes)
        nodes.append(out)
        if each:
            each(pool, out)
    return pool


def deterministic_cases() -> list[tuple]:
    """Sequences that reach each planted bug without chance: reinterning, the three rewritten
    ops, sorted and shaped n-ary nodes."""
    s = [("add_n", [1, 0, 2], Op.ADD), ("mul_n", [1, 0, 2], Op.MUL), ("neg", [0, 0, 0], Op.ADD),
         ("ceil_div", [0, 1, 0], Op.ADD), ("clean_div", [0, 1, 0], Op.ADD),
         ("make", [0, 1, 2], Op.NEG), ("make", [0, 1, 2], Op.CEIL_DIV),
         ("and_n", [0, 15, 1], Op.AND), ("or_n", [1, 16, 0], Op.AND),
         ("min_n", [1, 0, 1], Op.AND), ("max_n", [2, 1, 0], Op.AND),
         ("add", [0, 10, 0], Op.AND), ("mul", [0, 7, 0], Op.AND), ("add", [2, 3, 0], Op.AND),
         ("add_n", [0, 4, 1], Op.AND), ("mul", [0, 1, 0], Op.AND), ("mul", [18, 2, 0], Op.AND),
         ("add_n", [0, 0, 0], Op.AND), ("eq", [1, 0, 0], Op.AND), ("add", [1, 0, 0], Op.AND)]
    return [(1, s), (64, s), (16, s[::-1])]


# ── I1 ────────────────────────────────────────────────────────────────────────────────────────

def interned_once(case: tuple) -> None:
    """I1: a node asked for again by its structure is the same node; distinct nodes differ."""
    pool = run(case)
    assert pool.integer(1 << 40) is pool.integer(1 << 40), "asked twice, made twice"
    nodes = sorted(pool.table.values(), key=lambda n: n.seq)
    assert [n.seq for n in nodes] == list(range(len(nodes))), "creation counter"
    keys = set()
    for n in nodes:
        size = pool.intern_size()
        again = pool.intern_node(n.op, n.args, n.flags, n.symbol_id, n.payload)
        assert again is n and pool.intern_size() == size, (n, again)
        key = (n.op, tuple(a.seq for a in n.args), n.payload, n.flags, n.symbol_id)
        assert key not in keys, n
        keys.add(key)
    assert pool.symbol(*_SYM) is not pool.symbol(_SYM[0], _SYM[1], 0x2F)
    for a, b in pairwise(nodes[:25]):
        made = pool.intern_node(Op.MAX, (a, b), 0)
        assert made.op == Op.MAX and made.args == (a, b) and made.flags == 0, (a, b, made)


_SYM = ("w", 9, 0x0001)


# ── I2 ────────────────────────────────────────────────────────────────────────────────────────

def never_made(case: tuple) -> None:
    """I2: no NEG, CLEAN_DIV or CEIL_DIV node exists, whatever was asked (make included)."""
    pool = run(case)
    bad = [n for n in pool.table.values() if n.op in (Op.NEG, Op.CLEAN_DIV, Op.CEIL_DIV)]
    assert not bad, bad


# ── I3 ────────────────────────────────────────────────────────────────────────────────────────

def shaped(pool: ExprPool, _out: Node) -> None:
    """I3 for every node of the pool: canonical order and the shape rules of each n-ary op."""
    for n in list(pool.table.values()):
        seqs = [a.seq for a in n.args]
        ints = [a for a in n.args if a.op == Op.INTEGER]
        if n.op in (Op.ADD, Op.MIN, Op.MAX):
            assert seqs == sorted(set(seqs)) and len(seqs) >= 2, ("order or duplicate", n)
        if n.op in (Op.MUL, Op.AND, Op.OR, Op.EQ, Op.NE):
            assert seqs == sorted(seqs), ("order", n)
        if n.op == Op.ADD:
            assert len(ints) <= 1 and not any(a.payload == 0 for a in ints), ("ADD", n)
        if n.op == Op.MUL:
            assert len(ints) <= 1 and not any(a.payload in (0, 1) for a in ints), ("MUL", n)
            assert all(a.op != Op.MUL for a in n.args) and len(seqs) >= 2, ("MUL", n)
        if n.op in (Op.AND, Op.OR):
            assert len(seqs) >= 2 and pool.true_ not in n.args and \
                pool.false_ not in n.args, ("AND/OR", n)


def ordered_and_shaped(case: tuple) -> None:
    run(case, shaped)


# ── I4 ────────────────────────────────────────────────────────────────────────────────────────

def within_load(pool: ExprPool, _out: Node) -> None:
    """I4: after the check before the last intern, that table was under 7/8 full; the
    capacity is a power of two of at least G."""
    cap = pool.intern_capacity()
    assert cap >= G and cap & (cap - 1) == 0, cap
    assert (pool.intern_size() - 1) * 8 < cap * 7, (pool.intern_size(), cap)


def load_and_capacity(case: tuple) -> None:
    pool = run(case, within_load)
    for v in range(1000, 1000 + pool.intern_capacity()):
        within_load(pool, pool.integer(v))
    assert ExprPool().intern_size() == 258 and ExprPool().intern_capacity() == 65536
    assert ExprPool(100).intern_capacity() == 512 == ExprPool(1).intern_capacity()


def _props(check) -> list[Property]:
    return [Property("crafted sequences", check, cases=deterministic_cases),
            Property("random constructor sequences", check, strategy=lambda: CASE,
                     examples=300)]


@property_obligation(
    "PO14.500", "I1: in one pool a node asked for again by its structure (op, children, "
    "payload, flags, symbol_id) is the very node made first, and nodes of different "
    "structure are different nodes.",
    covers=("expr.canon",), subject=ExprPool.intern_node,
    mutants=(
        Mutant.edit("flags not in the key", "the lookup ignores the flags", ExprPool.intern_node,
                    "payload, flags, symbol_id)", "payload, 0, symbol_id)"),
        Mutant.edit("arity not children", "the lookup keys on the number of children only",
                    ExprPool.intern_node, "tuple(a.seq for a in args)", "len(args)"),
        Mutant.edit("not stored", "a new node is never entered in the table",
                    ExprPool.intern_node, "self.table[key] = node", "pass"),
    ),
)
def interning(_subject: Any) -> list[Property]:
    return _props(interned_once)


@property_obligation(
    "PO14.501", "I2: no public constructor, make included, leaves a NEG, CLEAN_DIV or "
    "CEIL_DIV node in the pool.",
    covers=("expr.canon",), subject=CanonMixin.neg,
    mutants=(
        Mutant.edit("NEG node", "neg interns NEG(e)", CanonMixin.neg,
                    "return self.mul(self.integer(-1), e)",
                    "return self.intern_composite(Op.NEG, [e])"),
        Mutant.edit("CLEAN_DIV node", "clean_div interns CLEAN_DIV", DivideMixin.clean_div,
                    "return self.floor_div(lhs, rhs)",
                    "return self.intern_composite(Op.CLEAN_DIV, [lhs, rhs])"),
        Mutant.edit("CEIL_DIV node", "ceil_div interns a symbolic CEIL_DIV",
                    DivideMixin.ceil_div, "return self.floor_div(self.add(",
                    "return self.intern_composite(Op.CEIL_DIV, [lhs, rhs]) or (self.add("),
        Mutant.edit("make passes NEG", "make interns NEG as given", CanonMixin.make,
                    "Op.NEG: self.neg,", ""),
    ),
)
def rewritten_ops(_subject: Any) -> list[Property]:
    return _props(never_made)


@property_obligation(
    "PO14.502", "I3: ADD, MUL, AND, OR, MIN, MAX, EQ and NE children are in canonical "
    "(creation) order; ADD, MIN and MAX hold no child twice; ADD holds at most one INTEGER, "
    "never 0; MUL holds no MUL and at most one INTEGER, never 0 or 1; AND and OR hold no "
    "boolean constant; each n-ary node has at least two children.",
    covers=("expr.canon",), subject=CanonMixin.add_n,
    mutants=(
        Mutant.edit("unsorted sum", "add_n keeps the terms as collected", CanonMixin.add_n,
                    "self.intern_composite(Op.ADD, self.order(*items))",
                    "self.intern_composite(Op.ADD, items)"),
        Mutant.edit("descending", "canonical order is newest first", CanonMixin.order,
                    "key=lambda n: n.seq)", "key=lambda n: -n.seq)"),
        Mutant.edit("zero kept", "add_n appends the constant even when 0", CanonMixin.add_n,
                    "if int_sum != 0 or not items:", "if True:"),
        Mutant.edit("one kept", "mul_n appends the product even when 1", CanonMixin.mul_n,
                    "if int_prod != 1 or not buf:", "if True:"),
        Mutant.edit("no flattening", "mul_n keeps a MUL operand whole", CanonMixin.mul_n,
                    "(e.args if e.op == Op.MUL else (e,))", "(e,)"),
        Mutant.edit("true kept", "and_n / or_n keep the identity constant",
                    LogicMixin.junction_n, "if t is not unit:", "if True:"),
        Mutant.edit("min duplicates", "min_n / max_n keep duplicates", CanonMixin.minmax_n,
                    "if not kept or kept[-1] is not t:", "if True:"),
        Mutant.edit("unmerged terms", "add_n does not merge equal bases",
                    CanonMixin.merge_terms, "while i < len(pairs) and pairs[i][1] is base:",
                    "for _ in range(1):"),
    ),
)
def canonical_shape(_subject: Any) -> list[Property]:
    return _props(ordered_and_shaped)


@property_obligation(
    "PO14.503", "I4: before every intern the table is grown until under 7/8 full, so after "
    "it count - 1 < 7/8 of the capacity; the capacity is a power of two of at least G (a "
    "fresh pool: 258 nodes, capacity 65536 by default, 512 from 100 or 1).",
    covers=("expr.canon",), subject=ExprPool.grow_check,
    mutants=(
        Mutant.edit("strict load", "grows only past 7/8", ExprPool.grow_check,
                    "len(self.table) * 8 >= self.capacity * 7",
                    "len(self.table) * 8 > self.capacity * 7"),
        Mutant.edit("linear growth", "capacity grows by G", ExprPool.grow_check,
                    "self.capacity *= 2", "self.capacity += G"),
        Mutant.edit("one doubling", "the initial capacity doubles once at most",
                    initial_capacity_of, "while cap < initial_capacity:",
                    "if cap < initial_capacity:"),
    ),
)
def table_load(_subject: Any) -> list[Property]:
    return _props(load_and_capacity)


ATOM_HASHES = ((Op.INTEGER, 0, 0x05E7, 0x939D315FA2E5F673),
               (Op.INTEGER, 1, 0x062F, 0xE76A677BAA5F1A55),
               (Op.INTEGER, -1, 0x0657, 0xFD0F1A8E3434AB0A),
               (Op.INTEGER, 2, 0x052F, 0xCBEB2A25AF1C1357),
               (Op.INTEGER, 5, 0x062F, 0x6E087C5D94A909A0),
               (Op.INTEGER, -7, 0x0657, 0xC190EE192673A365),
               (Op.INTEGER, 1000, 0x052F, 0x02C753877BD74388),
               (Op.BOOL_TRUE, 0, 0x1000, 0x0A974846F1C50877),
               (Op.BOOL_FALSE, 0, 0x1000, 0x616790D2B5AEC352),
               (Op.FLOAT, 1.5, 0x042E, 0xF3FBBF76E31E860E))
"""§5.3's verified atoms: (op, value, flags, hash)."""
FLOAT_FLAGS = ((1.5, 0x042E), (-0.0, 0x04E6), (0.0, 0x04E6), (-2.0, 0x0456),
               (float("nan"), 0x0406), (float("inf"), 0x042E))
"""§5.5's float flags: sign bits, zero for both zeros, REAL3 alone for NaN, IS_FINITE kept
for infinity (the seed's quirk)."""
COMPOSITE_FLAGS = ((Op.ABS, 0), (Op.BITWISE_XOR, 0), (Op.LSHIFT, 0x0407), (Op.SQRT, 0x0406),
                   (Op.NOT, 0x1000), (Op.IDENTITY, 0x082F))
"""§5.5's make(op, [x]) flags, x a symbol of flags 0x082f (IDENTITY copies them)."""


def _atom(case) -> None:
    op, value, flags, want = case
    pool = ExprPool()
    node = (pool.float_(value) if op == Op.FLOAT else pool.integer(value) if op == Op.INTEGER
            else pool.boolean(op == Op.BOOL_TRUE))
    assert (node.flags, pool.hash_of(node)) == (flags, want), (op, value, hex(pool.hash_of(node)))


def _float_flags(case) -> None:
    value, want = case
    assert ExprPool().float_(value).flags == want, (value, hex(ExprPool().float_(value).flags))


def _composite(case) -> None:
    op, want = case
    pool = ExprPool()
    x = pool.symbol("x", 0, 0x002F)
    assert pool.make(op, [x]).flags == want, (op, hex(pool.make(op, [x]).flags))


@property_obligation(
    "PO14.504", "ExprPool's atoms carry the facts' measured flags and structural hashes "
    "(§5.3: INTEGER 0, 1, -1, 2, 5, -7, 1000, true, false and FLOAT 1.5), a float's flags "
    "follow its sign (both zeros zero, NaN REAL3 alone, infinity still finite), and the "
    "generic make flags ABS and BITWISE_XOR 0, LSHIFT 0x0407, SQRT 0x0406, NOT 0x1000, while "
    "IDENTITY copies its operand's.",
    covers=("expr.canon",), subject=expr_hash,
    mutants=(
        Mutant.edit("seed mistyped", "the payload is mixed with another constant", expr_hash,
                    "(payload & M64) ^ FX_SEED", "(payload & M64) ^ (FX_SEED + 2)"),
        Mutant.edit("flags shifted", "the flags go 15 bits up in the packed word", packed_word,
                    "flags << 16", "flags << 15", occurrence=2),
        Mutant.edit("negative floats positive", "a negative float is flagged positive",
                    float_flags, "if v > 0:", "if v >= 0 or v < 0:"),
        Mutant.edit("NaN is zero", "NaN gets the zero bits", float_flags,
                    "if v == 0 else REAL3", "if v == 0 or v != v else REAL3"),
        Mutant.edit("unknown ops integral", "ABS and BITWISE_XOR are flagged integers",
                    composite_flags, "    return 0\n", "    return 1\n"),
    ),
)
def atoms(_subject: Any) -> list[Property]:
    return [Property("the facts' atom hashes", _atom, cases=lambda: list(ATOM_HASHES)),
            Property("float flags", _float_flags, cases=lambda: list(FLOAT_FLAGS)),
            Property("make's flags", _composite, cases=lambda: list(COMPOSITE_FLAGS))]
