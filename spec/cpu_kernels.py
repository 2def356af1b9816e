"""Chapter 12: the seed's CPU reference kernels (test/cpu_kernels.h), elementwise family.

Every buffer is float32, row-major and contiguous; every operation below is one binary32
operation rounded to nearest, evaluated left to right as written, with no fused multiply-add
(facts §14). The elementwise kernels have no accumulation, so each output element depends on
its own inputs only.
"""

from __future__ import annotations

import numpy as np

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
