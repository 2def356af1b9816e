"""Chapter 14: every integer rewrite rule of ExprPool's constructors (§5.7) as a family of
left-hand sides, and the z3 question whether the pool's canonical result can mean anything
other than its left-hand side (invariant I5 of §5.9).

1. A rule is (constructor, rule number, instance builder, errata): the builder makes, through
   a fresh pool of the profile's errata, the argument tuples the rule fires on: symbols of a
   declared range and a declared finite set of constants (divisors in {-4,-2,-1,2,3,4}, ...).
2. For each instance the pool's constructor gives its canonical result; the left-hand side
   means the constructor's operator applied to the arguments' meanings
   (spec/crucible/expr/semantics).
3. z3 is asked for symbol values within their declared ranges under which some instance's
   result differs from its left-hand side: unsat, the rule is sound on its family; sat, the
   model is a witness (the instance and the symbol values).
4. Each rule states its verdict under the spec's profile (proved) and under the seed's: the
   erratum of the seed that breaks it (E14.501 to E14.503, and E14.550 to E14.552, which z3
   found: a nested division by a negative divisor, ceil_div by a negative divisor, and the
   fold of a negative modulus).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from ...core.errata import NO_ERRATA, SEEDS, profile_errata
from ...core.lazy_z3 import z3
from . import errata as expr_errata  # noqa: F401  (registers E14.501-E14.503 in the seed's profile)
from .node import ExprFlags, Op
from .pool import NO_SYMBOL, ExprPool, Node
from .semantics import evaluate, flag_claims, ranges, to_z3

F = ExprFlags
INTEGER_SYMBOL = int(F.IS_INTEGER | F.IS_REAL | F.IS_FINITE)
POSITIVE_SYMBOL = INTEGER_SYMBOL | int(F.IS_POSITIVE | F.IS_NONNEGATIVE)
SYMBOLS = {"x": (0, INTEGER_SYMBOL), "y": (1, INTEGER_SYMBOL), "p": (2, POSITIVE_SYMBOL),
           "q": (3, POSITIVE_SYMBOL), "e": (4, INTEGER_SYMBOL | int(F.IS_EVEN)),
           "o": (5, INTEGER_SYMBOL | int(F.IS_ODD))}
"""The instance families' symbols: x, y any integer; p, q positive (the divisors of I5); e
even; o odd."""
DIVISORS = (-4, -2, -1, 2, 3, 4)
DIVIDENDS = (-13, -7, -1, 0, 1, 7, 13)
MODULI = (-4, -3, 3, 4)

OPERATOR = {"add": Op.ADD, "add_n": Op.ADD, "mul": Op.MUL, "mul_n": Op.MUL, "pow": Op.POW,
            "neg": Op.NEG, "floor_div": Op.FLOOR_DIV, "clean_div": Op.CLEAN_DIV,
            "ceil_div": Op.CEIL_DIV, "mod": Op.MOD,
            "python_mod": Op.PYTHON_MOD, "modular_indexing": Op.MODULAR_INDEXING,
            "min_expr": Op.MIN, "max_expr": Op.MAX, "min_n": Op.MIN, "max_n": Op.MAX,
            "where": Op.WHERE, "eq": Op.EQ, "ne": Op.NE, "lt": Op.LT, "le": Op.LE,
            "gt": Op.GT, "ge": Op.GE}
N_ARY = {"add_n", "mul_n", "min_n", "max_n"}

Instances = Callable[[ExprPool, dict[str, Node]], list[tuple[Node, ...]]]


@dataclass(frozen=True)
class Rule:
    """One numbered rule of one constructor, its left-hand sides, and the seed erratum that
    breaks it (None: the seed's pool keeps it too)."""

    constructor: str
    rule: str
    statement: str
    instances: Instances
    seed: str | None = None

    @property
    def name(self) -> str:
        return f"{self.constructor} {self.rule}"

    def expected(self, errata: frozenset[str]) -> str:
        """'refuted' where the profile's pool breaks the rule, else 'proved'."""
        return "refuted" if self.seed and self.seed in errata else "proved"


@dataclass(frozen=True)
class Verdict:
    """z3's answer on a rule: 'proved' or 'refuted', with the witness instance and values."""

    status: str
    instance: str | None = None
    lhs: tuple[Node, ...] = ()
    result: Node | None = None
    values: dict[str, int] | None = None


def seed_errata() -> frozenset[str]:
    """The errata of Crucible's profile (the seed's pool)."""
    return profile_errata(SEEDS["crucible"])


def pool_with_symbols(errata: frozenset[str]) -> tuple[ExprPool, dict[str, Node]]:
    """A fresh pool of the profile's errata and the families' symbols, declared in order."""
    pool = ExprPool(errata=errata)
    return pool, {n: pool.symbol(n, i, f) for n, (i, f) in SYMBOLS.items()}


def apply(pool: ExprPool, constructor: str, args: tuple[Node, ...]) -> Node:
    """The pool's canonical result of `constructor` on `args` (an n-ary one takes the list)."""
    method = getattr(pool, constructor)
    return method(list(args)) if constructor in N_ARY else method(*args)


def lhs_meaning(constructor: str, args: tuple[Node, ...], symbols: dict[int, Any]) -> Any:
    """What the constructor is asked for: its operator over the arguments' meanings."""
    node = SimpleNamespace(op=OPERATOR[constructor], args=args, payload=0, flags=0,
                           symbol_id=NO_SYMBOL)
    return to_z3(node, symbols)


def spell(n: Node, names: dict[int, str]) -> str:
    """A node as a short s-expression for witnesses."""
    if n.op == Op.INTEGER:
        return str(n.payload)
    if n.op == Op.SYMBOL:
        return names.get(n.symbol_id, f"s{n.symbol_id}")
    if n.op in (Op.BOOL_TRUE, Op.BOOL_FALSE):
        return str(n.op == Op.BOOL_TRUE).lower()
    return f"{n.op.name}({', '.join(spell(a, names) for a in n.args)})"


def check_rule(rule: Rule, errata: frozenset[str] = NO_ERRATA,
               timeout_ms: int = 60000) -> Verdict:
    """Steps 1-3: z3's verdict on `rule` under the profile's pool."""
    pool, _ = pool_with_symbols(errata)
    cases = [(args, apply(pool, rule.constructor, args))
             for args in rule.instances(pool, _)]
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(differs_formula(rule.constructor, cases))
    answer = solver.check()
    if answer == z3.unsat:
        return Verdict("proved")
    if answer != z3.sat:
        raise TimeoutError(f"{rule.name}: z3 answered {answer}")
    return witness(rule.constructor, cases, solver.model())


def differs_formula(constructor: str, cases: list[tuple[tuple[Node, ...], Node]]) -> Any:
    """Some case's result differs from its left-hand side, all symbols within range."""
    symbols: dict[int, Any] = {}
    nodes = [n for args, result in cases for n in (*args, result)]
    diffs = [lhs_meaning(constructor, args, symbols) != to_z3(result, symbols)
             for args, result in cases]
    return z3.And(ranges(nodes, symbols), z3.Or(*diffs))


def reachable(node: Node, out: dict[int, Node]) -> dict[int, Node]:
    """Every node under `node` (itself included), by creation number."""
    if node.seq not in out:
        out[node.seq] = node
        for a in node.args:
            reachable(a, out)
    return out


def flags_formula(cases: list[tuple[tuple[Node, ...], Node]]) -> Any:
    """Some integer node a case's result reaches carries a sign, zero or parity flag its
    meaning breaks, all symbols within range."""
    symbols: dict[int, Any] = {}
    found: dict[int, Node] = {}
    for _, result in cases:
        reachable(result, found)
    numbers = [n for n in found.values() if not n.flags & ExprFlags.IS_BOOLEAN
               and n.op not in (Op.BOOL_TRUE, Op.BOOL_FALSE)]
    lies = [z3.Not(flag_claims(n.flags, to_z3(n, symbols))) for n in numbers]
    return z3.And(ranges(list(found.values()), symbols), z3.Or(False, *lies))


def witness(constructor: str, cases: list[tuple[tuple[Node, ...], Node]],
            model: z3.ModelRef) -> Verdict:
    """The first case the model breaks, with its symbols' values."""
    names = {i: n for n, (i, _) in SYMBOLS.items()}
    values = {n: model.eval(z3.Int(f"s{i}"), model_completion=True).as_long()
              for n, (i, _) in SYMBOLS.items()}
    bound = {i: z3.IntVal(values[n]) for n, (i, _) in SYMBOLS.items()}
    for args, result in cases:
        differs = lhs_meaning(constructor, args, dict(bound)) != to_z3(result, dict(bound))
        if z3.is_true(model.eval(differs, model_completion=True)):
            call = f"{constructor}({', '.join(spell(a, names) for a in args)})"
            return Verdict("refuted", call, args, result, values)
    raise AssertionError("the model breaks no case")


def python_values(v: Verdict) -> tuple[Any, Any]:
    """(left-hand side, result) of a witness on Python ints (ZeroDivisionError at / 0)."""
    assert v.result is not None and v.values is not None
    env = {i: v.values[n] for n, (i, _) in SYMBOLS.items()}
    constructor = v.instance.split("(")[0] if v.instance else ""
    node = SimpleNamespace(op=OPERATOR[constructor], args=v.lhs, payload=0, flags=0,
                           symbol_id=NO_SYMBOL)
    return evaluate(node, env), evaluate(v.result, env)
