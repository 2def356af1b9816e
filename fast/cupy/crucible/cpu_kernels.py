"""cupy kernels for chapter 12's CPU kernels, written against `xp`: whole-array binary32
operations, which round each element exactly as the spec's loop does."""

from __future__ import annotations

import math

import numpy as np

from ....spec.core.registry import kernel
from ....spec.crucible.kernel_ew_ops import DIMS
from ..core.xp import to_device, to_host, xp


@kernel("kernel.add", "cupy")
def add_batch(a, b):
    out = []
    for x, y in zip(a, b, strict=True):
        dx, dy = to_device(x).reshape(-1), to_device(y).reshape(-1)
        tiled = xp().tile(dy, x.size // max(y.size, 1) + 1)[: x.size] if x.size else dy[:0]
        with np.errstate(invalid="ignore"):  # inf + -inf is NaN on purpose, as in binary32 C
            out.append(to_host(dx + tiled).reshape(x.shape))
    return {"c": out}


# ── the elementwise family and the layout kernels ─────────────────────────────────────────────
#
# Arithmetic is whole-array binary32 (bit-exact with the spec); expf and erff are computed in
# binary64 and rounded once to binary32, which is why gelu, sigmoid and silu declare envelopes.

_F = np.float32
QUIET = np.errstate(all="ignore")
GELU_K = np.float32(0.7071067811865476)


def _erf64(x):
    """erf over a binary64 array: cupyx's on a GPU, math.erf per element on numpy."""
    m = xp()
    if m is np:
        return np.asarray(np.frompyfunc(math.erf, 1, 1)(x), dtype=np.float64)
    from cupyx.scipy.special import erf

    return erf(x)


def _exp_neg(dx):
    """expf(-x) as binary64 exp of the (exact) binary32 negation, rounded once."""
    return xp().exp((-dx).astype(np.float64)).astype(np.float32)


def _each(arrays, fn, name="c"):
    return {name: [to_host(fn(to_device(x))) for x in arrays]}


@kernel("kernel.sub", "cupy")
@QUIET
def sub_batch(a, b):
    return {"c": [to_host(to_device(x) - to_device(y)) for x, y in zip(a, b, strict=True)]}


@kernel("kernel.mul", "cupy")
@QUIET
def mul_batch(a, b):
    return {"c": [to_host(to_device(x) * to_device(y)) for x, y in zip(a, b, strict=True)]}


@kernel("kernel.relu", "cupy")
@QUIET
def relu_batch(a):
    return _each(a, lambda x: xp().where(x > _F(0), x, _F(0)))


@kernel("kernel.relu_bwd", "cupy")
@QUIET
def relu_bwd_batch(grad, input):
    return {"c": [to_host(xp().where(to_device(x) > _F(0), to_device(g), _F(0)))
                  for g, x in zip(grad, input, strict=True)]}


def _gelu(x):
    e = _erf64((x * GELU_K).astype(np.float64)).astype(np.float32)
    return (x * _F(0.5)) * (_F(1) + e)


@kernel("kernel.gelu", "cupy")
@QUIET
def gelu_batch(a):
    return _each(a, _gelu)


@kernel("kernel.sigmoid", "cupy")
@QUIET
def sigmoid_batch(a):
    return _each(a, lambda x: _F(1) / (_F(1) + _exp_neg(x)))


@kernel("kernel.silu", "cupy")
@QUIET
def silu_batch(a):
    return _each(a, lambda x: x * (_F(1) / (_F(1) + _exp_neg(x))))


@kernel("kernel.fill", "cupy")
@QUIET
def fill_batch(shape, value):
    """The bit pattern filled as u32 and viewed as float32: NaN payloads survive."""
    m = xp()
    return {"c": [to_host(m.full(tuple(dims), bits, dtype=np.uint32).view(np.float32))
                  for dims, bits in zip(DIMS.from_column(shape), value, strict=True)]}


@kernel("kernel.transpose_2d", "cupy")
@QUIET
def transpose_batch(x):
    return _each(x, lambda t: xp().ascontiguousarray(t.transpose(0, 2, 1)), "y")


@kernel("kernel.index_select", "cupy")
@QUIET
def index_select_batch(x, idx):
    return {"y": [to_host(xp().ascontiguousarray(to_device(t)[:, i, :]))
                  for t, i in zip(x, idx, strict=True)]}
