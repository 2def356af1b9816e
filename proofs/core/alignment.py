"""Chapter 1 obligations: the align-up formula and power-of-two ring indexing."""

from __future__ import annotations

import z3

from ...spec.core.bits import align_up, is_pow2, pow2_index
from ...spec.core.registry import Mutant
from .obligation import Query, z3_obligation

W = 64


@z3_obligation(
    "PO1.1",
    "align_up(x, k) = (x + k - 1) & ~(k - 1) is the least multiple of k that is >= x, for every "
    "power-of-two k and every x with x + k - 1 < 2^64.",
    covers=("bits.align_up",),
    subject=align_up,
    mutants=(
        Mutant.edit("plus k", "(x + k) & ~(k - 1): skips an already aligned x", align_up,
                    "add(x, sub(k, 1, width), width)", "add(x, k, width)"),
        Mutant.edit("round down", "x & ~(k - 1): can return less than x", align_up,
                    "add(x, sub(k, 1, width), width)", "x"),
        Mutant.edit("mask is k", "(x + k - 1) & ~k: keeps the bits below k", align_up,
                    "bnot(sub(k, 1, width), width)", "bnot(k, width)"),
    ),
)
def align_up_is_least_aligned_bound(f):
    x, k = z3.BitVecs("x k", W)
    pre = z3.And(is_pow2(k), z3.ULE(x, x + (k - 1)))
    r = f(x, k)
    return [
        Query("aligned", z3.And(pre, r & (k - 1) != 0)),
        Query(">= x", z3.And(pre, z3.ULT(r, x))),
        Query("least (r - x < k)", z3.And(pre, z3.UGE(r - x, k))),
    ]


@z3_obligation(
    "PO1.2",
    "For a power-of-two capacity C, h & (C - 1) == h mod C for every 64-bit index h.",
    covers=("bits.pow2_index", "TraceRing", "MetaLog"),
    subject=pow2_index,
    mutants=(Mutant.edit("mask is C", "h & C instead of h & (C - 1)", pow2_index,
                         "h & sub(capacity, 1, width)", "h & capacity"),
             Mutant.edit("mask one bit short", "h & (C - 1) >> 1: drops the top index bit",
                         pow2_index, "h & sub(capacity, 1, width)",
                         "h & (sub(capacity, 1, width) >> 1)")),
)
def bitmask_is_modulo(f):
    h, c = z3.BitVecs("h c", W)
    return [Query("h & (C-1) == h % C", z3.And(is_pow2(c), f(h, c) != z3.URem(h, c)))]
