"""Chapter 8 obligations about the hash primitives, on the spec's own functions.

Bijectivity (PO8.1, PO8.2) survives any change of a shift amount or an odd constant, so the
functions are also pinned: against the published formulas with their literal constants, for
every input (PO8.60-PO8.62), and against known answers of the real code (PO8.60-PO8.63),
evaluated both on Python ints and on z3 bit-vectors where the function takes either. Every
mutant is a bug planted in the spec's own source."""

from __future__ import annotations

from functools import reduce

import z3

from ...spec.core.registry import Mutant
from ...spec.crucible.hashing import (
    FMIX64_STAGES,
    apply_stage,
    fmix64,
    fnv1a,
    fnv1a_step,
    wymix,
    xorshift_right,
)
from ...spec.crucible.vessel import schema_hash, scope_hash, shape_hash
from ..core.obligation import Property, Query, property_obligation, z3_obligation

FMIX64_KNOWN = (
    (0x0, 0x0), (0x2, 0x3ABF2A20650683E7), (0x2A, 0x810879608E4259CC),
    (0x100000000, 0xBA3A9E160A5F1419), (0x8000000000000000, 0x8F780810AF31A493),
    (0x9E3779B97F4A7C15, 0x9CA066F1A4AB2EEA), (0xFFFFFFFF, 0xCC71ECDA2AA8BCC6),
    (0x1, 0xB456BCFC34C2CB2C), (0xFFFFFFFFFFFFFFFF, 0x64B5720B4B825F21),
)
"""fmix64(in) = out in the real code (golden values of crucible 8d2680a2 and the facts)."""

WYMIX_KNOWN = (
    (0x0, 0x0, 0x0), (0x9E3779B97F4A7C15, 0x0, 0x0), (0x2, 0x3, 0x6),
    (0x0123456789ABCDEF, 0xFEDCBA9876543210, 0x2317228F48165BB2),
    (0x9E3779B97F4A7C15, 0xAA, 0x10D6D52E8776659B), (0x8000000000000000, 0x2, 0x1),
    (0x9E3779B97F4A7C15, 0xAABB, 0x695B190771CEFCD3),
)
"""wymix(a, b) = out in the real code."""

FNV1A_KNOWN = (
    ("", 0xCBF29CE484222325), ("aten::mm", 0x983B9200D566222D),
    ("aten::addmm.default", 0xCC8046F8D5082FAB), ("aten::_softmax.default", 0xB2BCDF0989AAC8E1),
    ("aten::convolution.default", 0x31259F72E10A0420),
    ("encoder.block.11.mlp", 0x4C45CD9848496435),
    ("NativeLayerNormBackward0", 0xD29C44D92F0AE02C), ("aten::add.Tensor", 0x46A35DEF8D03FCF9),
)
"""crucible_hash_string(s) = FNV-1a 64 of s's bytes = out in the real code."""

SCOPE_KNOWN = (("layer1.0.conv1", 0xF930B143D7FB62D8), ("<root>", 0x426B43668313948B),
               (None, 0x0))
"""ScopeHash of a module path as the native Vessel records it (null: no scope)."""

SHAPE_KNOWN = (
    ([], 0xCBF29CE484222325), ([[5]], 0xF5A9D7C16F275549),
    ([[4, 8], [8, 16]], 0xFF6CA9F273164C69),
    ([[2, 3, 224, 224], [64, 3, 7, 7], [64]], 0x8952ABD841484940),
    ([[-1, 3]], 0xFD860ED0DE7FC61E), ([[32000, 4096]], 0xA6803C1D5808A6E6),
    ([[3], []], 0x0B6CE6E15B77AF7D), ([[4, 8], [8]], 0xE20511E2DC998510),
    ([[]], 0xAF63BD4C8601B7DF),
)
"""ShapeHash of input shapes (crucible_hash_shapes; one 0-d input is the native recorder's
fnv1a(0x00), which the C API misses: erratum E8.1)."""

# --- bugs planted in the spec's own hash functions ------------------------------------------

SHIFT_31 = Mutant.edit("third shift 31", "fmix64's third xor-shift is by 31, not 33", fmix64,
                       "k = xorshift_right(k, FMIX64_SHIFT)  # 3",
                       "k = xorshift_right(k, 31)  # 3")
SWAPPED_MULTIPLIERS = Mutant.edit(
    "multipliers swapped", "fmix64 multiplies by c2 first, then c1", fmix64,
    "k = mul(k, FMIX64_C1)  # 2\n    k = xorshift_right(k, FMIX64_SHIFT)  # 3\n"
    "    k = mul(k, FMIX64_C2)  # 4",
    "k = mul(k, FMIX64_C2)  # 2\n    k = xorshift_right(k, FMIX64_SHIFT)  # 3\n"
    "    k = mul(k, FMIX64_C1)  # 4")
SHIFT_OFF_BY_ONE = Mutant.edit("xor-shift by s + 1", "every xor-shift is one bit too far",
                               xorshift_right, "shr(k, s)", "shr(k, s + 1)")
SHIFT_ONLY = Mutant.edit("shift without xor", "the xor-shift drops the xor: k >> s",
                         xorshift_right, "k ^ shr(k, s)", "shr(k, s)")
FNV1_ORDER = Mutant.edit("FNV-1 order", "the step multiplies first, then xors (FNV-1)",
                         fnv1a_step, "mul(h ^ byte, FNV_PRIME)", "mul(h, FNV_PRIME) ^ byte")
FNV_OR = Mutant.edit("or for xor", "the step ors the byte in: (h | b) * prime", fnv1a_step,
                     "h ^ byte", "h | byte")


def _compose(stages, k):
    return reduce(lambda acc, st: apply_stage(st, acc), stages, k)


@z3_obligation(
    "PO8.1",
    "fmix64 is a bijection on 64-bit words: it is the composition of its five stages and "
    "every stage (xor-shift by 33, multiply by an odd constant) is injective.",
    covers=("hash.fmix64",),
    subject=(fmix64, FMIX64_STAGES),
    mutants=(SHIFT_31, SHIFT_ONLY),
)
def fmix64_bijective(subject):
    f, stages = subject
    x, y = z3.BitVecs("x y", 64)
    queries = [Query("fmix64 == composition of stages", f(x) != _compose(stages, x))]
    for i, st in enumerate(stages):
        queries.append(Query(f"stage {i + 1} ({st[0]}) injective",
                             z3.And(x != y, apply_stage(st, x) == apply_stage(st, y))))
    return queries


@z3_obligation(
    "PO8.2",
    "For every fixed byte b, the FNV-1a step h -> (h ^ b) * FNV_PRIME is injective on the "
    "64-bit state, so an FNV-1a chain never merges two states on the same input.",
    covers=("hash.fnv1a", "hash.schema", "hash.shape", "hash.scope"),
    subject=fnv1a_step,
    mutants=(FNV_OR,),
)
def fnv1a_step_injective(step):
    h1, h2 = z3.BitVecs("h1 h2", 64)
    b = z3.ZeroExt(56, z3.BitVec("b", 8))
    return [Query("step(h1, b) == step(h2, b) -> h1 == h2",
                  z3.And(h1 != h2, step(h1, b) == step(h2, b)))]


@z3_obligation(
    "PO8.3",
    "wymix(a, 0) == 0 for every a: a zero operand erases the whole chain before it, which is "
    "why a zero schema hash or packed meta wipes a content hash's history.",
    covers=("hash.wymix",),
    subject=wymix,
    mutants=(Mutant.edit("no __int128 fallback", "fmix64(a ^ b), the build without 128-bit "
                         "products", wymix, "mul(a, b) ^ mul_hi(a, b)", "fmix64(a ^ b)"),),
)
def wymix_zero_absorbs(f):
    a = z3.BitVec("a", 64)
    return [Query("wymix(a, 0) == 0", f(a, z3.BitVecVal(0, 64)) != 0)]


def _bv(v: int) -> z3.BitVecRef:
    return z3.BitVecVal(v, 64)


def known(label: str, on_ints: bool, on_bit_vectors) -> Query:
    """A known answer, refuted when either evaluation (ints, bit-vectors) misses it."""
    return Query(label, z3.Or(z3.BoolVal(not on_ints), z3.Not(on_bit_vectors)))


FORMULA_RLIMIT = 200_000
"""The spec's formula is the published one term for term, so z3 proves the equality in a few
hundred units; a planted bug makes it search for a counterexample, which the known answers
give at once, so that search is cut short."""


def published_fmix64(x: z3.BitVecRef) -> z3.BitVecRef:
    """MurmurHash3's fmix64 as published: xor-shift 33, multiply, xor-shift, multiply,
    xor-shift, with its two constants."""
    x = x ^ z3.LShR(x, 33)
    x = x * 0xFF51AFD7ED558CCD
    x = x ^ z3.LShR(x, 33)
    x = x * 0xC4CEB9FE1A85EC53
    return x ^ z3.LShR(x, 33)


@z3_obligation(
    "PO8.60",
    "fmix64 is MurmurHash3's finalizer: it equals the published formula (xor-shifts by 33 "
    "around the multiplications by 0xff51afd7ed558ccd then 0xc4ceb9fe1a85ec53) for every "
    "64-bit word, and gives the real code's answers on 9 known inputs, on ints and on "
    "bit-vectors.",
    covers=("hash.fmix64",),
    subject=fmix64,
    mutants=(SHIFT_31, SWAPPED_MULTIPLIERS, SHIFT_OFF_BY_ONE),
)
def fmix64_pinned(f):
    x = z3.BitVec("x", 64)
    queries = [Query("fmix64 == published formula", f(x) != published_fmix64(x),
                     rlimit=FORMULA_RLIMIT)]
    for v, out in FMIX64_KNOWN:
        queries.append(known(f"fmix64({v:#x}) = {out:#x}", f(v) == out, f(_bv(v)) == out))
    return queries


@z3_obligation(
    "PO8.61",
    "wymix(a, b) is the low 64 bits XOR the high 64 bits of the 128-bit product, for every a "
    "and b, and gives the real code's answers on 7 known pairs, on ints and on bit-vectors.",
    covers=("hash.wymix",),
    subject=wymix,
    mutants=(Mutant.edit("add for xor", "the halves are added, not xored", wymix,
                         "mul(a, b) ^ mul_hi(a, b)", "mul(a, b) + mul_hi(a, b)"),
             Mutant.edit("low half only", "the high half of the product is dropped", wymix,
                         "mul(a, b) ^ mul_hi(a, b)", "mul(a, b)")),
)
def wymix_pinned(f):
    a, b = z3.BitVecs("a b", 64)
    wide = z3.ZeroExt(64, a) * z3.ZeroExt(64, b)
    lo_xor_hi = z3.Extract(63, 0, wide) ^ z3.Extract(127, 64, wide)
    queries = [Query("wymix == lo64 ^ hi64 of the 128-bit product", f(a, b) != lo_xor_hi,
                     rlimit=FORMULA_RLIMIT)]
    for x, y, out in WYMIX_KNOWN:
        queries.append(known(f"wymix({x:#x}, {y:#x}) = {out:#x}", f(x, y) == out,
                             f(_bv(x), _bv(y)) == out))
    return queries


FOLD_LENGTHS = (0, 1, 2, 3, 4)


def published_fnv1a(data: list[z3.BitVecRef]) -> z3.BitVecRef:
    """FNV-1a 64 as published: from the offset basis, per byte xor then multiply by the
    prime, mod 2^64."""
    h = z3.BitVecVal(0xCBF29CE484222325, 64)
    for byte in data:
        h = (h ^ byte) * 0x100000001B3
    return h


@z3_obligation(
    "PO8.62",
    "FNV-1a 64 over any k free bytes (k = 0..4) equals the published fold from the offset "
    "basis 0xcbf29ce484222325 with the prime 0x100000001b3 (xor the byte, then multiply), and "
    "gives the real code's answers on 8 known op and module names.",
    covers=("hash.fnv1a", "hash.schema", "hash.scope"),
    subject=fnv1a,
    mutants=(FNV1_ORDER, FNV_OR,
             Mutant.edit("bytes reversed", "the bytes are folded last to first", fnv1a,
                         "for byte in data:", "for byte in reversed(data):")),
)
def fnv1a_pinned(f):
    queries = []
    for k in FOLD_LENGTHS:
        data = [z3.ZeroExt(56, z3.BitVec(f"b{i}", 8)) for i in range(k)]
        queries.append(Query(f"{k} bytes: fnv1a == published fold",
                             f(data) != published_fnv1a(data)))
    for s, out in FNV1A_KNOWN:
        queries.append(Query(f"fnv1a({s!r}) = {out:#x}", z3.BoolVal(f(s.encode()) != out)))
    return queries


def _known_answers(fn):
    """check((arg, out)): fn(arg) == out."""

    def check(case) -> None:
        arg, out = case
        got = fn(arg)
        assert got == out, f"{got:#x} != {out:#x}"

    return check


@property_obligation(
    "PO8.63",
    "The per-op identity hashes give the real code's answers: SchemaHash of 8 op names and of "
    "null (0), ScopeHash of 2 module paths and of null (0), ShapeHash of 9 shape lists (none, "
    "0-d, negative and large sizes).",
    covers=("hash.schema", "hash.scope", "hash.shape"),
    subject=(schema_hash, scope_hash, shape_hash),
    mutants=(Mutant.edit("null schema hashed", "a null name hashes as the empty string",
                         schema_hash, "0 if name is None else fnv1a(name.encode(\"utf-8\"))",
                         "fnv1a((name or \"\").encode(\"utf-8\"))"),
             Mutant.edit("sizes as int32", "ShapeHash folds each size as 4 bytes", shape_hash,
                         "le_bytes(size, 8)", "le_bytes(size, 4)"),
             Mutant.edit("no ndim byte", "ShapeHash does not fold the ndim separator",
                         shape_hash, "h = fnv1a(bytes([len(sizes)]), h)", "h = h")),
)
def identity_hashes_known(subject):
    schema, scope, shape = subject
    return [
        Property("SchemaHash known answers", _known_answers(schema),
                 cases=lambda: [*FNV1A_KNOWN, (None, 0)]),
        Property("ScopeHash known answers", _known_answers(scope), cases=lambda: SCOPE_KNOWN),
        Property("ShapeHash known answers", _known_answers(shape), cases=lambda: SHAPE_KNOWN),
    ]
