"""Chapter 17: Philox4x32-10, the counter-based generator behind deterministic randomness.

Philox (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", 2011) maps a 4-word
counter and a 2-word key through 10 rounds of multiply-xor-swap with a Weyl-sequence key
schedule. It is a pure function: the same (counter, key) gives the same 4 words everywhere.
Intended use: key = op_key(iteration master counter, op index, content hash), counter = the
flat element index, so every element of every op of every iteration has its own stream.

The round is written once over the word width, so the same code is Philox4x32-10 (Crucible)
and Philox4x64-10 (numpy's `numpy.random.Philox`). Where numpy's stream coincides with ours:
`Philox(counter=c, key=k).random_raw(4n)` is exactly the 64-bit words of the 4x64 instance's
block(c + 1, k), ..., block(c + n, k), with c the 256-bit counter as four little-endian 64-bit
words (numpy bumps it, mod 2^256, before each block) and k two 64-bit words; the round, the
xor-swap and the key schedule are the same. Where it does not: the word width, both
multipliers and both Weyl constants differ, so no numpy bit generator (nor any 32-bit draw
made from its words) produces Philox4x32-10 output; our words are checked against Random123's
published vectors and the real code instead.

Floats: to_uniform maps a word to [0, 1) in float32 (erratum E17.1: the seed reaches 1.0)
and float64 (exact: x / 2^32 < 1). box_muller is the trigonometric Box-Muller transform in
float32 (the seed's comment calls it the polar form; it is not). Its elementary functions come
from libm, so its results are compared within an envelope, not bit for bit (see
`philox_ops`). The seed's claim that results reproduce identically across CPU and GPU holds
for the words and to_uniform, not for box_muller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.bits import (
    BitVal,
    add,
    is_symbolic,
    le_bytes,
    mask,
    mul,
    mul_hi,
    select,
    ule,
    z3_module,
)
from ..core.errata import NO_ERRATA
from .hashing import fnv1a

E17_1 = "E17.1"

ROUNDS = 10
"""Philox4x32-10 runs 10 rounds. Real code: `Philox.h`, `generate`."""


@dataclass(frozen=True)
class PhiloxParams:
    """One Philox4xW instance: word width, the two multipliers and the two Weyl increments."""

    width: int
    m0: int
    m1: int
    w0: int
    w1: int
    rounds: int = ROUNDS


PHILOX4X32 = PhiloxParams(32, m0=0xD2511F53, m1=0xCD9E8D57, w0=0x9E3779B9, w1=0xBB67AE85)
"""Crucible's Philox4x32-10: M0 multiplies ctr[0], M1 ctr[2]; W0, W1 bump key[0], key[1]."""

PHILOX4X64 = PhiloxParams(64, m0=0xD2E7470EE14C6C93, m1=0xCA5A826395121157,
                          w0=0x9E3779B97F4A7C15, w1=0xBB67AE8584CAA73B)
"""The published Philox4x64-10 constants (Random123), as used by numpy.random.Philox."""

M0, M1, W0, W1 = PHILOX4X32.m0, PHILOX4X32.m1, PHILOX4X32.w0, PHILOX4X32.w1

Ctr = list  # four words
Key = list  # two words


def philox_round(ctr: Ctr, key: Key, p: PhiloxParams = PHILOX4X32) -> Ctr:
    """One round: two multiplies, then the xor-swap into the new counter."""
    w = p.width
    hi0, lo0 = mul_hi(p.m0, ctr[0], w), mul(ctr[0], p.m0, w)  # 1. M0·c0 and M1·c2
    hi1, lo1 = mul_hi(p.m1, ctr[2], w), mul(ctr[2], p.m1, w)
    return [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0]  # 2. the new counter


def bump_key(key: Key, p: PhiloxParams = PHILOX4X32) -> Key:
    """The key schedule: k0 += W0, k1 += W1 (mod 2^W), a Weyl sequence per key word."""
    return [add(key[0], p.w0, p.width), add(key[1], p.w1, p.width)]  # 3


def philox_block(ctr: Ctr, key: Key, p: PhiloxParams = PHILOX4X32) -> Ctr:
    """generate(ctr, key): the counter after `rounds` rounds, bumping the key after each."""
    for _ in range(p.rounds):
        ctr = philox_round(ctr, key, p)
        key = bump_key(key, p)
    return ctr


def mul_inverse(m: int, width: int) -> int:
    """The inverse of m modulo 2^width by Newton's iteration (exact for odd m; for an even m
    the result is no inverse, which the proof obligations then expose)."""
    inv = m
    for _ in range(6):
        inv = mul(inv, 2 - mul(m, inv, width), width)
    return inv & mask(width)


def round_inverse(out: Ctr, key: Key, p: PhiloxParams = PHILOX4X32) -> Ctr:
    """The counter a round maps to `out` under `key`: the low products give back c0 and c2
    (odd multipliers are invertible mod 2^W), then the high products unmask c1 and c3."""
    w = p.width
    c0 = mul(out[3], mul_inverse(p.m0, w), w)
    c2 = mul(out[1], mul_inverse(p.m1, w), w)
    c1 = out[0] ^ mul_hi(p.m1, c2, w) ^ key[0]
    c3 = out[2] ^ mul_hi(p.m0, c0, w) ^ key[1]
    return [c0, c1, c2, c3]


def block_inverse(out: Ctr, key: Key, p: PhiloxParams = PHILOX4X32) -> Ctr:
    """The counter that `philox_block` maps to `out` under `key`: the rounds undone in reverse
    order with the same round keys."""
    keys = [key]
    for _ in range(p.rounds - 1):
        keys.append(bump_key(keys[-1], p))
    for k in reversed(keys):
        out = round_inverse(out, k, p)
    return out


def split64(value: int) -> list[int]:
    """A 64-bit value as [low 32 bits, high 32 bits]."""
    return [value & 0xFFFFFFFF, value >> 32]


def generate(offset: int, key: int) -> Ctr:
    """generate(offset u64, key u64): ctr = [lo(offset), hi(offset), 0, 0], key = [lo, hi]."""
    return philox_block([*split64(offset), 0, 0], split64(key))


def op_key(master_counter: int, op_index: int, content_hash: int) -> int:
    """The per-op key: FNV-1a 64 over master (8 LE bytes), op_index widened to u64 (8 LE
    bytes) and the content hash (8 LE bytes)."""
    return fnv1a(le_bytes(master_counter, 8) + le_bytes(op_index, 8) + le_bytes(content_hash, 8))


# ── to_uniform ────────────────────────────────────────────────────────────────────────────────

TWO_POW_M32 = 2.3283064365386963e-10
"""2^-32, exactly representable in float32 and float64. Real code: `Philox.h`, `to_uniform`."""

CLAMP_FROM = 0xFFFFFF80
"""The least word that float32 rounds up to 2^32 (the seed maps it, and every larger one, to
exactly 1.0; PO17.6 proves the threshold)."""

F32_BELOW_ONE_BITS = 0x3F7FFFFF
"""1 - 2^-24, the largest float32 below 1.0 (the spec's value for x >= CLAMP_FROM)."""

F32_ONE_BITS = 0x3F800000
"""The bits of float32 1.0, what the seed returns from CLAMP_FROM up (E17.1). Real code:
`Philox.h`, `to_uniform`."""


def _is_fp_term(v) -> bool:
    """True for a z3 floating-point term, False for a numpy float."""
    return not isinstance(v, (np.generic, float))


def _u32_to_float(x: BitVal, bits: int):
    """float32(x) or float64(x) of a u32, rounded to nearest even (exact in float64)."""
    if is_symbolic(x):
        z3 = z3_module()
        sort = z3.Float32() if bits == 32 else z3.Float64()
        return z3.fpToFPUnsigned(z3.RNE(), x, sort)
    return np.float32(x) if bits == 32 else np.float64(x)


def _scale(v, bits: int):
    """v · 2^-32 in the same format (exact: a power of two, far from the subnormals)."""
    if _is_fp_term(v):
        z3 = z3_module()
        return z3.fpMul(z3.RNE(), v, z3.FPVal(TWO_POW_M32, v.sort()))
    return v * (np.float32(TWO_POW_M32) if bits == 32 else np.float64(TWO_POW_M32))


def _f32_of_bits(pattern: int, like):
    if _is_fp_term(like):
        z3 = z3_module()
        return z3.fpBVToFP(z3.BitVecVal(pattern, 32), z3.Float32())
    return np.uint32(pattern).view(np.float32)


def to_uniform_seed(x: BitVal):
    """The seed's to_uniform: float32(x) · 2^-32 in float32; 1.0 for x >= CLAMP_FROM."""
    return _scale(_u32_to_float(x, 32), 32)


def to_uniform_f32(x: BitVal, errata: frozenset[str] = NO_ERRATA):
    """to_uniform(x) in [0, 1): float32(x) · 2^-32, except that the words the conversion
    rounds up to 2^32 give 1 - 2^-24 instead of 1.0 (under E17.1: 1.0)."""
    u = to_uniform_seed(x)  # 1. convert (rounding to nearest even), scale exactly
    if E17_1 in errata:
        return u
    return select(ule(CLAMP_FROM, x), _f32_of_bits(F32_BELOW_ONE_BITS, u), u)  # 2. stay below 1


def to_uniform_f64(x: BitVal):
    """to_uniform_d(x) = float64(x) · 2^-32 = x / 2^32 exactly, so at most 1 - 2^-32 < 1."""
    return _scale(_u32_to_float(x, 64), 64)


def f32_bits(v) -> BitVal:
    """The IEEE-754 bit pattern of a float32 value (a u32, or a z3 32-bit vector)."""
    if _is_fp_term(v):
        return z3_module().fpToIEEEBV(v)
    return int(np.float32(v).view(np.uint32))


def f64_bits(v) -> BitVal:
    """The IEEE-754 bit pattern of a float64 value."""
    if _is_fp_term(v):
        return z3_module().fpToIEEEBV(v)
    return int(np.float64(v).view(np.uint64))


# ── Box-Muller ────────────────────────────────────────────────────────────────────────────────

TWO_PI_F32 = np.float32(6.2831853071795864)


def unit_open_closed(raw: int) -> np.float32:
    """(float32(raw) + 1) · 2^-32 in float32: in (0, 1]. The +1 is no longer exact once
    raw >= 2^24 (float32 spacing 2 or more), and raw >= CLAMP_FROM gives exactly 1.0."""
    return (np.float32(raw) + np.float32(1.0)) * np.float32(TWO_POW_M32)


def box_muller(a: int, b: int) -> tuple[np.float32, np.float32]:
    """Two words to two N(0, 1) float32 values, float32 throughout; every elementary function
    is the float32 rounding of its float64 value (a correctly rounded libm, up to the rare
    double rounding). r = 0 when u1 = 1.0 (a >= CLAMP_FROM), giving (±0, ±0)."""
    u1, u2 = unit_open_closed(a), unit_open_closed(b)  # 1. u1, u2 in (0, 1]
    log_u1 = np.float32(math.log(float(u1)))  # 2. r = sqrt(-2 log u1), theta = 2 pi u2
    r = np.float32(math.sqrt(float(np.float32(-2.0) * log_u1)))
    theta = TWO_PI_F32 * u2
    cos_t, sin_t = np.float32(math.cos(float(theta))), np.float32(math.sin(float(theta)))
    return r * cos_t, r * sin_t  # 3. (r cos theta, r sin theta)
