"""Chapter 3 obligations: arena allocations are aligned, inside their block and disjoint."""

from __future__ import annotations

import z3

from ..spec.arena import new_block_size, place
from ..spec.bits import align_up, is_pow2
from ..spec.registry import Mutant
from .obligation import Query, z3_obligation


def _aligns_offset(base, offset, align):
    return align_up(offset, align)


@z3_obligation(
    "PO3.1",
    "Bumping within a block: the address base + place(base, offset, align) is aligned, is at or "
    "after the bump pointer, and an allocation that passes the fit check ends inside the block, "
    "where the next one starts after it (so allocations are disjoint).",
    covers=("arena.simulate",),
    subject=place,
    mutants=(Mutant("aligns the offset", "align_up(offset) ignores the block's base address",
                    _aligns_offset),),
)
def bump_is_aligned_inside_disjoint(place_fn):
    base, off, end, size, align, size2, align2 = z3.BitVecs("base off end size align size2 "
                                                            "align2", 64)
    limit = z3.BitVecVal(1 << 48, 64)
    pre = z3.And(is_pow2(align), is_pow2(align2), z3.ULE(align, 1 << 20), z3.ULE(align2, 1 << 20),
                 z3.ULT(base, limit), z3.ULE(off, end), z3.ULT(end, limit), z3.ULT(size, limit),
                 z3.ULT(size2, limit))
    at = place_fn(base, off, align)
    fits = z3.ULE(at + size, end)
    nxt = place_fn(base, at + size, align2)
    return [
        Query("aligned", z3.And(pre, (base + at) & (align - 1) != 0)),
        Query("at or after the bump pointer", z3.And(pre, z3.ULT(at, off))),
        Query("inside the block when it fits", z3.And(pre, fits, z3.UGT(at + size, end))),
        Query("the next allocation starts after this one", z3.And(pre, z3.ULT(nxt, at + size))),
    ]


def _always_block_size(size, align, block_size):
    return block_size


@z3_obligation(
    "PO3.2",
    "A request that starts a new block fits it: place(new_base, 0, align) + size <= the new "
    "block's size, and the address is aligned.",
    covers=("arena.simulate",),
    subject=new_block_size,
    mutants=(Mutant("always block_size", "oversized requests get a block_size block",
                    _always_block_size),),
)
def new_block_fits(size_fn):
    base, size, align, block = z3.BitVecs("base size align block", 64)
    limit = z3.BitVecVal(1 << 48, 64)
    pre = z3.And(is_pow2(align), z3.ULE(align, 1 << 20), z3.ULT(base, limit),
                 z3.ULT(size, limit), z3.UGT(block, 0), z3.ULT(block, limit))
    at = place(base, z3.BitVecVal(0, 64), align)
    return [
        Query("fits the new block", z3.And(pre, z3.UGT(at + size, size_fn(size, align, block)))),
        Query("aligned", z3.And(pre, (base + at) & (align - 1) != 0)),
    ]
