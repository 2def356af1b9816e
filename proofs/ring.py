"""Chapter 4 obligations: TraceRing and MetaLog indexing, the drain split, the MetaLog space
check, and exhaustive exploration of both SPSC protocols."""

from __future__ import annotations

import z3

from ..spec.bits import is_pow2, pow2_index, sub
from ..spec.meta_log import fits_u32
from ..spec.registry import Mutant
from ..spec.ring_protocol import Spsc
from ..spec.trace_ring import drain_split
from .obligation import Query, model_obligation, z3_obligation


@z3_obligation(
    "PO4.1",
    "No two of C consecutive ring indices share a slot: for a power-of-two C and i < j < C, "
    "(h + i) & (C - 1) != (h + j) & (C - 1).",
    covers=("ring.simulate", "metalog.simulate"),
    subject=pow2_index,
    mutants=(Mutant("mask is C", "h & C instead of h & (C - 1)", lambda h, c: h & c),),
)
def window_has_no_collision(slot):
    h, i, j, c = z3.BitVecs("h i j c", 32)
    return [Query("distinct slots in a window", z3.And(
        is_pow2(c), z3.ULT(i, j), z3.ULT(j, c), slot(h + i, c) == slot(h + j, c)))]


def _no_min(tail, count, capacity):
    start = pow2_index(tail, capacity)
    first = sub(capacity, start)
    return start, first, sub(count, first)


@z3_obligation(
    "PO4.2",
    "A drain of count <= C items from tail t copies slots start.. (first items) then 0.. "
    "(second items): the parts add up to count, neither exceeds it, the second ends before "
    "the first begins, both stay inside the array, and item k comes from slot (t + k) & (C-1).",
    covers=("ring.simulate",),
    subject=drain_split,
    mutants=(Mutant("no min", "first = C - start even when fewer items are there", _no_min),),
)
def drain_split_is_exact(split):
    t, count, c, k = z3.BitVecs("t count c k", 64)
    start, first, second = split(t, count, c)
    pre = z3.And(is_pow2(c), z3.ULE(c, 1 << 32), z3.ULE(count, c))
    from_split = z3.If(z3.ULT(k, first), start + k, k - first)
    return [
        Query("first + second == count", z3.And(pre, first + second != count)),
        Query("first <= count and second <= count",
              z3.And(pre, z3.Or(z3.UGT(first, count), z3.UGT(second, count)))),
        Query("second <= start", z3.And(pre, z3.UGT(second, start))),
        Query("start + first <= C", z3.And(pre, z3.UGT(start + first, c))),
        Query("item k comes from slot (t + k) & (C - 1)",
              z3.And(pre, z3.ULT(k, count), from_split != (t + k) & (c - 1))),
    ]


def _ignores_n(h, cached_tail, n, capacity):
    return fits_u32(h, cached_tail, 0, capacity)


def _space_check(fits, witness: bool):
    h, ct, n, cap = z3.BitVecs("h ct n cap", 32)
    used = h - ct
    wide = z3.ZeroExt(32, used) + z3.ZeroExt(32, n)
    pre = z3.And(is_pow2(cap), z3.ULE(cap, 1 << 20), z3.ULE(used, cap))
    exact = z3.ULE(wide, z3.ZeroExt(32, cap))
    if witness:
        return [Query("an append that does not fit passes the check",
                      z3.And(pre, fits(h, ct, n, cap), z3.Not(exact)), expect="sat")]
    bounded = z3.ULE(n, z3.BitVecVal(2**32 - 1, 32) - cap)
    return [Query("the check accepts exactly what fits",
                  z3.And(pre, bounded, fits(h, ct, n, cap) != exact))]


@z3_obligation(
    "PO4.4",
    "MetaLog's 32-bit space check (u32)(h - cached_tail + n) <= C accepts exactly the appends "
    "that fit, whenever n <= 2^32 - 1 - C (slots in use <= C).",
    covers=("metalog.simulate",),
    subject=fits_u32,
    mutants=(Mutant("ignores n", "checks the slots in use alone", _ignores_n),),
)
def space_check_sound_when_bounded(fits):
    return _space_check(fits, witness=False)


def _exact(h, ct, n, cap):
    return z3.ULE(z3.ZeroExt(32, h - ct) + z3.ZeroExt(32, n), z3.ZeroExt(32, cap))


@z3_obligation(
    "PO4.5",
    "Witness of erratum E4.2: without a bound on n the 32-bit check accepts an append that "
    "does not fit (the sum wraps).",
    covers=("metalog.simulate", "E4.2"),
    subject=fits_u32,
    mutants=(Mutant("exact check", "the spec's check, computed without wrapping", _exact),),
)
def space_check_wraps_without_bound(fits):
    return _space_check(fits, witness=True)


def _ring_models(bug):
    return [Spsc(2, (1,) * 5, bug=bug).machine("TraceRing"),
            Spsc(4, (1,) * 7, bug=bug).machine("TraceRing")]


@model_obligation(
    "PO4.3",
    "TraceRing SPSC protocol, every interleaving of its atomic steps (C = 2 and 4): no slot "
    "overwritten before it is consumed, nothing read before it is published, FIFO, "
    "0 <= head - tail <= C, no deadlock.",
    covers=("ring.simulate", "TraceRing"),
    subject=None,
    mutants=(Mutant("publish before write", "head released before the slot is written",
                    "publish before write"),
             Mutant("full only past capacity", "h - cached_tail > C taken as full",
                    "full only past capacity"),
             Mutant("release before read", "the consumer releases tail before it reads",
                    "release before read")),
)
def trace_ring_protocol(bug):
    return _ring_models(bug)


@model_obligation(
    "PO4.6",
    "MetaLog SPSC protocol with bulk appends and wrapping counters (C = 4 with 3-bit and C = 8 "
    "with 4-bit counters): the same safety properties, and the fast-path space check is sound "
    "through the wrap.",
    covers=("metalog.simulate", "MetaLog"),
    subject=None,
    mutants=(Mutant("space check ignores n", "(u32)(h - cached_tail) <= C",
                    "space check ignores n"),
             Mutant("release before read", "advance_tail before the metas are read",
                    "release before read")),
)
def metalog_protocol(bug):
    return [Spsc(4, (2, 1, 3, 2, 1, 3), bits=3, bug=bug).machine("MetaLog"),
            Spsc(8, (3, 5, 2, 4, 1, 3, 6), bits=4, bug=bug).machine("MetaLog")]
