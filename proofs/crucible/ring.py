"""Chapter 4 obligations: TraceRing and MetaLog indexing, the drain split, the MetaLog space
check, and exhaustive exploration of both SPSC protocols."""

from __future__ import annotations

import z3

from ...spec.core.bits import is_pow2, pow2_index
from ...spec.core.errata import NO_ERRATA
from ...spec.core.registry import Mutant
from ...spec.crucible import meta_log, trace_ring
from ...spec.crucible.meta_log import fits_u32
from ...spec.crucible.ring_protocol import meta_log_model, read_step, trace_ring_model
from ...spec.crucible.trace_ring import drain_split
from ..core.obligation import Query, model_obligation, z3_obligation
from ..core.patch import source_of, unwrap


@z3_obligation(
    "PO4.1",
    "No two of C consecutive ring indices share a slot: for a power-of-two C and i < j < C, "
    "(h + i) & (C - 1) != (h + j) & (C - 1).",
    covers=("ring.simulate", "metalog.simulate"),
    subject=pow2_index,
    mutants=(Mutant.edit("mask is C", "h & C instead of h & (C - 1)", pow2_index,
                         "sub(capacity, 1, width)", "capacity"),),
)
def window_has_no_collision(slot):
    h, i, j, c = z3.BitVecs("h i j c", 32)
    return [Query("distinct slots in a window", z3.And(
        is_pow2(c), z3.ULT(i, j), z3.ULT(j, c), slot(h + i, c) == slot(h + j, c)))]


@z3_obligation(
    "PO4.2",
    "A drain of count <= C items from tail t copies slots start.. (first items) then 0.. "
    "(second items): the parts add up to count, neither exceeds it, the second ends before "
    "the first begins, both stay inside the array, and item k comes from slot (t + k) & (C-1).",
    covers=("ring.simulate",),
    subject=drain_split,
    mutants=(Mutant.edit("no min", "first = C - start even when fewer items are there",
                         drain_split, "umin(count, sub(capacity, start))",
                         "sub(capacity, start)"),),
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
    mutants=(Mutant.edit("ignores n", "checks the slots in use alone", fits_u32,
                         "add(sub(h, cached_tail, bits), n, bits)",
                         "sub(h, cached_tail, bits)"),),
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


def _swapped(name: str, description: str, fn, first: str, second: str) -> Mutant:
    """The bug that runs statement `second` of `fn` where `first` stands and `first` where
    `second` stands (two steps in the wrong order)."""
    text = source_of(unwrap(fn)).text
    old = text[text.index(first):text.index(second) + len(second)]
    return Mutant.edit(name, description, fn, old,
                       second + old[len(first):-len(second)] + first)


def _trace_ring_models(_subject) -> list:
    return [trace_ring_model(c, ops, most).machine() for c, ops, most in ((2, 5, 2), (4, 7, 4),
                                                                          (4, 7, 3))]


@model_obligation(
    "PO4.3",
    "TraceRing SPSC protocol, every interleaving of the atomic steps of the spec's append and "
    "drain (C = 2 with 5 appends, C = 4 with 7, drains of up to C and of up to 3): no slot "
    "overwritten before it is consumed, nothing read before it is published, FIFO, "
    "0 <= head - tail <= C, no deadlock.",
    covers=("ring.simulate", "TraceRing"),
    subject=(trace_ring.append_step, trace_ring.drain_step),
    mutants=(
        Mutant.edit("full only past capacity", "h - cached_tail > C taken as full",
                    trace_ring.looks_full, ">=", ">"),
        _swapped("publish before write", "head released before the slot is written",
                 trace_ring.append_step, "r.slots[pow2_index(a.h, r.capacity)] = a.item",
                 "r.head = a.h + 1"),
        _swapped("release before copy", "the consumer releases tail before it copies",
                 trace_ring.drain_step, "d = replace(d, items=copied(r, d.t, d.count))",
                 "r.tail = d.t + d.count"),
        Mutant.edit("mask is C", "slot h & C instead of h & (C - 1)", pow2_index,
                    "sub(capacity, 1, width)", "capacity"),
        Mutant.edit("no min", "the first copy runs to the end of the array whatever the count",
                    trace_ring.drain_split, "umin(count, sub(capacity, start))",
                    "sub(capacity, start)"),
    ),
)
def trace_ring_protocol(subject):
    return _trace_ring_models(subject)


def _meta_log_models(_subject) -> list:
    runs = ((4, (2, 1, 3, 2, 1, 3), 3), (8, (3, 5, 2, 4, 1, 3, 6), 4))
    return [meta_log_model(c, sizes, bits, errata).machine()
            for c, sizes, bits in runs for errata in (NO_ERRATA, frozenset({meta_log.E4_2}))]


@model_obligation(
    "PO4.6",
    "MetaLog SPSC protocol, every interleaving of the spec's bulk append and the consumer's "
    "read (C = 4 with 3-bit and C = 8 with 4-bit counters, under the spec's exact check and "
    "the code's 32-bit one of E4.2): the same safety properties, and both space checks are "
    "sound through the wrap when n <= 2^bits - 1 - C.",
    covers=("metalog.simulate", "MetaLog"),
    subject=(meta_log.append_step, read_step),
    mutants=(
        Mutant.edit("space check ignores n", "(u32)(h - cached_tail) <= C", meta_log.fits_u32,
                    "add(sub(h, cached_tail, bits), n, bits)", "sub(h, cached_tail, bits)"),
        Mutant.edit("slots in use not wrapped", "h - cached_tail taken without the modulus",
                    meta_log.fits_exact, "(h - cached_tail) % (1 << bits)",
                    "(h - cached_tail)"),
        _swapped("publish before write", "head released before the metas are copied",
                 meta_log.append_step, "copy_in(m, a.h, a.metas)",
                 "m.head = add(a.h, a.n, m.bits)"),
        _swapped("release before read", "advance_tail before the metas are read",
                 read_step, "r = replace(r, items=metas_at(m, r.t, r.count))",
                 "meta_log.advance_tail(m, r.count)"),
    ),
)
def metalog_protocol(subject):
    return _meta_log_models(subject)
