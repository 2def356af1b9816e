"""ExprPool (facts §5.2-§5.8) through `expr.canon`: every verified vector, asked of the
reference through serve and of the spec directly, the errata of Crucible's pool (E14.501-503)
under each profile, and bad input refused naming its field."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.reference.crucible.expr.wire import expr_canon
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.crucible.expr.ops import canon_op

load_all()

SEED = "crucible@8d2680a2"
P = 0x082F
"""INTEGER|REAL|FINITE|POSITIVE|NONNEG|SYMBOL: the facts' x and y."""
XY = [{"name": "x", "flags": P}, {"name": "y", "flags": P}]
XYZ = [*XY, {"name": "z", "flags": P}]
SUM4 = ["add", ["mul", 4, "x"], 8]


def ask(expr, symbols=None, capacity=65536, profile="crucible", impl="reference") -> dict:
    """The result (or {"error": code, "message"}) of expr.canon from one implementation."""
    args = {"expr": expr, "symbols": XY if symbols is None else symbols,
            "initial_capacity": capacity}
    if impl == "spec":
        try:
            return canon_op(**args, errata=profile_errata(profile))
        except SpecError as e:
            return {"error": e.code, "message": str(e)}
    out = answer(json.dumps({"id": 1, "op": "expr.canon", "args": args}),
                 Implementation("reference", profile_errata(profile)), profile)
    if "error" in out:
        return {"error": out["error"]["code"], "message": out["error"]["message"]}
    return out["result"]


IMPLS = pytest.mark.parametrize("impl", ["reference", "spec"])


# ── §5.2 construction ─────────────────────────────────────────────────────────────────────────

@IMPLS
@pytest.mark.parametrize("capacity,size,cap", [(65536, 258, 65536), (100, 258, 512),
                                               (1, 258, 512)])
def test_a_fresh_pool_holds_258_nodes(impl, capacity, size, cap):
    out = ask(True, symbols=[], capacity=capacity, impl=impl)
    assert (out["intern_size"], out["intern_capacity"], out["new_nodes"]) == (size, cap, 0)


# ── §5.3 atom hashes, §5.5 flags ──────────────────────────────────────────────────────────────

@IMPLS
@pytest.mark.parametrize("expr,flags,hash_", [
    (0, 0x05E7, "0x939d315fa2e5f673"), (1, 0x062F, "0xe76a677baa5f1a55"),
    (-1, 0x0657, "0xfd0f1a8e3434ab0a"), (2, 0x052F, "0xcbeb2a25af1c1357"),
    (5, 0x062F, "0x6e087c5d94a909a0"), (-7, 0x0657, "0xc190ee192673a365"),
    (1000, 0x052F, "0x02c753877bd74388"), (True, 0x1000, "0x0a974846f1c50877"),
    (False, 0x1000, "0x616790d2b5aec352"), ({"float": 1.5}, 0x042E, "0xf3fbbf76e31e860e")])
def test_atom_hashes_and_flags(impl, expr, flags, hash_):
    out = ask(expr, impl=impl)
    assert out["flags"] == flags and out["nodes"][0]["hash"] == hash_


@IMPLS
@pytest.mark.parametrize("expr,flags", [
    (-2, 0x0557), (-3, 0x0657), (1 << 40, 0x052F), ({"float": -0.0}, 0x04E6),
    ({"float": -2.5}, 0x0456), ("x", P), (["make", "abs", "x"], 0),
    (["make", "bitwise_xor", "x", "y"], 0), (["make", "lshift", "x", "y"], 0x0407),
    (["make", "sqrt", "x"], 0x0406), (["make", "identity", "x"], P),
    (["make", 37, "x"], P), (["floor_div", "x", 3], 0x0021), (["floor_div", "x", -3], 0x0001),
    (["floor_div", ["add", "x", -9], 3], 0x0001), (["mod", "x", "y"], 0x0021),
    (["python_mod", "x", "y"], 0x0001), (["modular_indexing", "x", "y", 7], 0x0021),
    (["where", ["lt", "x", "y"], "x", "y"], P), (["lt", "x", "y"], 0x1000),
    (["pow", "x", "y"], 0x0006), (["add", "x", {"float": 1.5}], 0x0006)])
def test_flag_derivation(impl, expr, flags):
    assert ask(expr, impl=impl)["flags"] == flags


@IMPLS
def test_a_symbol_keeps_its_first_name_and_its_flags_are_identity(impl):
    syms = [{"name": "x", "flags": P, "id": 0}, {"name": "w", "flags": P, "id": 0},
            {"name": "v", "flags": 1, "id": 0}]
    assert ask("w", symbols=syms, impl=impl)["canon"] == "x"
    assert ask(["eq", "w", "x"], symbols=syms, impl=impl)["canon"] is True
    assert ask(["eq", "x", "v"], symbols=syms, impl=impl)["canon"] == ["EQ", "x", "x"]


# ── §5.7 constructors, §5.8 vectors ───────────────────────────────────────────────────────────

VECTORS = [
    (["floor_div", SUM4, 4], ["ADD", 2, "x"]),
    (["floor_div", ["add", ["mul", 4, "x"], 3], 4], "x"),
    (["floor_div", ["add", ["mul", 4, "x"], "y"], 4], ["ADD", "x", ["FLOOR_DIV", "y", 4]]),
    (["floor_div", ["floor_div", "x", 2], 3], ["FLOOR_DIV", "x", 6]),
    (["floor_div", ["mul", 6, "x"], 4], ["FLOOR_DIV", ["MUL", 3, "x"], 2]),
    (["floor_div", ["mul", -6, "x"], 4], ["FLOOR_DIV", ["MUL", -3, "x"], 2]),
    (["floor_div", "x", -1], ["MUL", -1, "x"]), (["floor_div", "x", "x"], 1),
    (["floor_div", -7, 2], -4), (["floor_div", 7, -2], -4),
    (["floor_div", ["mul", 2, "x"], ["mul", 4, "y"]], ["FLOOR_DIV", "x", ["MUL", 2, "y"]]),
    (["clean_div", "x", 3], ["FLOOR_DIV", "x", 3]),
    (["ceil_div", 7, 2], 4), (["ceil_div", -7, 2], -3), (["ceil_div", 7, -2], -3),
    (["ceil_div", -7, -2], 4), (["ceil_div", "x", 4], ["FLOOR_DIV", ["ADD", 3, "x"], 4]),
    (["ceil_div", "x", "y"], ["FLOOR_DIV", ["ADD", -1, "x", "y"], "y"]),
    (["mod", 7, -3], ["MOD", 7, -3]), (["mod", 7, 3], 1), (["mod", "x", "x"], 0),
    (["mod", ["mul", 2, "x"], 2], ["MOD", ["MUL", 2, "x"], 2]),
    (["python_mod", -7, 3], 2), (["python_mod", 7, -3], -2), (["python_mod", 0, "x"], 0),
    (["modular_indexing", 13, 2, 4], 2), (["modular_indexing", -13, 2, 4], 1),
    (["modular_indexing", 7, 2, -4], 3),
    (["modular_indexing", ["mul", 6, "x"], 4, 5], ["MODULAR_INDEXING", ["MUL", 3, "x"], 2, 5]),
    (["modular_indexing", ["add", ["mul", 8, "x"], "y"], 1, 4],
     ["MODULAR_INDEXING", "y", 1, 4]),
    (["modular_indexing", ["add", ["mul", 8, "x"], 8], 1, 4], 0),
    (["modular_indexing", ["floor_div", "x", 2], 3, 4], ["MODULAR_INDEXING", "x", 6, 4]),
    (["pow", 3, 62], 5069619362125685561), (["pow", "x", 0], 1), (["pow", "x", 1], "x"),
    (["pow", {"float": 2.5}, 0], 1), (["neg", ["neg", "x"]], "x"),
    (["eq", {"float": 1.0}, 1], ["EQ", 1, {"float": 1.0}]),
    (["and", "x", ["and", "y", "x"]], ["AND", "x", "x", "y"]),
    (["and", "x", ["not", "x"]], ["AND", "x", ["NOT", "x"]]),
    (["or", False, "x"], "x"), (["or", "x", True], True), (["not", ["not", "x"]], "x"),
    (["make", "mul", "x", "y", 3, "x"], ["MUL", 3, "x", "x", "y"]),
    (["min", 3, ["min", "x", 5]], ["MIN", 3, 5, "x"]),
    (["make", "add"], 0), (["make", "mul"], 1), (["make", "and"], True),
    (["make", "or"], False), (["make", "add", "x"], "x"),
    (["where", True, "x", "y"], "x"), (["where", ["lt", "x", "y"], "y", "y"], "y"),
    (["add", "x", "x"], ["MUL", 2, "x"]), (["add", "x", ["mul", 2, "x"]], ["MUL", 3, "x"]),
    (["add", "x", ["neg", "x"]], 0), (["add", ["add", "x", "y"], 3], ["ADD", 3, "x", "y"]),
    (["eq", ["add", "y", "x"], ["add", "x", "y"]], True),
    (["add", "x", {"float": 1.5}], ["ADD", "x", {"float": 1.5}]),
    (["add", {"float": 1.0}, 1], ["ADD", 1, {"float": 1.0}]),
    (["add", {"float": 1.5}, {"float": 2.5}], {"float": 4.0}),
    (["mul", 3, ["mul", "x", 4]], ["MUL", 12, "x"]),
    (["add", ["mul", 2, "x"], ["mul", 3, "x"]], ["MUL", 5, "x"]),
    (["add", ["mul_n", 2, "x", "y"], ["mul", "x", "y"]], ["MUL", 3, "x", "y"]),
    (["make", "add", "x", "y", 3, "x"], ["ADD", 3, "y", ["MUL", 2, "x"]]),
    (["add", ["pow", "x", 2], ["pow", "x", 2]], ["MUL", 2, ["POW", "x", 2]]),
    (["eq", "y", "x"], ["EQ", "x", "y"]), (["lt", "y", "x"], ["LT", "y", "x"]),
    (["le", "x", "x"], True), (["gt", "x", "x"], False), (["ge", 3, 2], True),
    (["min", "x", ["min", "y", "x"]], ["MIN", "x", "y"]),
    (["add", 9223372036854775807, 1], -9223372036854775808),
    (["mul", 4611686018427387904, 4], 0),
]


@IMPLS
@pytest.mark.parametrize("expr,canon", VECTORS)
def test_verified_vectors(impl, expr, canon):
    assert ask(expr, impl=impl)["canon"] == canon


@IMPLS
@pytest.mark.parametrize("expr,canon", [
    (["make", "add", ["mul", 2, ["add", "x", "y"]], ["mul", -1, ["add", "x", "y"]], "z"],
     ["ADD", "z", ["ADD", "x", "y"]]),
    (["make", "add", ["add", "x", "y"], ["mul", 2, ["add", "x", "y"]],
      ["mul", -1, ["add", "x", "y"]]], ["ADD", "x", "y", ["ADD", "x", "y"]]),
    (["mul", 3, ["mul", "x", ["add", "x", "y"]]], ["MUL", 3, "x", ["ADD", "x", "y"]])])
def test_sums_nest_without_distribution(impl, expr, canon):
    assert ask(expr, symbols=XYZ, impl=impl)["canon"] == canon


@IMPLS
def test_parity_flags_answer_mod_two(impl):
    syms = [{"name": "e", "flags": 0x0101}, {"name": "o", "flags": 0x0201}]
    assert ask(["mod", "e", 2], symbols=syms, impl=impl)["canon"] == 0
    assert ask(["python_mod", "o", 2], symbols=syms, impl=impl)["canon"] == 1


@IMPLS
def test_the_floor_div_node_inside_a_sum_is_nonnegative(impl):
    out = ask(["floor_div", ["add", ["mul", 4, "x"], "y"], 4], impl=impl)
    fd = next(n for n in out["nodes"] if n["op"] == "FLOOR_DIV")
    assert fd["flags"] == 0x0021 and out["flags"] == 0x0001


@IMPLS
def test_intern_count_of_two_products_over_an_existing_one(impl):
    """MUL(x,y), then MUL(5,x,y), MUL(7,x,y), MUL(12,x,y) (3 new, §5.8), then the MAX."""
    expr = ["max", ["mul", "x", "y"],
            ["add", ["mul_n", 5, "x", "y"], ["mul_n", 7, "y", "x"]]]
    out = ask(expr, impl=impl)
    assert out["canon"] == ["MAX", ["MUL", "x", "y"], ["MUL", 12, "x", "y"]]
    assert out["new_nodes"] == 5 and out["intern_size"] == 258 + 2 + 5


# ── errata ────────────────────────────────────────────────────────────────────────────────────

@IMPLS
@pytest.mark.parametrize("expr,spec,seed", [
    (["floor_div", SUM4, -4], ["MUL", -1, ["ADD", 2, "x"]], ["ADD", 8, ["MUL", 4, "x"]]),
    (["floor_div", ["add", ["mul", 4, "x"], "y"], -4],
     ["FLOOR_DIV", ["ADD", "y", ["MUL", 4, "x"]], -4],
     ["ADD", ["MUL", 4, "x"], ["FLOOR_DIV", "y", -4]]),
    (["floor_div", 7, 0], ["FLOOR_DIV", 7, 0], ["FLOOR_DIV", 1, 0]),
    (["floor_div", 0, 0], ["FLOOR_DIV", 0, 0], 0),
    (["modular_indexing", 7, 0, 4], ["MODULAR_INDEXING", 7, 0, 4],
     ["MODULAR_INDEXING", 1, 0, 4]),
    (["mod", -7, 3], 2, -1)])
def test_errata_of_the_seed_pool(impl, expr, spec, seed):
    assert ask(expr, impl=impl)["canon"] == spec
    assert ask(expr, profile=SEED, impl=impl)["canon"] == seed


# ── bad input ─────────────────────────────────────────────────────────────────────────────────

@IMPLS
@pytest.mark.parametrize("expr,field", [
    (["add", "z", 1], "args.expr[1]"), (["frob", 1], "args.expr[0]"),
    (["make", "frob", 1], "args.expr[1]"), (["make", 77, 1], "args.expr[1]"),
    (["make", "integer"], "args.expr[1]"), (["make", "sqrt", "x", "y"], "args.expr"),
    (["floor_div", 1], "args.expr"), (["modular_indexing", 1, 2], "args.expr"),
    (["add", 1.5, 1], "args.expr[1]"), (["add", 1 << 63, 1], "args.expr[1]"),
    (["add", {"float": "1"}, 1], "args.expr[1]"), ([], "args.expr"), ([3, 1], "args.expr"),
    (["min"], "args.expr"), (["add_n", *(["x"] * 300)], "args.expr")])
def test_bad_expressions_are_refused_naming_the_field(impl, expr, field):
    out = ask(expr, impl=impl)
    assert out["error"] == "invalid_input" and field in out["message"], out


@IMPLS
@pytest.mark.parametrize("symbols,field", [
    ([{"name": "x"}, {"name": "x"}], "args.symbols[1]"),
    ([{"name": "1x"}], "args.symbols[0]"), ([{"name": "x", "flags": 70000}], "args.symbols[0]")])
def test_bad_symbols_are_refused(impl, symbols, field):
    out = ask(1, symbols=symbols, impl=impl)
    assert out["error"] in ("invalid_input", "bad_request") and field in out["message"], out


def _deep(n: int) -> list:
    e: object = "x"
    for _ in range(n):
        e = ["neg", e]
    return e


@IMPLS
def test_an_expression_300_deep_is_refused(impl):
    out = ask(_deep(300), impl=impl)
    assert out["error"] == "invalid_input" and "deep" in out["message"], out


@pytest.mark.parametrize("build", [canon_op, expr_canon])
def test_an_expression_a_hundred_thousand_deep_is_refused_without_recursion(build):
    with pytest.raises(SpecError) as e:
        build(expr=_deep(100_000), symbols=XY, initial_capacity=65536)
    assert e.value.code == "invalid_input" and "args.expr" in str(e.value)


@IMPLS
def test_256_deep_is_built(impl):
    assert ask(_deep(255), impl=impl)["canon"] == ["MUL", -1, "x"]


def _expressions():
    """Expressions over x, y (positive), z (an integer that may be zero) and small integers."""
    leaves = st.integers(-3, 3) | st.sampled_from(["x", "y", "z"])
    heads = st.sampled_from(["add", "mul", "floor_div", "ceil_div", "mod", "python_mod", "min",
                             "max"])
    return st.recursive(leaves, lambda kids: st.tuples(heads, kids, kids).map(list) |
                        st.tuples(st.just("modular_indexing"), kids, kids, kids).map(list),
                        max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(expr=_expressions(), profile=st.sampled_from(["crucible", "crucible@8d2680a2"]))
def test_the_reference_and_the_spec_pool_agree_on_generated_expressions(expr, profile):
    """expr.canon's reference writes every rule a second time: a rule changed in one copy
    only (E14.505's first version) shows here, on divisors of every sign flag."""
    symbols = [*XY, {"name": "z", "flags": 0x0807}]
    assert ask(expr, symbols, impl="spec", profile=profile) == ask(expr, symbols,
                                                                    profile=profile)
