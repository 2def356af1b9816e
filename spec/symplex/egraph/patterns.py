"""Chapter 14: rewrite patterns over the tensor language, and their two semantics.

1. A pattern is an s-expression: `(op arg ...)`, `?name` a pattern variable, a number with a
   dot a constant, and, last in a reduction, an integer axis: `(reducesum ?x -1)`.
2. Over the reals (z3): every variable is a symbolic 2x2 matrix of reals; + - * / are real
   arithmetic (z3's x/0 is an unspecified real), max, min, relu and abs are if-then-else, and
   exp, tanh and sqrt are uninterpreted functions, so an identity proved holds for any
   functions in their place; the other ops unfold to their definitions in
   `spec/symplex/tensor_expr.py`.
3. In IEEE (numpy): every variable is a 2x2 float64 matrix, evaluated by the reference
   evaluator.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ...core.lazy_z3 import z3
from ..tensor_expr import ARITY, NORM_EPS, REDUCTIONS, Const, Op, Sym, evaluate

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


@dataclass(frozen=True)
class Var:
    name: str


def parse_pattern(text: str):
    """Step 1: the pattern `text` as a term whose leaves may be Var."""
    tokens = _TOKEN.findall(text)
    pos = 0

    def item():
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok.startswith("?"):
            return Var(tok[1:])
        if tok != "(":
            return Const(float(tok))
        op = tokens[pos]
        pos += 1
        args = []
        while tokens[pos] != ")":
            args.append(item())
        pos += 1
        axis = None
        if op in REDUCTIONS:
            axis = int(args.pop().value)
        if op not in ARITY or len(args) != ARITY[op]:
            raise ValueError(f"pattern {text!r}: bad op {op!r}")
        return Op(op, tuple(args), axis)

    out = item()
    if pos != len(tokens):
        raise ValueError(f"pattern {text!r}: trailing tokens")
    return out


def pattern_vars(p) -> list[str]:
    """The variables of a pattern, in order of first appearance."""
    if isinstance(p, Var):
        return [p.name]
    if isinstance(p, Op):
        return list(dict.fromkeys(v for a in p.args for v in pattern_vars(a)))
    return []


def instantiate(p, names: dict[str, str]):
    """The pattern with each variable replaced by a 2x2 f64 symbol named `names[var]`."""
    if isinstance(p, Var):
        return Sym(names[p.name], (2, 2), "f64")
    if isinstance(p, Op):
        return Op(p.op, tuple(instantiate(a, names) for a in p.args), p.axis)
    return p


def eval_ieee(p, env: dict[str, np.ndarray]) -> np.ndarray:
    """Step 3."""
    return evaluate(instantiate(p, {v: v for v in env}), env)


# ── over the reals (step 2) ───────────────────────────────────────────────────────────────────

def _vec(f):
    return np.frompyfunc(f, 2, 1)


class RealSemantics:
    """The ops over object arrays of z3 reals; one set of uninterpreted functions per query."""

    def __init__(self):
        self.exp = z3.Function("exp", z3.RealSort(), z3.RealSort())
        self.tanh = z3.Function("tanh", z3.RealSort(), z3.RealSort())
        self.sqrt = z3.Function("sqrt", z3.RealSort(), z3.RealSort())

    def un(self, f, x):
        return np.frompyfunc(f, 1, 1)(x)

    def matmul(self, a, b):
        out = np.empty((a.shape[0], b.shape[1]), dtype=object)
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                acc = z3.RealVal(0)
                for k in range(a.shape[1]):
                    acc = acc + a[i, k] * b[k, j]
                out[i, j] = acc
        return out

    def reduce(self, f, x, axis):
        parts = [np.take(x, [i], axis=axis) for i in range(x.shape[axis])]
        acc = parts[0]
        for p in parts[1:]:
            acc = f(acc, p)
        return acc

    def rsqrt(self, x):
        return 1 / self.un(self.sqrt, x)

    def sigmoid(self, x):
        return 1 / (1 + self.un(self.exp, -x))

    def mean(self, x):
        return self.reduce(np.add, x, -1) / x.shape[-1]

    def apply(self, op: str, xs: list, axis: int | None):
        smax = _vec(lambda a, b: z3.If(a >= b, a, b))
        smin = _vec(lambda a, b: z3.If(a <= b, a, b))
        eps = z3.RealVal(Fraction(NORM_EPS))
        c = math.sqrt(2.0 / math.pi)
        table = {
            "add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - b,
            "div": lambda a, b: a / b, "max": smax, "min": smin, "matmul": self.matmul,
            "relu": lambda a: smax(a, z3.RealVal(0)), "neg": lambda a: -a,
            "abs": lambda a: smax(a, -a), "exp": lambda a: self.un(self.exp, a),
            "tanh": lambda a: self.un(self.tanh, a), "sqrt": lambda a: self.un(self.sqrt, a),
            "rsqrt": self.rsqrt, "sigmoid": self.sigmoid,
            "silu": lambda a: a * self.sigmoid(a),
            "gelu": lambda a: 0.5 * a * (1 + self.un(self.tanh, c * (a + 0.044715 * a * a * a))),
            "transpose": lambda a: a.T,
            "softmax": lambda a: (lambda e: e / self.reduce(np.add, e, -1))(
                self.un(self.exp, a - self.reduce(smax, a, -1))),
            "layernorm": lambda x, s, b: (lambda d: d * self.rsqrt(self.mean(d * d) + eps)
                                          * s + b)(x - self.mean(x)),
            "rmsnorm": lambda x, s, b: x * self.rsqrt(self.mean(x * x) + eps) * s + b,
            "fused_matmul_relu": lambda a, b: smax(self.matmul(a, b), z3.RealVal(0)),
            "fused_matmul_add": lambda a, b, d: self.matmul(a, b) + d,
            "reducesum": lambda a: self.reduce(np.add, a, axis),
            "reducemax": lambda a: self.reduce(smax, a, axis),
            "reducemean": lambda a: self.reduce(np.add, a, axis) / a.shape[axis],
        }
        return table[op](*xs)

    def eval(self, p, env: dict[str, np.ndarray]):
        if isinstance(p, Var):
            return env[p.name]
        if isinstance(p, Const):
            return np.array(z3.RealVal(Fraction(p.value)), dtype=object)
        return np.asarray(self.apply(p.op, [self.eval(a, env) for a in p.args], p.axis),
                          dtype=object)


def real_matrices(names: list[str]) -> dict[str, np.ndarray]:
    """A symbolic 2x2 matrix of reals per variable."""
    out = {}
    for v in names:
        m = np.empty((2, 2), dtype=object)
        for i in range(2):
            for j in range(2):
                m[i, j] = z3.Real(f"{v}_{i}{j}")
        out[v] = m
    return out


def differs_over_reals(lhs, rhs) -> z3.BoolRef:
    """The formula: for some 2x2 real matrices the two sides differ in some element."""
    sem = RealSemantics()
    env = real_matrices(list(dict.fromkeys(pattern_vars(lhs) + pattern_vars(rhs))))
    a, b = np.broadcast_arrays(sem.eval(lhs, env), sem.eval(rhs, env))
    return z3.Or([x != y for x, y in zip(a.ravel(), b.ravel(), strict=True)])
