"""Chapter 14: the rewrite rules of the e-graph and the verdict on each one's soundness.

1. Each rule is lhs -> rhs over patterns (spec/symplex/egraph/patterns.py). RULES holds SympleX's 12
   rules, the README's rules SympleX never implemented, and the spec's rmsnorm decomposition;
   PLANTED holds two unsound rules kept to show they are refused.
2. Over the reals: z3 searches for symbolic 2x2 matrices on which the two sides differ; none
   (unsat) proves the rule over the reals for that size.
3. In IEEE: both sides are evaluated on 2x2 float64 matrices, SPECIAL_TRIALS drawn from
   SPECIALS (NaN, infinities, signed zeros and small exact numbers, so nothing overflows) and
   RANDOM_TRIALS of normal random numbers. The sides disagree when one element is finite
   where the other is not, or two finite elements differ by more than RTOL relative plus
   ATOL. NaN against Inf is not a disagreement: both report a non-finite result.
4. Verdict: `unsound` with the first disagreeing input as counterexample (step 3), else
   `sound` when step 2 proves it (`definition` for a rule that is the definition of its
   left-hand op: a fused form or a decomposition, proved by unfolding that definition in z3
   and equal bit for bit in the evaluator), else `unproved`. The IEEE class is `exact` when
   the sides are equal bit for bit on every trial, else `rounding`: exact over the reals only.
5. Only `sound` and `definition` rules may be used; verdicts are computed once per rule,
   before any rule is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from ...core.errors import InvalidInput
from ...core.lazy_z3 import z3
from .patterns import differs_over_reals, eval_ieee, parse_pattern, pattern_vars

RTOL = 1e-9
ATOL = 1e-12
SPECIALS = (float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -3.0)
SPECIAL_TRIALS = 200
RANDOM_TRIALS = 50
TRIAL_SEED = 0x5E6A
Z3_RLIMIT = 20_000_000
USABLE = ("sound", "definition")


@dataclass(frozen=True)
class Rule:
    """One rewrite rule as stated; its verdict is computed (`verdict`)."""

    name: str
    lhs: str
    rhs: str
    source: str
    """symplex (fusion_engine.rs), readme (claimed, not implemented), spec, or planted."""
    definition: bool = False
    """The rule is the definition of its left-hand op (a fused form or a decomposition)."""


EPS = "0.00001"
_D = "(sub ?x (reducemean ?x -1))"
_SM = "(exp (sub ?x (reducemax ?x -1)))"
RULES = (
    Rule("add-assoc", "(add (add ?a ?b) ?c)", "(add ?a (add ?b ?c))", "symplex"),
    Rule("add-comm", "(add ?a ?b)", "(add ?b ?a)", "symplex"),
    Rule("mul-assoc", "(mul (mul ?a ?b) ?c)", "(mul ?a (mul ?b ?c))", "symplex"),
    Rule("mul-comm", "(mul ?a ?b)", "(mul ?b ?a)", "symplex"),
    Rule("mul-dist-right", "(mul ?a (add ?b ?c))", "(add (mul ?a ?b) (mul ?a ?c))", "symplex"),
    Rule("mul-dist-left", "(mul (add ?a ?b) ?c)", "(add (mul ?a ?c) (mul ?b ?c))", "symplex"),
    Rule("matmul-factor", "(add (matmul ?a ?b) (matmul ?a ?c))", "(matmul ?a (add ?b ?c))",
         "symplex"),
    Rule("matmul-dist", "(matmul ?a (add ?b ?c))", "(add (matmul ?a ?b) (matmul ?a ?c))",
         "symplex"),
    Rule("relu-idempotent", "(relu (relu ?a))", "(relu ?a)", "symplex"),
    Rule("silu-expand", "(silu ?a)", "(mul ?a (sigmoid ?a))", "symplex", definition=True),
    Rule("neg-cancel", "(neg (neg ?a))", "?a", "symplex"),
    Rule("sub-to-add-neg", "(sub ?a ?b)", "(add ?a (neg ?b))", "symplex"),
    Rule("transpose-involution", "(transpose (transpose ?a))", "?a", "readme"),
    Rule("matmul-transpose", "(transpose (matmul ?a ?b))",
         "(matmul (transpose ?b) (transpose ?a))", "readme"),
    Rule("add-zero", "(add ?a 0.0)", "?a", "readme"),
    Rule("mul-one", "(mul ?a 1.0)", "?a", "readme"),
    Rule("fuse-matmul-relu", "(relu (matmul ?a ?b))", "(fused_matmul_relu ?a ?b)", "readme",
         definition=True),
    Rule("fuse-matmul-add", "(add (matmul ?a ?b) ?c)", "(fused_matmul_add ?a ?b ?c)", "readme",
         definition=True),
    Rule("softmax-decompose", "(softmax ?x)", f"(div {_SM} (reducesum {_SM} -1))", "readme",
         definition=True),
    Rule("layernorm-decompose", "(layernorm ?x ?s ?b)",
         f"(add (mul (mul {_D} (rsqrt (add (reducemean (mul {_D} {_D}) -1) {EPS}))) ?s) ?b)",
         "readme", definition=True),
    Rule("rmsnorm-decompose", "(rmsnorm ?x ?s ?b)",
         f"(add (mul (mul ?x (rsqrt (add (reducemean (mul ?x ?x) -1) {EPS}))) ?s) ?b)", "spec",
         definition=True),
)
"""The e-graph's rewrite rules. SympleX's 12 (fusion_engine.rs §11, in its order), then those
its README claims and no code implements (transpose, identity elements, the two fusions and
the softmax and layernorm decompositions), then the spec's rmsnorm decomposition. Each
rule's verdict (`sound`, `definition`, `unsound` or `unproved`) and IEEE class come from
`verdict`: z3 over the reals and the evaluator on special and random inputs."""

PLANTED = (
    Rule("mul-zero", "(mul ?a 0.0)", "0.0", "planted"),
    Rule("div-self", "(div ?a ?a)", "1.0", "planted"),
)
"""Unsound rules, kept so that the tools show them refused: A * 0 -> 0 (the README's, wrong
for NaN and Inf) and x / x -> 1 (wrong for 0, Inf and NaN)."""

BY_NAME = {r.name: r for r in RULES + PLANTED}


@dataclass(frozen=True)
class Verdict:
    rule: str
    verdict: str
    reals: str
    """proved, refuted (z3 found differing real matrices) or unknown."""
    ieee: str
    """exact, rounding or refuted."""
    counterexample: dict | None
    """For an IEEE refutation: the inputs (float reprs) and both sides' values."""


def _show(x: np.ndarray) -> list:
    return np.vectorize(repr, otypes=[object])(np.asarray(x, dtype=float)).tolist()


def trials(names: list[str]):
    """Step 3's inputs: special-valued trials, then random ones (seeded)."""
    rng = np.random.default_rng(TRIAL_SEED)
    for _ in range(SPECIAL_TRIALS):
        yield {v: rng.choice(SPECIALS, size=(2, 2)) for v in names}
    for _ in range(RANDOM_TRIALS):
        yield {v: rng.normal(0.0, 2.0, size=(2, 2)) for v in names}


def disagree(a: np.ndarray, b: np.ndarray) -> bool:
    """Step 3's test: a finiteness mismatch, or finite values beyond the envelope."""
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        return True
    fa, fb = np.isfinite(a), np.isfinite(b)
    if np.any(fa != fb):
        return True
    both = fa & fb
    with np.errstate(all="ignore"):
        gap = np.abs(a[both] - b[both])
        return bool(np.any(gap > RTOL * np.maximum(np.abs(a[both]), np.abs(b[both])) + ATOL))


def ieee_check(rule: Rule) -> tuple[str, dict | None]:
    """Step 3: exact, rounding, or refuted with its counterexample."""
    lhs, rhs = parse_pattern(rule.lhs), parse_pattern(rule.rhs)
    exact = True
    for env in trials(pattern_vars(lhs)):
        a, b = eval_ieee(lhs, env), eval_ieee(rhs, env)
        if disagree(a, b):
            return "refuted", {"inputs": {v: _show(x) for v, x in env.items()},
                               "lhs": _show(a), "rhs": _show(b)}
        exact = exact and np.shape(a) == np.shape(b) and np.array_equal(a, b, equal_nan=True)
    return ("exact" if exact else "rounding"), None


def reals_check(rule: Rule) -> str:
    """Step 2."""
    s = z3.Solver()
    s.set("rlimit", Z3_RLIMIT)
    s.add(differs_over_reals(parse_pattern(rule.lhs), parse_pattern(rule.rhs)))
    answer = s.check()
    return "proved" if answer == z3.unsat else "refuted" if answer == z3.sat else "unknown"


def decide(rule: Rule, reals: str, ieee: str) -> str:
    """Step 4."""
    if ieee == "refuted":
        return "unsound"
    if reals == "proved":
        return "definition" if rule.definition else "sound"
    return "unproved"


@cache
def verdict(rule: Rule) -> Verdict:
    """Steps 2-4 for one rule, once."""
    ieee, cex = ieee_check(rule)
    reals = reals_check(rule)
    return Verdict(rule.name, decide(rule, reals, ieee), reals, ieee, cex)


def caveat(v: Verdict) -> str:
    """What the verdict allows in IEEE arithmetic."""
    if v.verdict == "unsound":
        return "refused: it changes a result in IEEE arithmetic (counterexample given)"
    if v.verdict == "unproved":
        return "refused: z3 did not prove it over the reals"
    if v.ieee == "exact":
        return "equal bit for bit on every trial, NaN, Inf and signed zeros included"
    return ("exact over the reals only: IEEE rounding changes the result (within the "
            "envelope on the trials), overflow can differ, and an Inf may become NaN")


def require_usable(names: list[str], path: str = "args.rules") -> list[Rule]:
    """The named rules, each checked; InvalidInput for an unknown or refused rule, with its
    counterexample."""
    out = []
    for i, n in enumerate(names):
        if n not in BY_NAME:
            raise InvalidInput(f"{path}[{i}]: no rule named {n!r}")
        v = verdict(BY_NAME[n])
        if v.verdict not in USABLE:
            cex = f"; counterexample {v.counterexample}" if v.counterexample else ""
            raise InvalidInput(f"{path}[{i}]: rule {n} is {v.verdict} and saturation refuses "
                               f"it{cex}")
        out.append(BY_NAME[n])
    return out
