"""numba kernels for chapter 12's CPU kernels: the spec's loops compiled, one tensor per
request, into preallocated outputs; binary32 arithmetic without contraction, so bit-exact."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...spec.registry import kernel


@njit(cache=True)
def add_into(a, b, c):
    """c[i] = a[i] + b[i mod b.size] over flat arrays."""
    m = b.size
    j = 0
    for i in range(a.size):
        c[i] = a[i] + b[j]
        j += 1
        if j == m:
            j = 0


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
