"""numba kernels for chapter 12's linear CPU kernels: the spec's sums compiled with the loops
interchanged so that the innermost loop runs along contiguous outputs (and vectorises), while
each output element still adds its products in the spec's order from +0.0; binary32
arithmetic without contraction, so bit-exact.

mm is register-blocked: a 4 x 32 tile of C is summed over all of k in vector registers (the
multiply and the add are separate instructions, each rounded: no FMA), from B packed into
contiguous 32-column strips; blocks of 64 rows run in parallel (prange). Each C element is
still the running sum over k in increasing order from +0.0, as in the spec."""

from __future__ import annotations

import numpy as np
from numba import carray, njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from ....spec.core.registry import kernel
from .cpu_kernels import softmax_row_into

ROWS = 4
"""Rows of C per tile."""
COLS = 32
"""Columns of C per tile (and per packed strip of B)."""
TILES = 16
"""Tiles of rows per parallel block: a block's 64 rows of A stay in cache while every strip
of B passes."""
ACC = ROWS * COLS


@intrinsic
def _stack_tile(typingctx, like):
    """A ROWS x COLS float32 scratch on the stack: with its indices constant after unrolling,
    the compiler keeps it in vector registers."""

    def impl(context, builder, sig, args):
        ty = context.get_value_type(types.float32)
        return cgutils.alloca_once(builder, ty, size=context.get_constant(types.intp, ACC))

    return types.CPointer(types.float32)(like), impl


@njit(inline="always")
def _tile(a, ai, strip, c, ci, cj, rows, cols, kk):
    """c[ci:ci+rows, cj:cj+cols] = a[ai:ai+ROWS] @ strip[:, :cols], each element a running sum
    over k from +0.0 (rows of a past `rows` are computed and dropped)."""
    acc = carray(_stack_tile(kk), ACC)
    for t in range(ACC):
        acc[t] = np.float32(0.0)
    for k in range(kk):
        a0, a1, a2, a3 = a[ai, k], a[ai + 1, k], a[ai + 2, k], a[ai + 3, k]
        for jj in range(COLS):
            x = strip[k, jj]
            acc[jj] = acc[jj] + a0 * x
            acc[COLS + jj] = acc[COLS + jj] + a1 * x
            acc[2 * COLS + jj] = acc[2 * COLS + jj] + a2 * x
            acc[3 * COLS + jj] = acc[3 * COLS + jj] + a3 * x
    for r in range(rows):
        for jj in range(cols):
            c[ci + r, cj + jj] = acc[r * COLS + jj]


@njit(cache=True, parallel=True)
def mm_into(a, b, c):
    """c = a @ b, each c[i, j] = ((0 + a[i,0] b[0,j]) + a[i,1] b[1,j]) + ... in k order: B is
    packed into strips of COLS columns (zero-padded), rows go in tiles of ROWS (the last
    partial tile from a zero-padded copy of A's last rows)."""
    m, kk = a.shape
    n = b.shape[1]
    strips = (n + COLS - 1) // COLS
    packed = np.zeros((strips, kk, COLS), dtype=np.float32)
    for s in prange(strips):
        for k in range(kk):
            for jj in range(min(COLS, n - s * COLS)):
                packed[s, k, jj] = b[k, s * COLS + jj]
    full = m // ROWS
    blocks = (full + TILES - 1) // TILES
    for blk in prange(blocks):
        for s in range(strips):
            cols = min(COLS, n - s * COLS)
            for t in range(blk * TILES, min(blk * TILES + TILES, full)):
                _tile(a, t * ROWS, packed[s], c, t * ROWS, s * COLS, ROWS, cols, kk)
    rest = m - full * ROWS
    if rest:
        last = np.zeros((ROWS, kk), dtype=np.float32)
        for r in range(rest):
            for k in range(kk):
                last[r, k] = a[full * ROWS + r, k]
        for s in range(strips):
            _tile(last, 0, packed[s], c, full * ROWS, s * COLS, rest,
                  min(COLS, n - s * COLS), kk)


@njit(cache=True)
def conv2d_into(x, w, y):
    """y zeroed, then per (n, co): for ci, kh, kw in order, y[n, co] += x window * w[co, ci,
    kh, kw], the window's rows and columns innermost."""
    nb, ci_n, _, _ = x.shape
    co_n, _, kh_n, kw_n = w.shape
    ho_n, wo_n = y.shape[2], y.shape[3]
    y[:] = np.float32(0.0)
    for n in range(nb):
        for co in range(co_n):
            out = y[n, co]
            for ci in range(ci_n):
                img = x[n, ci]
                for kh in range(kh_n):
                    for kw in range(kw_n):
                        wt = w[co, ci, kh, kw]
                        for ho in range(ho_n):
                            row = img[ho + kh]
                            orow = out[ho]
                            for wo in range(wo_n):
                                orow[wo] = orow[wo] + row[wo + kw] * wt


@njit(cache=True, error_model="numpy")
def sdpa_into(q, k, v, y):
    """Per batch: attn = (q k^T summed over d in order) * scale, the shared row softmax, then
    y[i, :] += attn[i, j] * v[j, :] for j in order from +0.0."""
    nb, s, dim = q.shape
    scale = np.float32(np.float32(1.0) / np.float32(np.sqrt(np.float32(dim))))
    attn = np.empty((s, s), dtype=np.float32)
    row = np.empty(s, dtype=np.float32)
    for b in range(nb):
        for i in range(s):
            for j in range(s):
                dot = np.float32(0.0)
                for d in range(dim):
                    dot = np.float32(dot + q[b, i, d] * k[b, j, d])
                row[j] = np.float32(dot * scale)
            softmax_row_into(row, attn[i])
        for i in range(s):
            out = y[b, i]
            for d in range(dim):
                out[d] = np.float32(0.0)
            for j in range(s):
                p = attn[i, j]
                vj = v[b, j]
                for d in range(dim):
                    out[d] = out[d] + p * vj[d]


@kernel("kernel.mm", "numba")
def mm_batch(a, b):
    out = []
    for x, y in zip(a, b, strict=True):
        c = np.empty((x.shape[0], y.shape[1]), dtype=np.float32)
        mm_into(np.ascontiguousarray(x), np.ascontiguousarray(y), c)
        out.append(c)
    return {"c": out}


@kernel("kernel.conv2d", "numba")
def conv2d_batch(x, w):
    out = []
    for a, b in zip(x, w, strict=True):
        y = np.empty((a.shape[0], b.shape[0], a.shape[2] - b.shape[2] + 1,
                      a.shape[3] - b.shape[3] + 1), dtype=np.float32)
        conv2d_into(np.ascontiguousarray(a), np.ascontiguousarray(b), y)
        out.append(y)
    return {"y": out}


@kernel("kernel.sdpa", "numba")
def sdpa_batch(q, k, v):
    out = []
    for a, b, c in zip(q, k, v, strict=True):
        y = np.empty(a.shape, dtype=np.float32)
        sdpa_into(np.ascontiguousarray(a), np.ascontiguousarray(b), np.ascontiguousarray(c), y)
        out.append(y)
    return {"y": out}
