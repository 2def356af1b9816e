"""The seed tests' input generator (facts sheet §14.1): std::mt19937 and libstdc++'s
uniform_real_distribution<float>, through `serve` on the reference and numba, against the
facts' golden bits and numpy's independent MT19937."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.crucible.mt19937 import canonical_f32, mt19937_words, uniform_f32

load_all()

HALF, MINUS_HALF = "0x3f000000", "0xbf000000"
X = "be00788e 3e97d47c 3ee6c406 bea214d6 3e6d8fd0 3e8f33a8 3dca0d78 3dc65960"
W1 = ("beb01e53 bd5dde78 beb0217c beccd016 bee242dd bd26eaa0 3ebb7b70 be2a484a 3dcf1560 "
      "beb6da29 3e5510fc 3e1a8284 bef575f3 bee31e06 3ef09806 3e6353a4 3eaa35ec 3ee089fc "
      "be93484a beff99ed bea2e7d6 3efc0328 bea218ce 3df09a28 be4874b8 3de4aa68 3ccace00 "
      "befc61ce bd8b6068 bef43129 be55c808 3ccaf440")
W2 = ("3de51320 bdcd15b0 beb89442 bee81b70 be54d808 3ef29016 be08d870 be88d232 bd33eff8 "
      "bed19c08 3e920296 3df27460 be99c45c bdf0b7c4 3c693780 3ef76a0a 3dbd43d8 bd0823a0 "
      "bee837a7 3eb84a1c 3ddc4078 3e38a28c bea8b110 bd4ac148")


def _ask(op: str, args: dict, impl: str = "reference") -> dict:
    return answer(json.dumps({"id": 1, "op": op, "args": args}),
                  Implementation(impl, profile_errata("crucible")), "crucible")


def _f32(x: float) -> str:
    return f"0x{int(np.array([x], dtype=np.float32).view(np.uint32)[0]):08x}"


def _values(result: dict) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(result["values"]["data"]), dtype="<f4")


def _hex_words(values: np.ndarray) -> str:
    return " ".join(f"{w:08x}" for w in values.view(np.uint32))


def test_golden_words():
    """std::mt19937(42) starts 1608637542, 3421126067, 4083286876, 787846414, 3143890026 on the
    reference and numba."""
    for impl in ("reference", "numba"):
        assert _ask("rng.mt19937", {"seed": 42, "count": 5}, impl)["result"]["words"] == [
            1608637542, 3421126067, 4083286876, 787846414, 3143890026]


def test_mlp_inputs():
    """test_compute's X, W1 and W2: the first 64 draws of dist(-0.5, 0.5) over seed 42, bit for
    bit, on the reference and numba."""
    for impl in ("reference", "numba"):
        r = _ask("rng.mt19937_uniform", {"seed": 42, "count": 64, "a": MINUS_HALF, "b": HALF},
                 impl)["result"]
        assert r["values"]["shape"] == [64]
        assert _hex_words(_values(r)) == " ".join((X, W1, W2))


def test_vit_inputs_in_range():
    """test_compute_vit's 704 draws of dist(-0.3, 0.3) over seed 7 are finite and within
    [-0.3, 0.3]."""
    r = _ask("rng.mt19937_uniform", {"seed": 7, "count": 704, "a": _f32(-0.3),
                                     "b": _f32(0.3)})["result"]
    v = _values(r)
    assert v.size == 704 and np.all(np.isfinite(v))
    assert np.all(v >= np.float32(-0.3)) and np.all(v <= np.float32(0.3))


def test_clamp_by_hand():
    """The word 0xFFFFFFFF rounds to 2^32, is clamped to 1 - 2^-24, and dist(-0.5, 0.5) gives
    0.5 - 2^-24 (0x3EFFFFFE); 0xFFFFFF7F rounds to 2^32 - 256 and needs no clamp."""
    assert canonical_f32(0xFFFFFFFF).view(np.uint32) == 0x3F7FFFFF
    assert canonical_f32(0xFFFFFF80).view(np.uint32) == 0x3F7FFFFF
    assert canonical_f32(0xFFFFFF7F) == np.float32(1.0 - 2.0**-24)
    assert uniform_f32(0xFFFFFFFF, np.float32(-0.5), np.float32(0.5)).view(np.uint32) == \
        0x3EFFFFFE
    assert canonical_f32(0) == 0.0 and canonical_f32(1 << 31) == np.float32(0.5)


def test_invalid():
    """More than 2^20 draws, a > b, a NaN or infinite bound and a width past float32 are
    invalid_input."""
    cases = [("rng.mt19937", {"seed": 1, "count": 2**20 + 1}),
             ("rng.mt19937_uniform", {"seed": 1, "count": 2**20 + 1, "a": "0x0", "b": HALF}),
             ("rng.mt19937_uniform", {"seed": 1, "count": 1, "a": HALF, "b": MINUS_HALF}),
             ("rng.mt19937_uniform", {"seed": 1, "count": 1, "a": "0x7fc00000", "b": HALF}),
             ("rng.mt19937_uniform", {"seed": 1, "count": 1, "a": "0x0", "b": "0x7f800000"}),
             ("rng.mt19937_uniform", {"seed": 1, "count": 1, "a": _f32(-3e38),
                                      "b": _f32(3e38)})]
    for op, args in cases:
        assert _ask(op, args)["error"]["code"] == "invalid_input", (op, args)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 1300))
def test_numpy_mt19937_agrees(seed, count):
    """numpy's MT19937 with legacy (init_genrand) seeding, an independent implementation,
    gives the spec's words."""
    bg = np.random.MT19937()
    bg._legacy_seeding(seed)
    assert mt19937_words(seed, count) == bg.random_raw(count).tolist()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 700),
       st.floats(-1e4, 1e4, width=32), st.floats(0, 1e4, width=32))
def test_numba_bit_exact(seed, count, a, width):
    """The numba kernels give the reference's words and values bit for bit."""
    b = float(np.float32(np.float32(a) + np.float32(width)))
    args = {"seed": seed, "count": count, "a": _f32(a), "b": _f32(b)}
    want = _ask("rng.mt19937_uniform", args)
    assert _ask("rng.mt19937_uniform", args, "numba") == want
    words = {"seed": seed, "count": count}
    assert _ask("rng.mt19937", words, "numba") == _ask("rng.mt19937", words)
