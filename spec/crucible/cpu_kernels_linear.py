"""Chapter 12: the seed's CPU reference kernels (test/cpu_kernels.h), linear family.

Matrix multiply, valid-mode 2-D cross-correlation and single-head attention. Every buffer is
float32, row-major and contiguous; every operation is one binary32 operation rounded to
nearest, evaluated left to right as written, with no fused multiply-add (facts §14). Each
output element is a sum that starts at +0.0 and adds its products one at a time in the order
stated below, so the result depends on that order and nothing else: a kernel may visit the
elements in any order it likes as long as each element's own sequence of additions is this one.

Build: the faithful profile reproduces the seed compiled by clang 19 at -O2 for baseline x86-64,
which has no FMA instruction, so nothing is contracted. The seed's `release` preset (-O3
-march=native) on an FMA host contracts mm's and conv2d's `sum += x * w` into one fmaf (clang's
default -ffp-contract=on): that build, the variant `release`, answers differently in the last
bit where a product is inexact, and `inf - inf` NaNs become infinities where the rounded product
overflows but the fused one does not. It is not offered as a profile.
"""

from __future__ import annotations

import numpy as np

from .cpu_kernels import IEEE, softmax_row
from .libm import sqrtf

F32 = np.float32


@IEEE
def mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = A B for A [M, K] and B [K, N]: C [M, N].

    1. For i in 0..M-1, for j in 0..N-1: sum = +0.0.
    2. For k in 0..K-1 in order: p = A[i, k] * B[k, j] (rounded), sum = sum + p (rounded).
    3. C[i, j] = sum (K = 0 gives +0.0 everywhere).
    """
    m, k = a.shape
    n = b.shape[1]
    c = np.empty((m, n), dtype=F32)
    for i in range(m):
        for j in range(n):
            total = F32(0.0)
            for t in range(k):
                total = total + a[i, t] * b[t, j]
            c[i, j] = total
    return c


@IEEE
def conv2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Y = X (*) W, cross-correlation, no padding, stride 1, for X [N, Ci, Hi, Wi] and
    W [Co, Ci, Kh, Kw]: Y [N, Co, Ho, Wo] with Ho = Hi - Kh + 1, Wo = Wi - Kw + 1 (both >= 0).

    1. Y is all +0.0.
    2. Loops n, co, ci, ho, wo, kh, kw, each from 0 in order:
       Y[n, co, ho, wo] = Y[n, co, ho, wo] + X[n, ci, ho + kh, wo + kw] * W[co, ci, kh, kw]
       (product rounded, then sum rounded).
    3. So each output element adds its Ci * Kh * Kw products with ci outermost, then kh, then
       kw: the channel sum is not taken per channel first.
    """
    nb, ci_n, hi, wi = x.shape
    co_n, _, kh_n, kw_n = w.shape
    ho_n, wo_n = hi - kh_n + 1, wi - kw_n + 1
    y = np.zeros((nb, co_n, ho_n, wo_n), dtype=F32)
    for n in range(nb):
        for co in range(co_n):
            for ci in range(ci_n):
                for ho in range(ho_n):
                    for wo in range(wo_n):
                        for kh in range(kh_n):
                            for kw in range(kw_n):
                                y[n, co, ho, wo] = y[n, co, ho, wo] + \
                                    x[n, ci, ho + kh, wo + kw] * w[co, ci, kh, kw]
    return y


@IEEE
def sdpa(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Single-head attention without a mask, for Q, K, V [B, S, D]: Y [B, S, D].

    1. scale = 1 / sqrtf(D) (D converted to float32; sqrtf correctly rounded; D = 0 gives inf).
    2. Per batch b, for i, j in 0..S-1: dot = +0.0; for d in order: dot = dot + Q[b,i,d] *
       K[b,j,d]; attn[i, j] = dot * scale.
    3. Each row attn[i, :] becomes softmax_row(attn[i, :]) (the seed's softmax: std::max scan,
       expf, sum in order, one reciprocal).
    4. For i in 0..S-1, d in 0..D-1: sum = +0.0; for j in order: sum = sum + attn[i, j] *
       V[b, j, d]; Y[b, i, d] = sum.
    """
    nb, s, dim = q.shape
    scale = F32(1.0) / sqrtf(F32(dim))
    y = np.empty((nb, s, dim), dtype=F32)
    for b in range(nb):
        attn = np.empty((s, s), dtype=F32)
        for i in range(s):
            for j in range(s):
                dot = F32(0.0)
                for d in range(dim):
                    dot = dot + q[b, i, d] * k[b, j, d]
                attn[i, j] = dot * scale
        for i in range(s):
            attn[i] = softmax_row(attn[i])
        for i in range(s):
            for d in range(dim):
                total = F32(0.0)
                for j in range(s):
                    total = total + attn[i, j] * v[b, j, d]
                y[b, i, d] = total
    return y
