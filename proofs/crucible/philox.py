"""Chapter 17 obligations: Philox rounds and blocks are bijections on the counter, the key
schedule is a full-period Weyl sequence, and the float conversions stay below 1 (the seed's
float32 form does not: the E17.1 witness). All on the spec's own functions."""

from __future__ import annotations

import z3
from hypothesis import strategies as st

from ...spec.core.bits import mul
from ...spec.core.registry import Mutant
from ...spec.crucible import philox as spec_philox
from ...spec.crucible.philox import (
    CLAMP_FROM,
    F32_ONE_BITS,
    PHILOX4X32,
    PhiloxParams,
    bump_key,
    f32_bits,
    f64_bits,
    generate,
    mul_inverse,
    op_key,
    philox_block,
    philox_round,
    round_inverse,
    to_uniform_f32,
    to_uniform_f64,
    to_uniform_seed,
)
from ..core.obligation import Property, Query, property_obligation, z3_obligation


def _words(name: str, n: int) -> list:
    return [z3.BitVec(f"{name}{i}", 32) for i in range(n)]


def _odd_multipliers(p: PhiloxParams) -> list[Query]:
    return [Query(f"M{i} · M{i}^-1 == 1 mod 2^32 (M{i} odd)",
                  z3.BoolVal(mul(m, mul_inverse(m, 32), 32) != 1))
            for i, m in enumerate((p.m0, p.m1))]


@z3_obligation(
    "PO17.1",
    "For every key, each Philox round is a bijection on the 128-bit counter: the odd "
    "multipliers M0, M1 are invertible mod 2^32, and round_inverse(round(c, k), k) == c.",
    covers=("philox.block", "philox.offset"),
    subject=(philox_round, PHILOX4X32),
    mutants=(Mutant.edit("dropped XOR", "the new c0 forgets to mix in c1", philox_round,
                         "hi1 ^ ctr[1] ^ key[0]", "hi1 ^ key[0]"),
             Mutant.edit("swapped hi/lo", "hi and lo of M1·c2 trade places", philox_round,
                         "hi1 ^ ctr[1] ^ key[0], lo1", "lo1 ^ ctr[1] ^ key[0], hi1"),
             Mutant.edit("c3 from c1", "the new c2 mixes in c1 instead of c3", philox_round,
                         "hi0 ^ ctr[3]", "hi0 ^ ctr[1]")),
)
def round_bijective(subject):
    round_fn, p = subject
    c, k = _words("c", 4), _words("k", 2)
    back = round_inverse(round_fn(c, k, p), k, p)
    return [*_odd_multipliers(p),
            Query("round_inverse(round(c, k), k) == c", z3.Or(*[a != b for a, b in
                                                                  zip(back, c, strict=True)]))]


RANDOM123_KATS = (
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
)
"""Random123's Philox4x32-10 known answers (counter, key, output), as the seed's tests use."""


def _rounds_composed(c: list, k: list, p: PhiloxParams = PHILOX4X32) -> list:
    """Round 1..R applied in turn, round r keyed by the Weyl term k + (r - 1)·W."""
    for r in range(p.rounds):
        c = philox_round(c, [k[0] + r * p.w0, k[1] + r * p.w1], p)
    return c


@z3_obligation(
    "PO17.2",
    "For every key, generate(ctr, key) is injective in the counter: it is the composition of "
    "its 10 rounds, round r keyed by k + (r - 1)·W, and each round is invertible for every "
    "key (PO17.1), so distinct element offsets under one op key never share a block (stage "
    "by stage); it gives the Random123 known answers.",
    covers=("philox.block", "philox.offset"),
    subject=philox_block,
    mutants=(Mutant.edit("key not bumped", "every round uses the original key", philox_block,
                         "key = bump_key(key, p)", "key = key"),
             Mutant.edit("nine rounds", "one round short", philox_block,
                         "range(p.rounds)", "range(p.rounds - 1)")),
    timeout_s=2.0,
)
def block_bijective(block_fn):
    c, k = _words("c", 4), _words("k", 2)
    queries = [Query(f"known answer ctr[0] = {ctr[0]:#x}, key[0] = {key[0]:#x}",
                     z3.BoolVal(block_fn(ctr, key) != out)) for ctr, key, out in RANDOM123_KATS]
    queries += [Query("block(c, k) == round_10 o ... o round_1 (c)", z3.Or(*[
        a != b for a, b in zip(block_fn(c, k), _rounds_composed(c, k), strict=True)]))]
    return queries


@z3_obligation(
    "PO17.3",
    "The key schedule is a Weyl sequence: after r rounds the key is (k0 + r·W0, k1 + r·W1) "
    "mod 2^32, and W0, W1 are odd, so r·W == 0 only for r == 0 (period 2^32).",
    covers=("philox.block",),
    subject=(bump_key, PHILOX4X32),
    mutants=(Mutant.edit("one constant", "k1 is bumped by W0 too", bump_key,
                         "add(key[1], p.w1, p.width)", "add(key[1], p.w0, p.width)"),
             Mutant.edit("constants swapped", "k0 is bumped by W1 and k1 by W0", bump_key,
                         "p.w0, p.width), add(key[1], p.w1", "p.w1, p.width), add(key[1], p.w0")),
)
def key_schedule(subject):
    bump, p = subject
    k, r = _words("k", 2), z3.BitVec("r", 32)
    key, queries = list(k), []
    for rounds in range(1, p.rounds + 1):
        key = bump(key, p)
        queries.append(Query(f"key after {rounds} bumps == k + {rounds}·W", z3.Or(
            key[0] != k[0] + rounds * PHILOX4X32.w0, key[1] != k[1] + rounds * PHILOX4X32.w1)))
    for i, w in enumerate((p.w0, p.w1)):
        queries.append(Query(f"r·W{i} == 0 only for r == 0", z3.And(r != 0, r * w == 0)))
    return queries


_ONE_F64 = z3.FPVal(1.0, z3.Float64())
_ZERO_F64 = z3.FPVal(0.0, z3.Float64())


def _f64_through_float32(x):
    wide = z3.fpToFP(z3.RNE(), z3.fpToFPUnsigned(z3.RNE(), x, z3.Float32()), z3.Float64())
    return z3.fpMul(z3.RNE(), wide, z3.FPVal(2.0 ** -32, z3.Float64()))


@z3_obligation(
    "PO17.4",
    "to_uniform_d(x) = x / 2^32 exactly, so 0 <= to_uniform_d(x) <= 1 - 2^-32 < 1 for every "
    "u32 x: float64 holds every u32 exactly and the scale is a power of two.",
    covers=("philox.to_uniform",),
    subject=to_uniform_f64,
    mutants=(Mutant("through float32", "converts x to float32 first, then widens",
                    _f64_through_float32),
             Mutant.edit("scale 2^-31", "the scale is one power of two too large",
                         spec_philox._scale, "z3.FPVal(TWO_POW_M32, v.sort())",
                         "z3.FPVal(TWO_POW_M32 * 2, v.sort())")),
)
def uniform_f64_below_one(f):
    x = z3.BitVec("x", 32)
    v = f(x)
    exact = z3.fpToFPUnsigned(z3.RNE(), z3.ZeroExt(32, x), z3.Float64())
    exact = z3.fpDiv(z3.RNE(), exact, z3.FPVal(2.0 ** 32, z3.Float64()))
    return [Query("0 <= to_uniform_d(x) < 1", z3.Or(z3.fpLT(v, _ZERO_F64),
                                                     z3.fpGEQ(v, _ONE_F64))),
            Query("to_uniform_d(x) == x / 2^32", f64_bits(v) != f64_bits(exact))]


_ONE_F32 = z3.FPVal(1.0, z3.Float32())
_ZERO_F32 = z3.FPVal(0.0, z3.Float32())


@z3_obligation(
    "PO17.5",
    "The spec's to_uniform(x) is in [0, 1) for every u32 x, and monotone: x <= y gives "
    "to_uniform(x) <= to_uniform(y).",
    covers=("philox.to_uniform",),
    subject=to_uniform_f32,
    mutants=(Mutant.edit("erratum inverted", "the clamp is applied only under E17.1",
                         to_uniform_f32, "if E17_1 in errata:", "if E17_1 not in errata:"),
             Mutant.edit("clamp from 0xFFFFFFC0", "the clamp starts 64 words too late",
                         to_uniform_f32, "ule(CLAMP_FROM, x)", "ule(CLAMP_FROM + 64, x)"),
             Mutant("seed conversion", "no clamp: float32(x) · 2^-32 (E17.1)",
                    lambda x: to_uniform_seed(x)),
             Mutant("clamp too late", "clamps from 0xFFFFFFC0 instead of 0xFFFFFF80",
                    lambda x: z3.If(z3.UGE(x, 0xFFFFFFC0), z3.FPVal(1 - 2.0 ** -24,
                                                                     z3.Float32()),
                                    to_uniform_seed(x)))),
)
def uniform_f32_below_one(f):
    x, y = z3.BitVecs("x y", 32)
    vx, vy = f(x), f(y)
    return [Query("0 <= to_uniform(x) < 1", z3.Or(z3.fpLT(vx, _ZERO_F32),
                                                   z3.fpGEQ(vx, _ONE_F32))),
            Query("x <= y -> to_uniform(x) <= to_uniform(y)",
                  z3.And(z3.ULE(x, y), z3.fpGT(vx, vy)))]


@z3_obligation(
    "PO17.6",
    "E17.1 witness: the seed's to_uniform(x) = float32(x) · 2^-32 is exactly 1.0 iff "
    "x >= 0xFFFFFF80 (the 128 words float32 rounds up to 2^32), and such an x exists.",
    covers=("philox.to_uniform",),
    subject=to_uniform_seed,
    mutants=(Mutant.edit("truncating conversion", "float32(x) rounds toward zero",
                         spec_philox._u32_to_float, "z3.fpToFPUnsigned(z3.RNE(), x, sort)",
                         "z3.fpToFPUnsigned(z3.RTZ(), x, sort)"),),
)
def seed_reaches_one(f):
    x = z3.BitVec("x", 32)
    is_one = f32_bits(f(x)) == F32_ONE_BITS
    return [Query("some x gives exactly 1.0", is_one, expect="sat"),
            Query("to_uniform(x) == 1.0 <-> x >= 0xFFFFFF80",
                  is_one != z3.UGE(x, CLAMP_FROM))]


FACTS_M0, FACTS_M1, FACTS_W0, FACTS_W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
GENERATE_KATS = ((0, 0, [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
                 (1, 0, [0xF8E4CCA4, 0x5CB200DB, 0xB1A574EB, 0x097EFF67]),
                 (0, 1, [0xE3E80670, 0xE50A0EBC, 0x95F222C0, 0xB615AA27]))
"""(offset, key, block) of the 64-bit API: the seed's and the Lean model's known answers."""


def _round_formula(c: list, k: list) -> list:
    """One round with the published constants: [hi(M1·c2) ^ c1 ^ k0, lo(M1·c2),
    hi(M0·c0) ^ c3 ^ k1, lo(M0·c0)], the products taken in 64 bits."""
    p0 = z3.ZeroExt(32, c[0]) * FACTS_M0
    p1 = z3.ZeroExt(32, c[2]) * FACTS_M1
    hi0, lo0 = z3.Extract(63, 32, p0), z3.Extract(31, 0, p0)
    hi1, lo1 = z3.Extract(63, 32, p1), z3.Extract(31, 0, p1)
    return [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0]


_TYPO_M1 = PhiloxParams(32, PHILOX4X32.m0, 0xCD9E8D53, PHILOX4X32.w0, PHILOX4X32.w1)


@z3_obligation(
    "PO17.20",
    "Philox4x32-10 is pinned: one round with the spec's parameters equals the round built "
    "from the published M0, M1 for every counter and key, the key schedule adds the "
    "published W0, W1, and generate and the block give the known answers (10 rounds).",
    covers=("philox.block", "philox.offset"),
    subject=philox_block,
    mutants=(
        Mutant.edit("nine rounds", "the block stops one round early", philox_block,
                    "range(p.rounds)", "range(p.rounds - 1)"),
        Mutant.edit("M1 multiplies c0", "the high half of M0·c0 uses M1", philox_round,
                    "mul_hi(p.m0, ctr[0], w)", "mul_hi(p.m1, ctr[0], w)"),
        Mutant.edit("key words swapped", "the new c0 mixes in k1", philox_round,
                    "hi1 ^ ctr[1] ^ key[0]", "hi1 ^ ctr[1] ^ key[1]"),
        Mutant.edit("one Weyl constant", "k1 is bumped by W0", bump_key,
                    "add(key[1], p.w1, p.width)", "add(key[1], p.w0, p.width)"),
        Mutant("mistyped M1", "M1 = 0xCD9E8D53 (one hex digit off)",
               lambda c, k: philox_block(c, k, _TYPO_M1)),
    ),
)
def philox_pinned(block_fn):
    c, k = _words("c", 4), _words("k", 2)
    got = philox_round(c, k, PHILOX4X32)
    bumped = bump_key(k, PHILOX4X32)
    queries = [Query("round(c, k) == the published round", z3.Or(*[
        a != b for a, b in zip(got, _round_formula(c, k), strict=True)])),
        Query("bump_key(k) == (k0 + W0, k1 + W1)",
              z3.Or(bumped[0] != k[0] + FACTS_W0, bumped[1] != k[1] + FACTS_W1))]
    queries += [Query(f"block known answer ctr[0] = {ctr[0]:#x}", z3.BoolVal(
        block_fn(ctr, key) != out)) for ctr, key, out in RANDOM123_KATS]
    queries += [Query(f"generate({offset}, {key}) known answer", z3.BoolVal(
        generate(offset, key) != out)) for offset, key, out in GENERATE_KATS]
    return queries


def _op_key_formula(case: tuple[int, int, int]) -> None:
    master, op_index, content = case
    h = 0xCBF29CE484222325
    for word in (master, op_index, content):
        for i in range(8):
            h = ((h ^ (word >> 8 * i & 0xFF)) * 0x100000001B3) % 2**64
    assert op_key(master, op_index, content) == h, f"{op_key(master, op_index, content):#x}"


@property_obligation(
    "PO17.21",
    "op_key(master, op_index, content) is FNV-1a 64 over the 24 bytes master, op_index "
    "widened to u64, content, each little-endian.",
    covers=("philox.op_key",),
    subject=op_key,
    mutants=(Mutant.edit("op index as 4 bytes", "op_index is fed as 4 bytes, not 8", op_key,
                         "le_bytes(op_index, 8)", "le_bytes(op_index, 4)"),
             Mutant.edit("content before op index", "the last two words trade places", op_key,
                         "le_bytes(op_index, 8) + le_bytes(content_hash, 8)",
                         "le_bytes(content_hash, 8) + le_bytes(op_index, 8)")),
)
def op_key_fnv(_fn):
    u64, u32 = st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1)
    return [Property("master, op index, content", _op_key_formula, examples=200,
                     strategy=lambda: st.tuples(u64, u32, u64))]
