"""Obligations of vyre's 16.16 multiply and tensor-train step (chapter 12) and of its chain
fusion pressure and decision (chapter 14): z3 on the multiply over all 2^64 operand pairs and on
the chain's checks; properties on the f64 oracle's distance, the pressure and the decisions."""

from __future__ import annotations

import math
from functools import cache

import z3
from hypothesis import strategies as st

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.pyc.wire import f64
from ...spec.vyre.fixed import FIXED_ONE, U32_MAX, fmul_exact, fmul_words, sign_mask
from ...spec.vyre.fusion import (
    BUFFER,
    MAX_TT_DISPATCH_CELLS,
    PASS,
    SQRT24_EDGE,
    U128,
    chain_check,
    fusion_pressure,
    log_rank_sum,
    should_fuse,
    should_fuse_via,
)
from ...spec.vyre.tt import shape_refusal, tt_contract_step, tt_contract_step_f64
from ..core.obligation import Property, Query, property_obligation, z3_obligation

NO_SIGN_CORRECTION = Mutant.edit(
    "dropped sign correction", "the signed high word keeps x's correction out",
    fmul_words, "sign_mask(x) & y", "0")
WRONG_CORRECTION = Mutant.edit(
    "correction by itself", "x's sign mask takes x, not y, off the high word",
    fmul_words, "sign_mask(x) & y", "sign_mask(x) & x")


def _pair() -> tuple[z3.BitVecRef, z3.BitVecRef]:
    return z3.BitVec("x", 32), z3.BitVec("y", 32)


@z3_obligation(
    "PO12.300",
    "vyre 0.6.3's multiply from words, (low >> 16) | (mulhi << 16), equals "
    "floor(x * y / 2^16) mod 2^32 with x and y unsigned, for all 2^64 operand pairs.",
    covers=("vyre.tt_contract_step",), subject=fmul_words,
    mutants=(Mutant.edit("low word shifted 15", "the low word loses one bit less", fmul_words,
                         "shr(low, FRAC_BITS)", "shr(low, 15)"),
             Mutant.edit("high word not shifted", "the high word ORed in place", fmul_words,
                         "shl(high, FRAC_BITS, 32)", "high")),
)
def unsigned_words(words):
    x, y = _pair()
    return [Query("words != floor, unsigned", words(x, y, False) != fmul_exact(x, y, False))]


def _corrections(x, y):
    """(x < 0 ? y : 0) + (y < 0 ? x : 0) on 32-bit vectors (z3's < is signed)."""
    return z3.If(x < 0, y, 0) + z3.If(y < 0, x, 0)


@z3_obligation(
    "PO12.301",
    "vyre 0.6.5's multiply from words equals floor(x * y / 2^16) mod 2^32 with x and y read as "
    "i32 (floor toward minus infinity), for all 2^64 operand pairs, in three links: (a) on "
    "bit-vectors, the unsigned words equal the unsigned floor (PO12.300); (b) on bit-vectors, "
    "the signed words are the unsigned words less ((x < 0 ? y : 0) + (y < 0 ? x : 0)) * 2^16 "
    "mod 2^32; (c) in integer arithmetic, the signed floor is the unsigned floor less the same "
    "term mod 2^32. (a) and (c) read one rule, fmul_exact, on bit-vectors and on integers; z3 "
    "does not close the signed floor on bit-vectors directly (two unlike 64-bit multipliers: "
    "unknown after 10 minutes).",
    covers=("vyre.tt_contract_step",), subject=fmul_words,
    mutants=(NO_SIGN_CORRECTION, WRONG_CORRECTION,
             Mutant.edit("sign bit 30", "the sign mask reads bit 30", sign_mask,
                         "shr(x, 31)", "shr(x, 30)"),
             Mutant.edit("signed from 2^31 + 1", "2^31 reads as non-negative", fmul_exact,
                         "v >= 1 << 31", "v > 1 << 31")),
)
def signed_words(words):
    x, y = _pair()
    xi, yi = z3.Ints("xi yi")
    c = z3.If(xi >= 2**31, yi, 0) + z3.If(yi >= 2**31, xi, 0)
    in_range = z3.And(xi >= 0, xi < 2**32, yi >= 0, yi < 2**32)
    floors_apart = fmul_exact(xi, yi, True) != (fmul_exact(xi, yi, False) - c * 2**16) % 2**32
    return [Query("(a) unsigned words != unsigned floor",
                  words(x, y, False) != fmul_exact(x, y, False)),
            Query("(b) signed words != unsigned words less the corrections",
                  words(x, y, True) != words(x, y, False) - (_corrections(x, y) << 16)),
            *(Query(f"(c) signed floor != unsigned floor less the corrections, x "
                    f"{'<' if nx else '>='} 0, y {'<' if ny else '>='} 0",
                    z3.And(in_range, (xi >= 2**31) == nx, (yi >= 2**31) == ny, floors_apart))
              for nx in (False, True) for ny in (False, True))]


def smallest_difference() -> tuple[int, int]:
    """z3 Optimize: the pair where the versions differ with the least x + y, then least x."""
    x, y = _pair()
    opt = z3.Optimize()
    opt.add(fmul_words(x, y, True) != fmul_words(x, y, False))
    opt.minimize(z3.ZeroExt(1, x) + z3.ZeroExt(1, y))
    opt.minimize(x)
    assert opt.check() == z3.sat
    m = opt.model()
    return m[x].as_long(), m[y].as_long()


@z3_obligation(
    "PO12.302",
    "The unsigned (0.6.3) and signed (0.6.5) multiplies agree bit for bit whenever both operands "
    "are below 2^31; they differ exactly when ((x < 0 ? y : 0) + (y < 0 ? x : 0)) * 2^16 is not "
    "0 mod 2^32 (so a difference needs one negative operand and the other with non-zero low "
    "16 bits); the smallest differing pair (least x + y, then least x) is x = 1, y = 2^31.",
    covers=("vyre.tt_contract_step",), subject=fmul_words,
    mutants=(NO_SIGN_CORRECTION, WRONG_CORRECTION,
             Mutant.edit("sign bit 30", "the sign mask reads bit 30", sign_mask,
                         "shr(x, 31)", "shr(x, 30)")),
)
def versions_differ(words):
    x, y = _pair()
    differ = words(x, y, True) != words(x, y, False)
    shift = _corrections(x, y)
    size = z3.ZeroExt(1, x) + z3.ZeroExt(1, y)
    return [Query("differ below 2^31", z3.And(differ, z3.ULT(x, 2**31), z3.ULT(y, 2**31))),
            Query("differ iff the shifted corrections are not 0",
                  differ != ((shift << 16) != 0)),
            Query("x = 1, y = 2^31 differ", z3.And(differ, x == 1, y == 2**31), expect="sat"),
            Query("a smaller pair differs", z3.And(differ, z3.Or(
                z3.ULT(size, 2**31 + 1), z3.And(size == 2**31 + 1, x == 0))))]


@cache
def _lanes() -> st.SearchStrategy:
    @st.composite
    def build(draw) -> tuple:
        r_prev, r_next = draw(st.integers(1, 40)), draw(st.integers(1, 4))
        small = st.integers(0, (1 << 15) - 1)
        return (draw(st.lists(small, min_size=r_prev, max_size=r_prev)),
                draw(st.lists(small, min_size=r_prev * r_next, max_size=r_prev * r_next)),
                r_prev, r_next)

    return build()


def _oracle_bound(case: tuple) -> None:
    acc, core, r_prev, r_next = case
    fixed = tt_contract_step(acc, core, r_prev, r_next)
    real = tt_contract_step_f64([v / FIXED_ONE for v in acc], [v / FIXED_ONE for v in core],
                                r_prev, r_next)
    for lane, oracle in zip(fixed, real, strict=True):
        gap = oracle - lane / FIXED_ONE
        assert 0 <= gap <= r_prev * (FIXED_ONE - 1) / 2**32 < r_prev / FIXED_ONE, (lane, gap)


@property_obligation(
    "PO12.303",
    "For non-negative lanes below 2^15 (and r_prev <= 40) the f64 oracle on the real values "
    "v / 2^16 is exact and lies above each fixed-point lane by between 0 and "
    "r_prev * (2^16 - 1) / 2^32, so strictly less than r_prev / 2^16: the stated bound holds, "
    "and the fixed-point lane is never above the oracle.",
    covers=("vyre.tt_contract_step",), subject=tt_contract_step,
    mutants=(Mutant.edit("rounded term", "each term rounds up instead of truncating",
                         tt_contract_step, "fmul(acc_in[a], core[a * r_next + t], errata)",
                         "fmul(acc_in[a], core[a * r_next + t], errata) + 1"),
             Mutant.edit("column by lane count", "the core is read column-major",
                         tt_contract_step, "core[a * r_next + t]", "core[t * r_prev + a]"),
             Mutant.edit("oracle transposed", "the oracle reads the core column-major",
                         tt_contract_step_f64, "at(core, a * r_next + b)",
                         "at(core, b * r_prev + a)")),
)
def oracle_distance(_subject):
    return [Property("the facts sheet's [1, 2] x [[1,2,3],[4,5,6]] / 2^16 and an all-max row",
                     _oracle_bound, cases=lambda: [
                         ([1, 2], [1, 2, 3, 4, 5, 6], 2, 3),
                         ([2**15 - 1] * 40, [2**15 - 1] * 40, 40, 1)]),
            Property("generated small lanes", _oracle_bound, strategy=_lanes, examples=400)]


def _refusal_order(case: tuple[int, int]) -> None:
    r_prev, r_next = case
    text = shape_refusal(r_prev, r_next)
    if r_prev == 0:
        assert text == f"Fix: tt_contract_step requires r_prev > 0, got {r_prev}.", case
    elif r_next == 0:
        assert text == f"Fix: tt_contract_step requires r_next > 0, got {r_next}.", case
    elif r_prev * r_next >= 2**32:
        assert text == f"Fix: tt_contract_step r_prev*r_next overflows u32: {r_prev}*{r_next}.", \
            case
    else:
        assert text is None, case


@property_obligation(
    "PO12.304",
    "tt_contract_step refuses in vyre's order, r_prev = 0, then r_next = 0, then r_prev * r_next "
    "of 2^32 or more, each with vyre's text; every other shape passes (65535 x 65537 = "
    "4294967295 included).",
    covers=("vyre.tt_contract_step",), subject=shape_refusal,
    mutants=(Mutant.edit("r_next checked first", "r_next = 0 is reported before r_prev = 0",
                         shape_refusal, "if r_prev == 0:", "if r_prev == 0 and r_next != 0:"),
             Mutant.edit("overflow at the max", "a product of 4294967295 is refused",
                         shape_refusal, "r_prev * r_next > U32_MAX",
                         "r_prev * r_next >= U32_MAX")),
)
def refusal_order(_subject):
    edges = (0, 1, 2, 65535, 65536, 65537, 2**32 - 1)
    return [Property("shapes at the edges", _refusal_order,
                     cases=lambda: [(a, b) for a in edges for b in edges]),
            Property("generated shapes", _refusal_order, strategy=lambda: st.tuples(
                st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)), examples=300)]


@z3_obligation(
    "PO14.300",
    "When a step's checks pass, no lane of any chain step wraps: fmul(v, FIXED_ONE) = v under "
    "both multiplies, so a step over r_prev lanes of value v (r_prev * v = p, the product so "
    "far, at most 4294967295) writes r lanes of value p, and those sum, in the next step or the "
    "final one, to p * r, which the passing checks keep <= 4294967295. With u32 ranks and "
    "a product so far within u32, checks a (u128) and c (u32 cells) never refuse.",
    covers=("vyre.fusion_pressure",), subject=chain_check,
    mutants=(Mutant.edit("lanes check off by one", "a product of 2^32 passes", chain_check,
                         "exact > U32_MAX", "exact > U32_MAX + 1"),
             Mutant.edit("no lanes check", "the product is not checked", chain_check,
                         "exact > U32_MAX, LANES", "exact < 0, LANES")),
)
def no_lane_wraps(check):
    v32 = z3.BitVec("v", 32)
    unit = [Query(f"fmul(v, 1.0) != v ({'signed' if s else 'unsigned'})",
                  fmul_words(v32, FIXED_ONE, s) != v32) for s in (True, False)]
    r_prev, r, v, prev = z3.Ints("r_prev r v prev")
    held = z3.And(r_prev >= 1, r >= 1, r <= U32_MAX, v >= 1, prev == r_prev * v,
                  prev <= U32_MAX)
    passes = check(prev * r, r_prev, r) == PASS
    return [*unit,
            Query("a passing step's lane sum wraps", z3.And(held, passes, r_prev * v > U32_MAX)),
            Query("the r lanes it writes (each the product so far) wrap when summed next",
                  z3.And(held, passes, r * prev > U32_MAX)),
            Query("check a or c refuses",
                  z3.And(held, z3.Or(check(prev * r, r_prev, r) == U128,
                                     check(prev * r, r_prev, r) == BUFFER)))]


def _expected_refusal(ranks: list[int]) -> str | None:
    """vyre's order, stated on the ranks: the first non-zero rank that pushes the product past
    u32 (lanes), or whose cells with the previous non-zero rank (1 at first) pass 2^20."""
    product, lanes = 1, 1
    for r in ranks:
        if r == 0:
            continue
        product *= r
        if product > U32_MAX:
            return "would overflow u32 lanes"
        if lanes * r > MAX_TT_DISPATCH_CELLS:
            return "refuses to allocate"
        lanes = r
    return None


def _pressure_holds(ranks: list[int]) -> None:
    want = _expected_refusal(ranks)
    try:
        got = fusion_pressure(ranks)
    except InvalidInput as e:
        assert want is not None and want in e.message, (ranks, e.message)
        return
    assert want is None, (ranks, want)
    assert got == (math.prod(r for r in ranks if r) if ranks else 0), (ranks, got)


@cache
def _chains() -> st.SearchStrategy:
    return st.lists(st.one_of(st.integers(0, 3), st.integers(4, 24),
                              st.sampled_from([2048, 1048577, 4294967295])),
                    max_size=6)


@property_obligation(
    "PO14.301",
    "fusion_pressure is the product of the non-zero ranks (0 for none), or vyre's refusal in "
    "its order: the lanes check on the running product before the cell cap on len(acc) * r; "
    "on the facts sheet's chains and generated ones.",
    covers=("vyre.fusion_pressure",), subject=fusion_pressure,
    mutants=(Mutant.edit("cell cap first", "the cell cap runs before the lanes check",
                         chain_check, "select(exact > U32_MAX, LANES,",
                         "select(r_prev * r > MAX_TT_DISPATCH_CELLS, CELLS,"),
             Mutant.edit("no final step", "the pressure is a lane of the last step",
                         fusion_pressure, "return tt_contract_step(acc, [FIXED_ONE] * len(acc), "
                         "len(acc), 1)[0]", "return acc[0]"),
             Mutant.edit("zeros count", "a zero rank is not skipped", fusion_pressure,
                         "if r == 0:", "if r < 0:"),
             Mutant.edit("no cell cap", "any cell count is dispatched", chain_check,
                         "cells > MAX_TT_DISPATCH_CELLS, CELLS", "cells < 0, CELLS")),
)
def pressure_is_product(_subject):
    facts = [[64], [4, 8], [2, 3, 5, 7], [4, 0, 3], [], [0, 0], [1024, 1024], [4294967295],
             [2048, 1024], [65536, 65537], [1024, 1, 1024]]
    return [Property("the facts sheet's chains", _pressure_holds, cases=lambda: facts),
            Property("generated chains", _pressure_holds, strategy=_chains, examples=200)]


def _decisions(case: tuple) -> None:
    ranks, thr = case
    cpu, via = should_fuse(ranks, thr), should_fuse_via(ranks, thr)
    if not ranks or not thr > 0:
        assert cpu is via is False, case
        return
    n, nonzero = len(ranks), [r for r in ranks if r]
    log_sum = log_rank_sum(ranks)
    log_p = math.log(math.prod(nonzero))
    assert abs(log_sum - log_p) <= 2 * (len(nonzero) + 1) * math.ulp(max(log_sum, 1.0)), case
    lo, hi = sorted((log_sum / n, log_p / n))
    if cpu != via:
        assert lo <= math.log(thr) < hi, case


@cache
def _decision_cases() -> st.SearchStrategy:
    ranks = st.lists(st.integers(0, 40), max_size=5)

    @st.composite
    def build(draw) -> tuple:
        rs = draw(ranks)
        near = math.exp(log_rank_sum(rs) / len(rs)) if rs else 1.0
        thr = draw(st.one_of(st.floats(-1.0, 64.0), st.just(near),
                             st.just(math.nextafter(near, 0)), st.just(math.nextafter(near, 99))))
        return rs, thr

    return build()


@property_obligation(
    "PO14.302",
    "should_fuse (sum of libm logs over every rank) and vyre's dispatched decision (log of the "
    "pressure over every rank) are both false for no ranks or a threshold <= 0; otherwise the "
    "sum of logs and the log of the product differ by at most 2 (k + 1) ulps (k non-zero "
    "ranks), and the decisions differ only when log(thr) lies between the two averages; they "
    "do on [3, 8] at thr = 0x4013988e1409212e (CPU fuses, dispatched does not).",
    covers=("vyre.should_fuse",), subject=should_fuse,
    mutants=(Mutant.edit("zeros not counted", "the average is over the non-zero ranks",
                         should_fuse, "log_sum / len(ranks)",
                         "log_sum / len([r for r in ranks if r])"),
             Mutant.edit("no threshold guard", "a threshold <= 0 reaches log", should_fuse,
                         "if not ranks or not threshold > 0:", "if not ranks:"),
             Mutant.edit("strict", "the boundary does not fuse", should_fuse,
                         "<= math.log(threshold)", "< math.log(threshold)")),
)
def decisions_agree(_subject):
    def witness(_case) -> None:
        thr = f64(SQRT24_EDGE)
        assert should_fuse([3, 8], thr) and not should_fuse_via([3, 8], thr)
        assert should_fuse([8, 8, 8], 16.0) and not should_fuse([8, 8, 8], 4.0)
        assert should_fuse([0, 0], 1.0) and not should_fuse([0, 0], 0.5)

    return [Property("edges", _decisions, cases=lambda: [
                ([8, 8, 8], 16.0), ([8, 8, 8], 4.0), ([], 16.0), ([8], 0.0), ([8], -2.0),
                ([0, 0], 1.0), ([3, 8], f64(SQRT24_EDGE))]),
            Property("vectors and the disagreement witness", witness, cases=lambda: [None]),
            Property("generated ranks and thresholds near the boundary", _decisions,
                     strategy=_decision_cases, examples=400)]

