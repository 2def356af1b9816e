"""Chapter 8: hash primitives. All arithmetic is modulo 2^64.

fmix64 is MurmurHash3's 64-bit finalizer; wymix is the 'mum' step of wyhash (the 128-bit
product folded by XOR); FNV-1a 64 hashes byte strings. PHI (2^64 / golden ratio) seeds every
content-hash chain, and kDimMix[i] = (i + 1) * PHI weighs dimension i of sizes and strides.
"""

from __future__ import annotations

from ..core.bits import BitVal, mul, mul_hi, shr
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BYTES, HASH64, U8, Field, record
from ..core.strategies import st

PHI = 0x9E3779B97F4A7C15
"""2^64 / golden ratio: the seed of every content-hash chain. Real code: `Expr.h` /
`MerkleDag.h`."""
FMIX64_C1 = 0xFF51AFD7ED558CCD
"""fmix64's first multiplier. Real code: `Expr.h`, `detail::fmix64`."""
FMIX64_C2 = 0xC4CEB9FE1A85EC53
"""fmix64's second multiplier. Real code: `Expr.h`, `detail::fmix64`."""
FMIX64_SHIFT = 33
"""fmix64's xor-shift. Real code: `Expr.h`, `detail::fmix64`."""
FNV_OFFSET = 0xCBF29CE484222325
"""FNV-1a 64's offset basis. Real code: the Vessel's schema
and shape hashes (`crucible_fallback.cpp`)."""
FNV_PRIME = 0x100000001B3
"""FNV-1a 64's prime. Real code: the Vessel's schema
and shape hashes (`crucible_fallback.cpp`)."""
KDIMMIX_COUNT = 16
"""Entries 0..7 weigh sizes[d], entries 8..15 weigh strides[d]. Real code: `Expr.h`,
`kDimMix[16]`."""


def xorshift_right(k: BitVal, s: int) -> BitVal:
    """k ^ (k >> s)."""
    return k ^ shr(k, s)


def fmix64(k: BitVal) -> BitVal:
    """MurmurHash3 fmix64: three xor-shifts by 33 around two odd multiplications."""
    k = xorshift_right(k, FMIX64_SHIFT)  # 1
    k = mul(k, FMIX64_C1)  # 2
    k = xorshift_right(k, FMIX64_SHIFT)  # 3
    k = mul(k, FMIX64_C2)  # 4
    return xorshift_right(k, FMIX64_SHIFT)  # 5


FMIX64_STAGES = (
    ("xorshift", FMIX64_SHIFT),
    ("multiply", FMIX64_C1),
    ("xorshift", FMIX64_SHIFT),
    ("multiply", FMIX64_C2),
    ("xorshift", FMIX64_SHIFT),
)
"""fmix64 as a pipeline of the five steps above (the bijection proof goes stage by stage)."""


def apply_stage(stage: tuple[str, int], k: BitVal) -> BitVal:
    """One stage of FMIX64_STAGES."""
    kind, c = stage
    return xorshift_right(k, c) if kind == "xorshift" else mul(k, c)


def wymix(a: BitVal, b: BitVal) -> BitVal:
    """lo64(a * b) XOR hi64(a * b) of the full 128-bit product. Note wymix(x, 0) = 0."""
    return mul(a, b) ^ mul_hi(a, b)


def kdimmix(i: int) -> int:
    """kDimMix[i] = (i + 1) * PHI mod 2^64, for i in 0..15."""
    return mul(i + 1, PHI)


KDIMMIX = tuple(kdimmix(i) for i in range(KDIMMIX_COUNT))


def fnv1a_step(h: BitVal, byte: BitVal) -> BitVal:
    """One FNV-1a step: h ^= byte, then h *= FNV_PRIME."""
    return mul(h ^ byte, FNV_PRIME)


def fnv1a(data: bytes, h: int = FNV_OFFSET) -> int:
    """FNV-1a 64 of `data`, continuing from state `h` (the offset basis by default)."""
    for byte in data:
        h = fnv1a_step(h, byte)
    return h


def check_kdimmix_index(index: int) -> None:
    """kDimMix has 16 entries."""
    if index >= KDIMMIX_COUNT:
        raise InvalidInput(f"args.index: kDimMix has {KDIMMIX_COUNT} entries, got {index}")


def random_words(n: int, rng) -> list[int]:
    """n uniform 64-bit words (bench inputs)."""
    return [int(v) for v in rng.integers(0, 2**64 - 1, size=n, dtype="u8", endpoint=True)]


declare(
    "hash.fmix64", chapter=8, summary="MurmurHash3 64-bit finalizer fmix64(x).",
    args=record(x=Field(HASH64, "input word")), result=record(out=HASH64), spec=(fmix64,),
    bench=lambda n, rng: [{"x": x} for x in random_words(n, rng)],
    edges=lambda: [{"x": hex(x)} for x in (0, 1, 2**63, 2**64 - 1, PHI, FMIX64_C1)],
)

declare(
    "hash.wymix", chapter=8,
    summary="wymix(a, b): low and high halves of the 128-bit product, XORed.",
    args=record(a=HASH64, b=HASH64), result=record(out=HASH64), spec=(wymix,),
    edges=lambda: [{"a": hex(a), "b": hex(b)} for a, b in
                   ((0, 0), (2**64 - 1, 2**64 - 1), (PHI, 0), (0, PHI), (1, 1), (2**63, 2))],
    bench=lambda n, rng: [{"a": a, "b": b}
                          for a, b in zip(random_words(n, rng), random_words(n, rng), strict=True)],
)

declare(
    "hash.fnv1a", chapter=8, summary="FNV-1a 64 of a byte string.",
    args=record(data=Field(BYTES, "bytes to hash")), result=record(out=HASH64), spec=(fnv1a,),
    domain=lambda: st.fixed_dictionaries({"data": st.binary(max_size=300)}),
    invalid=(
        InvalidCase("data that is not hex", lambda: st.just({"data": "zz"}), "bad_request"),
    ),
    bench=lambda n, rng: [{"data": rng.bytes(64)} for _ in range(n)],
    edges=lambda: [{"data": d} for d in ("", "00", "ff", bytes(range(256)).hex(),
                                         "0x" + "ab" * 3, "DEADBEEF")],
)

declare(
    "hash.kdimmix", chapter=8, summary="kDimMix[index] = (index + 1) * PHI mod 2^64.",
    args=record(index=Field(U8, "0..15")), result=record(out=HASH64), spec=(kdimmix,),
    domain=lambda: st.fixed_dictionaries({"index": st.integers(0, KDIMMIX_COUNT - 1)}),
    check=lambda a: check_kdimmix_index(a["index"]),
    check_columns=lambda c: bool((c["index"] < KDIMMIX_COUNT).all()),
    invalid=(InvalidCase("an index past 15",
                         lambda: st.fixed_dictionaries({"index": st.integers(16, 255)})),),
    bench=lambda n, rng: [{"index": int(i)} for i in rng.integers(0, KDIMMIX_COUNT, size=n)],
    edges=lambda: [{"index": i} for i in range(KDIMMIX_COUNT)],
)
