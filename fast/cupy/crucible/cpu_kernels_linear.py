"""cupy kernels for chapter 12's linear CPU kernels, written against `xp`: each sum loops over
its reduction index and adds whole float32 arrays, so every output element adds its products
in the spec's order and rounds each step as the spec does. sdpa's exp is computed in float64
and rounded once (hence the op's envelope)."""

from __future__ import annotations

import numpy as np

from ....spec.core.registry import kernel
from ..core.xp import to_device, to_host, xp


def mm_into(a, b):
    """C[:, :] += A[:, k] * B[k, :] for k in order, from +0.0."""
    c = xp().zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(a.shape[1]):
        c += a[:, k:k + 1] * b[k:k + 1, :]
    return c


def conv2d_into(x, w):
    """Y[n, co] += X[n, ci, kh:, kw:] * W[co, ci, kh, kw] for ci, kh, kw in order."""
    nb, ci_n, hi, wi = x.shape
    co_n, _, kh_n, kw_n = w.shape
    ho, wo = hi - kh_n + 1, wi - kw_n + 1
    y = xp().zeros((nb, co_n, ho, wo), dtype=np.float32)
    for ci in range(ci_n):
        for kh in range(kh_n):
            for kw in range(kw_n):
                y += x[:, None, ci, kh:kh + ho, kw:kw + wo] * w[None, :, ci, kh, kw, None, None]
    return y


def sdpa_into(q, k, v):
    """Scores summed over d in order, the row softmax with a running max, float64 exp rounded
    once, sums over j in order, one reciprocal; then Y summed over j in order."""
    m = xp()
    nb, s, dim = q.shape
    scale = np.float32(1.0) / np.sqrt(np.float32(dim))
    dot = m.zeros((nb, s, s), dtype=np.float32)
    for d in range(dim):
        dot += q[:, :, None, d] * k[:, None, :, d]
    attn = dot * scale
    if s:
        mx = attn[:, :, 0].copy()
        for j in range(1, s):
            mx = m.where(mx < attn[:, :, j], attn[:, :, j], mx)
        attn = m.exp((attn - mx[:, :, None]).astype(np.float64)).astype(np.float32)
        total = m.zeros((nb, s), dtype=np.float32)
        for j in range(s):
            total += attn[:, :, j]
        attn = attn * (np.float32(1.0) / total)[:, :, None]
    y = m.zeros((nb, s, dim), dtype=np.float32)
    for j in range(s):
        y += attn[:, :, j, None] * v[:, None, j, :]
    return y


@kernel("kernel.mm", "cupy")
def mm_batch(a, b):
    with np.errstate(all="ignore"):
        return {"c": [to_host(mm_into(to_device(x), to_device(y))) for x, y in zip(a, b,
                                                                                   strict=True)]}


@kernel("kernel.conv2d", "cupy")
def conv2d_batch(x, w):
    with np.errstate(all="ignore"):
        return {"y": [to_host(conv2d_into(to_device(a), to_device(b)))
                      for a, b in zip(x, w, strict=True)]}


@kernel("kernel.sdpa", "cupy")
def sdpa_batch(q, k, v):
    with np.errstate(all="ignore"):
        return {"y": [to_host(sdpa_into(to_device(a), to_device(b), to_device(c)))
                      for a, b, c in zip(q, k, v, strict=True)]}
