"""Chapter 3 obligations: arena allocations are aligned, inside their block and disjoint, for
the spec's placement, fit check and new-block size, and for arena_alloc over request
sequences."""

from __future__ import annotations

import z3
from hypothesis import strategies as st

from ...spec.core.bits import is_pow2
from ...spec.core.registry import Mutant
from ...spec.crucible.arena import arena_alloc, arena_new, fits_block, new_block_size, place
from ..core.obligation import Property, Query, property_obligation, z3_obligation


@z3_obligation(
    "PO3.1",
    "Bumping within a block: the address base + place(base, offset, align) is aligned, is at or "
    "after the bump pointer, and an allocation that passes fits_block ends inside the block, "
    "where the next one starts after it (so allocations are disjoint).",
    covers=("arena.simulate",),
    subject=place,
    mutants=(Mutant.edit("aligns the offset", "align_up(offset) ignores the block's base address",
                         place, "align_up(add(base, offset), align)", "align_up(offset, align)"),
             Mutant.edit("fit ignores the size", "only the start is checked against the end",
                         fits_block, "ule(off + size, end_offset)", "ule(off, end_offset)")),
)
def bump_is_aligned_inside_disjoint(place_fn):
    base, off, end, size, align, size2, align2 = z3.BitVecs("base off end size align size2 "
                                                            "align2", 64)
    limit = z3.BitVecVal(1 << 48, 64)
    pre = z3.And(is_pow2(align), is_pow2(align2), z3.ULE(align, 1 << 20), z3.ULE(align2, 1 << 20),
                 z3.ULT(base, limit), z3.ULE(off, end), z3.ULT(end, limit), z3.ULT(size, limit),
                 z3.ULT(size2, limit))
    at = place_fn(base, off, align)
    fits = fits_block(at, size, end)
    nxt = place_fn(base, at + size, align2)
    return [
        Query("aligned", z3.And(pre, (base + at) & (align - 1) != 0)),
        Query("at or after the bump pointer", z3.And(pre, z3.ULT(at, off))),
        Query("inside the block when it fits", z3.And(pre, fits, z3.UGT(at + size, end))),
        Query("the next allocation starts after this one", z3.And(pre, z3.ULT(nxt, at + size))),
    ]


@z3_obligation(
    "PO3.2",
    "A request that starts a new block fits it: place(new_base, 0, align) + size <= the new "
    "block's size, and the address is aligned.",
    covers=("arena.simulate",),
    subject=new_block_size,
    mutants=(Mutant.edit("always block_size", "oversized requests get a block_size block",
                         new_block_size, "select(ule(need, block_size), block_size, need)",
                         "block_size"),
             Mutant.edit("no room to align", "an oversized block of size bytes, no align slack",
                         new_block_size, "need = add(size, align)", "need = size")),
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


@st.composite
def _runs(draw) -> tuple:
    """A block size, block bases and a request sequence (sizes near the block size too)."""
    block = draw(st.sampled_from([64, 256, 4096]))
    bases = draw(st.lists(st.integers(1, 1 << 40), min_size=1, max_size=12, unique=True))
    sizes = st.integers(0, 2 * block) | st.sampled_from([0, 1, block - 1, block, block + 1])
    reqs = draw(st.lists(st.tuples(sizes, st.sampled_from([1, 8, 16, 64, 512])), max_size=24))
    return block, bases, reqs


def _allocations_are_sound(run: tuple) -> None:
    block, bases, reqs = run
    a = arena_new(block, bases[0])
    last_end: dict[int, int] = {}
    for k, (size, align) in enumerate(reqs):
        nxt = bases[len(a.bases)] if len(a.bases) < len(bases) else (len(a.bases) + 1) << 41
        b, off = arena_alloc(a, size, align, nxt)
        address = a.bases[b] + off
        assert b == len(a.bases) - 1, f"request {k}: block {b} is not the current one"
        assert address % align == 0, f"request {k}: address {address:#x} not {align}-aligned"
        assert off + size <= a.sizes[b], f"request {k}: ends at {off + size} > {a.sizes[b]}"
        assert off >= last_end.get(b, 0), f"request {k}: overlaps the previous allocation"
        assert a.offset == off + size, f"request {k}: bump pointer {a.offset}"
        last_end[b] = off + size
    assert a.total_allocated == (len(a.bases) - 1) * block + a.offset


@property_obligation(
    "PO3.10",
    "arena_alloc over any request sequence: each allocation lies in the current block, is "
    "aligned at its absolute address, ends inside its block, starts at or after the previous "
    "one in that block, and leaves the bump pointer at its end.",
    covers=("arena.simulate",),
    subject=arena_alloc,
    mutants=(Mutant.edit("bump not moved", "the offset stays where the allocation starts",
                         arena_alloc, "a.offset = off + size", "a.offset = off"),
             Mutant.edit("new block unaligned", "the first allocation of a block at offset 0",
                         arena_alloc, "off = place(next_base, 0, align)", "off = 0"),
             Mutant.edit("block size for all", "a new block is always block_size bytes",
                         arena_alloc, "new_size = new_block_size(size, align, a.block_size)",
                         "new_size = a.block_size")),
)
def arena_runs(_subject) -> list[Property]:
    return [Property("allocation runs", _allocations_are_sound, strategy=_runs, examples=300)]
