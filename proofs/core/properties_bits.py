"""Chapters 1 and 5 as properties: the fixed-width helpers of spec/core/bits.py (their int reading
against plain arithmetic, their z3 reading against their int reading) and the storage span of
compute_storage_nbytes, each over seeded hypothesis draws."""

from __future__ import annotations

import math
import random

import z3
from hypothesis import strategies as st

from ...spec.core import bits
from ...spec.core.registry import Mutant
from ...spec.crucible.hashing import fmix64, fnv1a_step, wymix
from ...spec.crucible.tensor_meta import compute_storage_nbytes
from ...spec.crucible.types import ELEMENT_SIZE, ScalarType
from .obligation import Property, property_obligation

U64 = st.integers(0, 2**64 - 1)
M = 2**64 - 1


def z3_eval(fn, *args, width: int = 64) -> int:
    """Run `fn` on z3 constants and read the simplified result back as an int."""
    return z3.simplify(fn(*(z3.BitVecVal(a, width) for a in args))).as_long()


def _arithmetic(case: tuple[int, int]) -> None:
    a, b = case
    assert bits.add(a, b) == (a + b) % 2**64
    assert bits.sub(a, b) == (a - b) % 2**64
    assert bits.mul(a, b) == (a * b) % 2**64
    assert bits.mul_hi(a, b) == (a * b) >> 64
    assert bits.bnot(a) == M - a


@property_obligation(
    "PO1.70",
    "add, sub, mul and bnot of two u64 values are Python's arithmetic mod 2^64, and mul_hi is "
    "the high 64 bits of the 128-bit product.",
    covers=("bits.add", "bits.sub", "bits.mul", "bits.mul_hi", "bits.bnot"),
    subject=bits.add,
    mutants=(Mutant.edit("add keeps the carry", "add drops the mask: the carry out of bit 63 "
                         "stays", bits.add, "return (a + b) & mask(width)", "return a + b"),
             Mutant.edit("mul_hi one bit low", "mul_hi shifts the product by width - 1",
                         bits.mul_hi, "return (a * b) >> width", "return (a * b) >> (width - 1)"),
             Mutant.edit("mask one bit short", "mask(w) is 2^(w-1) - 1", bits.mask,
                         "(1 << width) - 1", "(1 << (width - 1)) - 1")),
)
def arithmetic_is_mod_2_64(_subject):
    return [Property("two u64 operands", _arithmetic, strategy=lambda: st.tuples(U64, U64),
                     examples=300)]


def _shifts(case: tuple[int, int]) -> None:
    x, r = case
    assert bits.shr(x, r) == x >> r
    assert bits.shl(x, r) == (x << r) % 2**64
    assert bits.rotl(x, r) == ((x << r) | (x >> (64 - r))) % 2**64


@property_obligation(
    "PO1.71",
    "shr, shl and rotl of a u64 by 0..63 bits are the logical shifts and the left rotation "
    "within 64 bits.",
    covers=("bits.shr", "bits.shl", "bits.rotl"),
    subject=bits.rotl,
    mutants=(Mutant.edit("rotl rotates right", "rotl moves the bits right", bits.rotl,
                         "((x << r) | (x >> (width - r)))", "((x >> r) | (x << (width - r)))"),
             Mutant.edit("shl keeps high bits", "shl drops the mask", bits.shl,
                         "return (x << n) & mask(width)", "return x << n")),
)
def shifts_and_rotations(_subject):
    return [Property("u64 and a shift", _shifts,
                     strategy=lambda: st.tuples(U64, st.integers(0, 63)), examples=300)]


def _z3_agrees(case: tuple[int, int, int]) -> None:
    a, b, r = case
    for fn in (bits.add, bits.sub, bits.mul, bits.mul_hi, wymix):
        assert z3_eval(fn, a, b) == fn(a, b), fn.__name__
    assert z3_eval(lambda x: bits.shr(x, r), a) == bits.shr(a, r)
    assert z3_eval(lambda x: bits.shl(x, r), a) == bits.shl(a, r)
    assert z3_eval(lambda x: bits.rotl(x, r), a) == bits.rotl(a, r)
    assert z3_eval(bits.bnot, a) == bits.bnot(a)
    assert z3_eval(fmix64, a) == fmix64(a)
    assert z3_eval(fnv1a_step, a, b & 0xFF) == fnv1a_step(a, b & 0xFF)


@property_obligation(
    "PO1.72",
    "Every helper (add, sub, mul, mul_hi, shr, shl, rotl, bnot) and the hashes built on them "
    "(wymix, fmix64, the FNV-1a step) give the same value on z3 bit-vectors as on ints.",
    covers=("bits.add", "bits.mul_hi", "bits.shr", "hash.fmix64", "hash.wymix", "hash.fnv1a"),
    subject=bits.shr,
    mutants=(Mutant.edit("arithmetic shift", "shr uses >> on a z3 term, an arithmetic shift",
                         bits.shr, "return z3_module().LShR(x, n)", "return x >> n"),
             Mutant.edit("signed widening", "mul_hi sign-extends the z3 operands", bits.mul_hi,
                         "z3.ZeroExt(width, _as_bv(a, width))", "z3.SignExt(width, _as_bv(a, "
                         "width))")),
)
def z3_reading_agrees(_subject):
    return [Property("two u64 operands and a shift", _z3_agrees,
                     strategy=lambda: st.tuples(U64, U64, st.integers(0, 63)), examples=100)]


def _align_up(case: tuple[int, int]) -> None:
    x, e = case
    k = 1 << e
    r = bits.align_up(x, k)
    assert r % k == 0 and r >= x and r - x < k
    assert z3_eval(bits.align_up, x, k) == r


@property_obligation(
    "PO1.73",
    "align_up(x, 2^e) is the least multiple of 2^e that is >= x, and its z3 reading agrees "
    "(x < 2^40, e < 21).",
    covers=("bits.align_up",),
    subject=bits.align_up,
    mutants=(Mutant.edit("plus k", "(x + k) & ~(k - 1)", bits.align_up,
                         "add(x, sub(k, 1, width), width)", "add(x, k, width)"),),
)
def align_up_is_least_bound(_subject):
    return [Property("x and a power of two", _align_up,
                     strategy=lambda: st.tuples(st.integers(0, 2**40), st.integers(0, 20)),
                     examples=300)]


def _pow2_index(case: tuple[int, int]) -> None:
    h, e = case
    assert bits.pow2_index(h, 1 << e) == h % (1 << e)


@property_obligation(
    "PO1.74",
    "pow2_index(h, 2^e) == h mod 2^e for every u64 h and e < 64.",
    covers=("bits.pow2_index",),
    subject=bits.pow2_index,
    mutants=(Mutant.edit("mask is C", "h & C instead of h & (C - 1)", bits.pow2_index,
                         "h & sub(capacity, 1, width)", "h & capacity"),),
)
def pow2_index_is_modulo(_subject):
    return [Property("u64 and a capacity", _pow2_index,
                     strategy=lambda: st.tuples(U64, st.integers(0, 63)), examples=300)]


def _signed(v: int) -> None:
    assert bits.to_signed(bits.to_unsigned(v, 64), 64) == v
    assert int.from_bytes(bits.le_bytes(v, 8), "little", signed=True) == v


@property_obligation(
    "PO1.75",
    "to_signed(to_unsigned(v, 64), 64) == v and le_bytes(v, 8) reads back as v for every "
    "int64 v.",
    covers=("bits.to_signed", "bits.le_bytes"),
    subject=bits.to_signed,
    mutants=(Mutant.edit("sign bit off by one", "to_signed tests bit `width` instead of "
                         "bit width - 1", bits.to_signed, "x >> (width - 1)", "x >> width"),
             Mutant.edit("bytes as bits", "le_bytes keeps nbytes bits, not 8 * nbytes",
                         bits.le_bytes, "to_unsigned(value, 8 * nbytes)",
                         "to_unsigned(value, nbytes)")),
)
def signed_round_trip(_subject):
    return [Property("int64", _signed, strategy=lambda: st.integers(-(2**63), 2**63 - 1),
                     examples=300)]


DIMS = st.lists(st.integers(0, 50), max_size=8)
DTYPES = st.sampled_from([t for t in ScalarType if t != ScalarType.Undefined])


def _contiguous(case: tuple[list[int], int]) -> None:
    sizes, dtype = case
    strides = [math.prod(sizes[d + 1:]) for d in range(len(sizes))]
    assert compute_storage_nbytes(sizes, strides, dtype) == \
        math.prod(sizes) * ELEMENT_SIZE[dtype]


@property_obligation(
    "PO5.70",
    "A contiguous tensor's storage span is the product of its sizes times the element size.",
    covers=("meta.storage_nbytes",),
    subject=compute_storage_nbytes,
    mutants=(Mutant.edit("span without the last element", "the span is max - min, not "
                         "max - min + 1", compute_storage_nbytes,
                         "(max_offset - min_offset + 1)", "(max_offset - min_offset)"),
             Mutant.edit("extent is size * stride", "a dimension spans size * stride, not "
                         "(size - 1) * stride", compute_storage_nbytes,
                         "extent = (size - 1) * stride", "extent = size * stride")),
)
def contiguous_is_the_product(_subject):
    return [Property("sizes and a dtype", _contiguous, strategy=lambda: st.tuples(DIMS, DTYPES),
                     examples=300)]


def _strides_unordered(case: tuple[list[tuple[int, int]], int, random.Random]) -> None:
    dims_strides, dtype, rnd = case
    sizes = [s for s, _ in dims_strides]
    strides = [d for _, d in dims_strides]
    span = compute_storage_nbytes(sizes, strides, dtype)
    assert compute_storage_nbytes(sizes, [-d for d in strides], dtype) == span
    order = list(range(len(sizes)))
    rnd.shuffle(order)
    assert compute_storage_nbytes([sizes[i] for i in order], [strides[i] for i in order],
                                  dtype) == span
    assert compute_storage_nbytes([*sizes, 7], [*strides, 0], dtype) == span


@property_obligation(
    "PO5.71",
    "The storage span ignores the sign and the order of the strides, and a broadcast "
    "(stride 0) dimension adds nothing.",
    covers=("meta.storage_nbytes",),
    subject=compute_storage_nbytes,
    mutants=(Mutant.edit("negative strides ignored", "negative extents do not lower the "
                         "minimum offset", compute_storage_nbytes, "min_offset += extent",
                         "min_offset += 0"),),
)
def strides_sign_and_order(_subject):
    return [Property("sizes >= 1, signed strides, a shuffle", _strides_unordered,
                     strategy=lambda: st.tuples(
                         st.lists(st.tuples(st.integers(1, 50), st.integers(-100, 100)),
                                  max_size=8), DTYPES, st.randoms()),
                     examples=300)]


def _zero_size(case: tuple[list[int], int]) -> None:
    sizes, dtype = case
    assert compute_storage_nbytes(sizes, [1] * len(sizes), dtype) == 0


@property_obligation(
    "PO5.72",
    "A tensor with a zero size anywhere has no storage span.",
    covers=("meta.storage_nbytes",),
    subject=compute_storage_nbytes,
    mutants=(Mutant.edit("zero size skipped", "a zero-size dimension is skipped, not an "
                         "empty view", compute_storage_nbytes,
                         "if size == 0:\n            return 0",
                         "if size == 0:\n            continue"),),
)
def zero_size_means_no_storage(_subject):
    return [Property("sizes with a zero and a dtype", _zero_size,
                     strategy=lambda: st.tuples(DIMS.filter(lambda s: 0 in s), DTYPES),
                     examples=200)]
