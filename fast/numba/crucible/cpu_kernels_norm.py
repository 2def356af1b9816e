"""numba kernels for chapter 12's normalisation and pooling kernels: the spec's loops compiled,
one tensor per request, into preallocated outputs; binary32 arithmetic without contraction,
and glibc's expf and logf (numba calls the C library on float32), so bit-exact."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.cpu_kernels_norm import f32_of_bits
from .cpu_kernels import softmax_row_into


@njit(cache=True, error_model="numpy")
def softmax_into(x, y):
    """Each row of x [B, D] by the shared row softmax."""
    for b in range(x.shape[0]):
        softmax_row_into(x[b], y[b])


@njit(cache=True, error_model="numpy")
def _normalise(x, y, gamma, beta, eps):
    """One group x (flat) normalised into y: ordered mean, biased variance, scale, shift."""
    count = np.float32(x.size)
    mean = np.float32(0.0)
    for i in range(x.size):
        mean = np.float32(mean + x[i])
    mean = np.float32(mean / count)
    var = np.float32(0.0)
    for i in range(x.size):
        diff = np.float32(x[i] - mean)
        var = np.float32(var + np.float32(diff * diff))
    var = np.float32(var / count)
    inv = np.float32(np.float32(1.0) / np.float32(math.sqrt(np.float32(var + eps))))
    for i in range(x.size):
        y[i] = np.float32(np.float32(np.float32(np.float32(x[i] - mean) * inv) * gamma[i])
                          + beta[i])


@njit(cache=True, error_model="numpy")
def layer_norm_into(x, gamma, beta, eps, y):
    for b in range(x.shape[0]):
        _normalise(x[b], y[b], gamma, beta, eps)


@njit(cache=True, error_model="numpy")
def batch_norm_into(x, gamma, beta, eps, y):
    """Per channel, the N x HW elements gathered n outer, hw inner, normalised, scattered."""
    n, c, hw = x.shape
    g = np.empty(n * hw, dtype=np.float32)
    out = np.empty(n * hw, dtype=np.float32)
    gs = np.empty(n * hw, dtype=np.float32)
    bs = np.empty(n * hw, dtype=np.float32)
    for ch in range(c):
        for i in range(n):
            for j in range(hw):
                g[i * hw + j] = x[i, ch, j]
        gs[:] = gamma[ch]
        bs[:] = beta[ch]
        _normalise(g, out, gs, bs, eps)
        for i in range(n):
            for j in range(hw):
                y[i, ch, j] = out[i * hw + j]


@njit(cache=True, error_model="numpy")
def maxpool2d_into(x, k, y):
    nn, cc, ho, wo = y.shape
    for n in range(nn):
        for c in range(cc):
            for i in range(ho):
                for j in range(wo):
                    mx = np.float32(-np.inf)
                    for kh in range(k):
                        for kw in range(k):
                            v = x[n, c, i * k + kh, j * k + kw]
                            if mx < v:
                                mx = v
                    y[n, c, i, j] = mx


@njit(cache=True, error_model="numpy")
def avgpool_global_into(x, y):
    nn, cc, hh = x.shape
    inv = np.float32(np.float32(1.0) / np.float32(hh))
    for n in range(nn):
        for c in range(cc):
            total = np.float32(0.0)
            for j in range(hh):
                total = np.float32(total + x[n, c, j])
            y[n, c] = np.float32(total * inv)


@njit(cache=True, error_model="numpy")
def cross_entropy_into(x, targets, probs):
    """probs = softmax(x); the mean of -logf(std::max(p_target, 1e-7f)) in row order."""
    softmax_into(x, probs)
    floor = np.float32(1e-7)
    loss = np.float32(0.0)
    for b in range(x.shape[0]):
        p = probs[b, targets[b]]
        if p < floor:
            p = floor
        loss = np.float32(loss - np.float32(math.log(p)))
    return np.float32(loss / np.float32(x.shape[0]))


def _f32(x):
    return np.ascontiguousarray(x, dtype=np.float32)


@kernel("kernel.softmax", "numba")
def softmax_batch(x):
    out = []
    for a in x:
        y = np.empty(a.shape, dtype=np.float32)
        softmax_into(_f32(a), y)
        out.append(y)
    return {"y": out}


def _affine_batch(into):
    """The batch kernel of a normalisation `into(x, gamma, beta, eps, y)`, one request each."""

    def batch(x, gamma, beta, eps):
        out = []
        for a, g, b, e in zip(x, gamma, beta, eps, strict=True):
            y = np.empty(a.shape, dtype=np.float32)
            into(_f32(a), _f32(g), _f32(b), f32_of_bits(int(e)), y)
            out.append(y)
        return {"y": out}

    return batch


layer_norm_batch = kernel("kernel.layer_norm", "numba")(_affine_batch(layer_norm_into))
batch_norm_batch = kernel("kernel.batch_norm", "numba")(_affine_batch(batch_norm_into))


@kernel("kernel.maxpool2d", "numba")
def maxpool2d_batch(x, k):
    out = []
    for a, kk in zip(x, k, strict=True):
        kk = int(kk)
        n, c, h, w = a.shape
        y = np.empty((n, c, h // kk, w // kk), dtype=np.float32)
        maxpool2d_into(_f32(a), kk, y)
        out.append(y)
    return {"y": out}


@kernel("kernel.avgpool_global", "numba")
def avgpool_global_batch(x):
    out = []
    for a in x:
        y = np.empty(a.shape[:2], dtype=np.float32)
        avgpool_global_into(_f32(a), y)
        out.append(y)
    return {"y": out}


@kernel("kernel.cross_entropy", "numba")
def cross_entropy_batch(logits, targets):
    probs, losses = [], []
    for i, a in enumerate(logits):
        t = np.asarray(targets.values[targets.offsets[i]:targets.offsets[i + 1]], dtype=np.int64)
        p = np.empty(a.shape, dtype=np.float32)
        loss = cross_entropy_into(_f32(a), t, p)
        probs.append(p)
        losses.append(int(np.array([loss], dtype=np.float32).view(np.uint32)[0]))
    return {"probs": probs, "loss": losses}
