"""numba kernel for the pipeline's regions: every built window of a trace is built and planned
in one compiled call, with the windows given as arrays.

1. Inputs: the whole trace's arrays (packed metas and int64 storage sizes computed once), the
   windows to build as start and count arrays, and each one's E6.5 slot cap (-1: none).
2. A window's metas are [lo, hi): the least first meta and the greatest end among its ops
   (0, 0 without any). Windows do not overlap, so neither do their meta ranges.
3. Per window, in order: its meta starts are rebased to lo and its scalar offsets to its
   first scalar (scratch rows), and build_into writes its per-meta trace indices and slots at
   rows [lo, hi) and its edges and slots from row lo (a window has at most hi - lo of each).
4. plan_into plans the window's slots into offsets from row lo. One free tree serves every
   window: new_tree fills only the state row, so resetting that row makes it new.
5. Per window: lo, hi, edge count, slot count, content hash and pool (0 without slots); the
   caller slices each region's rows back out (pipeline.run_arrays).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .build_trace import build_into
from .memory_plan import plan_into

EMPTY_STATE = (-1, 0, 0)
"""new_tree's state row: no root, no spare node, next node 0."""


@njit(cache=True)
def _meta_range(meta_start, n_in, n_out, start, count):
    lo = np.int64(-1)
    hi = np.int64(-1)
    for i in range(start, start + count):
        ms = meta_start[i]
        if ms >= 0:
            end = ms + n_in[i] + n_out[i]
            lo = ms if lo < 0 else min(lo, ms)
            hi = end if hi < 0 else max(hi, end)
    if lo < 0:
        return np.int64(0), np.int64(0)
    return lo, hi


@njit(cache=True)
def regions_into(schema, flags, meta_start, n_in, n_out, scalar_off, scalars, ptr, ndim, sizes,
                 strides, packed, nbytes, dimmix, e61, e64, e83, seed, starts, counts, caps,
                 tree, meta_trace, meta_slot, edges, slots, offsets, out, hashes, pools):
    """Steps 2-5 over every window; out[w] = (lo, hi, edge count, slot count)."""
    link, val, state, spare, path = tree
    t_meta = np.empty(max(counts.max(), 1) if counts.size else 1, dtype=np.int64)
    t_sc = np.empty(t_meta.size + 1, dtype=np.int64)
    built = np.zeros(3, dtype=np.uint64)
    for w in range(starts.size):
        start, count = starts[w], counts[w]
        stop = start + count
        lo, hi = _meta_range(meta_start, n_in, n_out, start, count)
        for i in range(count):
            ms = meta_start[start + i]
            t_meta[i] = ms - lo if ms >= 0 else -1
        s0 = scalar_off[start]
        for i in range(count + 1):
            t_sc[i] = scalar_off[start + i] - s0
        build_into(schema[start:stop], flags[start:stop], t_meta[:count], n_in[start:stop],
                   n_out[start:stop], t_sc[:count + 1], scalars[s0:scalar_off[stop]],
                   ptr[lo:hi], ndim[lo:hi], sizes[lo:hi], strides[lo:hi], packed[lo:hi],
                   nbytes[lo:hi], dimmix, e61, e64, caps[w], e83, meta_trace[lo:hi],
                   meta_slot[lo:hi], edges[lo:hi], slots[lo:hi], built)
        n_slots = np.int64(built[1])
        s = slots[lo:lo + n_slots]
        state[0], state[1], state[2] = EMPTY_STATE
        pool = plan_into(s[:, 0].astype(np.uint64), s[:, 1].copy(), s[:, 2].copy(),
                         s[:, 3] == 0, offsets[lo:lo + n_slots], seed,
                         (link, val, state, spare, path))
        out[w, 0], out[w, 1], out[w, 2], out[w, 3] = lo, hi, built[0], built[1]
        hashes[w] = built[2]
        pools[w] = pool if n_slots else np.uint64(0)
