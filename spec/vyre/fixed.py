"""Chapter 12: vyre's 16.16 fixed-point multiply, unsigned (0.6.3) and signed (0.6.5).

A 16.16 lane is a u32; read signed, it is a two's-complement i32 of value v / 2^16.

1. The defining rule: fmul(x, y) = floor(x * y / 2^16) mod 2^32, with x and y read as unsigned
   (0.6.3) or as signed i32 (0.6.5; the floor rounds toward minus infinity).
2. vyre's construction from 32-bit words: low = x * y mod 2^32, high = the high word of the
   unsigned 64-bit product (mulhi); the signed version subtracts the sign corrections
   (x < 0 ? y : 0) and (y < 0 ? x : 0) from high, each a mask `0 - (v >> 31)` ANDed with the
   other operand; the result is (low >> 16) | (high << 16) mod 2^32.
3. The two versions differ exactly when the shifted corrections ((x < 0 ? y : 0) +
   (y < 0 ? x : 0)) * 2^16 are not 0 mod 2^32 (PO12.302): a difference needs one negative
   operand and the other with non-zero low 16 bits, yet two negative operands whose low halves
   add to 2^16 agree (-0.5 x -0.5 is 0x4000 in both, as vyre 0.6.3 and 0.6.5 answer); below
   2^31 both operands are non-negative and the versions agree bit for bit.

Every rule is written once for Python ints and z3 bit-vectors (spec/core/bits.py), so the proofs
call
these very functions on symbols.
"""

from __future__ import annotations

from typing import Any

from ..core.bits import BitVal, is_symbolic, mask, mul, mul_hi, shl, shr, sub, to_signed, z3_module

FRAC_BITS = 16
"""Fraction bits of a 16.16 lane."""
FIXED_ONE = 1 << FRAC_BITS
"""1.0 in 16.16. Real code: tensor_train_chain_fusion.rs, FIXED_ONE."""
U32_MAX = mask(32)


def fmul_exact(x: Any, y: Any, signed: bool) -> Any:
    """Step 1: floor(x * y / 2^16) mod 2^32, operands read unsigned or signed. Also runs on
    z3 integers in [0, 2^32) (the arithmetic reading of the same rule)."""
    if not is_symbolic(x) and not is_symbolic(y):
        if signed:
            x, y = to_signed(x, 32), to_signed(y, 32)
        return ((x * y) >> FRAC_BITS) & U32_MAX
    z3 = z3_module()
    if z3.is_bv(x):
        ext = z3.SignExt if signed else z3.ZeroExt
        return z3.Extract(47, 16, ext(32, x) * ext(32, y))
    if signed:
        x, y = (z3.If(v >= 1 << 31, v - (1 << 32), v) for v in (x, y))
    return (x * y / FIXED_ONE) % (1 << 32)  # z3's integer / floors for a positive divisor


def sign_mask(x: BitVal) -> BitVal:
    """All ones when x's sign bit is set, else 0: 0 - (x >> 31) mod 2^32."""
    return sub(0, shr(x, 31), 32)


def fmul_words(x: BitVal, y: BitVal, signed: bool) -> BitVal:
    """Step 2: vyre's (low >> 16) | (high << 16), high signed-corrected when `signed`."""
    low = mul(x, y, 32)
    high = mul_hi(x, y, 32)
    if signed:
        high = sub(sub(high, sign_mask(x) & y, 32), sign_mask(y) & x, 32)
    return shr(low, FRAC_BITS) | shl(high, FRAC_BITS, 32)
