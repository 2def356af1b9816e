"""Chapter 17 ops: the Philox block, the 64-bit convenience form, the per-op key, the float
conversions and Box-Muller, with erratum E17.1 (to_uniform reaches 1.0)."""

from __future__ import annotations

from ..core.errata import erratum
from ..core.registry import InvalidCase, declare
from ..core.schema import BITS32, HASH64, U32, Array, Field, record
from ..core.strategies import st
from .philox import (
    CLAMP_FROM,
    E17_1,
    F32_BELOW_ONE_BITS,
    F32_ONE_BITS,
    box_muller,
    f32_bits,
    f64_bits,
    generate,
    op_key,
    philox_block,
    to_uniform_f32,
    to_uniform_f64,
)

BOX_MULLER_ENVELOPE = "ulp:f32=4"
"""Box-Muller results may differ from the reference by up to 4 float32 units in the last
place (ordered-integer distance; +0 and -0 are 0 apart). The reference rounds each step's
float64 value to float32. Measured over 2·10^7 input pairs (random, plus every a in the top
and bottom 2^16 and a sweep of b around a quarter turn): the seed's float32 path on glibc
2.36 (logf, sqrtf, cosf, sinf) is within 3 ulps of the reference (98.5% bit-identical, every
golden value identical) and within 2 ulps of the whole formula computed in float64 and
rounded once; the kernels' float64 paths (numba, numpy, CUDA) agree with the reference."""

U32_MAX = 0xFFFFFFFF
"""The largest u32: the range of a Philox word."""
WORD_EDGES = (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFF7F, CLAMP_FROM, 0xFFFFFFFE, U32_MAX)


def _hex32(x: int) -> str:
    return f"0x{x:08x}"


def _hex64(x: int) -> str:
    return f"0x{x:016x}"


def words(rng, n: int, k: int) -> list[list[int]]:
    """n rows of k uniform u32 words (bench inputs)."""
    return rng.integers(0, U32_MAX, size=(n, k), dtype="u4", endpoint=True).tolist()


def u32s() -> st.SearchStrategy:
    """u32 words, often from the top 256 (where float32 rounds up to 2^32) and the edges."""
    return st.integers(0, U32_MAX) | st.integers(0xFFFFFF00, U32_MAX) | st.sampled_from(
        WORD_EDGES)


# ── philox.block ──────────────────────────────────────────────────────────────────────────────

declare(
    "philox.block", chapter=17,
    summary="Philox4x32-10 generate(ctr, key): 10 rounds, the output is the final counter.",
    args=record(ctr=Field(Array(BITS32, 4), "counter words c0..c3"),
                key=Field(Array(BITS32, 2), "key words k0, k1")),
    result=record(out=Array(BITS32, 4)), spec=(philox_block,),
    obligations=("PO17.1", "PO17.2", "PO17.3"),
    domain=lambda: st.fixed_dictionaries({"ctr": st.lists(u32s(), min_size=4, max_size=4),
                                          "key": st.lists(u32s(), min_size=2, max_size=2)}),
    invalid=(
        InvalidCase("a counter of three words",
                    lambda: st.just({"ctr": ["0x0"] * 3, "key": ["0x0"] * 2}), "bad_request"),
        InvalidCase("a key word wider than 32 bits",
                    lambda: st.just({"ctr": ["0x0"] * 4, "key": ["0x100000000", "0x0"]})),
    ),
    edges=lambda: [{"ctr": [_hex32(c)] * 4, "key": [_hex32(c)] * 2} for c in (0, U32_MAX)] + [
        {"ctr": [_hex32(c) for c in (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)],
         "key": ["0xa4093822", "0x299f31d0"]},
        {"ctr": ["0x1", "0x0", "0x0", "0x0"], "key": ["0x0", "0x0"]},
        {"ctr": ["0x0"] * 4, "key": ["0x1", "0x0"]},
        {"ctr": ["0xf3", "0x0", "0x0", "0x0"], "key": ["0x11", "0x0"]}],
    bench=lambda n, rng: [{"ctr": c, "key": k}
                          for c, k in zip(words(rng, n, 4), words(rng, n, 2), strict=True)],
)

# ── philox.offset ─────────────────────────────────────────────────────────────────────────────


def _offset_bench(n: int, rng) -> list[dict]:
    """One key, consecutive element offsets: how a tensor's elements draw their words."""
    start = int(rng.integers(0, 2**63))
    key = int(rng.integers(0, 2**64 - 1, dtype="u8", endpoint=True))
    return [{"offset": start + i, "key": key} for i in range(n)]


declare(
    "philox.offset", chapter=17,
    summary="generate(offset u64, key u64): the block of ctr [lo, hi, 0, 0], key [lo, hi].",
    args=record(offset=Field(HASH64, "element offset (counter words 0 and 1)"),
                key=Field(HASH64, "the key (usually philox.op_key)")),
    result=record(out=Array(BITS32, 4)), spec=(generate,), obligations=("PO17.2",),
    invalid=(
        InvalidCase("an offset wider than 64 bits",
                    lambda: st.just({"offset": "0x10000000000000000", "key": "0x0"})),
    ),
    edges=lambda: [{"offset": _hex64(o), "key": _hex64(k)} for o, k in (
        (0, 0), (0, 1), (0xFF, 0xDEADBEEFCAFEBABE), (2**64 - 1, 2**64 - 1),
        (0x0123456789ABCDEF, 0xFEDCBA9876543210), (2**32, 0), (2**32 - 1, 2**32))],
    bench=_offset_bench,
)

# ── philox.op_key ─────────────────────────────────────────────────────────────────────────────

declare(
    "philox.op_key", chapter=17,
    summary="The per-op key: FNV-1a 64 of master counter, op index (as u64), content hash.",
    args=record(master_counter=Field(HASH64, "iteration master counter"),
                op_index=Field(U32, "the op's index in its region"),
                content_hash=Field(HASH64, "the region's content hash")),
    result=record(out=HASH64), spec=(op_key,),
    invalid=(
        InvalidCase("an op index wider than 32 bits", lambda: st.just(
            {"master_counter": "0x0", "op_index": 2**32, "content_hash": "0x0"})),
    ),
    edges=lambda: [{"master_counter": _hex64(m), "op_index": i, "content_hash": _hex64(c)}
                   for m, i, c in ((0, 0, 0), (42, 7, 0x1234), (2**64 - 1, U32_MAX, 2**64 - 1),
                                   (0, 1, 0), (1, 0, 0))],
    bench=lambda n, rng: [{"master_counter": int(m), "op_index": int(i), "content_hash": int(c)}
                          for m, i, c in zip(rng.integers(0, 2**40, size=n),
                                             rng.integers(0, 2**16, size=n),
                                             rng.integers(0, 2**63, size=n), strict=True)],
)

# ── philox.to_uniform ─────────────────────────────────────────────────────────────────────────

erratum(
    E17_1, "to_uniform returns 1.0, outside its documented [0, 1)",
    seed="crucible@8d2680a2", location="include/crucible/Philox.h to_uniform",
    ops=("philox.to_uniform",),
    witness={"args": {"x": "0xffffffff"},
             "spec": {"f32_bits": _hex32(F32_BELOW_ONE_BITS)},
             "seed": {"f32_bits": _hex32(F32_ONE_BITS)}},
    flag="result",
    detail="float32(x) rounds to nearest, so the 128 words x >= 0xFFFFFF80 become 2^32 and "
           "x · 2^-32 is exactly 1.0 (PO17.6 proves the threshold), while the code documents "
           "[0, 1) and its own test asserts u < 1. The spec gives those words 1 - 2^-24 "
           "(0x3F7FFFFF), the largest float32 below 1: it is what rounding toward zero gives "
           "for exactly those words, the value of the words just below the threshold (so the "
           "map stays monotone), and every other word keeps the seed's result bit for bit, "
           "so existing streams and golden values are unchanged. A multiplier below 2^-32 "
           "would change every output; a redraw would break the one-word-one-value contract. "
           "to_uniform_d is exact and never reaches 1.0 (PO17.4).",
)


def to_uniform_op(x: int, errata: frozenset[str]) -> dict:
    return {"f32_bits": f32_bits(to_uniform_f32(x, errata)),
            "f64_bits": f64_bits(to_uniform_f64(x))}


declare(
    "philox.to_uniform", chapter=17,
    summary="to_uniform(x) in float32 and to_uniform_d(x) in float64, as bit patterns.",
    args=record(x=Field(BITS32, "a Philox output word")),
    result=record(f32_bits=Field(BITS32, "float32 in [0, 1)"),
                  f64_bits=Field(HASH64, "float64 x / 2^32, in [0, 1)")),
    spec=(to_uniform_f32, to_uniform_f64), errata=(E17_1,),
    obligations=("PO17.4", "PO17.5", "PO17.6"),
    domain=lambda: u32s().map(lambda x: {"x": x}),
    invalid=(InvalidCase("a word wider than 32 bits", lambda: st.just({"x": "0x100000000"})),
             InvalidCase("a float instead of a word", lambda: st.just({"x": 0.5}),
                         "bad_request")),
    edges=lambda: [{"x": _hex32(x)} for x in (*WORD_EDGES, 0x100, 0xFFFFFF40, 0xFFFFFF81)],
    bench=lambda n, rng: [{"x": x[0]} for x in words(rng, n, 1)],
)

# ── philox.box_muller ─────────────────────────────────────────────────────────────────────────


def box_muller_op(a: int, b: int) -> dict:
    n0, n1 = box_muller(a, b)
    return {"n0_bits": f32_bits(n0), "n1_bits": f32_bits(n1)}


declare(
    "philox.box_muller", chapter=17,
    summary="box_muller(a, b): two N(0, 1) float32 values (r cos theta, r sin theta) as bits. "
            "Compared within 4 float32 ulps of the reference (libm-dependent).",
    args=record(a=Field(BITS32, "word for u1 (the radius)"),
                b=Field(BITS32, "word for u2 (the angle)")),
    result=record(n0_bits=Field(BITS32, "float32 r·cos(theta)"),
                  n1_bits=Field(BITS32, "float32 r·sin(theta)")),
    spec=(box_muller,), compare=BOX_MULLER_ENVELOPE,
    domain=lambda: st.fixed_dictionaries({"a": u32s(), "b": u32s()}),
    invalid=(InvalidCase("a word wider than 32 bits",
                         lambda: st.just({"a": "0x100000000", "b": "0x0"})),),
    edges=lambda: [{"a": _hex32(a), "b": _hex32(b)} for a, b in (
        (0, 0), (0x80000000, 0x40000000), (U32_MAX, U32_MAX), (0xFFFFFF7F, 0),
        (CLAMP_FROM, 0x3FFFFFFF), (1, U32_MAX), (0x6627E8D5, 0xE169C58D), (0, 0xBFFFFFFF))],
    bench=lambda n, rng: [{"a": a, "b": b} for a, b in words(rng, n, 2)],
    proof_note="its log, sqrt, cos and sin come from libm, whose float32 results the spec does "
               "not pin; it is compared within an envelope, not proved bit for bit",
)
