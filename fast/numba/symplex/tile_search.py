"""numba kernel for SympleX's tile cost (the spec's profile): step 2 of spec/symplex/tile_search.py
per
row, in int64 (extents up to 2^20 keep every count below 2^63) and float64."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.errors import InvalidInput
from ....spec.core.registry import kernel
from ....spec.symplex.hardware_target import TARGETS, target
from ....spec.symplex.tile_ops import DTYPE_BYTES, MAX_TILE, problem

TABLE = np.array([[t.peak_flops, t.hbm_bytes_per_s, t.sram_per_sm, t.stages, *t.mma]
                  for t in (target(n) for n in TARGETS)], dtype=np.int64)
"""Per target: peak, bandwidth, shared memory, default stages, MMA m, n, k."""


@njit(cache=True)
def cost_into(tgt, m, n, k, tile, bpe, stages, table, out_i, out_f):
    """out_i = [footprint, flops, bytes, memory-bound, fits, aligned]; out_f = seconds."""
    for r in range(m.size):
        row = table[tgt[r]]
        tm, tn, tk = tile[r, 0], tile[r, 1], tile[r, 2]
        gm, gn, gk = -(-m[r] // tm), -(-n[r] // tn), -(-k[r] // tk)
        fp = (tm * tk + tk * tn + tm * tn) * bpe[r] * stages[r]
        flops = 2 * (gm * tm) * (gn * tn) * (gk * tk)
        nbytes = gm * gn * (gk * (tm * tk + tk * tn) + tm * tn) * bpe[r]
        c = np.float64(flops) / np.float64(row[0])
        mem = np.float64(nbytes) / np.float64(row[1])
        out_f[r] = max(c, mem)
        out_i[r, 0], out_i[r, 1], out_i[r, 2] = fp, flops, nbytes
        out_i[r, 3] = 0 if c >= mem else 1
        out_i[r, 4] = 1 if fp <= row[2] else 0
        out_i[r, 5] = 1 if tm % row[4] == 0 and tn % row[5] == 0 and tk % row[6] == 0 else 0


@kernel("symplex.tile_cost", "numba")
def tile_cost_batch(target, m, n, k, tile, dtype, stages):
    present, given = stages
    tile = np.asarray(tile, dtype=np.int64).reshape(-1, 3)
    rows = len(m)
    for r in range(rows):  # the spec's own checks, for their invalid_input messages
        problem(int(target[r]), int(m[r]), int(n[r]), int(k[r]), int(dtype[r]),
                int(given[r]) if present[r] else None, frozenset())
        for i in range(3):
            if not 1 <= tile[r, i] <= MAX_TILE:
                raise InvalidInput(f"args.tile[{i}]: {int(tile[r, i])} is not in 1..{MAX_TILE}")
    tgt = np.asarray(target, dtype=np.int64)
    bpe = np.array([DTYPE_BYTES[d] for d in np.asarray(dtype).tolist()], dtype=np.int64)
    st = np.where(np.asarray(present), np.asarray(given, dtype=np.int64), TABLE[tgt, 3])
    out_i = np.zeros((rows, 6), dtype=np.int64)
    out_f = np.zeros(rows, dtype=np.float64)
    cost_into(tgt, *(np.asarray(a, dtype=np.int64) for a in (m, n, k)), tile, bpe, st, TABLE,
              out_i, out_f)
    return {"footprint_bytes": out_i[:, 0].astype(np.uint64),
            "flops": out_i[:, 1].astype(np.uint64), "bytes_moved": out_i[:, 2].astype(np.uint64),
            "predicted_seconds": out_f.view(np.uint64), "bound": out_i[:, 3].astype(np.int64),
            "fits": out_i[:, 4].astype(np.bool_), "aligned": out_i[:, 5].astype(np.bool_)}
