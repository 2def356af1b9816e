"""Chapter 12: the seed's two end-to-end compute tests as compositions of the kernel ops.

Each test draws its inputs from one std::mt19937 stream through uniform_real_distribution<float>
(facts §14.1) and runs its ops in order; `run(op, args)` answers one op (any implementation),
so the same composition checks the reference, numba and cupy against the seed's golden bits.

test_compute (an MLP), mt19937(42), dist(-0.5, 0.5):
1. Draw X [2, 4], W1 [4, 8], W2 [8, 3], in that order.
2. mm1 = mm(X, W1); h = relu(mm1); mm2 = mm(h, W2); probs = softmax(mm2).

test_compute_vit (one transformer block), mt19937(7), dist(-0.3, 0.3), B = 2, S = 4, D = 8:
1. Draw X [B S, D], W_q, W_k, W_v, W_out [D, D], W_ff1 [D, 16], W_ff2 [16, D], W_head [D, 3];
   then for i in 0..7: gamma1[i] = 1 + d 0.1, beta1[i] = d 0.1, gamma2[i] = 1 + d 0.1,
   beta2[i] = d 0.1, each d a fresh draw, in binary32.
2. n1 = layer_norm(X, gamma1, beta1); Q, K, V = mm(n1, W_q), mm(n1, W_k), mm(n1, W_v);
   attn = sdpa(Q, K, V) over [B, S, D]; res1 = add(mm(attn, W_out), X);
   n2 = layer_norm(res1, gamma2, beta2); ff = mm(relu(mm(n2, W_ff1)), W_ff2);
   res2 = add(ff, res1); cls = index_select(res2 as [B, S, D], 0);
   logits = mm(cls, W_head); probs = softmax(logits).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .mt19937 import mt19937_uniform

Run = Callable[[str, dict], dict]
"""Answer one op: (op name, decoded args) -> decoded result."""

F32 = np.float32
MLP_SEED, VIT_SEED = 42, 7
VIT_B, VIT_S, VIT_D, VIT_FF, VIT_CLASSES = 2, 4, 8, 16, 3


def _take(stream: np.ndarray, at: int, shape: tuple[int, ...]) -> tuple[np.ndarray, int]:
    n = int(np.prod(shape))
    return stream[at:at + n].reshape(shape), at + n


def mlp_inputs() -> dict[str, np.ndarray]:
    """Step 1 of test_compute."""
    stream = mt19937_uniform(MLP_SEED, 8 + 32 + 24, F32(-0.5), F32(0.5))
    x, at = _take(stream, 0, (2, 4))
    w1, at = _take(stream, at, (4, 8))
    w2, _ = _take(stream, at, (8, 3))
    return {"x": x, "w1": w1, "w2": w2}


def mlp(run: Run) -> dict[str, np.ndarray]:
    """Step 2 of test_compute: every intermediate, by name."""
    t = mlp_inputs()
    t["mm1"] = run("kernel.mm", {"a": t["x"], "b": t["w1"]})["c"]
    t["relu"] = run("kernel.relu", {"a": t["mm1"]})["c"]
    t["mm2"] = run("kernel.mm", {"a": t["relu"], "b": t["w2"]})["c"]
    t["probs"] = run("kernel.softmax", {"x": t["mm2"]})["y"]
    return t


def vit_inputs() -> dict[str, np.ndarray]:
    """Step 1 of test_compute_vit."""
    d, ff, rows = VIT_D, VIT_FF, VIT_B * VIT_S
    shapes = (("x", (rows, d)), ("w_q", (d, d)), ("w_k", (d, d)), ("w_v", (d, d)),
              ("w_out", (d, d)), ("w_ff1", (d, ff)), ("w_ff2", (ff, d)),
              ("w_head", (d, VIT_CLASSES)))
    total = sum(int(np.prod(s)) for _, s in shapes) + 4 * d
    stream = mt19937_uniform(VIT_SEED, total, F32(-0.3), F32(0.3))
    out, at = {}, 0
    for name, shape in shapes:
        out[name], at = _take(stream, at, shape)
    noise = stream[at:].reshape(d, 4) * F32(0.1)
    out["gamma1"], out["beta1"] = F32(1.0) + noise[:, 0], noise[:, 1].copy()
    out["gamma2"], out["beta2"] = F32(1.0) + noise[:, 2], noise[:, 3].copy()
    return out


def vit(run: Run) -> dict[str, np.ndarray]:
    """Step 2 of test_compute_vit: every intermediate, by name."""
    t = vit_inputs()

    def mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return run("kernel.mm", {"a": a, "b": b})["c"]

    def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
        return run("kernel.layer_norm", {"x": x, "gamma": gamma, "beta": beta,
                                         "eps": _bits(F32(1e-5))})["y"]

    seq = (VIT_B, VIT_S, VIT_D)
    t["norm1"] = layer_norm(t["x"], t["gamma1"], t["beta1"])
    q, k, v = (mm(t["norm1"], t[w]).reshape(seq) for w in ("w_q", "w_k", "w_v"))
    t["attn"] = run("kernel.sdpa", {"q": q, "k": k, "v": v})["y"].reshape(seq[0] * seq[1], -1)
    t["res1"] = run("kernel.add", {"a": mm(t["attn"], t["w_out"]), "b": t["x"]})["c"]
    t["norm2"] = layer_norm(t["res1"], t["gamma2"], t["beta2"])
    relu = run("kernel.relu", {"a": mm(t["norm2"], t["w_ff1"])})["c"]
    t["res2"] = run("kernel.add", {"a": mm(relu, t["w_ff2"]), "b": t["res1"]})["c"]
    t["cls"] = run("kernel.index_select", {"x": t["res2"].reshape(seq), "idx": 0})["y"]
    t["logits"] = mm(t["cls"], t["w_head"])
    t["probs"] = run("kernel.softmax", {"x": t["logits"]})["y"]
    return t


def _bits(x: np.float32) -> int:
    return int(np.asarray(x, dtype=np.float32).view(np.uint32))
