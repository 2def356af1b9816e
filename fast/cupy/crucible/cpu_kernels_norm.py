"""cupy kernels for chapter 12's normalisation and pooling kernels, written against `xp`:
whole-array binary32 operations vectorised over the independent index (rows, channels,
windows) while each reduction loops over its index in the spec's order, so every sum is the
spec's. exp and log are computed in binary64 and rounded once to binary32, which is why
softmax and cross_entropy are compared within their envelopes.

Where the seed divides 0 by 0 (avgpool_global with HW = 0, cross_entropy with B = 0) the NaN
is made on the host, so its bits are the host's (0xffc00000 on x86-64), as in the spec.
"""

from __future__ import annotations

import numpy as np

from ....spec.core.registry import kernel
from ....spec.crucible.cpu_kernels import IEEE
from ....spec.crucible.cpu_kernels_norm import f32_of_bits
from ..core.xp import to_device, to_host, xp

F32 = np.float32


def _exp32(v):
    return xp().exp(v.astype(np.float64)).astype(F32)


def _log32(v):
    return xp().log(v.astype(np.float64)).astype(F32)


def _softmax_rows(x):
    """softmax of each row of device x [B, D] (D >= 1): std::max scan over d, exp rounded once,
    ordered sum over d, one reciprocal, scale."""
    m = xp()
    mx = x[:, 0].copy()
    for d in range(1, x.shape[1]):
        v = x[:, d]
        mx = m.where(mx < v, v, mx)
    y = _exp32(x - mx[:, None])
    total = m.zeros(x.shape[0], dtype=F32)
    for d in range(x.shape[1]):
        total = total + y[:, d]
    inv = F32(1.0) / total
    return y * inv[:, None]


def _softmax(x):
    if x.shape[0] == 0 or x.shape[1] == 0:
        return np.empty(x.shape, dtype=F32)
    return to_host(_softmax_rows(to_device(np.ascontiguousarray(x, dtype=F32))))


def _normalise(x, gamma, beta, eps, count):
    """x [G, L] normalised along L (ordered sums), gamma and beta [G] or [L] broadcast."""
    m = xp()
    mean = m.zeros(x.shape[0], dtype=F32)
    for i in range(x.shape[1]):
        mean = mean + x[:, i]
    mean = mean / count
    var = m.zeros(x.shape[0], dtype=F32)
    for i in range(x.shape[1]):
        diff = x[:, i] - mean
        var = var + diff * diff
    var = var / count
    inv = F32(1.0) / m.sqrt(var + eps)
    return (x - mean[:, None]) * inv[:, None] * gamma + beta


@kernel("kernel.softmax", "cupy")
@IEEE
def softmax_batch(x):
    return {"y": [_softmax(a) for a in x]}


@kernel("kernel.layer_norm", "cupy")
@IEEE
def layer_norm_batch(x, gamma, beta, eps):
    out = []
    for a, g, b, e in zip(x, gamma, beta, eps, strict=True):
        if a.size == 0:
            out.append(np.empty(a.shape, dtype=F32))
            continue
        dg, db = to_device(g)[None, :], to_device(b)[None, :]
        y = _normalise(to_device(a), dg, db, f32_of_bits(int(e)), F32(a.shape[1]))
        out.append(to_host(y).astype(F32))
    return {"y": out}


@kernel("kernel.batch_norm", "cupy")
@IEEE
def batch_norm_batch(x, gamma, beta, eps):
    out = []
    for a, g, b, e in zip(x, gamma, beta, eps, strict=True):
        n, c, hw = a.shape
        if a.size == 0:
            out.append(np.empty(a.shape, dtype=F32))
            continue
        rows = to_device(a).transpose(1, 0, 2).reshape(c, n * hw)
        y = _normalise(rows, to_device(g)[:, None], to_device(b)[:, None],
                       f32_of_bits(int(e)), F32(n * hw))
        out.append(np.ascontiguousarray(to_host(y).reshape(c, n, hw).transpose(1, 0, 2),
                                        dtype=F32))
    return {"y": out}


@kernel("kernel.maxpool2d", "cupy")
@IEEE
def maxpool2d_batch(x, k):
    m = xp()
    out = []
    for a, kk in zip(x, k, strict=True):
        kk = int(kk)
        n, c, h, w = a.shape
        ho, wo = h // kk, w // kk
        if n * c * ho * wo == 0:
            out.append(np.empty((n, c, ho, wo), dtype=F32))
            continue
        win = to_device(a)[:, :, : ho * kk, : wo * kk].reshape(n, c, ho, kk, wo, kk)
        mx = m.full((n, c, ho, wo), -np.inf, dtype=F32)
        for kh in range(kk):
            for kw in range(kk):
                v = win[:, :, :, kh, :, kw]
                mx = m.where(mx < v, v, mx)
        out.append(to_host(mx).astype(F32))
    return {"y": out}


@kernel("kernel.avgpool_global", "cupy")
@IEEE
def avgpool_global_batch(x):
    m = xp()
    out = []
    for a in x:
        n, c, hw = a.shape
        if hw == 0:
            with np.errstate(all="ignore"):
                out.append(np.zeros((n, c), dtype=F32) * (F32(1.0) / F32(0.0)))
            continue
        d = to_device(a)
        total = m.zeros((n, c), dtype=F32)
        for j in range(hw):
            total = total + d[:, :, j]
        out.append(to_host(total * (F32(1.0) / F32(hw))).astype(F32))
    return {"y": out}


@kernel("kernel.cross_entropy", "cupy")
@IEEE
def cross_entropy_batch(logits, targets):
    probs, losses = [], []
    for i, a in enumerate(logits):
        t = np.asarray(targets.values[targets.offsets[i]:targets.offsets[i + 1]], dtype=np.int64)
        p = _softmax(a)
        picked = p[np.arange(len(t)), t] if len(t) else np.empty(0, dtype=F32)
        clamped = np.where(picked < F32(1e-7), F32(1e-7), picked).astype(F32)
        logs = to_host(_log32(to_device(clamped))) if len(t) else clamped
        loss = F32(0.0)
        with np.errstate(all="ignore"):
            for v in logs:
                loss = F32(loss - F32(v))
            loss = F32(loss / F32(len(t)))
        probs.append(p)
        losses.append(int(np.array([loss], dtype=F32).view(np.uint32)[0]))
    return {"probs": probs, "loss": losses}
