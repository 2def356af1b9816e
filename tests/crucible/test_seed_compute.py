"""The seed's test_compute (MLP) and test_compute_vit end to end: inputs drawn as the seed draws
them, every kernel through each implementation, against the golden bits of facts §14.1."""

from __future__ import annotations

import numpy as np
import pytest

from crucible_spec.engine import Implementation
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.seed_compute import mlp, mlp_inputs, vit, vit_inputs

MLP_X = "be00788e 3e97d47c 3ee6c406 bea214d6 3e6d8fd0 3e8f33a8 3dca0d78 3dc65960"
MLP_W2_HEAD = "3de51320 bdcd15b0 beb89442 bee81b70"
MLP_W2_TAIL = "bee837a7 3eb84a1c 3ddc4078 3e38a28c bea8b110 bd4ac148"
MLP_MM1 = ("3e91e4a5 3d8172a5 bd05a580 3cd4c248 be5597c2 3e7c4fd1 3c89a794 3e06f756 bd1a57ec "
           "bd6f1858 bd42f196 be1722fa be8c9750 be064cca 3e28e253 3d199c29")
MLP_MM2 = "3e02dd2a bd482eaa bda930e5 bd8b5899 3d408ac2 3c8217e1"
MLP_PROBS = "3ec154b6 3ea205b4 3e9ca595 3e9f8726 3eb2fa88 3ead7e51"
VIT_LOGITS = "3dfaca8c 3df76db7 bdb296d4 bdae8af1 3d7a612a bd60a90e"
VIT_PROBS = "3eb641c7 3eb5f53c 3e93c8fc 3ea09463 3eb9e34d 3ea5884f"


def bits(a: np.ndarray) -> str:
    return " ".join(f"{x:08x}" for x in np.ascontiguousarray(a, dtype=np.float32)
                    .reshape(-1).view(np.uint32))


def runner(impl: str):
    chosen = Implementation(impl)
    return lambda op, args: chosen.run_batch(REGISTRY.ops[op], [args])[0]


def test_mlp_inputs_are_the_seeds_draws():
    """X and W2's first and last draws of mt19937(42) through dist(-0.5, 0.5) are the seed's."""
    t = mlp_inputs()
    assert bits(t["x"]) == MLP_X
    assert bits(t["w2"])[:35] == MLP_W2_HEAD and bits(t["w2"]).endswith(MLP_W2_TAIL)


def test_vit_layer_norm_parameters_are_near_identity():
    """gamma = 1 + 0.1 d and beta = 0.1 d with |d| <= 0.3, interleaved after the weights."""
    t = vit_inputs()
    assert t["x"].shape == (8, 8) and t["w_head"].shape == (8, 3)
    for g, b in (("gamma1", "beta1"), ("gamma2", "beta2")):
        assert np.all(np.abs(t[g] - 1) <= np.float32(0.0301))
        assert np.all(np.abs(t[b]) <= np.float32(0.0301))


@pytest.mark.parametrize("impl", ["reference", "numba", "cupy"])
def test_mlp_reproduces_the_seeds_golden_bits(impl):
    """mm1, mm2 and the softmax of test_compute, bit for bit."""
    t = mlp(runner(impl))
    assert bits(t["mm1"]) == MLP_MM1
    assert bits(t["mm2"]) == MLP_MM2
    assert bits(t["probs"]) == MLP_PROBS


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_vit_reproduces_the_seeds_golden_bits(impl):
    """The logits and probabilities of test_compute_vit, bit for bit (glibc's expf)."""
    t = vit(runner(impl))
    assert bits(t["logits"]) == VIT_LOGITS
    assert bits(t["probs"]) == VIT_PROBS


def test_vit_through_the_cupy_kernels_is_within_the_envelopes():
    """The cupy path (exp in binary64, rounded once) lands within sdpa's and softmax's
    envelopes of the golden probabilities (on this input it is bit-exact)."""
    t = vit(runner("cupy"))
    want = np.array([int(x, 16) for x in VIT_PROBS.split()], dtype=np.uint32).view(np.float32)
    diff = np.abs(t["probs"].reshape(-1).view(np.int32).astype(np.int64)
                  - want.view(np.int32).astype(np.int64))
    assert diff.max() <= 4
