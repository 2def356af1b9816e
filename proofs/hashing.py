"""Chapter 8 obligations about the hash primitives, on the spec's own functions."""

from __future__ import annotations

from functools import reduce

import z3

from ..spec.bits import mul
from ..spec.hashing import (
    FMIX64_C1,
    FMIX64_STAGES,
    FNV_PRIME,
    apply_stage,
    fmix64,
    fnv1a_step,
    wymix,
)
from ..spec.registry import Mutant
from .obligation import Query, z3_obligation


def _compose(stages, k):
    return reduce(lambda acc, st: apply_stage(st, acc), stages, k)


_EVEN_C1 = tuple(("multiply", FMIX64_C1 & ~1) if s == ("multiply", FMIX64_C1) else s
                 for s in FMIX64_STAGES)


@z3_obligation(
    "PO8.1",
    "fmix64 is a bijection on 64-bit words: it is the composition of its five stages and "
    "every stage (xor-shift by 33, multiply by an odd constant) is injective.",
    covers=("hash.fmix64",),
    subject=(fmix64, FMIX64_STAGES),
    mutants=(Mutant("even multiplier", "the first constant loses its low bit",
                    (lambda k: _compose(_EVEN_C1, k), _EVEN_C1)),),
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
    mutants=(Mutant("even prime", "multiplies by FNV_PRIME - 1",
                    lambda h, b: mul(h ^ b, FNV_PRIME - 1)),),
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
    mutants=(Mutant("no __int128 fallback", "fmix64(a ^ b), the build without 128-bit products",
                    lambda a, b: fmix64(a ^ b)),),
)
def wymix_zero_absorbs(f):
    a = z3.BitVec("a", 64)
    return [Query("wymix(a, 0) == 0", f(a, z3.BitVecVal(0, 64)) != 0)]
