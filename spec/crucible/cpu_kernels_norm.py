"""Chapter 12: the seed's CPU reference kernels (test/cpu_kernels.h), normalisation and pooling.

Every buffer is float32, row-major and contiguous; every operation below is one binary32
operation rounded to nearest, evaluated left to right as written, with no fused multiply-add
(facts §14). Each accumulation is a sequential loop in the stated index order starting from
+0.0. The kernels here:

1. softmax: each row of X [B, D] by `softmax_row` (std::max scan, expf, ordered sum, one
   reciprocal, scale).
2. layer_norm: per row of X [B, D], the mean and the biased variance by ordered sums divided by
   (float)D, inv = 1 / sqrtf(var + eps), y = (((x - mean) * inv) * gamma) + beta.
3. batch_norm: per channel c of X [N, C, HW] (an NCHW tensor flattens H, W into HW), the same
   with the training-mode statistics over the N * HW elements of the channel, n outer and hw
   inner.
4. maxpool2d: K x K windows with stride K over X [N, C, H, W], Ho = floor(H / K), Wo =
   floor(W / K), each a std::max scan from -inf in kh, kw order.
5. avgpool_global: Y [N, C] = (ordered sum over hw) * (1 / (float)HW).
6. cross_entropy: probs = softmax(logits [B, C]); loss = 0, then for b in order loss = loss -
   logf(std::max(probs[b, t_b], 1e-7f)); the result is loss / (float)B (0 / 0, a NaN, for
   B = 0, as in the seed).
"""

from __future__ import annotations

import numpy as np

from .cpu_kernels import IEEE, softmax_row, std_max
from .libm import logf, sqrtf

F32 = np.float32
EPS_BITS = 0x3727C5AC
"""The seed's default eps, 1e-5f, as float32 bits."""
PROB_FLOOR = F32(1e-7)
"""cross_entropy clamps each target probability to at least 1e-7f (0x33d6bf95) before logf."""


def f32_of_bits(bits: int) -> np.float32:
    """The float32 whose IEEE bits are `bits`."""
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


def bits_of_f32(x: np.float32) -> int:
    """The IEEE bits of float32 `x`."""
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


@IEEE
def softmax(x: np.ndarray) -> np.ndarray:
    """Y = softmax of each row of X [B, D] (D >= 1 when B > 0).

    1. For b in 0..B-1 in order: Y[b, :] = softmax_row(X[b, :]).
    """
    b, d = x.shape
    y = np.empty((b, d), dtype=F32)
    for r in range(b):
        y[r] = softmax_row(x[r])
    return y


@IEEE
def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: np.float32
               ) -> np.ndarray:
    """Y [B, D] = layer norm of each row of X [B, D], gamma [D], beta [D].

    1. mean = 0; for d in order: mean = mean + x[d]; then mean = mean / (float)D.
    2. var = 0; for d in order: diff = x[d] - mean; var = var + diff * diff; then
       var = var / (float)D (the biased variance).
    3. inv = 1 / sqrtf(var + eps).
    4. For d in order: y[d] = (((x[d] - mean) * inv) * gamma[d]) + beta[d].
    """
    rows, n = x.shape
    y = np.empty((rows, n), dtype=F32)
    count = F32(n)
    for r in range(rows):
        mean = F32(0.0)
        for d in range(n):
            mean = mean + x[r, d]
        mean = mean / count
        var = F32(0.0)
        for d in range(n):
            diff = x[r, d] - mean
            var = var + diff * diff
        var = var / count
        inv = F32(1.0) / sqrtf(var + eps)
        for d in range(n):
            y[r, d] = (x[r, d] - mean) * inv * gamma[d] + beta[d]
    return y


@IEEE
def batch_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: np.float32
               ) -> np.ndarray:
    """Y [N, C, HW] = batch norm of X [N, C, HW] with training-mode statistics per channel.

    1. For c in 0..C-1 in order, count = (float)(N * HW):
    2. mean = 0; for n in order, for hw in order: mean = mean + X[n, c, hw]; mean = mean / count.
    3. var = 0; same order: diff = X[n, c, hw] - mean; var = var + diff * diff; var = var / count.
    4. inv = 1 / sqrtf(var + eps).
    5. Same order: Y[n, c, hw] = (((X[n, c, hw] - mean) * inv) * gamma[c]) + beta[c].
    """
    nn, cc, hh = x.shape
    y = np.empty((nn, cc, hh), dtype=F32)
    count = F32(nn * hh)
    for c in range(cc):
        mean = F32(0.0)
        for n in range(nn):
            for hw in range(hh):
                mean = mean + x[n, c, hw]
        mean = mean / count
        var = F32(0.0)
        for n in range(nn):
            for hw in range(hh):
                diff = x[n, c, hw] - mean
                var = var + diff * diff
        var = var / count
        inv = F32(1.0) / sqrtf(var + eps)
        for n in range(nn):
            for hw in range(hh):
                y[n, c, hw] = (x[n, c, hw] - mean) * inv * gamma[c] + beta[c]
    return y


@IEEE
def maxpool2d(x: np.ndarray, k: int) -> np.ndarray:
    """Y [N, C, H // K, W // K] = K x K max pooling of X [N, C, H, W] with stride K (K >= 1).

    1. Ho = floor(H / K), Wo = floor(W / K); rows and columns past Ho * K, Wo * K are unread.
    2. For each n, c, ho, wo: mx = -inf; for kh in order, for kw in order:
       mx = std_max(mx, X[n, c, ho * K + kh, wo * K + kw]); Y[n, c, ho, wo] = mx.
    """
    nn, cc, h, w = x.shape
    ho, wo = h // k, w // k
    y = np.empty((nn, cc, ho, wo), dtype=F32)
    for n in range(nn):
        for c in range(cc):
            for i in range(ho):
                for j in range(wo):
                    mx = F32(-np.inf)
                    for kh in range(k):
                        for kw in range(k):
                            mx = std_max(mx, x[n, c, i * k + kh, j * k + kw])
                    y[n, c, i, j] = mx
    return y


@IEEE
def avgpool_global(x: np.ndarray) -> np.ndarray:
    """Y [N, C] = the mean over hw of X [N, C, HW].

    1. inv = 1 / (float)HW (+inf when HW = 0, so each Y is 0 * inf, a NaN, as in the seed).
    2. For n, c in order: sum = 0; for hw in order: sum = sum + X[n, c, hw]; Y[n, c] = sum * inv.
    """
    nn, cc, hh = x.shape
    inv = F32(1.0) / F32(hh)
    y = np.empty((nn, cc), dtype=F32)
    for n in range(nn):
        for c in range(cc):
            total = F32(0.0)
            for hw in range(hh):
                total = total + x[n, c, hw]
            y[n, c] = total * inv
    return y


@IEEE
def cross_entropy(logits: np.ndarray, targets: list[int]) -> tuple[np.ndarray, np.float32]:
    """(probs [B, C], loss) for logits [B, C] and B targets with 0 <= t_b < C.

    1. probs = softmax(logits).
    2. loss = 0; for b in order: loss = loss - logf(std_max(probs[b, t_b], 1e-7f)) (a NaN
       probability stays NaN: std::max keeps its first argument unless it is below the second).
    3. loss = loss / (float)B.
    """
    probs = softmax(logits)
    loss = F32(0.0)
    for b, t in enumerate(targets):
        loss = loss - logf(std_max(probs[b, t], PROB_FLOOR))
    loss = loss / F32(len(targets))
    return probs, loss
