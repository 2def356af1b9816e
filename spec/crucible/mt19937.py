"""Chapter 12: the seed tests' input generator: std::mt19937 and libstdc++'s
uniform_real_distribution<float>.

The compute tests draw every input tensor from `std::mt19937(seed)` through
`std::uniform_real_distribution<float>(a, b)`, one engine word per value.

Engine (MT19937, 32-bit words, state of N = 624 words, all arithmetic mod 2^32):
  1. seeding (init_genrand): mt[0] = seed; for i in 1..623:
     mt[i] = 1812433253 * (mt[i-1] xor (mt[i-1] >> 30)) + i;
     the next word is taken from position N, so the first draw twists;
  2. twist, for i = 0..623 in order, in place: y = (mt[i] & 0x80000000) | (mt[(i+1) mod 624] &
     0x7FFFFFFF); mt[i] = mt[(i+397) mod 624] xor (y >> 1) xor (0x9908B0DF if y is odd else 0);
  3. a draw takes word mt[k] (k = 0..623, twisting again after 624 draws) and tempers it:
     y ^= y >> 11; y ^= (y << 7) & 0x9D2C5680; y ^= (y << 15) & 0xEFC60000; y ^= y >> 18.
Seed 42's first words are 1608637542, 3421126067, 4083286876, 787846414, 3143890026.

Distribution (libstdc++, generate_canonical<float, 24> with one engine call per value):
  4. c = float32(u) / 2^32: u converted to float32 rounding to nearest (ties to even), then an
     exact division by 2^32; the 128 words u >= 0xFFFFFF80 round to 2^32 and give c = 1.0;
  5. if c >= 1.0, c = nextafter(1.0f, 0.0f) = 1 - 2^-24 (0x3F7FFFFF), so c is in [0, 1);
  6. value = c * (b - a) + a, each operation in float32, left to right (no FMA).
libc++ computes the same except it never clamps (step 5), so it can return c = 1.0 and
value = b; the spec follows libstdc++, which produced the seed's golden bits.
"""

from __future__ import annotations

import numpy as np

N = 624
"""State words."""
M = 397
"""Twist offset."""
INIT_MULTIPLIER = 1812433253
MATRIX_A = 0x9908B0DF
UPPER_MASK = 0x80000000
LOWER_MASK = 0x7FFFFFFF
TEMPER_B = 0x9D2C5680
TEMPER_C = 0xEFC60000
MASK32 = 0xFFFFFFFF
MAX_DRAWS = 1 << 20
"""rng.* ops draw at most 2^20 values per request."""
TWO_POW_32 = np.float32(4294967296.0)
BELOW_ONE = np.float32(np.nextafter(np.float32(1.0), np.float32(0.0)))
"""nextafter(1.0f, 0.0f) = 1 - 2^-24, bits 0x3F7FFFFF."""
CLAMP_FROM = 0xFFFFFF80
"""The smallest word whose float32 rounds to 2^32 (step 4)."""


def init_genrand(seed: int) -> list[int]:
    """Step 1: the 624-word state of a 32-bit seed."""
    mt = [seed & MASK32]
    for i in range(1, N):
        prev = mt[i - 1]
        mt.append((INIT_MULTIPLIER * (prev ^ (prev >> 30)) + i) & MASK32)
    return mt


def twist(mt: list[int]) -> None:
    """Step 2, in place."""
    for i in range(N):
        y = (mt[i] & UPPER_MASK) | (mt[(i + 1) % N] & LOWER_MASK)
        mt[i] = mt[(i + M) % N] ^ (y >> 1) ^ (MATRIX_A if y & 1 else 0)


def temper(y: int) -> int:
    """Step 3's tempering of one state word."""
    y ^= y >> 11
    y ^= (y << 7) & TEMPER_B
    y ^= (y << 15) & TEMPER_C
    y ^= y >> 18
    return y & MASK32


def mt19937_words(seed: int, count: int) -> list[int]:
    """The first `count` words of std::mt19937(seed) (steps 1-3)."""
    mt = init_genrand(seed)
    k = N
    out = []
    for _ in range(count):
        if k >= N:
            twist(mt)
            k = 0
        out.append(temper(mt[k]))
        k += 1
    return out


def canonical_f32(u: int) -> np.float32:
    """Steps 4-5: the float32 in [0, 1) of one engine word."""
    c = np.float32(np.float32(u) / TWO_POW_32)
    if c >= np.float32(1.0):
        c = BELOW_ONE
    return c


def uniform_f32(u: int, a: np.float32, b: np.float32) -> np.float32:
    """Step 6: one value of uniform_real_distribution<float>(a, b) from one engine word."""
    return np.float32(np.float32(canonical_f32(u) * np.float32(b - a)) + a)


def f32_of_bits(bits: int) -> np.float32:
    """The float32 whose bit pattern is `bits`."""
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


def mt19937_uniform(seed: int, count: int, a: np.float32, b: np.float32) -> np.ndarray:
    """`count` draws of uniform_real_distribution<float>(a, b) over std::mt19937(seed)."""
    out = np.empty(count, dtype=np.float32)
    for i, u in enumerate(mt19937_words(seed, count)):
        out[i] = uniform_f32(u, a, b)
    return out
