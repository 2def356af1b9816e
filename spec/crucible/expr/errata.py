"""Chapter 14: where Crucible's ExprPool (8d2680a2) departs from the spec's constructors. Each
witness is one of the facts' verified vectors, asked of `expr.canon` with x and y declared
as integer, positive symbols."""

from __future__ import annotations

from ...core.errata import SEEDS, erratum
from .divide import E14_501, E14_502, E14_503, E14_504, E14_505, E14_550, E14_551, E14_552
from .ops import UNSIGNED_Z, canon_args

E14_500 = "E14.500"
SUM4 = ["add", ["mul", 4, "x"], 8]
"""4x + 8."""

erratum(
    E14_500, "Canonical child order is the order of node addresses",
    seed=SEEDS["crucible"], location="include/crucible/ExprPool.h add_n, mul_n, and_n, eq",
    ops=("expr.canon",),
    witness={"code": "children of ADD, MUL, AND, OR, MIN, MAX, EQ and NE are sorted by "
                     "pointer (std::ranges::sort on const Expr*)"},
    flag="doc",
    detail="The facts call the order canonical, but it is the order of addresses: inside one "
           "1 MiB arena block that is creation order, no other implementation can reproduce "
           "addresses, and the order changes once a second block comes from malloc. The spec "
           "orders children by creation (a counter kept on each node), which is what the real "
           "pool does while its nodes fit one block.",
)
erratum(
    E14_501, "floor_div of a sum by a negative integer returns the sum's terms undivided",
    seed=SEEDS["crucible"], location="include/crucible/ExprPool.h floor_div (rule 7), "
                                      "divide_coefficients",
    ops=("expr.canon",),
    witness={"args": canon_args(["floor_div", SUM4, -4]),
             "spec": {"canon": ["MUL", -1, ["ADD", 2, "x"]]},
             "seed": {"canon": ["ADD", 8, ["MUL", 4, "x"]]}},
    flag="result",
    detail="Rule 7 moves every term whose coefficient d divides out of the division as "
           "divide_coefficients(t, d), but divide_coefficients leaves its argument unchanged "
           "for a factor <= 1, so a negative d keeps each such term whole: (4x + 8) // -4 "
           "becomes 4x + 8, and (4x + y) // -4 becomes 4x + y // -4. The spec applies rule 7 "
           "only to a positive divisor; a negative one goes on to the common-factor rule, "
           "which cancels 4 and leaves (x + 2) // -1 = -(x + 2).",
)
erratum(
    E14_502, "Division by the constant zero is simplified as if zero were a common factor",
    seed=SEEDS["crucible"], location="include/crucible/ExprPool.h floor_div (rule 8), "
                                      "modular_indexing (rule 3), integer_factor",
    ops=("expr.canon",),
    witness={"args": canon_args(["floor_div", 7, 0]),
             "spec": {"canon": ["FLOOR_DIV", 7, 0]},
             "seed": {"canon": ["FLOOR_DIV", 1, 0]}},
    also=({"op": "expr.canon", "args": canon_args(["modular_indexing", 7, 0, 4]),
           "spec": {"canon": ["MODULAR_INDEXING", 7, 0, 4]},
           "seed": {"canon": ["MODULAR_INDEXING", 1, 0, 4]}},
          {"op": "expr.canon", "args": canon_args(["floor_div", 0, 0]),
           "spec": {"canon": ["FLOOR_DIV", 0, 0]}, "seed": {"canon": 0}}),
    flag="result",
    detail="integer_factor(0) is 0 and gcd(7, 0) is 7, so the common-factor rule divides both "
           "sides by 7: 7 // 0 becomes 1 // 0, and modular_indexing(7, 0, 4) becomes "
           "modular_indexing(1, 0, 4); 0 // 0 folds to 0 by the zero-dividend rule. A division "
           "by zero has no value to preserve, so the spec leaves FLOOR_DIV(l, 0) and "
           "MODULAR_INDEXING(b, 0, m) exactly as given, before any other rule.",
)
erratum(
    E14_503, "mod folds constants with C's truncating remainder, yet flags MOD non-negative",
    seed=SEEDS["crucible"], location="include/crucible/ExprPool.h mod",
    ops=("expr.canon",),
    witness={"args": canon_args(["mod", -7, 3]), "spec": {"canon": 2, "flags": 0x052F},
             "seed": {"canon": -1, "flags": 0x0657}},
    flag="result",
    detail="Ops.h calls MOD the non-negative modulus, and every MOD node carries "
           "IS_NONNEGATIVE, but two integer constants fold with C++'s `%`, whose result has the "
           "dividend's sign: mod(-7, 3) is -1. The spec folds a positive divisor with the "
           "floor modulo (python_mod's), so mod(-7, 3) is 2 and a folded MOD is never "
           "negative, as its node's flags say.",
)
erratum(
    E14_504, "mod and python_mod by the constant zero fold 0 % 0 to 0 and flag MOD(l, 0) "
    "non-negative",
    seed=SEEDS["crucible"], location="include/crucible/ExprPool.h mod, python_mod",
    ops=("expr.canon",),
    witness={"args": canon_args(["mod", 0, 0]),
             "spec": {"canon": ["MOD", 0, 0], "flags": 0x0001}, "seed": {"canon": 0}},
    also=({"op": "expr.canon", "args": canon_args(["python_mod", 0, 0]),
           "spec": {"canon": ["PYTHON_MOD", 0, 0]}, "seed": {"canon": 0}},
          {"op": "expr.canon", "args": canon_args(["mod", "x", 0]),
           "spec": {"canon": ["MOD", "x", 0], "flags": 0x0001},
           "seed": {"canon": ["MOD", "x", 0], "flags": 0x0021}}),
    flag="result",
    detail="Neither constructor looks at a zero divisor first: the zero-dividend rule folds "
           "0 % 0 to 0, and any other MOD(l, 0) is made with MOD's flags, integer and "
           "non-negative. A remainder by zero has no value (C++'s `%` by zero is undefined, "
           "Python's raises), so there is nothing to fold it to and no sign to claim. The "
           "spec leaves MOD(l, 0) and PYTHON_MOD(l, 0) exactly as given, flagged integer only, "
           "before any other rule, as it does FLOOR_DIV(l, 0) (E14.502).",
)
erratum(
    E14_505, "0 // z, z // z, 0 % z, z % z, (0 // z) mod m and (b // z) mod 1 fold, and MOD(l, z) "
    "and MODULAR_INDEXING(b, d, z) are flagged non-negative, for a divisor or modulus that may "
    "be zero",
    seed=SEEDS["crucible"], location="include/crucible/ExprPool.h floor_div (rules 2, 5), mod, "
                                      "python_mod, modular_indexing",
    ops=("expr.canon",),
    witness={"args": canon_args(["floor_div", "z", "z"], UNSIGNED_Z),
             "spec": {"canon": ["FLOOR_DIV", "z", "z"]}, "seed": {"canon": 1}},
    also=({"op": "expr.canon", "args": canon_args(["floor_div", 0, "z"], UNSIGNED_Z),
           "spec": {"canon": ["FLOOR_DIV", 0, "z"]}, "seed": {"canon": 0}},
          {"op": "expr.canon", "args": canon_args(["mod", "z", "z"], UNSIGNED_Z),
           "spec": {"canon": ["MOD", "z", "z"]}, "seed": {"canon": 0}},
          {"op": "expr.canon", "args": canon_args(["python_mod", 0, "z"], UNSIGNED_Z),
           "spec": {"canon": ["PYTHON_MOD", 0, "z"]}, "seed": {"canon": 0}},
          {"op": "expr.canon", "args": canon_args(["mod", 7, "z"], UNSIGNED_Z),
           "spec": {"canon": ["MOD", 7, "z"], "flags": 0x0001},
           "seed": {"canon": ["MOD", 7, "z"], "flags": 0x0021}},
          {"op": "expr.canon", "args": canon_args(["modular_indexing", 0, "z", 4], UNSIGNED_Z),
           "spec": {"canon": ["MODULAR_INDEXING", 0, "z", 4]}, "seed": {"canon": 0}},
          {"op": "expr.canon", "args": canon_args(["modular_indexing", 7, 4, "z"], UNSIGNED_Z),
           "spec": {"canon": ["MODULAR_INDEXING", 7, 4, "z"], "flags": 0x0001},
           "seed": {"canon": ["MODULAR_INDEXING", 7, 4, "z"], "flags": 0x0021}}),
    flag="result",
    detail="The identities 0 // r = 0, l // l = 1, 0 % r = 0 and l % l = 0 hold only where the "
           "divisor is not zero. The seed applies them to any divisor, so for an integer "
           "symbol z with no sign flag, z // z becomes 1 and z % z becomes 0, although at "
           "z = 0 neither has a value; the spec keeps them for a divisor flagged positive or "
           "negative and otherwise leaves the node, as it leaves a constant zero divisor "
           "(E14.502, E14.504); a MOD node claims no sign over such a divisor (the seed's "
           "MOD(7, z) is flagged non-negative). modular_indexing(b, d, m) is (b // d) mod m: "
           "the seed folds it to 0 for b = 0 or m = 1 whatever d and m are, and flags every "
           "such node non-negative; the spec folds only where d and m are known non-zero, and "
           "claims no sign where m may be zero.",
)
erratum(
    E14_550, "A nested floor division merges its divisors even when the outer one is negative",
    seed=SEEDS["crucible"], location="include/crucible/ExprPool.h floor_div (rule 6), "
                                      "modular_indexing (rule 5)",
    ops=("expr.canon",),
    witness={"args": canon_args(["floor_div", ["floor_div", "x", 2], -2]),
             "spec": {"canon": ["FLOOR_DIV", ["FLOOR_DIV", "x", 2], -2]},
             "seed": {"canon": ["FLOOR_DIV", "x", -4]}},
    also=({"op": "expr.canon",
           "args": canon_args(["modular_indexing", ["floor_div", "x", 2], -2, 5]),
           "spec": {"canon": ["MODULAR_INDEXING", ["FLOOR_DIV", "x", 2], -2, 5]},
           "seed": {"canon": ["MODULAR_INDEXING", "x", -4, 5]}},),
    flag="result",
    detail="floor(floor(a / b) / c) is floor(a / (b c)) only for c > 0: at x = 1, (x // 2) // -2 "
           "is 0 and x // -4 is -1 (z3's witnesses: PO14.566, PO14.586). The spec merges the "
           "divisors only when the outer one is known positive (a positive INTEGER or a "
           "symbol declared positive) and otherwise keeps the nested division.",
)
erratum(
    E14_551, "ceil_div by a divisor not known positive is rewritten with the positive form",
    seed=SEEDS["crucible"], location="include/crucible/ExprPool.h ceil_div",
    ops=("expr.canon",),
    witness={"args": canon_args(["ceil_div", "x", -2]),
             "spec": {"canon": ["FLOOR_DIV", ["ADD", -1, "x"], -2]},
             "seed": {"canon": ["FLOOR_DIV", ["ADD", -3, "x"], -2]}},
    flag="result",
    detail="ceil(l / r) = floor((l + r - 1) / r) holds only for r > 0: at x = 1, ceil(1 / -2) "
           "is 0 while (1 - 3) // -2 is 1 (z3's witness: PO14.573). The spec keeps that form "
           "for a divisor known positive, uses floor((l + r + 1) / r) for one known negative, "
           "and -floor(-l / r) (true for every non-zero r) when the sign is unknown.",
)
erratum(
    E14_552, "modular_indexing folds a negative modulus to a negative value",
    seed=SEEDS["crucible"], location="include/crucible/ExprPool.h modular_indexing (rule 2)",
    ops=("expr.canon",),
    witness={"args": canon_args(["modular_indexing", -5, 2, -4]),
             "spec": {"canon": 1}, "seed": {"canon": -7}},
    flag="result",
    detail="The fold takes C's remainder v of (b // d) by m and adds m when v < 0; with m < 0 "
           "that moves v further down: (-5 // 2) mod -4 is -3 + -4 = -7, which is neither the "
           "non-negative value every MODULAR_INDEXING node's flags state nor Python's -3. The "
           "spec adds |m|, so the fold is (b // d) mod |m|, in [0, |m|) (PO14.582).",
)
