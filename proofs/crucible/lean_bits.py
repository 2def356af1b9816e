"""Chapter 1 obligations from the Lean formalization's Basic and BitVec modules: the bit tricks
of spec/core/bits.py (align up, power-of-two masks, the power-of-two test, the complement) at the
widths the Lean states them (8 and 16 bits) and at the widths the real code uses (32, 64)."""

from __future__ import annotations

import z3

from ...spec.core.bits import align_up, bnot, is_pow2, pow2_index
from ...spec.core.registry import Mutant
from ..core.obligation import Query, z3_obligation

LEAN_MASK_CAPS = {8: (4, 8, 16, 64, 128), 16: (256, 1024, 4096, 8192, 65536)}
"""The capacities the Lean's bitmask-equals-mod instances use, by the width they use."""


def _align_queries(width: int) -> list[Query]:
    x, k, y = z3.BitVecs(f"x{width} k{width} y{width}", width)
    pow2 = is_pow2(k)
    no_wrap = z3.ULE(x, x + (k - 1))
    r = align_up(x, k, width)
    tag = f"{width}-bit"
    return [
        Query(f"{tag}: aligned", z3.And(pow2, r & (k - 1) != 0)),
        Query(f"{tag}: >= x without wrap", z3.And(pow2, no_wrap, z3.ULT(r, x))),
        Query(f"{tag}: tight (no aligned y in [x, r))",
              z3.And(pow2, no_wrap, y & (k - 1) == 0, z3.ULE(x, y), z3.ULT(y, r))),
        Query(f"{tag}: an aligned x is unchanged", z3.And(pow2, x & (k - 1) == 0, r != x)),
        Query(f"{tag}: 0 maps to 0", z3.And(pow2, align_up(z3.BitVecVal(0, width), k, width)
                                            != 0)),
    ]


@z3_obligation(
    "PO1.40",
    "align_up(x, k) at 8, 16 and 64 bits, for every power-of-two k: the result is a multiple "
    "of k; it is >= x and no multiple of k lies in [x, result) when x + k - 1 does not wrap; "
    "an aligned x is unchanged; 0 stays 0.",
    covers=("bits.align_up", "arena.simulate"),
    subject=align_up,
    mutants=(
        Mutant.edit("add k", "x + k instead of x + (k - 1): skips an aligned x", align_up,
                    "add(x, sub(k, 1, width), width)", "add(x, k, width)"),
        Mutant.edit("no mask", "the low bits are not cleared", align_up,
                    "add(x, sub(k, 1, width), width) & bnot(sub(k, 1, width), width)",
                    "add(x, sub(k, 1, width), width)"),
    ),
)
def align_up_at_each_width(f):
    return [q for w in (8, 16, 64) for q in _align_queries(w)]


@z3_obligation(
    "PO1.41",
    "pow2_index(h, C) = h & (C - 1) is below C for every power-of-two C (8, 16, 32 and 64 "
    "bits), and steps like a ring: pow2_index(h + 1, C) == (pow2_index(h, C) + 1) & (C - 1).",
    covers=("bits.pow2_index", "TraceRing", "MetaLog"),
    subject=pow2_index,
    mutants=(
        Mutant.edit("mask C - 2", "h & (C - 2): an off-by-one mask", pow2_index,
                    "sub(capacity, 1, width)", "sub(capacity, 2, width)"),
        Mutant.edit("mask C", "h & C instead of h & (C - 1)", pow2_index,
                    "h & sub(capacity, 1, width)", "h & capacity"),
    ),
)
def masked_index_in_range(f):
    out = []
    for w in (8, 16, 32, 64):
        h, c = z3.BitVecs(f"h{w} c{w}", w)
        out.append(Query(f"{w}-bit: h & (C-1) < C", z3.And(is_pow2(c), z3.UGE(f(h, c, w), c))))
    h, c = z3.BitVecs("h8 c8", 8)
    out.append(Query("8-bit: successor wraps", z3.And(
        is_pow2(c), f(h + 1, c, 8) != (f(h, c, 8) + 1) & (c - 1))))
    return out


@z3_obligation(
    "PO1.42",
    "pow2_index(h, C) == h mod C for the Lean's instances: C in 4, 8, 16, 64, 128 over 8-bit "
    "h and C in 256, 1024, 4096, 8192, 65536 (the TraceRing capacity) over 16-bit h.",
    covers=("bits.pow2_index", "TraceRing"),
    subject=pow2_index,
    mutants=(Mutant.edit("mask C - 2", "h & (C - 2): an off-by-one mask", pow2_index,
                         "sub(capacity, 1, width)", "sub(capacity, 2, width)"),),
)
def mask_is_mod_at_lean_caps(f):
    out = []
    for w, caps in LEAN_MASK_CAPS.items():
        for cap in caps:
            h = z3.BitVec(f"h{w}", w)
            c = z3.BitVecVal(cap, w) if cap < (1 << w) else None
            if c is None:  # 65536 does not fit 16 bits: compare at 32 bits, h zero-extended
                hz = z3.ZeroExt(16, h)
                out.append(Query(f"h & {cap - 1} == h % {cap}",
                                 f(hz, z3.BitVecVal(cap, 32), 32) != z3.URem(hz, cap)))
            else:
                out.append(Query(f"h & {cap - 1} == h % {cap}", f(h, c, w) != z3.URem(h, c)))
    return out


@z3_obligation(
    "PO1.43",
    "is_pow2(x) (x != 0 and x & (x - 1) == 0) holds exactly when x has one bit set, at 8 and "
    "64 bits; so a power of two is non-zero and positive, and doubling one below the top bit "
    "gives another.",
    covers=("bits.is_pow2",),
    subject=is_pow2,
    mutants=(
        Mutant.edit("zero passes", "the x != 0 conjunct is dropped", is_pow2,
                    "z3_module().And(x != 0, x & (x - 1) == 0)", "x & (x - 1) == 0"),
        Mutant.edit("x + 1", "x & (x + 1) == 0: tests all-ones, not one bit", is_pow2,
                    "x & (x - 1) == 0", "x & (x + 1) == 0", occurrence=2),
    ),
)
def pow2_is_one_bit(f):
    out = []
    for w in (8, 64):
        x = z3.BitVec(f"x{w}", w)
        one_bit = z3.Or(*[x == (1 << i) for i in range(w)])
        out += [Query(f"{w}-bit: is_pow2 <=> one bit set", f(x) != one_bit),
                Query(f"{w}-bit: is_pow2 => x != 0", z3.And(f(x), x == 0))]
    x = z3.BitVec("x64", 64)
    out.append(Query("doubling keeps a power of two",
                     z3.And(f(x), z3.ULT(x, 1 << 63), z3.Not(f(x + x)))))
    return out


@z3_obligation(
    "PO1.44",
    "bnot, the complement, at 8 and 64 bits: ~(a & b) == ~a | ~b, ~(a | b) == ~a & ~b, "
    "~~a == a, a & ~a == 0 and a | ~a is all ones.",
    covers=("bits.bnot",),
    subject=bnot,
    mutants=(Mutant.edit("negate", "-x instead of ~x", bnot, "return ~x", "return -x"),),
)
def complement_laws(f):
    out = []
    for w in (8, 64):
        a, b = z3.BitVecs(f"a{w} b{w}", w)
        ones = z3.BitVecVal((1 << w) - 1, w)
        out += [
            Query(f"{w}-bit: De Morgan (and)", f(a & b, w) != f(a, w) | f(b, w)),
            Query(f"{w}-bit: De Morgan (or)", f(a | b, w) != f(a, w) & f(b, w)),
            Query(f"{w}-bit: involution", f(f(a, w), w) != a),
            Query(f"{w}-bit: a & ~a == 0", a & f(a, w) != 0),
            Query(f"{w}-bit: a | ~a == ~0", a | f(a, w) != ones),
        ]
    return out
