"""numba kernel for the arena simulator: one pass over the requests."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.arena import arena_requests, default_base


@njit(cache=True)
def arena_run(sizes, aligns, bases, block_size, block_of, offsets, block_bases, block_sizes):
    """Bump allocation aligning absolute addresses; returns the number of blocks."""
    blocks = 1
    block_bases[0] = bases[0]
    block_sizes[0] = block_size
    offset = np.uint64(0)
    end = block_size
    for i in range(sizes.size):
        size, align = sizes[i], aligns[i]
        base = block_bases[blocks - 1]
        off = ((base + offset + align - np.uint64(1)) & ~(align - np.uint64(1))) - base
        if off + size > end:
            need = size + align
            end = need if need > block_size else block_size
            base = bases[blocks]
            block_bases[blocks] = base
            block_sizes[blocks] = end
            blocks += 1
            off = ((base + align - np.uint64(1)) & ~(align - np.uint64(1))) - base
        offset = off + size
        block_of[i] = blocks - 1
        offsets[i] = off
    return blocks, offset


def arena_one(block_size: int, requests, bases) -> dict:
    reqs = arena_requests(requests)
    n = len(reqs)
    all_bases = np.array([bases[k] if k < len(bases) else default_base(k) for k in range(n + 1)],
                         dtype=np.uint64)
    sizes = np.array([r["size"] for r in reqs], dtype=np.uint64)
    aligns = np.array([r["align"] for r in reqs], dtype=np.uint64)
    block_of = np.zeros(n, dtype=np.int64)
    offsets = np.zeros(n, dtype=np.uint64)
    block_bases = np.zeros(n + 1, dtype=np.uint64)
    block_sizes = np.zeros(n + 1, dtype=np.uint64)
    blocks, offset = arena_run(sizes, aligns, all_bases, np.uint64(block_size), block_of,
                               offsets, block_bases, block_sizes)
    addresses = (block_bases[block_of] + offsets).tolist()
    return {
        "allocations": [{"block": b, "offset": o, "address": f"0x{a:016x}"} for b, o, a in
                        zip(block_of.tolist(), offsets.tolist(), addresses, strict=True)],
        "blocks": [{"base": f"0x{b:016x}", "size": s} for b, s in
                   zip(block_bases[:blocks].tolist(), block_sizes[:blocks].tolist(),
                       strict=True)],
        "total_allocated": (blocks - 1) * block_size + int(offset),
    }


@kernel("arena.simulate", "numba")
def arena_simulate_batch(block_size, requests, bases):
    rows = [arena_one(int(b), r, s) for b, r, s in zip(block_size.tolist(), requests, bases,
                                                         strict=True)]
    return {"allocations": [r["allocations"] for r in rows],
            "blocks": [r["blocks"] for r in rows],
            "total_allocated": np.array([r["total_allocated"] for r in rows], dtype=np.uint64)}
