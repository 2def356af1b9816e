"""Chapter 1: fixed-width bit operations, written once for Python ints and z3 bit-vectors.

Every bit-level spec function (fmix64, wymix, FNV-1a, Philox, alignment, masks) is written
against these helpers, so a proof obligation can call the very same function on z3 symbols.
A Python int is an unsigned value of the stated width; a z3 value carries its own width.
"""

from __future__ import annotations

from typing import Any

BitVal = Any  # an int in [0, 2**width) or a z3 BitVecRef of that width


def mask(width: int) -> int:
    """All-ones value of `width` bits: 2**width - 1."""
    return (1 << width) - 1


def is_symbolic(x: BitVal) -> bool:
    """True for a z3 term, False for a concrete Python int."""
    return not isinstance(x, int)


def z3_module():
    """The z3 module, imported on first symbolic use."""
    import z3

    return z3


def trunc(x: BitVal, width: int) -> BitVal:
    """Keep the low `width` bits (C cast to a narrower unsigned type)."""
    if not is_symbolic(x):
        return x & mask(width)
    if x.size() == width:
        return x
    return z3_module().Extract(width - 1, 0, x)


def zext(x: BitVal, width: int) -> BitVal:
    """Zero-extend to `width` bits (C cast to a wider unsigned type)."""
    if not is_symbolic(x):
        return x
    return z3_module().ZeroExt(width - x.size(), x) if x.size() < width else x


def add(a: BitVal, b: BitVal, width: int = 64) -> BitVal:
    """a + b mod 2**width."""
    if is_symbolic(a) or is_symbolic(b):
        return a + b
    return (a + b) & mask(width)


def sub(a: BitVal, b: BitVal, width: int = 64) -> BitVal:
    """a - b mod 2**width."""
    if is_symbolic(a) or is_symbolic(b):
        return a - b
    return (a - b) & mask(width)


def mul(a: BitVal, b: BitVal, width: int = 64) -> BitVal:
    """Low `width` bits of a * b (C unsigned multiply)."""
    if is_symbolic(a) or is_symbolic(b):
        return a * b
    return (a * b) & mask(width)


def mul_hi(a: BitVal, b: BitVal, width: int = 64) -> BitVal:
    """High `width` bits of the full 2*width-bit product a * b."""
    if is_symbolic(a) or is_symbolic(b):
        z3 = z3_module()
        wide = z3.ZeroExt(width, _as_bv(a, width)) * z3.ZeroExt(width, _as_bv(b, width))
        return z3.Extract(2 * width - 1, width, wide)
    return (a * b) >> width


def shr(x: BitVal, n: int) -> BitVal:
    """Logical shift right."""
    if is_symbolic(x):
        return z3_module().LShR(x, n)
    return x >> n


def shl(x: BitVal, n: int, width: int = 64) -> BitVal:
    """Shift left, dropping bits above `width`."""
    if is_symbolic(x):
        return x << n
    return (x << n) & mask(width)


def rotl(x: BitVal, r: int, width: int = 64) -> BitVal:
    """Rotate left by r bits."""
    if is_symbolic(x):
        return z3_module().RotateLeft(x, r)
    r %= width
    return ((x << r) | (x >> (width - r))) & mask(width)


def bnot(x: BitVal, width: int = 64) -> BitVal:
    """Bitwise complement within `width` bits."""
    if is_symbolic(x):
        return ~x
    return x ^ mask(width)


def ule(a: BitVal, b: BitVal) -> Any:
    """Unsigned a <= b."""
    if is_symbolic(a) or is_symbolic(b):
        return z3_module().ULE(a, b)
    return a <= b


def umin(a: BitVal, b: BitVal) -> BitVal:
    """Unsigned minimum."""
    if is_symbolic(a) or is_symbolic(b):
        return z3_module().If(z3_module().ULE(a, b), a, b)
    return min(a, b)


def select(cond: Any, a: BitVal, b: BitVal) -> BitVal:
    """a if cond else b."""
    if not isinstance(cond, bool):
        return z3_module().If(cond, a, b)
    return a if cond else b


def to_signed(x: int, width: int) -> int:
    """Two's-complement reading of a concrete `width`-bit pattern."""
    return x - (1 << width) if x >> (width - 1) else x


def to_unsigned(x: int, width: int) -> int:
    """The `width`-bit pattern of a (possibly negative) concrete integer."""
    return x & mask(width)


def is_pow2(x: BitVal) -> Any:
    """x is a non-zero power of two: x != 0 and x & (x - 1) == 0."""
    if is_symbolic(x):
        return z3_module().And(x != 0, x & (x - 1) == 0)
    return x != 0 and x & (x - 1) == 0


def align_up(x: BitVal, k: BitVal, width: int = 64) -> BitVal:
    """Smallest multiple of the power of two k that is >= x: (x + k - 1) & ~(k - 1)."""
    return add(x, sub(k, 1, width), width) & bnot(sub(k, 1, width), width)


def pow2_index(h: BitVal, capacity: BitVal, width: int = 64) -> BitVal:
    """Ring slot of absolute index h for a power-of-two capacity: h & (capacity - 1)."""
    return h & sub(capacity, 1, width)


def le_bytes(value: int, nbytes: int) -> bytes:
    """Little-endian bytes of a concrete value (two's complement for negatives)."""
    return to_unsigned(value, 8 * nbytes).to_bytes(nbytes, "little")


def _as_bv(x: BitVal, width: int) -> Any:
    return z3_module().BitVecVal(x, width) if not is_symbolic(x) else x
