"""numba kernels for chapter 12's input generator: std::mt19937 (seeding, twist, tempering
on uint32 words) and libstdc++'s uniform_real_distribution<float>, one sequential stream per
request written into a preallocated output; binary32 arithmetic without contraction, so
bit-exact with the spec."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.core.schema import Ragged
from ....spec.crucible.mt19937 import (
    INIT_MULTIPLIER,
    LOWER_MASK,
    MATRIX_A,
    TEMPER_B,
    TEMPER_C,
    UPPER_MASK,
    M,
    N,
)

BELOW_ONE_F32 = np.uint32(0x3F7FFFFF).view(np.float32)
TWO_POW_32_F32 = np.float32(4294967296.0)
ONE_F32 = np.float32(1.0)


@njit(cache=True)
def words_into(seed, out):
    """out[:] = the first out.size words of std::mt19937(seed)."""
    mt = np.empty(N, dtype=np.uint32)
    mt[0] = np.uint32(seed)
    for i in range(1, N):
        prev = mt[i - 1]
        mt[i] = np.uint32(np.uint32(INIT_MULTIPLIER) * (prev ^ (prev >> np.uint32(30)))
                          + np.uint32(i))
    k = N
    for j in range(out.size):
        if k >= N:
            for i in range(N):
                y = (mt[i] & np.uint32(UPPER_MASK)) | (mt[(i + 1) % N] & np.uint32(LOWER_MASK))
                v = mt[(i + M) % N] ^ (y >> np.uint32(1))
                if y & np.uint32(1):
                    v ^= np.uint32(MATRIX_A)
                mt[i] = v
            k = 0
        y = mt[k]
        y ^= y >> np.uint32(11)
        y ^= (y << np.uint32(7)) & np.uint32(TEMPER_B)
        y ^= (y << np.uint32(15)) & np.uint32(TEMPER_C)
        y ^= y >> np.uint32(18)
        out[j] = y
        k += 1


@njit(cache=True)
def uniform_into(words, a, b, out):
    """out[i] = float32(words[i]) / 2^32 clamped below 1, times (b - a), plus a."""
    width = np.float32(b - a)
    for i in range(words.size):
        c = np.float32(np.float32(words[i]) / TWO_POW_32_F32)
        if c >= ONE_F32:
            c = BELOW_ONE_F32
        out[i] = np.float32(np.float32(c * width) + a)


def _offsets(count) -> np.ndarray:
    offsets = np.zeros(len(count) + 1, dtype=np.int64)
    np.cumsum(np.asarray(count, dtype=np.int64), out=offsets[1:])
    return offsets


@kernel("rng.mt19937", "numba")
def words_batch(seed, count):
    offsets = _offsets(count)
    out = np.empty(int(offsets[-1]), dtype=np.uint32)
    for r in range(len(count)):
        words_into(np.uint32(seed[r]), out[offsets[r]:offsets[r + 1]])
    return {"words": Ragged(out, offsets)}


@kernel("rng.mt19937_uniform", "numba")
def uniform_batch(seed, count, a, b):
    out = []
    for r in range(len(count)):
        words = np.empty(int(count[r]), dtype=np.uint32)
        words_into(np.uint32(seed[r]), words)
        values = np.empty(words.size, dtype=np.float32)
        uniform_into(words, np.uint32(a[r]).view(np.float32), np.uint32(b[r]).view(np.float32),
                     values)
        out.append(values)
    return {"values": out}
