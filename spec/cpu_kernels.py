"""Chapter 12: the seed's CPU reference kernels (test/cpu_kernels.h), elementwise family.

Every buffer is float32, row-major and contiguous; every operation below is one binary32
operation rounded to nearest, evaluated left to right as written, with no fused multiply-add
(facts §14). The elementwise kernels have no accumulation, so each output element depends on
its own inputs only.
"""

from __future__ import annotations

import numpy as np

from .libm import expf

F32 = np.float32
IEEE = np.errstate(all="ignore")
"""Kernels run under this: overflow, NaN and division by zero are IEEE results, not warnings."""


@IEEE
def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C[i] = A[i] + B[i mod bias_n], bias_n = B's element count (bias tiling: B broadcast
    along the last dims of A).

    1. n = the elements of A, bias_n = the elements of B (1 <= bias_n <= n, or both 0).
    2. For i in 0..n-1, in order: C[i] = A[i] + B[i mod bias_n], rounded to binary32.
    3. C has A's shape.
    """
    x, y = a.reshape(-1), b.reshape(-1)
    c = np.empty(x.size, dtype=F32)
    for i in range(x.size):
        c[i] = x[i] + y[i % y.size]
    return c.reshape(a.shape)


def std_max(a: np.float32, b: np.float32) -> np.float32:
    """C++ std::max(a, b) = (a < b) ? b : a: a NaN in `b` is skipped, a NaN in `a` stays."""
    return b if a < b else a


@IEEE
def softmax_row(x: np.ndarray) -> np.ndarray:
    """One row of the seed's softmax (D >= 1), shared by softmax, sdpa and cross_entropy.

    1. mx = x[0]; for d = 1..D-1 in order: mx = std_max(mx, x[d]).
    2. sum = 0; for d in order: y[d] = expf(x[d] - mx); sum = sum + y[d].
    3. inv = 1 / sum; for d in order: y[d] = y[d] * inv.
    """
    mx = x[0]
    for d in range(1, x.size):
        mx = std_max(mx, x[d])
    y = np.empty(x.size, dtype=F32)
    total = F32(0.0)
    for d in range(x.size):
        y[d] = expf(x[d] - mx)
        total = total + y[d]
    inv = F32(1.0) / total
    for d in range(x.size):
        y[d] = y[d] * inv
    return y
