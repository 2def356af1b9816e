"""Chapter 13 obligations of SympleX's fusion selection: each candidate's confidence, savings
and speedup are bit for bit those of fusion_engine.rs built with rustc (PO13.430), and the
selection is the best packing by brute force over every subset, by product in the spec and by
sum under E13.410 (PO13.431)."""

from __future__ import annotations

import itertools
from fractions import Fraction

from ...spec.core.registry import Mutant
from ...spec.symplex.fusion_select import (
    E13_410,
    best_selection,
    confidence,
    estimated_speedup,
    select_args,
    select_op,
    speedup_op,
)
from ...spec.symplex.fusion_select import _check_candidate as decode
from ..core.obligation import Property, property_obligation

RUST_ANSWERS = (
    (0, False, 0, [2, 2, 2], 0x3FE999999999999A, 0x3FF199999999999A, 0x3FEC28F5C28F5C2A),
    (0, False, 0, [2], 0x3FE8000000000000, 0x3FF199999999999A, 0x3FEA666666666667),
    (7, False, 1048576, [2, 2], 0x3FEB333333333334, 0x3FF0000000000000, 0x3FEDAC37DAC37DAC),
    (7, False, 1048576, [0, 2], 0x3FEB333333333334, 0x3FF0000000000000, 0x3FEDAC37DAC37DAC),
    (7, False, 1048576, [2, 3], 0x3FE999999999999A, 0x3FF0000000000000, 0x3FEBED61BED61BED),
    (1, True, 3000000, [2, 2, 2], 0x3FE3333333333333, 0x3FF3333333333333, 0x3FEC2A5812235CF7),
    (9, False, 5000, [1, 1], 0x3FE3333333333334, 0x3FF0000000000000, 0x3FE3358AE9FE22EF),
    (6, False, 123456789, [4, 4, 4, 4], 0x3FE0000000000000, 0x3FF2666666666666,
     0x3FF1AE05A07E82D5),
    (2, False, -7, [3, 3], 0x3FE8000000000000, 0x3FF0CCCCCCCCCCCD, 0x3FE9333333333334),
    (5, False, 1, [0, 0], 0x3FE0000000000000, 0x3FF0000000000000, 0x3FE0000019999971),
    (3, False, 999999, [1], 0x3FE4CCCCCCCCCCCD, 0x3FF3333333333333, 0x3FEB221464FD1C56),
    (8, False, 65536, [2, 0, 2], 0x3FE6666666666667, 0x3FF199999999999A, 0x3FE8CB04E5BB6FC0),
    (4, False, 10485760, [3, 3], 0x3FE4CCCCCCCCCCCD, 0x3FF199999999999A, 0x3FF128F5C28F5C2A),
)
"""(pattern, factorization, saved bytes, ranks, confidence, compute savings, speedup bits) as
fusion_engine.rs's estimate_confidence_from_egraph, estimate_compute_savings,
FusionBoundary::new and estimated_speedup answered them, compiled alone with rustc -O."""


def _rust(case: tuple) -> None:
    pattern, factorization, saved, ranks, conf, savings, speedup = case
    got = speedup_op(pattern, ranks, saved, factorization)
    assert (got["confidence"], got["compute_savings"], got["speedup"]) == \
        (conf, savings, speedup), (case, got)


def brute_best(cs: list, product: bool) -> tuple[int, ...]:
    """Every subset whose candidates share no op; the best objective, then the set that holds
    the earlier candidates (membership vector, candidate 0 first, greatest)."""
    w = [Fraction(estimated_speedup(c)) for c in cs]
    best = None
    for bits in itertools.product((1, 0), repeat=len(cs)):
        chosen = [k for k, b in enumerate(bits) if b]
        ops = [i for k in chosen for i in cs[k].op_indices]
        if len(ops) != len(set(ops)):
            continue
        value = Fraction(1) if product else Fraction(0)
        for k in chosen:
            value = value * w[k] if product else value + w[k]
        if best is None or value > best[0]:
            best = (value, tuple(chosen))
    return best[1]


def _optimal(args: dict) -> None:
    cs = [decode(c, "c", True) for c in args["candidates"]]
    for errata, product in ((frozenset(), True), (frozenset({E13_410}), False)):
        got = select_op(args["candidates"], errata)["selected"]
        assert tuple(got) == brute_best(cs, product), (args, errata, got)


@property_obligation(
    "PO13.430",
    "symplex.fusion_speedup's confidence, compute savings and speedup equal, bit for bit, "
    "those of SympleX's own fusion_engine.rs functions compiled with rustc on pinned "
    "candidates of every pattern: the rank bonus (rank-0 ops left out, never for one op), the "
    "factorization candidate, saved bytes below zero and the memory term's diminishing return.",
    covers=("symplex.fusion_speedup",),
    subject=speedup_op,
    mutants=(
        Mutant.edit("bonus for one op", "a single op earns the rank bonus", confidence,
                    "len(c.ranks) >= 2", "len(c.ranks) >= 1"),
        Mutant.edit("rank 0 counted", "scalar ops break the rank bonus", confidence,
                    "[r for r in c.ranks if r > 0]", "list(c.ranks)"),
        Mutant.edit("megabytes", "saved bytes read as 10^6 per MiB", estimated_speedup,
                    "/ MIB", "/ 1e6"),
        Mutant.edit("no diminishing returns", "the memory term grows linearly in MiB",
                    estimated_speedup, "mb / (mb + DIMINISH)", "mb / DIMINISH"),
        Mutant.edit("negative bytes kept", "a negative saving is not clamped",
                    estimated_speedup, "max(c.saved_bytes, 0)", "abs(c.saved_bytes)"),
    ),
)
def rust_arithmetic(_subject):
    return [Property("rustc's answers", _rust, cases=lambda: RUST_ANSWERS)]


@property_obligation(
    "PO13.431",
    "symplex.fusion_select picks, among all sets of candidates no two of which share an op, "
    "the one of greatest product of speedups (under E13.410: of greatest sum), the earlier "
    "candidates kept on a tie, as found by enumerating every subset, on generated sets of up "
    "to eight candidates over six ops.",
    covers=("symplex.fusion_select",),
    subject=select_op,
    mutants=(
        Mutant.edit("overlap allowed", "candidates sharing an op may both be chosen",
                    best_selection, "if not masks[k] & used:", "if True:"),
        Mutant.edit("bound counts losers", "the bound multiplies in speedups below one",
                    best_selection, "helps = weights[k] > 1 if product", "helps = True if product"),
        Mutant.edit("greedy stop", "the search stops at the first branch that gains nothing",
                    best_selection, "join(value, rest[k]) < best[0]",
                    "join(value, rest[k]) <= best[0] or value < best[0]"),
        Mutant.edit("latest on ties", "a tie keeps the later candidates",
                    best_selection, "earlier(chosen, best[1])", "earlier(best[1], chosen)"),
    ),
)
def best_packing(_subject):
    return [Property("generated candidate sets", _optimal, strategy=select_args, examples=300)]
