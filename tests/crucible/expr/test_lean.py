"""The Lean Expr, Ops and Algebra modules' statements checked against the spec's own meaning of
expressions, ExprPool's constructors, its Op and ExprFlags tables and the memory-plan predicates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.spec.core.errors import InvalidInput
from crucible_spec.spec.crucible.expr import semantics
from crucible_spec.spec.crucible.expr.node import ExprFlags, Op
from crucible_spec.spec.crucible.expr.ops import ATOMS, make_arity, op_of
from crucible_spec.spec.crucible.expr.pool import INT_CACHE, ExprPool, composite_flags
from crucible_spec.spec.crucible.expr.semantics import evaluate
from crucible_spec.spec.crucible.memory_plan import Plan, PlanSlot, compute_memory_plan
from crucible_spec.spec.crucible.plan_validity import plan_violations

FAST = settings(derandomize=True, max_examples=30, deadline=None)
INTS = st.integers(-(1 << 40), 1 << 40)
HALF = st.integers(-(1 << 62), (1 << 62) - 1)
"""Integers whose sum stays within i64, where the pool's wrapping folds are exact."""
SMALL = st.integers(-(1 << 31), (1 << 31) - 1)
"""Integers whose product stays within i64."""
BOOL_FLAGS = int(ExprFlags.IS_BOOLEAN)


def fresh() -> tuple[ExprPool, object, object]:
    """A fresh pool and two integer symbols x (id 0) and y (id 1), no sign assumed."""
    pool = ExprPool()
    return pool, pool.symbol("x", 0, 0x0007), pool.symbol("y", 1, 0x0007)


def raw(pool: ExprPool, op: Op, *args) -> object:
    """The node op(args) exactly as written: interned without any constructor's rewriting."""
    return pool.intern_composite(op, args)


# ── Expr: constant folding, identities, absorption ───────────────────────────────────────────

@FAST
@given(HALF, HALF)
def test_two_integers_add_to_their_sum(a, b):
    pool, _, _ = fresh()
    assert evaluate(raw(pool, Op.ADD, pool.integer(a), pool.integer(b)), {}) == a + b
    folded = pool.add(pool.integer(a), pool.integer(b))
    assert folded.op == Op.INTEGER and folded.payload == a + b


@FAST
@given(SMALL, SMALL)
def test_two_integers_multiply_to_their_product(a, b):
    pool, _, _ = fresh()
    assert evaluate(raw(pool, Op.MUL, pool.integer(a), pool.integer(b)), {}) == a * b
    folded = pool.mul(pool.integer(a), pool.integer(b))
    assert folded.op == Op.INTEGER and folded.payload == a * b


@FAST
@given(INTS)
def test_zero_and_one_are_identities_and_zero_absorbs(v):
    pool, x, _ = fresh()
    zero, one, env = pool.integer(0), pool.integer(1), {0: v}
    e = raw(pool, Op.MUL, pool.integer(3), x)  # a compound operand meaning 3v
    for operand, value in ((x, v), (e, 3 * v)):
        assert evaluate(raw(pool, Op.ADD, operand, zero), env) == value
        assert evaluate(raw(pool, Op.ADD, zero, operand), env) == value
        assert evaluate(raw(pool, Op.MUL, operand, one), env) == value
        assert evaluate(raw(pool, Op.MUL, one, operand), env) == value
        assert evaluate(raw(pool, Op.MUL, operand, zero), env) == 0
        assert evaluate(raw(pool, Op.MUL, zero, operand), env) == 0
    assert pool.add(x, zero) is x and pool.add(zero, x) is x
    assert pool.mul(x, one) is x and pool.mul(one, x) is x
    assert pool.mul(x, zero) is zero and pool.mul(zero, x) is zero


@FAST
@given(INTS)
def test_a_power_of_zero_is_one_and_of_one_is_the_base(v):
    pool, x, _ = fresh()
    assert evaluate(raw(pool, Op.POW, x, pool.integer(0)), {0: v}) == 1
    assert evaluate(raw(pool, Op.POW, x, pool.integer(1)), {0: v}) == v
    assert evaluate(raw(pool, Op.POW, pool.integer(0), pool.integer(0)), {}) == 1
    assert pool.pow(x, pool.integer(0)) is pool.integer(1)
    assert pool.pow(x, pool.integer(1)) is x


def test_not_flips_the_constants_and_a_double_not_is_the_operand():
    pool, _, _ = fresh()
    t, f = pool.true_, pool.false_
    assert evaluate(pool.intern_node(Op.NOT, (t,), BOOL_FLAGS), {}) is False
    assert evaluate(pool.intern_node(Op.NOT, (f,), BOOL_FLAGS), {}) is True
    for b, want in ((t, True), (f, False)):
        inner = pool.intern_node(Op.NOT, (b,), BOOL_FLAGS)
        assert evaluate(pool.intern_node(Op.NOT, (inner,), BOOL_FLAGS), {}) is want
    assert pool.not_(t) is f and pool.not_(f) is t
    assert pool.not_(pool.not_(t)) is t and pool.not_(pool.not_(f)) is f


@FAST
@given(INTS)
def test_an_expression_equals_itself(v):
    pool, x, _ = fresh()
    e = raw(pool, Op.ADD, x, pool.integer(7))
    assert evaluate(raw(pool, Op.EQ, x, x), {0: v}) is True
    assert evaluate(raw(pool, Op.EQ, e, e), {0: v}) is True
    assert pool.eq(x, x) is pool.true_


@FAST
@given(INTS, INTS)
def test_where_picks_by_a_constant_condition_and_equal_arms_are_the_arm(u, w):
    pool, x, y = fresh()
    env = {0: u, 1: w}
    assert evaluate(raw(pool, Op.WHERE, pool.true_, x, y), env) == u
    assert evaluate(raw(pool, Op.WHERE, pool.false_, x, y), env) == w
    cond = raw(pool, Op.LT, x, y)
    assert evaluate(raw(pool, Op.WHERE, cond, y, y), env) == w
    assert pool.where(pool.true_, x, y) is x and pool.where(pool.false_, x, y) is y
    assert pool.where(cond, y, y) is y


# ── Expr: commutativity, flattening, negation, division ──────────────────────────────────────

@FAST
@given(INTS, INTS)
def test_add_mul_eq_ne_do_not_depend_on_operand_order(u, w):
    pool, x, y = fresh()
    env = {0: u, 1: w}
    for op, want in ((Op.ADD, u + w), (Op.MUL, u * w), (Op.EQ, u == w), (Op.NE, u != w)):
        assert evaluate(raw(pool, op, x, y), env) == want, op
        assert evaluate(raw(pool, op, y, x), env) == want, op
    assert pool.add(x, y) is pool.add(y, x) and pool.mul(x, y) is pool.mul(y, x)
    assert pool.eq(x, y) is pool.eq(y, x) and pool.ne(x, y) is pool.ne(y, x)


@FAST
@given(INTS, INTS, INTS)
def test_a_nested_sum_or_product_means_the_flat_one(u, v, w):
    pool, x, y = fresh()
    z = pool.symbol("z", 2, 0x0007)
    env = {0: u, 1: v, 2: w}
    for op, want in ((Op.ADD, u + v + w), (Op.MUL, u * v * w)):
        assert evaluate(raw(pool, op, raw(pool, op, x, y), z), env) == want, op
        assert evaluate(raw(pool, op, x, y, z), env) == want, op


@FAST
@given(INTS, HALF)
def test_negation_is_multiplication_by_minus_one(v, n):
    pool, x, _ = fresh()
    minus_one = pool.integer(-1)
    assert evaluate(pool.intern_node(Op.NEG, (x,), 0), {0: v}) == -v
    assert evaluate(raw(pool, Op.MUL, minus_one, x), {0: v}) == -v
    assert evaluate(pool.intern_node(Op.NEG, (pool.integer(n),), 0), {}) == -n
    assert pool.neg(pool.integer(n)).payload == -n
    neg_x = pool.neg(x)
    assert neg_x.op == Op.MUL and neg_x.args == (minus_one, x)


@FAST
@given(INTS)
def test_a_sum_of_a_node_with_itself_is_its_double(v):
    pool, x, _ = fresh()
    assert evaluate(raw(pool, Op.ADD, x, x), {0: v}) == 2 * v
    assert evaluate(raw(pool, Op.MUL, pool.integer(2), x), {0: v}) == 2 * v
    double = pool.add(x, x)
    assert double.op == Op.MUL and double.args == (pool.integer(2), x)


@FAST
@given(INTS.filter(lambda v: v != 0))
def test_floor_division_by_one_and_by_itself(v):
    pool, x, _ = fresh()
    assert evaluate(raw(pool, Op.FLOOR_DIV, x, pool.integer(1)), {0: v}) == v
    assert evaluate(raw(pool, Op.FLOOR_DIV, x, x), {0: v}) == 1
    assert pool.floor_div(x, pool.integer(1)) is x
    positive = pool.symbol("p", 2, 0x002F)  # the theorem asks for a non-zero divisor
    assert pool.floor_div(positive, positive) is pool.integer(1)


@FAST
@given(st.integers(-(1 << 40), 1 << 40).map(lambda k: 2 * k))
def test_an_even_integer_modulo_two_is_zero(n):
    pool, _, _ = fresh()
    two = pool.integer(2)
    for op in (Op.MOD, Op.PYTHON_MOD):
        assert evaluate(raw(pool, op, pool.integer(n), two), {}) == 0, op
    assert pool.mod(pool.integer(n), two) is pool.integer(0)
    assert pool.python_mod(pool.integer(n), two) is pool.integer(0)


def test_the_int_cache_holds_the_256_integers_from_minus_128_to_127():
    assert (INT_CACHE[0], INT_CACHE[-1], len(INT_CACHE)) == (-128, 127, 256) and 0 in INT_CACHE
    pool = ExprPool()
    made = pool.intern_size()
    cached = [pool.integer(v) for v in range(-128, 128)]
    assert pool.intern_size() == made and len({n.seq for n in cached}) == 256
    assert all(n.seq < made for n in cached)
    assert pool.integer(128).seq >= made and pool.integer(-129).seq >= made


# ── Ops: ordinals, flag bits, arities, result types ──────────────────────────────────────────

LEAN_ORDER = [
    "INTEGER", "FLOAT", "SYMBOL", "BOOL_TRUE", "BOOL_FALSE", "ADD", "MUL", "POW", "EQ", "NE", "LT",
    "LE", "GT", "GE", "AND", "OR", "NOT", "FLOOR_DIV", "CLEAN_DIV", "CEIL_DIV", "INT_TRUE_DIV",
    "FLOAT_TRUE_DIV", "MOD", "PYTHON_MOD", "MODULAR_INDEXING", "CEIL_TO_INT", "FLOOR_TO_INT",
    "TRUNC_TO_FLOAT", "TRUNC_TO_INT", "ROUND_TO_INT", "ROUND_DECIMAL", "TO_FLOAT", "LSHIFT",
    "RSHIFT", "POW_BY_NATURAL", "FLOAT_POW", "WHERE", "IDENTITY", "MIN", "MAX",
    "IS_NON_OVERLAPPING_AND_DENSE", "SQRT", "COS", "COSH", "SIN", "SINH", "TAN", "TANH", "ASIN",
    "ACOS", "ATAN", "EXP", "LOG", "ASINH", "LOG2", "ABS", "BITWISE_AND", "BITWISE_OR",
    "BITWISE_XOR", "NEG",
]
"""The Lean module's ordinal of each op: its position here (0..59)."""
LEAN_ATOMS = {"INTEGER", "FLOAT", "SYMBOL", "BOOL_TRUE", "BOOL_FALSE"}
LEAN_BOOLEAN = {"EQ", "NE", "LT", "LE", "GT", "GE", "AND", "OR", "NOT"}
LEAN_COMPLEMENT = {"LT": "GE", "LE": "GT", "GT": "LE", "GE": "LT", "EQ": "NE", "NE": "EQ"}
COMM_ASSOC = (Op.ADD, Op.MUL, Op.AND, Op.OR, Op.MIN, Op.MAX)
OPS = [op for op in Op if op != Op.NUM_OPS]


def test_every_op_has_the_lean_ordinal_and_ordinals_round_trip():
    assert len(LEAN_ORDER) == 60 and len(OPS) == 60 and int(Op.NUM_OPS) == 60
    assert [op.name for op in OPS] == LEAN_ORDER
    assert len({int(op) for op in OPS}) == 60
    for n in range(60):
        assert int(Op(n)) == n
    for op in OPS:
        assert Op(int(op)) is op
        if op.name not in LEAN_ATOMS:
            assert op_of(int(op), "p") is op and op_of(op.name.lower(), "p") is op


def test_the_13_flags_sit_on_distinct_bits_in_the_lean_order():
    lean = ["IS_INTEGER", "IS_REAL", "IS_FINITE", "IS_POSITIVE", "IS_NEGATIVE", "IS_NONNEGATIVE",
            "IS_NONPOSITIVE", "IS_ZERO", "IS_EVEN", "IS_ODD", "IS_NUMBER", "IS_SYMBOL",
            "IS_BOOLEAN"]
    assert [f.name for f in ExprFlags] == lean
    assert [int(f) for f in ExprFlags] == [1 << i for i in range(13)]


def test_atoms_are_exactly_the_five_leaf_ops():
    assert {op.name for op in ATOMS} == LEAN_ATOMS
    pool, x, _ = fresh()
    for leaf in (pool.integer(5), pool.float_(1.5), x, pool.true_, pool.false_):
        assert leaf.op in ATOMS and leaf.args == ()
    for op in OPS:
        if op in ATOMS:
            with pytest.raises(InvalidInput):
                op_of(op.name, "p")
        elif op not in semantics.VARIADIC and op != Op.IS_NON_OVERLAPPING_AND_DENSE:
            assert make_arity(op)[0] >= 1, op


def test_identity_and_neg_are_unary_where_and_modular_indexing_ternary():
    assert make_arity(Op.IDENTITY) == (1, 1) and make_arity(Op.NEG) == (1, 1)
    assert make_arity(Op.WHERE) == (3, 3) and make_arity(Op.MODULAR_INDEXING) == (3, 3)
    assert semantics.ARITY[Op.NEG] == 1
    assert semantics.ARITY[Op.WHERE] == 3 and semantics.ARITY[Op.MODULAR_INDEXING] == 3
    pool, x, y = fresh()
    with pytest.raises(ValueError):
        evaluate(pool.intern_node(Op.WHERE, (x, y), 0), {0: 1, 1: 2})
    with pytest.raises(ValueError):
        evaluate(pool.intern_node(Op.NEG, (x, y), 0), {0: 1, 1: 2})


def test_only_the_relational_and_logical_ops_give_a_boolean():
    pool, x, y = fresh()
    operands = (pool.integer(6), pool.integer(3), pool.integer(2))
    for op in OPS:
        if op in ATOMS:
            continue
        is_bool = composite_flags(op, operands) & BOOL_FLAGS != 0
        assert is_bool == (op.name in LEAN_BOOLEAN), op
    made = (pool.eq(x, y), pool.ne(x, y), pool.lt(x, y), pool.le(x, y), pool.gt(x, y),
            pool.ge(x, y), pool.and_(pool.lt(x, y), pool.lt(y, x)),
            pool.or_(pool.lt(x, y), pool.lt(y, x)), pool.not_(pool.lt(x, y)))
    assert [n.op.name for n in made] == ["EQ", "NE", "LT", "LE", "GT", "GE", "AND", "OR", "NOT"]
    assert all(n.flags == BOOL_FLAGS for n in made)


def test_relational_complements_pair_up_as_an_involution_of_boolean_ops():
    grid = [(a, b) for a in range(-2, 3) for b in range(-2, 3)]
    pool, x, y = fresh()

    def meaning(op: Op) -> list[bool]:
        node = pool.intern_node(op, (x, y), BOOL_FLAGS)
        return [evaluate(node, {0: a, 1: b}) for a, b in grid]

    table = {op: meaning(op) for op in semantics.COMPARE}
    found = {}
    for op, values in table.items():
        flipped = [not v for v in values]
        partners = [c for c, other in table.items() if other == flipped]
        assert len(partners) == 1, op
        found[op.name] = partners[0].name
    assert found == LEAN_COMPLEMENT
    assert all(found[found[name]] == name for name in found)
    for cop in found.values():
        assert composite_flags(Op[cop], (x, y)) == BOOL_FLAGS
        assert getattr(pool, cop.lower())(x, y).flags == BOOL_FLAGS


def test_the_flattened_ops_are_variadic_commutative_and_associative():
    assert set(semantics.VARIADIC) == set(COMM_ASSOC)
    pool, x, y = fresh()
    z = pool.symbol("z", 2, 0x0007)
    nary = {Op.ADD: pool.add_n, Op.MUL: pool.mul_n, Op.AND: pool.and_n, Op.OR: pool.or_n,
            Op.MIN: pool.min_n, Op.MAX: pool.max_n}
    for op in COMM_ASSOC:
        assert make_arity(op)[1] == 255, op
        if op in (Op.AND, Op.OR):
            a, b, c = pool.lt(x, y), pool.lt(y, z), pool.lt(z, x)
        else:
            a, b, c = x, y, z
        assert nary[op]([a, b, c]) is nary[op]([c, a, b]) is nary[op]([b, c, a]), op
    ints = range(-3, 4)
    fold = {Op.ADD: lambda p, q: p + q, Op.MUL: lambda p, q: p * q, Op.MIN: min, Op.MAX: max,
            Op.AND: lambda p, q: p and q, Op.OR: lambda p, q: p or q}
    for op in COMM_ASSOC:
        values = [True, False] if op in (Op.AND, Op.OR) else ints
        f = semantics.VARIADIC[op]
        for p in values:
            for q in values:
                assert f([p, q]) == f([q, p]) == fold[op](p, q), (op, p, q)
                for r in values:
                    assert f([f([p, q]), r]) == f([p, f([q, r])]) == f([p, q, r]), op


@FAST
@given(INTS, INTS, INTS)
def test_integer_add_and_mul_laws(a, b, c):
    pool, _, _ = fresh()
    ia, ib, ic = pool.integer(a), pool.integer(b), pool.integer(c)
    for op, f in ((Op.ADD, lambda p, q: p + q), (Op.MUL, lambda p, q: p * q)):
        assert evaluate(raw(pool, op, ia, ib), {}) == evaluate(raw(pool, op, ib, ia), {}) \
            == f(a, b)
        left = raw(pool, op, raw(pool, op, ia, ib), ic)
        right = raw(pool, op, ia, raw(pool, op, ib, ic))
        assert evaluate(left, {}) == evaluate(right, {}) == f(f(a, b), c)
    assert evaluate(raw(pool, Op.ADD, ia, pool.integer(0)), {}) == a
    assert evaluate(raw(pool, Op.MUL, ia, pool.integer(1)), {}) == a
    assert evaluate(raw(pool, Op.MUL, ia, pool.integer(0)), {}) == 0


@FAST
@given(INTS, INTS)
def test_gt_and_ge_are_lt_and_le_flipped_and_eq_ne_symmetric(a, b):
    pool, _, _ = fresh()
    ia, ib = pool.integer(a), pool.integer(b)

    def ev(op: Op, p, q) -> bool:
        return evaluate(pool.intern_node(op, (p, q), BOOL_FLAGS), {})

    assert ev(Op.GT, ia, ib) == ev(Op.LT, ib, ia) == (b < a)
    assert ev(Op.GE, ia, ib) == ev(Op.LE, ib, ia) == (b <= a)
    assert ev(Op.EQ, ia, ib) == ev(Op.EQ, ib, ia) == (a == b)
    assert ev(Op.NE, ia, ib) == ev(Op.NE, ib, ia) == (a != b)
    assert pool.gt(ia, ib) is pool.boolean(b < a) and pool.ge(ia, ib) is pool.boolean(b <= a)


# ── Algebra: merging memory plans ────────────────────────────────────────────────────────────

SLOTS = st.lists(st.tuples(st.integers(1, 3000), st.integers(0, 5), st.integers(0, 4),
                           st.booleans()), min_size=1, max_size=6)


def _slots(spec) -> list[PlanSlot]:
    return [PlanSlot(n, b, b + span, is_external=ext) for n, b, span, ext in spec]


@FAST
@given(SLOTS, SLOTS)
def test_two_valid_plans_on_disjoint_address_ranges_merge_into_a_valid_plan(ps, qs):
    p_slots, q_slots = _slots(ps), _slots(qs)
    p, q = compute_memory_plan(p_slots), compute_memory_plan(q_slots)
    assert plan_violations(p_slots, p) == [] and plan_violations(q_slots, q) == []
    shifted = [0 if s.is_external else o + p.pool_bytes for s, o in zip(q_slots, q.offsets,
                                                                        strict=True)]
    merged = Plan(p.offsets + shifted, p.pool_bytes + q.pool_bytes)
    assert plan_violations(p_slots + q_slots, merged) == []


def test_merging_plans_that_share_addresses_is_caught():
    slots = [PlanSlot(512, 0, 3)]
    plan = compute_memory_plan(slots)
    merged = Plan(plan.offsets * 2, plan.pool_bytes)
    assert plan_violations(slots * 2, merged) != []
