"""Chapter 12: the seed's CPU reference kernels (test/cpu_kernels.h), elementwise family.

Every buffer is float32, row-major and contiguous; every operation below is one binary32
operation rounded to nearest, evaluated left to right as written, with no fused multiply-add
(facts §14). The elementwise kernels have no accumulation, so each output element depends on
its own inputs only.

The elementwise family below (add, sub, mul, relu, relu_bwd, gelu, sigmoid, silu, fill) reads
its tensors as flat buffers of n elements and writes C[i] for i = 0..n-1 in order; the layout
kernels (transpose_2d, index_select) only move elements, bit for bit. A comparison `x > 0` is
false for NaN and for -0, so relu and relu_bwd give +0 there; erff and expf are glibc's
(see `libm`).
"""

from __future__ import annotations

import numpy as np

from .libm import erff, expf

F32 = np.float32
GELU_K = np.array([0x3F3504F3], dtype=np.uint32).view(np.float32)[0]
"""k = (float)0.7071067811865476 (1/sqrt 2 rounded to binary32), the gelu erf argument's scale."""
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


def _flat_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, y = a.reshape(-1), b.reshape(-1)
    return x, y, np.empty(x.size, dtype=F32)


@IEEE
def sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = A - B over tensors of one shape.

    1. n = the elements of A (B has A's shape).
    2. For i in 0..n-1, in order: C[i] = A[i] - B[i], rounded to binary32.
    3. C has A's shape.
    """
    x, y, c = _flat_pair(a, b)
    for i in range(x.size):
        c[i] = x[i] - y[i]
    return c.reshape(a.shape)


@IEEE
def mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = A * B over tensors of one shape.

    1. n = the elements of A (B has A's shape).
    2. For i in 0..n-1, in order: C[i] = A[i] * B[i], rounded to binary32.
    3. C has A's shape.
    """
    x, y, c = _flat_pair(a, b)
    for i in range(x.size):
        c[i] = x[i] * y[i]
    return c.reshape(a.shape)


@IEEE
def relu(a: np.ndarray) -> np.ndarray:
    """C = max(A, 0) as the seed writes it.

    1. For i in 0..n-1, in order: C[i] = A[i] if A[i] > 0 else +0.0.
    2. So relu(-0) = +0, relu(NaN) = +0, relu(+inf) = +inf; C has A's shape.
    """
    x = a.reshape(-1)
    c = np.empty(x.size, dtype=F32)
    for i in range(x.size):
        c[i] = x[i] if x[i] > F32(0.0) else F32(0.0)
    return c.reshape(a.shape)


@IEEE
def relu_bwd(grad: np.ndarray, inp: np.ndarray) -> np.ndarray:
    """relu's backward pass: the gradient passes where the forward input was positive.

    1. grad and input have one shape; n = their elements.
    2. For i in 0..n-1, in order: C[i] = grad[i] if input[i] > 0 else +0.0 (grad[i]'s bits
       unchanged, NaN included; an input of -0 or NaN gives +0).
    3. C has grad's shape.
    """
    g, x, c = _flat_pair(grad, inp)
    for i in range(g.size):
        c[i] = g[i] if x[i] > F32(0.0) else F32(0.0)
    return c.reshape(grad.shape)


@IEEE
def gelu(a: np.ndarray) -> np.ndarray:
    """GELU, exact erf form, in binary32.

    1. k = GELU_K (bits 0x3F3504F3).
    2. For i in 0..n-1, in order: h = A[i] * 0.5; t = A[i] * k; e = erff(t);
       C[i] = h * (1.0 + e), each operation rounded to binary32, in that order.
    3. C has A's shape.
    """
    x = a.reshape(-1)
    c = np.empty(x.size, dtype=F32)
    for i in range(x.size):
        h = x[i] * F32(0.5)
        e = erff(x[i] * GELU_K)
        c[i] = h * (F32(1.0) + e)
    return c.reshape(a.shape)


@IEEE
def sigmoid(a: np.ndarray) -> np.ndarray:
    """The logistic function in binary32.

    1. For i in 0..n-1, in order: e = expf(-A[i]); C[i] = 1.0 / (1.0 + e), each operation
       rounded to binary32.
    2. C has A's shape.
    """
    x = a.reshape(-1)
    c = np.empty(x.size, dtype=F32)
    for i in range(x.size):
        e = expf(-x[i])
        c[i] = F32(1.0) / (F32(1.0) + e)
    return c.reshape(a.shape)


@IEEE
def silu(a: np.ndarray) -> np.ndarray:
    """SiLU (swish): A times its sigmoid, in binary32.

    1. For i in 0..n-1, in order: e = expf(-A[i]); s = 1.0 / (1.0 + e); C[i] = A[i] * s,
       each operation rounded to binary32 (a multiplication by s, not a division by 1 + e).
    2. C has A's shape. A NaN A[i] meets itself in A[i] * s with the opposite sign (s comes
       from -A[i]); IEEE 754 does not say which operand's NaN the product keeps, and
       compilers differ, so C[i] is a NaN of either sign there.
    """
    x = a.reshape(-1)
    c = np.empty(x.size, dtype=F32)
    for i in range(x.size):
        e = expf(-x[i])
        s = F32(1.0) / (F32(1.0) + e)
        c[i] = x[i] * s
    return c.reshape(a.shape)


def f32_of_bits(bits: int) -> np.float32:
    """The binary32 whose bit pattern is `bits` (NaN payloads kept)."""
    return np.array([bits], dtype=np.uint32).view(F32)[0]


@IEEE
def fill(shape: list[int], value: int) -> np.ndarray:
    """C of `shape` with every element the binary32 whose bits are `value`.

    1. v = the binary32 of bit pattern `value` (any pattern: NaN payloads and -0 are kept).
    2. n = the product of shape; for i in 0..n-1, in order: C[i] = v.
    """
    v = f32_of_bits(value)
    n = int(np.prod(shape, dtype=np.int64))
    c = np.empty(n, dtype=F32)
    for i in range(n):
        c[i] = v
    return c.reshape(shape)


@IEEE
def transpose_2d(x: np.ndarray) -> np.ndarray:
    """Y [batch, N, M] = the transpose of each [M, N] matrix of X [batch, M, N].

    1. For b in 0..batch-1, i in 0..M-1, j in 0..N-1, in order:
       Y[b*N*M + j*M + i] = X[b*M*N + i*N + j] (a copy: bits unchanged).
    """
    batch, m, n = x.shape
    src = x.reshape(-1)
    y = np.empty(batch * n * m, dtype=F32)
    for b in range(batch):
        for i in range(m):
            for j in range(n):
                y[b * n * m + j * m + i] = src[b * m * n + i * n + j]
    return y.reshape(batch, n, m)


@IEEE
def index_select(x: np.ndarray, idx: int) -> np.ndarray:
    """Y [B, D] = row `idx` of each [S, D] matrix of X [B, S, D] (0 <= idx < S).

    1. For b in 0..B-1, d in 0..D-1, in order: Y[b*D + d] = X[(b*S + idx)*D + d] (a copy).
    """
    bsz, s, d = x.shape
    src = x.reshape(-1)
    y = np.empty(bsz * d, dtype=F32)
    for b in range(bsz):
        for k in range(d):
            y[b * d + k] = src[(b * s + idx) * d + k]
    return y.reshape(bsz, d)
