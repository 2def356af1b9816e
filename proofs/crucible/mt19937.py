"""Chapter 12 obligations of the seed tests' input generator: std::mt19937's words against an
independent implementation, and the float conversion and distribution step by step."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.crucible.mt19937 import (
    CLAMP_FROM,
    canonical_f32,
    init_genrand,
    mt19937_uniform,
    mt19937_words,
    temper,
    twist,
    uniform_f32,
)
from ..core.obligation import Property, property_obligation

GOLDEN_42 = (1608637542, 3421126067, 4083286876, 787846414, 3143890026)
"""std::mt19937(42)'s first five words (facts sheet)."""
MLP_INPUT_BITS = (
    "be00788e 3e97d47c 3ee6c406 bea214d6 3e6d8fd0 3e8f33a8 3dca0d78 3dc65960 beb01e53 bd5dde78 "
    "beb0217c beccd016 bee242dd bd26eaa0 3ebb7b70 be2a484a 3dcf1560 beb6da29 3e5510fc 3e1a8284 "
    "bef575f3 bee31e06 3ef09806 3e6353a4 3eaa35ec 3ee089fc be93484a beff99ed bea2e7d6 3efc0328 "
    "bea218ce 3df09a28 be4874b8 3de4aa68 3ccace00 befc61ce bd8b6068 bef43129 be55c808 3ccaf440 "
    "3de51320 bdcd15b0 beb89442 bee81b70 be54d808 3ef29016 be08d870 be88d232 bd33eff8 bed19c08 "
    "3e920296 3df27460 be99c45c bdf0b7c4 3c693780 3ef76a0a 3dbd43d8 bd0823a0 bee837a7 3eb84a1c "
    "3ddc4078 3e38a28c bea8b110 bd4ac148")
"""test_compute's X, W1 and W2 (facts sheet): 64 draws of dist(-0.5, 0.5) over seed 42."""
DRAWS = 1250
"""Words compared per seed: past the second twist."""


def _numpy_words(seed: int, count: int) -> list[int]:
    """numpy's MT19937 seeded as the C++ engine (legacy init_genrand seeding)."""
    bg = np.random.MT19937()
    bg._legacy_seeding(seed)
    return [int(w) for w in bg.random_raw(count)]


def _words_match(seed: int) -> None:
    got = mt19937_words(seed, DRAWS)
    assert got == _numpy_words(seed, DRAWS), f"seed {seed}: differs from numpy's MT19937"
    if seed == 42:
        assert tuple(got[:5]) == GOLDEN_42


@property_obligation(
    "PO12.610",
    "The spec's std::mt19937(seed) words equal numpy's independent MT19937 with legacy "
    "(init_genrand) seeding for the first 1250 draws (two twists) of any 32-bit seed, and seed "
    "42 starts 1608637542, 3421126067, 4083286876, 787846414, 3143890026.",
    covers=("rng.mt19937", "rng.mt19937_uniform"),
    subject=mt19937_words,
    mutants=(
        Mutant.edit("temper shift 12", "the first tempering shift is 12", temper,
                    "y ^= y >> 11", "y ^= y >> 12"),
        Mutant.edit("temper masks swapped", "the third step masks with B", temper,
                    "(y << 15) & TEMPER_C", "(y << 15) & TEMPER_B"),
        Mutant.edit("twist offset 396", "the twist reads mt[i + 396]", twist,
                    "mt[(i + M) % N]", "mt[(i + M - 1) % N]"),
        Mutant.edit("twist bit", "the matrix is applied on bit 1", twist,
                    "MATRIX_A if y & 1 else 0", "MATRIX_A if y & 2 else 0"),
        Mutant.edit("seeding shift 31", "init_genrand shifts by 31", init_genrand,
                    "(prev >> 30)", "(prev >> 31)"),
        Mutant.edit("no first twist", "the first draw reads the seeded state", mt19937_words,
                    "k = N\n", "k = 0\n"),
    ),
)
def words_match(_subject):
    return [Property("seeds of the seed tests and edges", _words_match,
                     cases=lambda: [42, 7, 0, 1, 5489, 2**31, 2**32 - 1]),
            Property("random seeds", _words_match, strategy=lambda: st.integers(0, 2**32 - 1),
                     examples=20)]


def _canonical_model(u: int) -> np.float32:
    """Round u to 24 significant bits, ties to even (integer arithmetic), divide by 2^32, and
    take 1 - 2^-24 for a result of 1."""
    shift = max(u.bit_length() - 24, 0)
    q, r = divmod(u, 1 << shift)
    half = 1 << shift >> 1
    if shift and (r > half or (r == half and q & 1)):
        q += 1
    value = q << shift
    if value >= 1 << 32:
        return np.float32(1.0 - 2.0**-24)
    return np.float32(value / 2.0**32)


def _canonical_holds(u: int) -> None:
    c = canonical_f32(u)
    assert c < np.float32(1.0), hex(u)
    assert c.tobytes() == _canonical_model(u).tobytes(), (hex(u), c)


def _f32(x: float) -> np.float32:
    return np.float32(x)


def _uniform_model(u: int, a: np.float32, b: np.float32) -> np.float32:
    """Each of b - a, c * w and + a rounded to float32 on its own (from float64, where the
    double rounding is innocuous for one operation on two float32s)."""
    w = _f32(float(b) - float(a))
    p = _f32(float(_canonical_model(u)) * float(w))
    return _f32(float(p) + float(a))


def _uniform_holds(case: tuple[int, float, float]) -> None:
    u, lo, hi = case
    a, b = np.float32(lo), np.float32(max(lo, hi))
    got = uniform_f32(u, a, b)
    want = _uniform_model(u, a, b)
    assert got.tobytes() == want.tobytes(), (hex(u), a, b, got, want)
    if a < b and b - a == np.float32(1.0) and a == np.float32(-0.5):
        assert a <= got < b, (hex(u), got)


def _mlp_inputs(_case) -> None:
    got = mt19937_uniform(42, 64, np.float32(-0.5), np.float32(0.5))
    assert " ".join(f"{w:08x}" for w in got.view(np.uint32)) == MLP_INPUT_BITS


def _canonical_cases() -> list[int]:
    top = list(range(0xFFFFFE00, 1 << 32))
    return [*top, 0, 1, (1 << 24) - 1, 1 << 24, (1 << 24) + 1, (1 << 25) + 3, 0x80000080,
            0x80000180, CLAMP_FROM - 1, CLAMP_FROM]


def _uniform_cases() -> list[tuple[int, float, float]]:
    words = [0, 1, 0x12345678, 0x80000000, 0xDEADBEEF, CLAMP_FROM - 1, CLAMP_FROM, 2**32 - 1,
             1608637542, 3421126067]
    ranges = [(-0.5, 0.5), (-0.3, 0.3), (0.0, 1.0), (1.0, 1e4), (-1e-3, 7.5), (2.0, 2.0),
              (-3.0, 1.0 / 3.0)]
    return [(u, a, b) for u in words for a, b in ranges]


@property_obligation(
    "PO12.611",
    "The distribution step by step: float32(u) / 2^32 is u rounded to nearest at 24 bits over "
    "2^32 (the clamp turns the 128 words u >= 0xFFFFFF80, which round to 2^32, into 1 - 2^-24), "
    "so it is always below 1; value = c*(b-a) + a with each operation rounded to float32 on "
    "its own (no fused multiply-add), which keeps dist(-0.5, 0.5) in [-0.5, 0.5); seed 42's "
    "first 64 draws of dist(-0.5, 0.5) are test_compute's X, W1 and W2 bit for bit.",
    covers=("rng.mt19937_uniform",),
    subject=uniform_f32,
    mutants=(
        Mutant.edit("no clamp", "libc++'s behaviour: u >= 0xFFFFFF80 gives 1.0", canonical_f32,
                    "if c >= np.float32(1.0):", "if False:"),
        Mutant.edit("strict clamp", "the clamp tests c > 1", canonical_f32,
                    "if c >= np.float32(1.0):", "if c > np.float32(1.0):"),
        Mutant.edit("clamp to zero", "the clamp wraps to 0", canonical_f32,
                    "c = BELOW_ONE", "c = np.float32(0.0)"),
        Mutant.edit("fused", "c*(b-a) + a rounded once (a fused multiply-add)", uniform_f32,
                    "np.float32(np.float32(canonical_f32(u) * np.float32(b - a)) + a)",
                    "np.float32(float(canonical_f32(u)) * float(np.float32(b - a)) + float(a))"),
        Mutant.edit("truncated conversion", "u converted to float32 toward zero", canonical_f32,
                    "np.float32(u) / TWO_POW_32",
                    "np.float32(u >> max(u.bit_length() - 24, 0) << max(u.bit_length() - 24, 0))"
                    " / TWO_POW_32"),
        Mutant.edit("bounds swapped", "draws from dist(b, a)", mt19937_uniform,
                    "uniform_f32(u, a, b)", "uniform_f32(u, b, a)"),
    ),
)
def distribution(_subject):
    return [Property("test_compute's inputs", _mlp_inputs, cases=lambda: [None]),
            Property("the top 512 words and rounding edges", _canonical_holds,
                     cases=_canonical_cases),
            Property("random words", _canonical_holds,
                     strategy=lambda: st.integers(0, 2**32 - 1), examples=300),
            Property("hand-picked words and ranges", _uniform_holds, cases=_uniform_cases),
            Property("random words and ranges", _uniform_holds, strategy=lambda: st.tuples(
                st.integers(0, 2**32 - 1), st.floats(-1e4, 1e4, width=32),
                st.floats(-1e4, 1e4, width=32)), examples=400)]
