"""Chapter 13: SympleX's fusion candidates' confidence and estimated speedup, and the global
selection of candidates (rust-engine/src/fusion_engine.rs §4, §11, §12; facts §2.3).

A candidate is a fusion pattern over some op indices, with the output rank of each of its ops
and the HBM bytes its fusion saves; a `factorization` candidate is the hard-coded
[MatMul, MatMul, Add] one (E14.404).
1. Confidence: the pattern's CONFIDENCE; plus RANK_BONUS (capped at 1.0) when the candidate has
   at least two ops and its non-zero ranks are all equal (ops of rank 0 are left out; at least
   one must remain). A factorization candidate: FACTOR_CONFIDENCE, no bonus.
2. Compute savings: the pattern's COMPUTE_SAVINGS; a factorization candidate: FACTOR_SAVINGS.
   Saved bytes below 0 count as 0.
3. Estimated speedup, in float64 and in this order: s = compute savings; mb = bytes / 2^20;
   when mb > 0, s = s * (1 + mb / (mb + 10)); then s = s * confidence.
4. Selection: a set of candidates no two of which share an op index, maximising the product of
   their estimated speedups (the decision's total_estimated_speedup; the empty set's is 1), the
   products compared exactly. Of equal products, the set that includes the lower-indexed
   candidates wins (membership vectors compared from candidate 0, in before out).
5. The answer: the selected indices ascending; the total, the product of their speedups from
   1.0 in that order in float64 (as FusionDecision::from_boundaries); and their sum from 0.0.

SympleX (E13.410) maximises the sum of the speedups instead (its ILP's objective), so it picks
fusions its own total calls a slowdown.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, I64, U32, Field, List, record
from ..core.strategies import st
from ..pyc.wire import F64, Named, bits

E13_410 = "E13.410"
PATTERNS = ("matmul_bias_relu", "attention_block", "norm_residual_activation",
            "optimizer_step", "backward_pass_chain", "comm_compute_overlap", "persistent_kernel",
            "elementwise_chain", "reduction_fusion", "horizontal_elementwise")
"""FusionPattern in its declaration order, by its `name()`."""
COMPUTE_SAVINGS = (1.1, 1.3, 1.05, 1.2, 1.1, 1.0, 1.15, 1.0, 1.1, 1.0)
CONFIDENCE = (0.75, 0.65, 0.70, 0.65, 0.60, 0.50, 0.45, 0.80, 0.65, 0.55)
"""estimate_confidence_from_egraph's base per pattern."""
RANK_BONUS = 0.05
FACTOR_CONFIDENCE = 0.6
FACTOR_SAVINGS = 1.2
MIB = 1024.0 * 1024.0
DIMINISH = 10.0
"""The MiB at which the memory term gives half its most (1 + mb / (mb + 10))."""
MAX_CANDIDATES = 20
MAX_OPS = 64
"""The spec's bounds on a candidate set and on an op index (exclusive)."""


@dataclass(frozen=True)
class Candidate:
    pattern: int
    op_indices: tuple[int, ...]
    ranks: tuple[int, ...]
    saved_bytes: int
    factorization: bool = False


@dataclass(frozen=True)
class Selection:
    selected: tuple[int, ...]
    total: float
    total_sum: float


def confidence(c: Candidate) -> float:
    """Step 1."""
    if c.factorization:
        return FACTOR_CONFIDENCE
    base = CONFIDENCE[c.pattern]
    ranks = [r for r in c.ranks if r > 0]
    if len(c.ranks) >= 2 and ranks and all(r == ranks[0] for r in ranks):
        return min(base + RANK_BONUS, 1.0)
    return base


def compute_savings(c: Candidate) -> float:
    """Step 2."""
    return FACTOR_SAVINGS if c.factorization else COMPUTE_SAVINGS[c.pattern]


def estimated_speedup(c: Candidate) -> float:
    """Step 3."""
    s = compute_savings(c)
    mb = max(c.saved_bytes, 0) / MIB
    if mb > 0.0:
        s *= 1.0 + mb / (mb + DIMINISH)
    return s * confidence(c)


def _conflicts(cs: list[Candidate]) -> list[int]:
    """Per candidate, the bit mask of its op indices."""
    return [sum(1 << i for i in set(c.op_indices)) for c in cs]


def earlier(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Step 4's tie order: the first candidate in exactly one of the sets is in `a`."""
    diff = set(a) ^ set(b)
    return bool(diff) and min(diff) in a


def best_selection(weights: list[Fraction], masks: list[int], product: bool) -> tuple[int, ...]:
    """Step 4 over exact weights: branch and bound, candidate 0 first, in before out, a branch
    cut only when even its bound is worse than the best."""
    n = len(weights)
    unit = Fraction(1) if product else Fraction(0)

    def join(a: Fraction, b: Fraction) -> Fraction:
        return a * b if product else a + b

    rest = [unit] * (n + 1)
    for k in range(n - 1, -1, -1):
        helps = weights[k] > 1 if product else weights[k] > 0
        rest[k] = join(rest[k + 1], weights[k]) if helps else rest[k + 1]
    best: list = [unit, ()]

    def walk(k: int, used: int, value: Fraction, chosen: tuple[int, ...]) -> None:
        if value > best[0] or (value == best[0] and earlier(chosen, best[1])):
            best[0], best[1] = value, chosen
        if k == n or join(value, rest[k]) < best[0]:
            return
        if not masks[k] & used:
            walk(k + 1, used | masks[k], join(value, weights[k]), (*chosen, k))
        walk(k + 1, used, value, chosen)

    walk(0, 0, unit, ())
    return best[1]


def select(cs: list[Candidate], errata: frozenset[str] = NO_ERRATA) -> Selection:
    """Steps 4-5."""
    speedups = [estimated_speedup(c) for c in cs]
    chosen = best_selection([Fraction(s) for s in speedups], _conflicts(cs),
                            product=E13_410 not in errata)
    total, total_sum = 1.0, 0.0
    for k in chosen:
        total *= speedups[k]
        total_sum += speedups[k]
    return Selection(chosen, total, total_sum)


# ── the ops ───────────────────────────────────────────────────────────────────────────────────

def _check_candidate(c: dict, path: str, with_ops: bool) -> Candidate:
    """A decoded candidate: one rank per op, op indices distinct and below MAX_OPS."""
    ranks = tuple(c["ranks"])
    ops = tuple(c["op_indices"]) if with_ops else tuple(range(len(ranks)))
    if not ranks or len(ranks) != len(ops):
        raise InvalidInput(f"{path}.ranks: one output rank per op, and at least one op")
    if len(set(ops)) != len(ops) or any(i >= MAX_OPS for i in ops):
        raise InvalidInput(f"{path}.op_indices: distinct op indices below {MAX_OPS}")
    return Candidate(c["pattern"], ops, ranks, c["saved_bytes"], c["factorization"])


def speedup_op(pattern: int, ranks: list[int], saved_bytes: int, factorization: bool = False,
               errata: frozenset[str] = NO_ERRATA) -> dict:
    c = _check_candidate({"pattern": pattern, "ranks": ranks, "saved_bytes": saved_bytes,
                          "factorization": factorization}, "args", with_ops=False)
    return {"confidence": bits(confidence(c)), "compute_savings": bits(compute_savings(c)),
            "speedup": bits(estimated_speedup(c))}


def select_op(candidates: list[dict], errata: frozenset[str] = NO_ERRATA) -> dict:
    cs = [_check_candidate(c, f"args.candidates[{k}]", with_ops=True)
          for k, c in enumerate(candidates)]
    s = select(cs, errata)
    return {"selected": list(s.selected), "total": bits(s.total), "total_sum": bits(s.total_sum)}


PATTERN = Field(Named(PATTERNS, "fusion pattern"), "the pattern, by SympleX's name")
RANKS = Field(List(U32, 16), "the output rank of each op of the candidate, in order")
SAVED = Field(I64, "HBM bytes the fusion saves (the engine's estimate); below 0 counts as 0")
FACTOR = Field(BOOL, "the hard-coded [MatMul, MatMul, Add] candidate", False)
CANDIDATE = record(pattern=PATTERN, op_indices=Field(List(U32, 16), "the ops it fuses"),
                   ranks=RANKS, saved_bytes=SAVED, factorization=FACTOR)
MB = 1 << 20


@st.composite
def candidate_args(draw, max_op: int = 6) -> dict:
    """A candidate over a window of up to four of ops 0..max_op-1."""
    n = draw(st.integers(1, 4))
    start = draw(st.integers(0, max_op - n))
    return {"pattern": draw(st.integers(0, len(PATTERNS) - 1)),
            "op_indices": list(range(start, start + n)),
            "ranks": draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
            "saved_bytes": draw(st.one_of(st.integers(0, 64 * MB), st.sampled_from([0, 5000]))),
            "factorization": draw(st.booleans()) and n == 3}


def select_args() -> st.SearchStrategy:
    return st.lists(candidate_args(), max_size=8).map(lambda cs: {"candidates": cs})


def speedup_args() -> st.SearchStrategy:
    return candidate_args().map(lambda c: {k: v for k, v in c.items() if k != "op_indices"})


def _cand(pattern: str, ops: list[int], ranks: list[int], saved: int,
          factorization: bool = False) -> dict:
    return {"pattern": pattern, "op_indices": ops, "ranks": ranks,
            "saved_bytes": saved, "factorization": factorization}


SLOWDOWN = [_cand("elementwise_chain", [0, 1], [2, 2], 0),
            _cand("persistent_kernel", [0], [2], 0), _cand("persistent_kernel", [1], [2], 0)]
"""Two one-op candidates of speedup 0.5175 against one of 0.85 over both ops."""
TRADE = [_cand("attention_block", [0, 1], [2, 2], 64 * MB),
         _cand("elementwise_chain", [0], [2], 8 * MB), _cand("elementwise_chain", [1], [2], 8 * MB)]
"""One candidate of speedup 1.697 against two of 1.1556: the sum prefers the pair."""


def select_edges() -> list[dict]:
    mlp = [_cand("matmul_bias_relu", [0, 1, 2], [2, 2, 2], 8 * MB),
           _cand("elementwise_chain", [1, 2], [2, 2], 4 * MB),
           _cand("matmul_bias_relu", [0, 1, 2], [2, 2, 2], 8 * MB, True),
           _cand("horizontal_elementwise", [3, 4], [1, 1], 5000)]
    return [{"candidates": cs} for cs in (SLOWDOWN, TRADE, mlp, [], [SLOWDOWN[0]])]


def speedup_edges() -> list[dict]:
    def strip(c: dict) -> dict:
        return {k: v for k, v in c.items() if k != "op_indices"}
    return [strip(c) for c in (
        _cand("elementwise_chain", [0, 1], [2, 2], MB), _cand("elementwise_chain", [0], [2], 0),
        _cand("horizontal_elementwise", [0, 1], [1, 1], 5000),
        _cand("matmul_bias_relu", [0, 1, 2], [2, 2, 2], 3_000_000, True),
        _cand("optimizer_step", [0, 1], [2, 3], 0), _cand("reduction_fusion", [0, 1], [0, 2], 0),
        _cand("attention_block", [0, 1], [0, 0], -7), _cand("backward_pass_chain", [0], [3], 1))]


NO_KERNEL = ("one branch and bound over a handful of candidates per request: a search, not a "
             "batch")
declare(
    "symplex.fusion_speedup", chapter=13,
    summary="SympleX's confidence, compute savings and estimated speedup of one fusion "
            "candidate: savings x (1 + mb/(mb + 10)) x confidence, with the +0.05 rank bonus.",
    args=record(pattern=PATTERN, ranks=RANKS, saved_bytes=SAVED, factorization=FACTOR),
    result=record(confidence=F64, compute_savings=F64, speedup=F64),
    spec=(confidence, compute_savings, estimated_speedup), domain=speedup_args,
    edges=speedup_edges,
    invalid=(InvalidCase("no op", lambda: st.just(
        {"pattern": PATTERNS[0], "ranks": [], "saved_bytes": 0, "factorization": False})),),
    not_applicable={"numba": "three float64 products per request: no loop to compile",
                    "cupy": "three float64 products per request: nothing to spread"},
)
declare(
    "symplex.fusion_select", chapter=13,
    summary="The global choice among fusion candidates: no op in two chosen candidates, the "
            "product of the estimated speedups maximised exactly (SympleX: their sum).",
    args=record(candidates=Field(List(CANDIDATE, MAX_CANDIDATES), "the candidates, in order")),
    result=record(selected=Field(List(U32, MAX_CANDIDATES), "the chosen candidates, ascending"),
                  total=Field(F64, "the product of their speedups (1.0 for none)"),
                  total_sum=Field(F64, "the sum of their speedups")),
    spec=(select, best_selection, estimated_speedup), errata=(E13_410,),
    domain=select_args, edges=select_edges,
    invalid=(InvalidCase("two ops with one index", lambda: st.just(
                 {"candidates": [_cand("elementwise_chain", [1, 1], [2, 2], 0)]})),
             InvalidCase("an op index of 64", lambda: st.just(
                 {"candidates": [_cand("elementwise_chain", [64], [2], 0)]})),
             InvalidCase("ranks not one per op", lambda: st.just(
                 {"candidates": [_cand("elementwise_chain", [0, 1], [2], 0)]}))),
    not_applicable={"numba": NO_KERNEL, "cupy": NO_KERNEL},
)

_ILP = "rust-engine/src/fusion_engine.rs, ilp_select_boundaries"
erratum(
    E13_410, "The ILP maximises the sum of speedup factors, not the decision's total",
    seed=SEEDS["symplex"], location=f"{_ILP} (objective) against FusionDecision::from_boundaries",
    ops=("symplex.fusion_select",),
    witness={"args": {"candidates": SLOWDOWN},
             "spec": {"selected": [], "total": "0x3ff0000000000000",
                      "total_sum": "0x0000000000000000"},
             "seed": {"selected": [1, 2], "total": "0x3fd123bcd35a8587",
                      "total_sum": "0x3ff08f5c28f5c28f"}},
    also=({"op": "symplex.fusion_select", "args": {"candidates": TRADE},
           "spec": {"selected": [0], "total": "0x3ffb2705cfd825a5",
                    "total_sum": "0x3ffb2705cfd825a5"},
           "seed": {"selected": [1, 2], "total": "0x3ff55d6c98359a1c",
                    "total_sum": "0x40027d27d27d27d3"}},),
    flag="result",
    detail="Speedups are factors and the decision's total_estimated_speedup is their product, "
           "but the ILP adds them, so two fusions of 0.5175 each (a predicted slowdown: "
           "product 0.268) beat one of 0.85, and nothing at all (1.0) is never preferred. The "
           "spec maximises the product. The objective is read from the code; good_lp and its "
           "solver (microlp 0.4 by the lock file) could not be built, and each witness's gap "
           "(1.035 against 0.85; 2.31 against 1.70) is far beyond any solver tolerance.",
)
