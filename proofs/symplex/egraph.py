"""Chapter 13 and 14 obligations of SympleX's e-graph: each rule's verdict is right about its
own evidence (PO14.400), every rule in use is proved over the reals by z3 (PO14.401),
saturation keeps its limits and refuses unsound rules (PO14.402), extraction answers a cheaper
term of equal value at the cost it reports (PO14.403), the evaluator accumulates in its stated
order and takes exp and tanh from the C library, exp +inf past overflow (PO14.404), and the
cost is flops plus the ridge point times bytes (PO13.400)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import strategies as st

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.symplex import tensor_expr
from ...spec.symplex.egraph.cost import KNEE, node_cost, node_flops, term_cost
from ...spec.symplex.egraph.ops import FACTOR, MLP, attention, terms
from ...spec.symplex.egraph.patterns import (
    RealSemantics,
    differs_over_reals,
    eval_ieee,
    parse_pattern,
)
from ...spec.symplex.egraph.rules import (
    BY_NAME,
    PLANTED,
    RULES,
    USABLE,
    Rule,
    decide,
    disagree,
    require_usable,
    trials,
    verdict,
)
from ...spec.symplex.egraph.saturate import Limits, extract, saturate, saturate_graph
from ...spec.symplex.tensor_expr import Const, Op, Sym, Ty, evaluate, seq_matmul, seq_sum, symbols
from ...spec.symplex.tensor_expr import term_from_wire as parse
from ..core.obligation import Property, Query, property_obligation, z3_obligation

RTOL = 1e-9
"""Extraction's envelope: an extracted term's float64 value is within RTOL relative (plus
RTOL absolute) of the input's, on inputs drawn from N(0, 1)."""


def _fresh(rule: Rule):
    """The verdict computed now (not the cached one), so a planted bug is seen."""
    return verdict.__wrapped__(rule)


def _verdict_right(rule: Rule) -> None:
    v = _fresh(rule)
    if rule in PLANTED:
        assert v.verdict == "unsound", (rule.name, v)
        env = {k: np.array([[float(x) for x in row] for row in rows])
               for k, rows in v.counterexample["inputs"].items()}
        lhs, rhs = parse_pattern(rule.lhs), parse_pattern(rule.rhs)
        assert disagree(eval_ieee(lhs, env), eval_ieee(rhs, env)), "the counterexample replays"
    else:
        assert v.verdict in USABLE and v.reals == "proved", (rule.name, v)
        assert v.verdict == ("definition" if rule.definition else "sound"), (rule.name, v)
    assert v.verdict == decide(rule, v.reals, v.ieee)


@property_obligation(
    "PO14.400",
    "Every rule of the e-graph gets the verdict its evidence supports: each of RULES is sound "
    "(or a definition) and proved over the reals; each planted rule (A * 0 -> 0, x / x -> 1) "
    "is unsound, and its counterexample, evaluated again, shows the two sides disagree.",
    covers=("egraph.rules", "egraph.saturate"),
    subject=decide,
    mutants=(
        Mutant.edit("guardrail says yes", "an IEEE refutation does not make a rule unsound",
                    decide, 'if ieee == "refuted":', 'if ieee == "never":'),
        Mutant.edit("NaN is a number", "a finite result against a NaN one is no disagreement",
                    disagree, "if np.any(fa != fb):", "if False:"),
        Mutant.edit("no special values", "the IEEE trials draw no NaN, Inf or signed zero",
                    trials, "for _ in range(SPECIAL_TRIALS):", "for _ in range(0):"),
        Mutant.edit("definitions are rules", "a fused form's rule is called sound",
                    decide, '"definition" if rule.definition else "sound"', '"sound"'),
    ),
)
def verdicts_right(_subject):
    return [Property("every rule and planted rule", _verdict_right,
                     cases=lambda: list(RULES + PLANTED))]


@z3_obligation(
    "PO14.401",
    "Every rule of RULES holds over the reals: no 2x2 real matrices (exp, tanh and sqrt any "
    "functions) make its two sides differ. The IEEE caveat is the verdict's: rounding changes.",
    covers=("egraph.rules", "egraph.saturate"),
    subject=RULES,
    mutants=(
        Mutant("a wrong rule", "sub is taken as commutative",
               subject=(*RULES, Rule("sub-comm", "(sub ?a ?b)", "(sub ?b ?a)", "planted"))),
        Mutant("a wrong decomposition", "softmax divides by the max instead of the sum",
               subject=(*RULES, Rule("softmax-max", "(softmax ?x)",
                                     "(div (exp ?x) (reducemax (exp ?x) -1))", "planted"))),
        Mutant.edit("matmul by rows", "matmul reads b by rows", RealSemantics.matmul,
                    "a[i, k] * b[k, j]", "a[i, k] * b[j, k]"),
        Mutant.edit("sub reversed", "real sub is b - a", RealSemantics.apply,
                    '"sub": lambda a, b: a - b', '"sub": lambda a, b: b - a'),
    ),
)
def rules_hold_over_reals(rules):
    return [Query(r.name, differs_over_reals(parse_pattern(r.lhs), parse_pattern(r.rhs)))
            for r in rules]


def _limits_kept(case: tuple) -> None:
    term, limits = case
    graph, iterations, reason = saturate_graph(term, list(RULES), limits)
    nodes = sum(1 for n in graph["nodes"].values() if n["eclass"].startswith("T-"))
    assert iterations <= limits.iterations, (iterations, limits)
    if reason != "node_limit":
        assert nodes <= limits.nodes, (nodes, reason)
    if reason == "iteration_limit":
        assert iterations == limits.iterations
    if reason == "node_limit" and iterations > 0:
        graph, _, _ = saturate_graph(term, list(RULES), Limits(iterations - 1, limits.nodes))
        before = sum(1 for n in graph["nodes"].values() if n["eclass"].startswith("T-"))
        assert before <= limits.nodes, "the node limit stops the first iteration past it"


def _refused(names: list[str]) -> None:
    try:
        saturate(parse(FACTOR), [BY_NAME[n] for n in names])
    except InvalidInput as e:
        assert any(r.name in str(e) for r in PLANTED), e
        return
    raise AssertionError(f"{names} accepted")


def _limit_cases() -> list:
    att = parse(attention(4, 4))
    return [(att, Limits(6, 500)), (att, Limits(2, 10_000)), (parse(MLP), Limits(30, 10_000)),
            (parse(FACTOR), Limits(1, 10_000))]


@property_obligation(
    "PO14.402",
    "Saturation keeps its limits: never more iterations than the limit; more nodes than the "
    "limit only when it stopped for the node limit, and then one iteration fewer was within "
    "it; the iteration limit reached exactly when that is the reason. A planted unsound rule "
    "is refused before anything runs.",
    covers=("egraph.saturate",),
    subject=saturate_graph,
    mutants=(
        Mutant.edit("no node limit", "the node count is never checked", saturate_graph,
                    "if _size(eg) > limits.nodes:", "if False:"),
        Mutant.edit("one more iteration", "the iteration bound is inclusive", saturate_graph,
                    "while iterations < limits.iterations:",
                    "while iterations <= limits.iterations:"),
        Mutant.edit("unchecked rules", "a rule's verdict is not looked at", require_usable,
                    "if v.verdict not in USABLE:", "if False:"),
    ),
)
def limits_kept(_subject):
    return [Property("an attention block, an MLP and A@B + A@C", _limits_kept,
                     cases=_limit_cases),
            Property("the planted rules", _refused,
                     cases=lambda: [[r.name] for r in PLANTED] + [["add-comm", "mul-zero"]])]


def _extracts(case: tuple) -> None:
    term, limits, cheaper = case
    r = saturate(term, list(RULES), limits)
    assert r.cost == term_cost(r.term), "the cost reported is the extracted term's"
    assert r.input_cost == term_cost(term)
    assert (r.cost < r.input_cost) if cheaper else (r.cost <= r.input_cost), (r.cost, r.input_cost)
    rng = np.random.default_rng(7)
    for _ in range(3):
        env = {n: rng.normal(size=s.shape) for n, s in symbols(term).items()}
        a, b = evaluate(term, env), evaluate(r.term, env)
        assert a.shape == b.shape or np.broadcast_shapes(a.shape, b.shape) == a.shape
        assert np.allclose(a, b, rtol=RTOL, atol=RTOL), np.max(np.abs(a - b))


def _extract_cases() -> list:
    return [(parse(FACTOR), Limits(), True), (parse(MLP), Limits(), True),
            (parse(attention(4, 4)), Limits(4, 2000), True)]


@property_obligation(
    "PO14.403",
    "Extraction answers a term of the input's value (within 1e-9 relative on random inputs) "
    "whose cost is the one reported and no more than the input's: strictly less for A@B + A@C "
    "(as A@(B+C)), a 2-layer MLP and an attention block (fused forms), and on generated terms.",
    covers=("egraph.saturate",),
    subject=extract,
    mutants=(
        Mutant.edit("first node", "the first e-node of a class is kept", extract,
                    "if c not in best or total < best[c][0]:", "if c not in best:"),
        Mutant.edit("own cost only", "a node's cost leaves out its operands", extract,
                    "total = cost + sum(best[k][0] for k in n.children)", "total = cost"),
    ),
)
def extraction_right(_subject):
    gen = st.builds(lambda t: (t, Limits(3, 400), False), terms((2, 2), 3))
    return [Property("A@B + A@C, an MLP, an attention block", _extracts, cases=_extract_cases),
            Property("generated terms", _extracts, strategy=lambda: gen, examples=60)]


def _order(case: tuple) -> None:
    m, k, n, seed = case
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(m, k)) * 1e3, rng.normal(size=(k, n))
    got = seq_matmul(a, b)
    for i, j in itertools.product(range(m), range(n)):
        acc = 0.0
        for p in range(k):
            acc = acc + a[i, p] * b[p, j]
        assert got[i, j] == acc, (i, j)
    s = seq_sum(a, 1)
    for i in range(m):
        acc = 0.0
        for j in range(k):
            acc = acc + a[i, j]
        assert s[i, 0] == acc, (i, s[i, 0], acc)
    assert evaluate(Op("matmul", (Sym("A", (m, k)), Sym("B", (k, n)))),
                    {"A": a, "B": b}).tolist() == got.tolist()


@property_obligation(
    "PO14.404",
    "The evaluator's matmul and reducesum add their terms in increasing index order from 0.0, "
    "one at a time, bit for bit; exp and tanh are the C library's element by element, exp "
    "+inf past the largest double, so sigmoid reaches exactly 0 and 1.",
    covers=("egraph.eval",),
    subject=seq_matmul,
    mutants=(
        Mutant.edit("reversed k", "matmul accumulates from the last k", seq_matmul,
                    "for k in range(a.shape[1]):", "for k in reversed(range(a.shape[1])):"),
        Mutant.edit("pairwise sum", "reducesum is numpy's pairwise sum", seq_sum,
                    "acc = acc + np.take(x, [i], axis=axis)",
                    "acc = np.sum(x, axis=axis, keepdims=True)"),
        Mutant.edit("overflow is 0", "exp past the largest double answers 0",
                    tensor_expr._libm_exp, "return math.inf", "return 0.0"),
        Mutant.edit("tanh in binary32", "tanh is rounded to float32", tensor_expr.tanh,
                    "dtype=np.float64", "dtype=np.float32"),
    ),
)
def evaluation_order(_subject):
    return [Property("shapes up to 5 x 40 x 5", _order, cases=lambda: [
        (m, k, n, seed) for (m, k, n) in ((1, 1, 1), (2, 3, 4), (5, 40, 3), (3, 17, 5))
        for seed in range(3)]),
            Property("exp and tanh at and past their limits", _transcendental, cases=lambda: [
                -math.inf, -1000.0, -709.0, -20.0, -1.0, -1e-300, 0.0, 0.5, 1.0, 20.0, 709.0,
                709.78, 710.0, 1000.0, 1e300, math.inf])]


def _transcendental(v: float) -> None:
    x = np.array([[v, -v]])
    e, t = tensor_expr.exp(x), tensor_expr.tanh(x)
    assert e.dtype == t.dtype == np.float64 and e.shape == t.shape == x.shape
    for got, want in ((e[0, 0], _c_exp(v)), (t[0, 0], math.tanh(v))):
        assert got == want, (v, got, want)
    sig = evaluate(Op("sigmoid", (Sym("x", (1, 2)),)), {"x": x})[0, 0]
    if v < -LN_DBL_MAX:
        assert sig == 0.0, (v, sig)
    elif v >= 37.0:
        assert sig == 1.0, (v, sig)
    elif -700.0 <= v <= 30.0:
        assert 0.0 < sig < 1.0, (v, sig)


LN_DBL_MAX = 709.782712893384
"""ln of the largest double: exp of anything greater overflows."""


def _c_exp(v: float) -> float:
    """C's exp: math.exp, and +inf where the result overflows (C99 7.12.6.1)."""
    return math.inf if v > LN_DBL_MAX else math.exp(v)


def _roofline(case: tuple) -> None:
    m, k, n = case
    a, b, out, bias = Ty((m, k), "f32"), Ty((k, n), "f32"), Ty((m, n), "f32"), Ty((n,), "f32")
    assert node_cost("matmul", [a, b], out) == 2 * m * k * n + KNEE * 4 * (m * k + k * n + m * n)
    assert node_cost("add", [out, bias], out) == m * n + KNEE * 4 * (2 * m * n + n)
    terms_ = {s: Sym(s, t.shape) for s, t in (("A", a), ("B", b), ("c", bias))}
    mm = Op("matmul", (terms_["A"], terms_["B"]))
    relu, fused_relu = Op("relu", (mm,)), Op("fused_matmul_relu", (terms_["A"], terms_["B"]))
    add, fused_add = Op("add", (mm, terms_["c"])), Op("fused_matmul_add", (*mm.args, terms_["c"]))
    saved = KNEE * 4 * 2 * m * n
    assert term_cost(relu) - term_cost(fused_relu) == saved, "fusing saves the intermediate"
    assert term_cost(add) - term_cost(fused_add) == saved
    assert term_cost(Op("mul", (mm, Const(2.0)))) == term_cost(mm) + m * n + \
        KNEE * 4 * (2 * m * n + 1)
    assert node_flops("matmul", [a, b], out) == 2 * m * k * n


@property_obligation(
    "PO13.400",
    "A node's cost is its flops plus the ridge point (295 FLOP/B) times the bytes it moves "
    "(operands read, result written): a matmul costs 2mkn + 295 x 4(mk + kn + mn) in f32, and "
    "fusing relu or a bias into a matmul saves exactly the intermediate's write and read.",
    covers=("egraph.cost", "egraph.saturate"),
    subject=node_cost,
    mutants=(
        Mutant.edit("no bytes", "the cost ignores bytes", node_cost,
                    "+ KNEE * node_bytes(operands, result)", "+ 0 * node_bytes(operands, result)"),
        Mutant.edit("no flops", "the cost ignores flops", node_cost,
                    "return node_flops(op, operands, result) +", "return 0 +"),
        Mutant.edit("mkn", "a matmul counts one flop per multiply-add", node_flops,
                    "return 2 * m * k * n +", "return m * k * n +"),
    ),
)
def roofline_cost(_subject):
    return [Property("matmul shapes", _roofline, cases=lambda: list(
        itertools.product((1, 2, 8, 64), (1, 3, 32), (1, 4, 128))))]
