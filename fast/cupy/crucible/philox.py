"""cupy kernels for chapter 17, written against `xp`: every element at once, the 10 rounds as
whole-array steps. Words travel in uint64 so a 32x32 product is one multiply whose high and
low halves are a shift and a mask."""

from __future__ import annotations

import numpy as np

from ....spec.core.registry import kernel
from ....spec.crucible.philox import CLAMP_FROM, E17_1, F32_BELOW_ONE_BITS, TWO_PI_F32, TWO_POW_M32
from ...core.bits import BYTE, FNV_OFFSET_U64, M32, S32, fnv1a_step, philox4x32
from ..core.xp import to_device, to_host, xp


def block(c0, c1, c2, c3, k0, k1):
    """Ten rounds on uint64 arrays holding 32-bit words, as an (n, 4) uint32 array."""
    return xp().stack(philox4x32(c0, c1, c2, c3, k0, k1), axis=1).astype(np.uint32)


@kernel("philox.block", "cupy")
def block_batch(ctr, key):
    c = to_device(ctr).astype(np.uint64)
    k = to_device(key).astype(np.uint64)
    return {"out": to_host(block(c[:, 0], c[:, 1], c[:, 2], c[:, 3], k[:, 0], k[:, 1]))}


@kernel("philox.offset", "cupy")
def offset_batch(offset, key):
    o, k = to_device(offset), to_device(key)
    zero = xp().zeros_like(o)
    return {"out": to_host(block(o & M32, o >> S32, zero, zero, k & M32, k >> S32))}


@kernel("philox.op_key", "cupy")
def op_key_batch(master_counter, op_index, content_hash):
    h = xp().full(master_counter.shape[0], FNV_OFFSET_U64, dtype=np.uint64)
    for column in (master_counter, op_index.astype(np.uint64), content_hash):
        v = to_device(column)
        for s in range(8):
            h = fnv1a_step(h, (v >> np.uint64(8 * s)) & BYTE)
    return {"out": to_host(h)}


@kernel("philox.to_uniform", "cupy", models=(E17_1,))
def to_uniform_batch(x, errata: frozenset[str] = frozenset()):
    m = xp()
    w = to_device(x)
    f32 = w.astype(np.float32) * np.float32(TWO_POW_M32)
    if E17_1 not in errata:
        below_one = np.uint32(F32_BELOW_ONE_BITS).view(np.float32)
        f32 = m.where(w >= np.uint32(CLAMP_FROM), below_one, f32).astype(np.float32)
    f64 = w.astype(np.float64) * np.float64(TWO_POW_M32)
    return {"f32_bits": to_host(f32.view(np.uint32)), "f64_bits": to_host(f64.view(np.uint64))}


def unit_open_closed(raw):
    return (raw.astype(np.float32) + np.float32(1.0)) * np.float32(TWO_POW_M32)


@kernel("philox.box_muller", "cupy")
def box_muller_batch(a, b):
    m = xp()
    u1, u2 = unit_open_closed(to_device(a)), unit_open_closed(to_device(b))
    log_u1 = m.log(u1.astype(np.float64)).astype(np.float32)
    r = m.sqrt((np.float32(-2.0) * log_u1).astype(np.float64)).astype(np.float32)
    theta = (TWO_PI_F32 * u2).astype(np.float64)
    n0 = r * m.cos(theta).astype(np.float32)
    n1 = r * m.sin(theta).astype(np.float32)
    return {"n0_bits": to_host(n0.view(np.uint32)), "n1_bits": to_host(n1.view(np.uint32))}
