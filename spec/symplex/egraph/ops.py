"""Chapter 14: SympleX's e-graph as ops: `egraph.eval`, `egraph.cost`, `egraph.rules` and
`egraph.saturate`, and the errata of SympleX's fusion engine (facts §2.2-2.3).

1. `egraph.eval` evaluates a wire term (spec/symplex/tensor_expr.py) on row-major float inputs and
   answers the result's shape and float64 bit patterns.
2. `egraph.cost` answers the term's bytes, flops and cost (spec/symplex/egraph/cost.py).
3. `egraph.rules` answers every rule, planted ones included, with its verdict.
4. `egraph.saturate` checks the rules, saturates, and answers the cheapest term and the run's
   counts (spec/symplex/egraph/saturate.py).
"""

from __future__ import annotations

import math
import struct

import numpy as np

from ...core.errata import SEEDS, erratum
from ...core.errors import InvalidInput
from ...core.registry import InvalidCase, declare
from ...core.schema import HASH64, I64, U32, U64, Field, Int, Json, List, Optional, Utf8, record
from ...core.strategies import st
from ...pyc.wire import Named
from ..tensor_expr import (
    Const,
    Op,
    Sym,
    check_term,
    evaluate,
    symbols,
    term_from_wire,
    term_to_wire,
)
from .cost import cost_breakdown, term_cost
from .rules import PLANTED, RULES, caveat, require_usable, verdict
from .saturate import SYMPLEX_ITERATIONS, SYMPLEX_NODES, Limits, saturate

SYMPLEX = SEEDS["symplex"]
MAX_ELEMENTS = 65_536
"""The most elements one tensor of `egraph.eval` may hold."""
STOP_REASONS = ("saturated", "iteration_limit", "node_limit")
TERM = Json("term: {op, args, axis?} | {sym, shape, dtype} | {const}", {"type": "object"})


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def inputs_from_wire(t, inputs: dict) -> dict[str, np.ndarray]:
    """Each symbol's row-major values as an array of its shape."""
    if not isinstance(inputs, dict):
        raise InvalidInput("args.inputs: an object of symbol name -> row-major numbers")
    syms = symbols(t)
    extra = sorted(set(inputs) - set(syms))
    if extra:
        raise InvalidInput(f"args.inputs.{extra[0]}: the term has no such symbol")
    env = {}
    for name, s in syms.items():
        vals, n = inputs.get(name), math.prod(s.shape)
        if n > MAX_ELEMENTS:
            raise InvalidInput(f"args.inputs.{name}: more than {MAX_ELEMENTS} elements")
        if not isinstance(vals, list) or len(vals) != n or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                for v in vals):
            raise InvalidInput(f"args.inputs.{name}: {n} finite numbers, row-major")
        env[name] = np.array(vals, dtype=np.float64).reshape(s.shape)
    return env


def eval_op(term, inputs) -> dict:
    t = term_from_wire(term, "args.term")
    if math.prod(check_term(t).shape) > MAX_ELEMENTS:
        raise InvalidInput(f"args.term: the result has more than {MAX_ELEMENTS} elements")
    out = evaluate(t, inputs_from_wire(t, inputs))
    return {"shape": list(out.shape), "values": [_bits(float(x)) for x in out.ravel()]}


def cost_op(term) -> dict:
    return cost_breakdown(term_from_wire(term, "args.term"))


def rules_op() -> dict:
    out = []
    for r in RULES + PLANTED:
        v = verdict(r)
        out.append({"name": r.name, "lhs": r.lhs, "rhs": r.rhs, "source": r.source,
                    "verdict": v.verdict, "reals": v.reals, "ieee": v.ieee,
                    "caveat": caveat(v), "counterexample": v.counterexample})
    return {"rules": out}


MAX_ITERATIONS = 1000
MAX_NODES = 1_000_000


def limits_from_wire(limits: dict | None) -> Limits:
    """SympleX's limits, or those asked for: iterations in 0..1000, nodes in 1..1,000,000."""
    limits = {} if limits is None else limits
    if not isinstance(limits, dict) or set(limits) - {"iterations", "nodes"}:
        raise InvalidInput("args.limits: an object with iterations and/or nodes")
    out = {"iterations": SYMPLEX_ITERATIONS, "nodes": SYMPLEX_NODES, **limits}
    for name, low, high in (("iterations", 0, MAX_ITERATIONS), ("nodes", 1, MAX_NODES)):
        v = out[name]
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
            raise InvalidInput(f"args.limits.{name}: an integer in {low}..{high}")
    return Limits(out["iterations"], out["nodes"])


def saturate_op(term, rules, limits) -> dict:
    t = term_from_wire(term, "args.term")
    chosen = list(RULES) if rules is None else require_usable(rules)
    r = saturate(t, chosen, limits_from_wire(limits))
    return {"term": term_to_wire(r.term), "cost": r.cost, "input_cost": r.input_cost,
            "nodes": r.nodes, "classes": r.classes, "iterations": r.iterations,
            "stop_reason": STOP_REASONS.index(r.stop_reason)}


# ── domains ───────────────────────────────────────────────────────────────────────────────────

SHAPES = ((2, 2), (2, 3), (3, 2), (3, 3))
_ELEMENTWISE = ("relu", "gelu", "sigmoid", "tanh", "silu", "neg", "exp", "abs")


def _sym(shape: tuple[int, ...]) -> Sym:
    return Sym("P" + "".join(map(str, shape)), shape)


def terms(shape: tuple[int, int] = (2, 2), depth: int = 3) -> st.SearchStrategy:
    """Well-typed terms of `shape` over one symbol per shape (P22, P23, ...); constants appear
    as the second operand of a binary op."""
    leaf = st.just(_sym(shape))
    if depth == 0:
        return leaf
    sub = terms(shape, depth - 1)
    const = st.builds(Const, st.sampled_from([0.0, 1.0, 0.5, -2.0]))
    m, n = shape
    return st.one_of(
        leaf,
        st.builds(lambda o, a: Op(o, (a,)), st.sampled_from(_ELEMENTWISE), sub),
        st.builds(lambda o, a, b: Op(o, (a, b)),
                  st.sampled_from(("add", "mul", "sub", "max", "min")), sub, sub | const),
        st.builds(lambda k, o: Op(o, (_sym((m, k)), _sym((k, n)))),
                  st.sampled_from([2, 3]), st.sampled_from(["matmul", "fused_matmul_relu"])),
        st.builds(lambda a: Op("transpose", (a,)), terms((n, m), depth - 1)),
        st.builds(lambda a: Op("softmax", (a,)), sub),
        st.builds(lambda a: Op("layernorm", (a, _sym((n,)), Const(0.0))), sub),
    )


def _inputs(t, draw) -> dict:
    vals = st.floats(-4, 4, allow_nan=False, width=32)
    return {n: draw(st.lists(vals, min_size=math.prod(s.shape), max_size=math.prod(s.shape)))
            for n, s in symbols(t).items()}


@st.composite
def eval_args(draw) -> dict:
    t = draw(terms(draw(st.sampled_from(SHAPES)), 3))
    return {"term": term_to_wire(t), "inputs": _inputs(t, draw)}


def _wire_terms() -> st.SearchStrategy:
    return terms((2, 2), 3).map(term_to_wire)


def _s(name: str, *shape: int) -> dict:
    return {"sym": name, "shape": list(shape), "dtype": "f32"}


def _o(op: str, *args, axis: int | None = None) -> dict:
    return {"op": op, "args": list(args)} | ({"axis": axis} if axis is not None else {})


FACTOR = _o("add", _o("matmul", _s("A", 8, 4), _s("B", 4, 4)),
            _o("matmul", _s("A", 8, 4), _s("C", 4, 4)))
"""A@B + A@C, where A@(B+C) is cheaper."""
MLP = _o("add", _o("matmul", _o("relu", _o("add", _o("matmul", _s("X", 16, 32), _s("W1", 32, 64)),
                                             _s("b1", 64))), _s("W2", 64, 32)), _s("b2", 32))
"""A 2-layer MLP: relu(X W1 + b1) W2 + b2."""


def attention(n: int = 8, d: int = 16) -> dict:
    """One attention block, forward: layernorm(X + softmax(Q K^T / sqrt(d)) V Wo + bo)."""
    x = _s("X", n, d)
    q, k, v = (_o("matmul", x, _s(w, d, d)) for w in ("Wq", "Wk", "Wv"))
    scores = _o("mul", _o("matmul", q, _o("transpose", k)), {"const": 1 / math.sqrt(d)})
    out = _o("add", _o("matmul", _o("matmul", _o("softmax", scores), v), _s("Wo", d, d)),
             _s("bo", d))
    return _o("layernorm", _o("add", x, out), _s("g", d), _s("beta", d))


def matmul_sum(nodes: int, rng=None) -> dict:
    """A balanced sum of products A_j @ B_i, two per shared A_j, of about `nodes` tree nodes
    (each product is 3, each add 1): every pair can be factored. `rng` is unused: the term is
    fixed by its size."""
    pairs = max(1, (nodes + 1) // 8)
    leaves = [_o("matmul", _s(f"A{i // 2}", 8, 8), _s(f"B{i}", 8, 8)) for i in range(2 * pairs)]
    while len(leaves) > 1:
        leaves = [_o("add", *leaves[i:i + 2]) if i + 1 < len(leaves) else leaves[i]
                  for i in range(0, len(leaves), 2)]
    return leaves[0]


def saturation_bench(n: int, rng) -> list[dict]:
    """One term of about n nodes, saturated under 30 iterations and 10 n nodes."""
    return [{"term": matmul_sum(n, rng), "rules": None,
             "limits": {"iterations": SYMPLEX_ITERATIONS, "nodes": 10 * n}}]


def saturate_edges() -> list[dict]:
    few = {"iterations": 4, "nodes": 2000}
    return [{"term": FACTOR, "rules": None, "limits": None},
            {"term": FACTOR, "rules": ["matmul-factor"], "limits": None},
            {"term": MLP, "rules": None, "limits": None},
            {"term": _o("relu", _o("relu", _s("A", 2, 2))), "rules": ["relu-idempotent"],
             "limits": None},
            {"term": _o("add", _o("mul", _s("A", 2, 2), {"const": 1.0}), {"const": 0.0}),
             "rules": None, "limits": few},
            {"term": attention(4, 4), "rules": None, "limits": {"iterations": 3, "nodes": 500}},
            {"term": _s("A", 2, 2), "rules": [], "limits": None}]


def eval_edges() -> list[dict]:
    a = list(range(1, 9))
    return [{"term": _o("matmul", _s("A", 2, 4), _s("B", 4, 2)), "inputs": {"A": a, "B": a}},
            {"term": _o("fused_matmul_relu", _s("A", 2, 4), _s("B", 4, 2)),
             "inputs": {"A": [-x for x in a], "B": a}},
            {"term": _o("softmax", _s("A", 2, 4)), "inputs": {"A": a}},
            {"term": _o("layernorm", _s("A", 2, 4), _s("g", 4), _s("b", 4)),
             "inputs": {"A": a, "g": [1, 1, 1, 1], "b": [0, 0, 0, 0]}},
            {"term": _o("reducesum", _s("A", 2, 4), axis=0), "inputs": {"A": a}},
            {"term": _o("div", _s("A", 2, 4), {"const": 0}), "inputs": {"A": [0] * 8}},
            {"term": {"const": 2.5}, "inputs": {}}]


_BAD_SHAPES = _o("matmul", _s("A", 2, 3), _s("B", 2, 3))
_MIXED = _o("add", _s("A", 2, 2), {"sym": "B", "shape": [2, 2], "dtype": "f16"})
_TERM_INVALID = (
    InvalidCase("a matmul whose inner dimensions differ", lambda: st.just({"term": _BAD_SHAPES})),
    InvalidCase("operands of two dtypes", lambda: st.just({"term": _MIXED})),
    InvalidCase("an op the language lacks", lambda: st.just({"term": _o("conv", _s("A", 2, 2))})),
    InvalidCase("a symbol declared with two shapes", lambda: st.just(
        {"term": _o("add", _s("A", 2, 2), _s("A", 2, 3))})),
    InvalidCase("a reduction axis outside the rank", lambda: st.just(
        {"term": _o("reducesum", _s("A", 2, 2), axis=2)})),
)


def _with(extra: dict):
    return tuple(InvalidCase(c.description, (lambda c=c: c.args().map(lambda a: a | extra)))
                 for c in _TERM_INVALID)


NO_NUMERIC_CORE = ("one term per call, walked node by node: a batch of different terms shares "
                   "no numeric core to compile")

declare(
    "egraph.eval", chapter=14,
    summary="Evaluate a tensor term (SympleX's FusionLang plus transpose, softmax, reducemean "
            "and the fused forms) in float64 with a fixed accumulation order.",
    args=record(term=Field(TERM, "the term, nested JSON"),
                inputs=Field(Json("{symbol: [number]}", {"type": "object"}),
                             "each symbol's values, row-major")),
    result=record(shape=Field(List(I64, 4), "the result's shape"),
                  values=Field(List(HASH64, MAX_ELEMENTS), "float64 bit patterns, row-major")),
    spec=(evaluate, check_term), domain=eval_args, edges=eval_edges,
    invalid=(*_with({"inputs": {}}),
             InvalidCase("an input of the wrong length", lambda: st.just(
                 {"term": _s("A", 2, 2), "inputs": {"A": [1, 2, 3]}})),
             InvalidCase("an input for no symbol", lambda: st.just(
                 {"term": _s("A", 1, 1), "inputs": {"A": [1], "Z": [1]}}))),
    not_applicable={"numba": NO_NUMERIC_CORE, "cupy": NO_NUMERIC_CORE},
)
declare(
    "egraph.cost", chapter=13,
    summary="A tensor term's bytes moved, flops and cost (flops + 295 x bytes: the H100 "
            "roofline's ridge point), summed over its nodes as a tree.",
    args=record(term=Field(TERM, "the term, nested JSON")),
    result=record(bytes=U64, flops=U64, cost=Field(U64, "flop-times at peak")),
    spec=(cost_breakdown, term_cost), domain=lambda: st.fixed_dictionaries(
        {"term": _wire_terms()}),
    edges=lambda: [{"term": t} for t in (FACTOR, MLP, attention(), _s("A", 2, 2))],
    invalid=_TERM_INVALID,
    not_applicable={"numba": NO_NUMERIC_CORE, "cupy": NO_NUMERIC_CORE},
)
declare(
    "egraph.rules", chapter=14,
    summary="Every rewrite rule of the e-graph, planted unsound ones included, with the "
            "verdict z3 (over the reals) and the evaluator (in IEEE) give it.",
    args=record(), result=record(rules=Json("[{name, lhs, rhs, source, verdict, reals, ieee, "
                                            "caveat, counterexample}]", {"type": "array"})),
    spec=(verdict,), edges=lambda: [{}],
    not_applicable={"numba": "a fixed table with no input", "cupy": "a fixed table"},
)
declare(
    "egraph.saturate", chapter=14,
    summary="Equality saturation on egglog with checked rules under SympleX's limits (30 "
            "iterations, 10,000 nodes), then the cheapest term by an exact DP over the e-graph.",
    args=record(term=Field(TERM, "the term, nested JSON"),
                rules=Field(Optional(List(Utf8(), 64), None),
                            "the rules to use, by name; null: every rule of RULES", None),
                limits=Field(Optional(Json("{iterations?, nodes?}", {"type": "object"}), None),
                             "saturation limits; null: SympleX's", None)),
    result=record(term=Field(TERM, "the cheapest term found"),
                  cost=Field(U64, "its cost"), input_cost=Field(U64, "the input term's cost"),
                  nodes=Field(U32, "e-nodes when saturation stopped"),
                  classes=Field(U32, "e-classes when saturation stopped"),
                  iterations=Field(Int(32), "iterations run"),
                  stop_reason=Field(Named(STOP_REASONS, "stop reason"), "why it stopped")),
    spec=(saturate,), bench=saturation_bench,
    domain=lambda: st.fixed_dictionaries({"term": _wire_terms(), "rules": st.none(),
                                          "limits": st.just({"iterations": 3, "nodes": 400})}),
    edges=saturate_edges,
    invalid=(*_with({"rules": None, "limits": None}),
             InvalidCase("the planted unsound rule A * 0 -> 0", lambda: st.just(
                 {"term": FACTOR, "rules": ["mul-zero"], "limits": None})),
             InvalidCase("the planted unsound rule x / x -> 1", lambda: st.just(
                 {"term": FACTOR, "rules": ["add-comm", "div-self"], "limits": None})),
             InvalidCase("an unknown rule", lambda: st.just(
                 {"term": FACTOR, "rules": ["no-such-rule"], "limits": None})),
             InvalidCase("a node limit of 0", lambda: st.just(
                 {"term": FACTOR, "rules": None, "limits": {"nodes": 0}}))),
    not_applicable={"numba": "egglog does the saturation; the DP walks one e-graph",
                    "cupy": "egglog does the saturation; the DP walks one e-graph"},
    needs=("egglog",),
)

_LOC = "rust-engine/src/fusion_engine.rs"
erratum(
    "E14.400", "The saturated e-graph is discarded: no term is ever extracted from it",
    seed=SYMPLEX, location=f"{_LOC}, the egg Runner's use (`let _ = &runner.egraph;`)",
    ops=("egraph.saturate",),
    witness={"code": "runs egg's Runner (30 iterations, 10,000 nodes), then drops the e-graph; "
                     "fusion candidates come from the original op list and its sliding windows",
             "documents": "cost-guided extraction of the optimal fused program from the "
                          "saturated e-graph"},
    flag="doc",
    detail="No extraction exists in SympleX. The spec's egraph.saturate extracts the cheapest "
           "term of the root's e-class (an exact DP over the e-graph) and answers it.",
)
erratum(
    "E14.401", "The rewrite soundness guardrail accepts everything",
    seed=SYMPLEX, location="rust-engine validate_polyhedral_result",
    ops=("egraph.saturate", "egraph.rules"),
    witness={"code": "validate_polyhedral_result(original, optimized) returns true",
             "documents": "polyhedral guardrails validate every optimization"},
    flag="doc",
    detail="The placeholder never compares the two programs, so no rewrite is ever refused. "
           "The spec proves each rule over the reals with z3, refutes it on IEEE inputs "
           "(NaN, Inf, signed zeros) with the evaluator, and refuses to saturate with a rule "
           "that is not sound (A * 0 -> 0 and x / x -> 1 are refused with counterexamples).",
)
erratum(
    "E14.402", "'Cost-guided extraction' is pattern confidence times a fixed speedup",
    seed=SYMPLEX, location=f"{_LOC}, estimated_speedup and the good_lp selection",
    ops=("egraph.saturate", "egraph.cost"),
    witness={"code": "speedup = compute_savings x (1 + s/(s+10)) x confidence per pattern "
                     "class, then an ILP over candidate boundaries",
             "documents": "extraction of the cheapest term by a cost model"},
    flag="doc",
    detail="No cost is ever evaluated on an e-graph term. The spec's cost is bytes moved and "
           "flops per node (the roofline's two terms at an H100's ridge point) and extraction "
           "minimizes it over the e-graph.",
)
erratum(
    "E14.403", "The README's rewrite rules are not implemented",
    seed=SYMPLEX, location=f"{_LOC} (the 12 rules) against README.md",
    ops=("egraph.rules",),
    witness={"code": "12 rules: add and mul associativity and commutativity, distributivity "
                     "both ways, matmul factor and distribution, relu idempotence, silu "
                     "expansion, double negation, a - b -> a + (-b)",
             "documents": "also A+0=A, A*1=A, A*0=0, transpose identities, ReLU(MatMul) and "
                          "MatMul+bias fusion, layernorm decomposition, tiling"},
    flag="doc",
    detail="The spec implements and checks the README's rules except tiling and A*0=0, which "
           "is unsound in IEEE (NaN * 0 and Inf * 0 are NaN); SympleX has the fusions only as "
           "pattern classes.",
)
erratum(
    "E14.404", "[MatMul, MatMul, Add] is labelled MatMulBiasReLU",
    seed=SYMPLEX, location=f"{_LOC}, the hard-coded factorization candidate",
    ops=("egraph.saturate",),
    witness={"code": "ops [MatMul, MatMul, Add] with equal first input shapes become a "
                     "MatMulBiasReLU candidate (confidence 0.6, compute factor 1.2)",
             "documents": "the A@B + A@C -> A@(B+C) factorization"},
    flag="doc",
    detail="The label names a different fusion (no ReLU, no bias). In the spec A@B + A@C "
           "reaches A@(B+C) by matmul-factor and is extracted when it is cheaper.",
)
