"""numba kernels for chapter 12's CPU kernels: the spec's loops compiled, one tensor per
request, into preallocated outputs; binary32 arithmetic without contraction, so bit-exact."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.kernel_ew_ops import DIMS


@njit(cache=True)
def add_into(a, b, c):
    """c[i] = a[i] + b[i mod b.size] over flat arrays, one tile of b at a time (each tile's
    loop vectorises)."""
    m = b.size
    for start in range(0, a.size, max(m, 1)):
        for j in range(min(m, a.size - start)):
            c[start + j] = a[start + j] + b[j]


@njit(cache=True)
def softmax_row_into(x, y):
    """The spec's softmax_row: std::max scan, expf (numba calls the C library's expf on
    float32, which is glibc's here), sum in order, one reciprocal, scale."""
    mx = x[0]
    for d in range(1, x.size):
        if mx < x[d]:
            mx = x[d]
    total = np.float32(0.0)
    for d in range(x.size):
        e = np.float32(math.exp(np.float32(x[d] - mx)))
        y[d] = e
        total = np.float32(total + e)
    inv = np.float32(np.float32(1.0) / total)
    for d in range(x.size):
        y[d] = np.float32(y[d] * inv)


@kernel("kernel.add", "numba")
def add_batch(a, b):
    out = []
    for x, y in zip(a, b, strict=True):
        c = np.empty(x.shape, dtype=np.float32)
        add_into(x.reshape(-1), y.reshape(-1), c.reshape(-1))
        out.append(c)
    return {"c": out}


# ── the elementwise family and the layout kernels ─────────────────────────────────────────────

GELU_K = np.float32(0.7071067811865476)
HALF = np.float32(0.5)
ONE = np.float32(1.0)
ZERO = np.float32(0.0)


@njit(cache=True)
def sub_into(a, b, c):
    for i in range(a.size):
        c[i] = a[i] - b[i]


@njit(cache=True)
def mul_into(a, b, c):
    for i in range(a.size):
        c[i] = a[i] * b[i]


@njit(cache=True)
def relu_into(a, c):
    for i in range(a.size):
        c[i] = a[i] if a[i] > ZERO else ZERO


@njit(cache=True)
def relu_bwd_into(g, x, c):
    for i in range(g.size):
        c[i] = g[i] if x[i] > ZERO else ZERO


@njit(cache=True)
def gelu_into(a, c):
    """h = a * 0.5; e = erff(a * k); c = h * (1 + e): numba calls erff on a float32."""
    for i in range(a.size):
        x = a[i]
        h = np.float32(x * HALF)
        e = np.float32(math.erf(np.float32(x * GELU_K)))
        c[i] = np.float32(h * np.float32(ONE + e))


@njit(cache=True)
def sigmoid_into(a, c):
    for i in range(a.size):
        e = np.float32(math.exp(np.float32(-a[i])))
        c[i] = np.float32(ONE / np.float32(ONE + e))


@njit(cache=True)
def silu_into(a, c):
    for i in range(a.size):
        x = a[i]
        e = np.float32(math.exp(np.float32(-x)))
        s = np.float32(ONE / np.float32(ONE + e))
        c[i] = np.float32(x * s)


@njit(cache=True)
def transpose_into(x, y, batch, m, n):
    """y[b][j*m + i] = x[b][i*n + j] over flat buffers."""
    for b in range(batch):
        xo = b * m * n
        for i in range(m):
            for j in range(n):
                y[xo + j * m + i] = x[xo + i * n + j]


def _unary(fn, arrays):
    out = []
    for x in arrays:
        c = np.empty(x.shape, dtype=np.float32)
        fn(np.ascontiguousarray(x).reshape(-1), c.reshape(-1))
        out.append(c)
    return {"c": out}


def _binary(fn, left, right):
    out = []
    for x, y in zip(left, right, strict=True):
        c = np.empty(x.shape, dtype=np.float32)
        fn(np.ascontiguousarray(x).reshape(-1), np.ascontiguousarray(y).reshape(-1),
           c.reshape(-1))
        out.append(c)
    return {"c": out}


@kernel("kernel.sub", "numba")
def sub_batch(a, b):
    return _binary(sub_into, a, b)


@kernel("kernel.mul", "numba")
def mul_batch(a, b):
    return _binary(mul_into, a, b)


@kernel("kernel.relu", "numba")
def relu_batch(a):
    return _unary(relu_into, a)


@kernel("kernel.relu_bwd", "numba")
def relu_bwd_batch(grad, input):
    return _binary(relu_bwd_into, grad, input)


@kernel("kernel.gelu", "numba")
def gelu_batch(a):
    return _unary(gelu_into, a)


@kernel("kernel.sigmoid", "numba")
def sigmoid_batch(a):
    return _unary(sigmoid_into, a)


@kernel("kernel.silu", "numba")
def silu_batch(a):
    return _unary(silu_into, a)


@kernel("kernel.fill", "numba")
def fill_batch(shape, value):
    """A copy of the bit pattern, so NaN payloads survive."""
    out = []
    for dims, bits in zip(DIMS.from_column(shape), value, strict=True):
        out.append(np.full(dims, bits, dtype=np.uint32).view(np.float32))
    return {"c": out}


@kernel("kernel.transpose_2d", "numba")
def transpose_batch(x):
    out = []
    for t in x:
        batch, m, n = t.shape
        y = np.empty((batch, n, m), dtype=np.float32)
        transpose_into(np.ascontiguousarray(t).reshape(-1), y.reshape(-1), batch, m, n)
        out.append(y)
    return {"y": out}


@kernel("kernel.index_select", "numba")
def index_select_batch(x, idx):
    """Y[b, :] = X[b, idx, :]: a row copy per batch, as the seed's memcpy."""
    return {"y": [np.ascontiguousarray(t[:, i, :]) for t, i in zip(x, idx, strict=True)]}
