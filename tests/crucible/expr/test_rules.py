"""ExprPool's rewrite rules against the meaning of expressions: z3's verdict per rule under the
spec's profile and Crucible's, the witnesses of the refuted ones, and the meaning itself on
the facts' vectors (values worked out by hand from §5.7 and Python's operators)."""

from __future__ import annotations

import json

import pytest
import z3

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import NO_ERRATA, profile_errata
from crucible_spec.spec.crucible.expr.node import ExprFlags, Op
from crucible_spec.spec.crucible.expr.ops import canon_args
from crucible_spec.spec.crucible.expr.rule_table import RULE, RULES
from crucible_spec.spec.crucible.expr.rules import (
    check_rule,
    pool_with_symbols,
    python_values,
    seed_errata,
)
from crucible_spec.spec.crucible.expr.semantics import (
    ceil_div_value,
    declared_range,
    evaluate,
    floor_div_value,
    mod_value,
    modular_indexing_value,
    python_mod_value,
    to_z3,
)

P, R = "proved", "refuted"
EXPECTED = {
    # §5.7 rules that hold for integer symbols and positive divisors (I5): proved in both.
    **{name: (P, P) for name in (
        "add 1", "add 2", "add 3", "add 4", "add_n 1-6", "mul 1", "mul 2", "mul 3-4", "mul 5",
        "mul_n 1", "pow 1-4", "neg 1-2", "floor_div 1", "floor_div 2-5", "floor_div 6",
        "floor_div 9", "clean_div 1", "ceil_div 1", "ceil_div 2", "mod 2-4", "python_mod 1",
        "python_mod 2-4", "modular_indexing 1", "modular_indexing 2", "modular_indexing 4",
        "modular_indexing 5", "min_expr 1-3", "max_expr 1-3", "where 1-4", "eq 1-3",
        "lt 1-3", "le 1-3")},
    # The facts' bugs: rule 7 with a negative divisor, FLOOR_DIV(1, 0), mod's C remainder.
    "floor_div 7": (P, R), "floor_div 8": (P, R), "modular_indexing 3": (P, R), "mod 1": (P, R),
    # What z3 found beyond them (E14.550-E14.552): the spec states the sound rule.
    "floor_div 6 (c < 0)": (P, R), "ceil_div 2 (r < 0)": (P, R),
    "modular_indexing 2 (m < 0)": (P, R), "modular_indexing 5 (d < 0)": (P, R),
    # The open question of issue 19: the seed folds 0 % 0 to 0 (E14.504).
    "mod 0": (P, R), "python_mod 0": (P, R),
    # Checked against the real ExprPool: 0 // z, z // z, 0 % z and z % z fold for an integer
    # symbol z that may be zero (E14.505).
    "floor_div 2, 5 (r may be 0)": (P, R), "mod 2-3 (r may be 0)": (P, R),
    "python_mod 2-3 (r may be 0)": (P, R),
    # And modular_indexing(0, z, 4) and modular_indexing(x, z, 1) fold to 0, and
    # MODULAR_INDEXING(7, 4, z) is flagged non-negative, in the real ExprPool (E14.505).
    "modular_indexing 1 (d or m may be 0)": (P, R),
}
ZERO_DIVISOR = {"floor_div 8", "modular_indexing 3", "mod 0", "python_mod 0"}
MAYBE_ZERO = {"floor_div 2, 5 (r may be 0)", "mod 2-3 (r may be 0)",
              "python_mod 2-3 (r may be 0)", "modular_indexing 1 (d or m may be 0)"}


def test_every_rule_has_an_expected_verdict():
    assert set(EXPECTED) == {r.name for r in RULES}
    assert len(RULES) == 46


@pytest.mark.parametrize("name", [r.name for r in RULES if r.name != "modular_indexing 5"])
@pytest.mark.parametrize("profile", [0, 1])
def test_verdict(name, profile):
    errata = (NO_ERRATA, seed_errata())[profile]
    v = check_rule(RULE[name], errata)
    assert v.status == EXPECTED[name][profile]
    if v.status == R and name in MAYBE_ZERO:  # the witness's divisor (or modulus) is worth 0
        assert 0 in [_value(None, v.lhs[k], **v.values) for k in range(1, len(v.lhs))], v
    if v.status == R and name not in ZERO_DIVISOR | MAYBE_ZERO:
        lhs, result = python_values(v)
        assert lhs != result, v
    if v.status == R and name in ZERO_DIVISOR:
        assert v.instance in ("floor_div(7, 0)", "floor_div(-6, 0)", "floor_div(0, 0)",
                              "modular_indexing(7, 0, 4)", "modular_indexing(0, 0, 4)",
                              "mod(0, 0)", "python_mod(0, 0)")


def test_counts():
    spec = [EXPECTED[r.name][0] for r in RULES]
    seed = [EXPECTED[r.name][1] for r in RULES]
    assert (spec.count(P), spec.count(R)) == (46, 0)
    assert (seed.count(P), seed.count(R)) == (32, 14)


def _value(pool, node, **env):
    ids = {"x": 0, "y": 1, "p": 2, "q": 3, "e": 4, "o": 5}
    return evaluate(node, {ids[k]: v for k, v in env.items()})


def test_facts_witnesses_under_the_seed():
    pool, s = pool_with_symbols(seed_errata())
    x = s["x"]
    sum4 = pool.add(pool.mul(pool.integer(4), x), pool.integer(8))
    # floor_div(4x + 8, -4) returns the dividend: at x = 0, 8 // -4 = -2 but the result is 8.
    assert _value(pool, pool.floor_div(sum4, pool.integer(-4)), x=0) == 8
    # floor_div(7, 0) becomes FLOOR_DIV(1, 0).
    r = pool.floor_div(pool.integer(7), pool.integer(0))
    assert (r.op, r.args[0].payload, r.args[1].payload) == (Op.FLOOR_DIV, 1, 0)
    # mod(-7, 3) folds to -1; the non-negative modulus is 2.
    assert pool.mod(pool.integer(-7), pool.integer(3)).payload == -1
    assert mod_value(-7, 3) == 2


def test_facts_witnesses_fixed_in_the_spec():
    pool, s = pool_with_symbols(NO_ERRATA)
    x = s["x"]
    sum4 = pool.add(pool.mul(pool.integer(4), x), pool.integer(8))
    assert _value(pool, pool.floor_div(sum4, pool.integer(-4)), x=0) == -2
    assert _value(pool, pool.floor_div(sum4, pool.integer(-4)), x=1) == -3
    r = pool.floor_div(pool.integer(7), pool.integer(0))
    assert (r.op, r.args[0].payload) == (Op.FLOOR_DIV, 7)
    assert pool.mod(pool.integer(-7), pool.integer(3)).payload == 2


@pytest.mark.parametrize(("seed", "nested", "ceiling", "folded", "indexed"), [
    (True, -1, 1, -7, 3), (False, 0, 0, 1, 0)])
def test_what_z3_found_seed_and_spec(seed, nested, ceiling, folded, indexed):
    """E14.550-E14.552: the seed's values, then the true ones the spec keeps."""
    pool, s = pool_with_symbols(seed_errata() if seed else NO_ERRATA)
    x = s["x"]
    # (x // 2) // -2 at x = 1 is 0 // -2 = 0; the seed's x // -4 is -1.
    got = pool.floor_div(pool.floor_div(x, pool.integer(2)), pool.integer(-2))
    assert _value(pool, got, x=1) == nested
    # ceil(0 / -2) is 0; the seed's (x - 3) // -2 at x = 0 is 1.
    assert _value(pool, pool.ceil_div(x, pool.integer(-2)), x=0) == ceiling
    # (-5 // 2) mod 4 is -3 mod 4 = 1; the seed moves C's -3 by m to -7.
    assert pool.modular_indexing(*(pool.integer(v) for v in (-5, 2, -4))).payload == folded
    assert modular_indexing_value(-5, 2, -4) == 1
    # ((x // 2) // -1) mod 4 at x = 1 is 0; the seed's (x // -2) mod 4 is -1 mod 4 = 3.
    mi = pool.modular_indexing(pool.floor_div(x, pool.integer(2)), pool.integer(-1),
                               pool.integer(4))
    assert _value(pool, mi, x=1) == indexed


@pytest.mark.parametrize(("fn", "a", "b", "want"), [
    (floor_div_value, -7, 2, -4), (floor_div_value, 7, -2, -4), (floor_div_value, -7, -2, 3),
    (ceil_div_value, 7, 2, 4), (ceil_div_value, -7, 2, -3), (ceil_div_value, 7, -2, -3),
    (ceil_div_value, -7, -2, 4), (python_mod_value, -7, 3, 2), (python_mod_value, 7, -3, -2),
    (mod_value, -7, 3, 2), (mod_value, 7, -3, 1), (mod_value, -7, -3, 2),
])
def test_meaning_on_ints_and_z3(fn, a, b, want):
    assert fn(a, b) == want
    got = z3.simplify(fn(z3.IntVal(a), z3.IntVal(b)))
    assert got.as_long() == want


@pytest.mark.parametrize(("b", "d", "m", "want"), [(13, 2, 4, 2), (-13, 2, 4, 1), (7, 2, -4, 3)])
def test_modular_indexing_meaning(b, d, m, want):
    assert modular_indexing_value(b, d, m) == want
    assert z3.simplify(modular_indexing_value(*map(z3.IntVal, (b, d, m)))).as_long() == want


def test_division_by_zero_is_a_function_of_the_dividend():
    with pytest.raises(ZeroDivisionError):
        floor_div_value(7, 0)
    s = z3.Solver()
    s.add(floor_div_value(z3.IntVal(7), z3.IntVal(0)) != floor_div_value(z3.IntVal(1),
                                                                         z3.IntVal(0)))
    assert s.check() == z3.sat
    s = z3.Solver()
    s.add(floor_div_value(z3.IntVal(7), z3.IntVal(0)) != floor_div_value(z3.IntVal(7),
                                                                         z3.IntVal(0)))
    assert s.check() == z3.unsat


@pytest.mark.parametrize(("flags", "value", "holds"), [
    (ExprFlags.IS_POSITIVE, 0, False), (ExprFlags.IS_POSITIVE, 1, True),
    (ExprFlags.IS_NONNEGATIVE, 0, True), (ExprFlags.IS_NEGATIVE, 0, False),
    (ExprFlags.IS_NONPOSITIVE, -3, True), (ExprFlags.IS_EVEN, -3, False),
    (ExprFlags.IS_ODD, -3, True), (ExprFlags.IS_ZERO, 0, True), (0, 1 << 63, False),
])
def test_declared_range(flags, value, holds):
    assert z3.is_true(z3.simplify(declared_range(int(flags), z3.IntVal(value)))) == holds


def test_an_op_without_meaning_is_refused():
    pool, s = pool_with_symbols(NO_ERRATA)
    with pytest.raises(ValueError, match="SQRT"):
        to_z3(pool.make(Op.SQRT, [s["x"]]), {})


@pytest.mark.parametrize(("expr", "spec", "seed"), [
    (["floor_div", ["floor_div", "x", 2], -2], ["FLOOR_DIV", ["FLOOR_DIV", "x", 2], -2],
     ["FLOOR_DIV", "x", -4]),
    (["ceil_div", "x", -2], ["FLOOR_DIV", ["ADD", -1, "x"], -2],
     ["FLOOR_DIV", ["ADD", -3, "x"], -2]),
    (["ceil_div", "x", 2], ["FLOOR_DIV", ["ADD", 1, "x"], 2], ["FLOOR_DIV", ["ADD", 1, "x"], 2]),
    (["modular_indexing", -5, 2, -4], 1, -7),
    (["modular_indexing", -5, 2, 4], 1, 1),
])
@pytest.mark.parametrize("profile", ["crucible", "crucible@8d2680a2"])
def test_what_z3_found_through_expr_canon(expr, spec, seed, profile):
    load_all()
    out = answer(json.dumps({"id": 1, "op": "expr.canon", "args": canon_args(expr)}),
                 Implementation("reference", profile_errata(profile)), profile)
    assert out["result"]["canon"] == (spec if profile == "crucible" else seed)


def test_ceil_div_by_a_divisor_of_unknown_sign_is_minus_floor_of_minus():
    """ceil(x / y) = -((-x) // y) for every y != 0: the spec's form when y's sign is unknown."""
    load_all()
    args = {"symbols": [{"name": "x", "flags": 0x0807}, {"name": "y", "flags": 0x0807}],
            "expr": ["ceil_div", "x", "y"]}
    want = {"crucible": ["MUL", -1, ["FLOOR_DIV", ["MUL", -1, "x"], "y"]],
            "crucible@8d2680a2": ["FLOOR_DIV", ["ADD", -1, "x", "y"], "y"]}
    for profile, canon in want.items():
        out = answer(json.dumps({"id": 1, "op": "expr.canon", "args": args}),
                     Implementation("reference", profile_errata(profile)), profile)
        assert out["result"]["canon"] == canon, profile


@pytest.mark.parametrize("r", [-1, -2, -3, -4, -7])
def test_the_negative_ceiling_form(r):
    """ceil(a / r) = floor((a + r + 1) / r) for r < 0 (the spec's form, E14.551), for every a."""
    a = z3.Int("a")
    s = z3.Solver()
    s.add(ceil_div_value(a, r) != floor_div_value(a + r + 1, r))
    assert s.check() == z3.unsat
