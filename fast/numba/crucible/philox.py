"""numba kernels for chapter 17: Philox4x32-10 blocks, the float conversions and Box-Muller.

Serial loops into preallocated outputs (design §7: `prange` stops LLVM vectorising the
10 unrolled rounds across elements). The block is the shared `bits.philox4x32` on
uint64-held words.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.philox import CLAMP_FROM, E17_1, F32_BELOW_ONE_BITS, TWO_PI_F32, TWO_POW_M32
from ...core.bits import BYTE, FNV_OFFSET_U64, M32, S32, fnv1a_step, philox4x32

CLAMP_U32 = np.uint32(CLAMP_FROM)
BELOW_ONE_F32 = np.uint32(F32_BELOW_ONE_BITS).view(np.float32)
SCALE_F32 = np.float32(TWO_POW_M32)
SCALE_F64 = np.float64(TWO_POW_M32)
ONE_F32 = np.float32(1.0)
MINUS_TWO_F32 = np.float32(-2.0)


@njit(cache=True)
def block_into(ctr, key, out):
    """out[4i:4i + 4] = generate(ctr[4i:4i + 4], key[2i:2i + 2]) on flat word arrays (flat
    indexing vectorises; row-and-column indexing ran at half the speed)."""
    for i in range(out.size // 4):
        r0, r1, r2, r3 = philox4x32(np.uint64(ctr[4 * i]), np.uint64(ctr[4 * i + 1]),
                                    np.uint64(ctr[4 * i + 2]), np.uint64(ctr[4 * i + 3]),
                                    np.uint64(key[2 * i]), np.uint64(key[2 * i + 1]))
        out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3] = r0, r1, r2, r3


@njit(cache=True)
def offset_into(offset, key, out):
    """out[4i:4i + 4] = generate(offset[i], key[i]) for u64 offsets and keys."""
    for i in range(offset.size):
        o, k = offset[i], key[i]
        r0, r1, r2, r3 = philox4x32(o & M32, o >> S32, np.uint64(0), np.uint64(0),
                                    k & M32, k >> S32)
        out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3] = r0, r1, r2, r3


@njit(cache=True)
def stream_into(start, key, out):
    """The raw stream of one key: out[4j:4j + 4] = generate(start + j, key), out.size % 4 == 0."""
    k0, k1 = key & M32, key >> S32
    for j in range(out.size // 4):
        o = start + np.uint64(j)
        r0, r1, r2, r3 = philox4x32(o & M32, o >> S32, np.uint64(0), np.uint64(0), k0, k1)
        out[4 * j], out[4 * j + 1], out[4 * j + 2], out[4 * j + 3] = r0, r1, r2, r3


@njit(cache=True)
def to_uniform_into(x, f32_out, f64_out, clamp):
    """float32(x) · 2^-32 (1 - 2^-24 for x >= 0xFFFFFF80 when `clamp`) and float64(x) · 2^-32."""
    for i in range(x.size):
        u = np.float32(x[i]) * SCALE_F32
        if clamp and x[i] >= CLAMP_U32:
            u = BELOW_ONE_F32
        f32_out[i] = u
        f64_out[i] = np.float64(x[i]) * SCALE_F64


@njit(cache=True)
def box_muller_into(a, b, n0, n1):
    """Box-Muller in float32, each elementary function rounded from its float64 value."""
    for i in range(a.size):
        u1 = (np.float32(a[i]) + ONE_F32) * SCALE_F32
        u2 = (np.float32(b[i]) + ONE_F32) * SCALE_F32
        r = np.float32(math.sqrt(MINUS_TWO_F32 * np.float32(math.log(np.float64(u1)))))
        theta = TWO_PI_F32 * u2
        n0[i] = r * np.float32(math.cos(np.float64(theta)))
        n1[i] = r * np.float32(math.sin(np.float64(theta)))


@njit(cache=True)
def op_key_into(master, op_index, content, out):
    """FNV-1a 64 of the 24 little-endian bytes (master, op_index as u64, content)."""
    for i in range(out.size):
        h = FNV_OFFSET_U64
        for v in (master[i], np.uint64(op_index[i]), content[i]):
            for s in range(8):
                h = fnv1a_step(h, (v >> np.uint64(8 * s)) & BYTE)
        out[i] = h


@kernel("philox.block", "numba")
def block_batch(ctr, key):
    out = np.empty((ctr.shape[0], 4), dtype=np.uint32)
    block_into(np.ascontiguousarray(ctr).reshape(-1), np.ascontiguousarray(key).reshape(-1),
               out.reshape(-1))
    return {"out": out}


@kernel("philox.offset", "numba")
def offset_batch(offset, key):
    out = np.empty((offset.shape[0], 4), dtype=np.uint32)
    offset_into(offset, key, out.reshape(-1))
    return {"out": out}


@kernel("philox.op_key", "numba")
def op_key_batch(master_counter, op_index, content_hash):
    out = np.empty(master_counter.shape[0], dtype=np.uint64)
    op_key_into(master_counter, op_index, content_hash, out)
    return {"out": out}


@kernel("philox.to_uniform", "numba", models=(E17_1,))
def to_uniform_batch(x, errata: frozenset[str] = frozenset()):
    f32 = np.empty(x.shape[0], dtype=np.float32)
    f64 = np.empty(x.shape[0], dtype=np.float64)
    to_uniform_into(x, f32, f64, E17_1 not in errata)
    return {"f32_bits": f32.view(np.uint32), "f64_bits": f64.view(np.uint64)}


@kernel("philox.box_muller", "numba")
def box_muller_batch(a, b):
    n0 = np.empty(a.shape[0], dtype=np.float32)
    n1 = np.empty(a.shape[0], dtype=np.float32)
    box_muller_into(a, b, n0, n1)
    return {"n0_bits": n0.view(np.uint32), "n1_bits": n1.view(np.uint32)}
