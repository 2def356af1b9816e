"""spec/bits.py: the int and the z3 readings of every helper agree, and match plain arithmetic."""

from __future__ import annotations

import z3
from hypothesis import given
from hypothesis import strategies as st

from crucible_spec.spec import bits
from crucible_spec.spec.hashing import fmix64, fnv1a_step, wymix

u64 = st.integers(0, 2**64 - 1)
M = 2**64 - 1


def z3_eval(fn, *args, width=64):
    """Run `fn` on z3 constants and read the simplified result back as an int."""
    return z3.simplify(fn(*(z3.BitVecVal(a, width) for a in args))).as_long()


@given(u64, u64)
def test_arithmetic_matches_python_mod_2_64(a, b):
    assert bits.add(a, b) == (a + b) % 2**64
    assert bits.sub(a, b) == (a - b) % 2**64
    assert bits.mul(a, b) == (a * b) % 2**64
    assert bits.mul_hi(a, b) == (a * b) >> 64
    assert bits.bnot(a) == M - a


@given(u64, st.integers(0, 63))
def test_shifts_and_rotations(x, r):
    assert bits.shr(x, r) == x >> r
    assert bits.shl(x, r) == (x << r) % 2**64
    assert bits.rotl(x, r) == ((x << r) | (x >> (64 - r))) % 2**64


@given(u64, u64, st.integers(0, 63))
def test_z3_reading_agrees_with_int_reading(a, b, r):
    for fn in (bits.add, bits.sub, bits.mul, bits.mul_hi, wymix):
        assert z3_eval(fn, a, b) == fn(a, b)
    assert z3_eval(lambda x: bits.shr(x, r), a) == bits.shr(a, r)
    assert z3_eval(lambda x: bits.shl(x, r), a) == bits.shl(a, r)
    assert z3_eval(lambda x: bits.rotl(x, r), a) == bits.rotl(a, r)
    assert z3_eval(bits.bnot, a) == bits.bnot(a)
    assert z3_eval(fmix64, a) == fmix64(a)
    assert z3_eval(fnv1a_step, a, b & 0xFF) == fnv1a_step(a, b & 0xFF)


@given(st.integers(0, 2**40), st.integers(0, 20))
def test_align_up_is_the_least_aligned_bound(x, e):
    k = 1 << e
    r = bits.align_up(x, k)
    assert r % k == 0 and r >= x and r - x < k
    assert z3_eval(bits.align_up, x, k) == r


@given(u64, st.integers(0, 63))
def test_pow2_index_is_modulo(h, e):
    assert bits.pow2_index(h, 1 << e) == h % (1 << e)


@given(st.integers(-(2**63), 2**63 - 1))
def test_signed_round_trip(v):
    assert bits.to_signed(bits.to_unsigned(v, 64), 64) == v
    assert int.from_bytes(bits.le_bytes(v, 8), "little", signed=True) == v


def test_is_pow2():
    assert [x for x in range(70) if bits.is_pow2(x)] == [1, 2, 4, 8, 16, 32, 64]
