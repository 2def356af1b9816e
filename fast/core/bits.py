"""Element-wise 64-bit helpers shared by the numba and cupy kernels.

Each function uses only operators, so the same code runs on numpy or cupy arrays (whole
batches at once) and, inside numba kernels (`register_jitable`), on uint64 scalars. 64x64->128-bit
products are built from 32-bit limbs, as neither numpy nor numba has a 128-bit integer.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from ...spec.crucible.hashing import FMIX64_C1, FMIX64_C2, FMIX64_SHIFT, FNV_OFFSET, FNV_PRIME, PHI
from ...spec.crucible.philox import PHILOX4X32

M32 = np.uint64(0xFFFFFFFF)
S32 = np.uint64(32)
S33 = np.uint64(FMIX64_SHIFT)
C1 = np.uint64(FMIX64_C1)
C2 = np.uint64(FMIX64_C2)
FNV_OFFSET_U64 = np.uint64(FNV_OFFSET)
FNV_PRIME_U64 = np.uint64(FNV_PRIME)
PHI_U64 = np.uint64(PHI)
BYTE = np.uint64(0xFF)
PHILOX_ROUNDS = PHILOX4X32.rounds
PHILOX_M0 = np.uint64(PHILOX4X32.m0)
PHILOX_M1 = np.uint64(PHILOX4X32.m1)
PHILOX_W0 = np.uint64(PHILOX4X32.w0)
PHILOX_W1 = np.uint64(PHILOX4X32.w1)


@register_jitable
def fmix64(k):
    """MurmurHash3 fmix64 of uint64 values."""
    k = k ^ (k >> S33)
    k = k * C1
    k = k ^ (k >> S33)
    k = k * C2
    return k ^ (k >> S33)


@register_jitable
def mul_hi64(a, b):
    """High 64 bits of the 128-bit product of uint64 values, from 32-bit limbs."""
    a_lo = a & M32
    a_hi = a >> S32
    b_lo = b & M32
    b_hi = b >> S32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    mid = (lo_lo >> S32) + (hi_lo & M32) + lo_hi
    return a_hi * b_hi + (hi_lo >> S32) + (mid >> S32)


@register_jitable
def wymix(a, b):
    """lo64(a * b) ^ hi64(a * b) of uint64 values."""
    return (a * b) ^ mul_hi64(a, b)


@register_jitable
def fnv1a_step(h, byte):
    """One FNV-1a step on uint64 state values and byte values (as uint64)."""
    return (h ^ byte) * FNV_PRIME_U64


@register_jitable(inline="always")
def philox4x32(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 on 32-bit words held in uint64 (each 32x32 product is one multiply; its
    high half is `p >> 32`, its low half `p & M32`); returns the four output words. Inlined
    into numba kernels: called, it ran about 3x slower."""
    for _ in range(PHILOX_ROUNDS):
        p0 = c0 * PHILOX_M0
        p1 = c2 * PHILOX_M1
        c0, c1, c2, c3 = (p1 >> S32) ^ c1 ^ k0, p1 & M32, (p0 >> S32) ^ c3 ^ k1, p0 & M32
        k0 = (k0 + PHILOX_W0) & M32
        k1 = (k1 + PHILOX_W1) & M32
    return c0, c1, c2, c3
