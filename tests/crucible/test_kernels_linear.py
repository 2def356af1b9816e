"""Chapter 12's linear CPU kernels (facts sheet §14): kernel.mm, kernel.conv2d, kernel.sdpa
through serve, the numba and cupy kernels against the spec, and torch within stated bounds."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.fast.cupy.crucible import cpu_kernels_linear as cupy_k
from crucible_spec.fast.numba.crucible import cpu_kernels_linear as numba_k
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.f32_tensor import Envelope, F32Tensor, random_tensor
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.cpu_kernels_linear import conv2d, mm, sdpa
from crucible_spec.spec.crucible.kernel_linear_ops import SDPA_ENVELOPE

load_all()

F32 = np.float32
EPS = 2.0 ** -24
TENSOR = F32Tensor()
SDPA = Envelope(8, 1)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

X = "be00788e 3e97d47c 3ee6c406 bea214d6 3e6d8fd0 3e8f33a8 3dca0d78 3dc65960"
W1 = ("beb01e53 bd5dde78 beb0217c beccd016 bee242dd bd26eaa0 3ebb7b70 be2a484a 3dcf1560 beb6da29 "
      "3e5510fc 3e1a8284 bef575f3 bee31e06 3ef09806 3e6353a4 3eaa35ec 3ee089fc be93484a beff99ed "
      "bea2e7d6 3efc0328 bea218ce 3df09a28 be4874b8 3de4aa68 3ccace00 befc61ce bd8b6068 bef43129 "
      "be55c808 3ccaf440")
W2 = ("3de51320 bdcd15b0 beb89442 bee81b70 be54d808 3ef29016 be08d870 be88d232 bd33eff8 bed19c08 "
      "3e920296 3df27460 be99c45c bdf0b7c4 3c693780 3ef76a0a 3dbd43d8 bd0823a0 bee837a7 3eb84a1c "
      "3ddc4078 3e38a28c bea8b110 bd4ac148")
MM1 = ("3e91e4a5 3d8172a5 bd05a580 3cd4c248 be5597c2 3e7c4fd1 3c89a794 3e06f756 bd1a57ec bd6f1858 "
       "bd42f196 be1722fa be8c9750 be064cca 3e28e253 3d199c29")
MM2 = "3e02dd2a bd482eaa bda930e5 bd8b5899 3d408ac2 3c8217e1"


def _bits(words: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.array([int(w, 16) for w in words.split()], dtype=np.uint32).view(F32).reshape(shape)


def _wire(a: np.ndarray) -> dict:
    return TENSOR.encode(a)


def _ask(op: str, args: dict) -> dict:
    impl = Implementation("reference", profile_errata("crucible"))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, "crucible")


def _same(want: np.ndarray, got: np.ndarray) -> None:
    assert want.shape == got.shape and want.tobytes() == got.tobytes(), (want, got)


def test_mm_golden_mlp():
    """mm reproduces the facts sheet's MLP golden bits: X W1 and relu(X W1) W2, directly and
    through serve."""
    x, w1, w2 = _bits(X, (2, 4)), _bits(W1, (4, 8)), _bits(W2, (8, 3))
    mm1 = mm(x, w1)
    _same(_bits(MM1, (2, 8)), mm1)
    relu = np.where(mm1 > 0, mm1, F32(0.0)).astype(F32)
    _same(_bits(MM2, (2, 3)), mm(relu, w2))
    got = _ask("kernel.mm", {"a": _wire(x), "b": _wire(w1)})["result"]["c"]
    _same(_bits(MM1, (2, 8)), TENSOR.decode(got, "c"))
    _same(_bits(MM1, (2, 8)), numba_k.mm_batch([x], [w1])["c"][0])


def test_hand_values():
    """Worked by hand: the k order absorbs two 2^-24 terms into 1, a -0 product sums to +0,
    conv2d is a cross-correlation, and sdpa of one position returns V (with -0 as +0)."""
    _same(np.array([[1.0]], F32), mm(np.array([[1.0, EPS, EPS]], F32), np.ones((3, 1), F32)))
    _same(np.array([[0.0]], F32), mm(np.array([[-0.0]], F32), np.array([[1.0]], F32)))
    x = np.arange(1, 10, dtype=F32).reshape(1, 1, 3, 3)
    w = np.array([1, 0, 0, -1], F32).reshape(1, 1, 2, 2)
    _same(np.full((1, 1, 2, 2), -4.0, F32), conv2d(x, w))
    q = np.array([[[2.0, -1.0]]], F32)
    _same(np.array([[[0.0, 1.5]]], F32), sdpa(q, q, np.array([[[-0.0, 1.5]]], F32)))


def test_edges_and_invalid_through_serve():
    """Every edge of the three ops is answered with a result, and every invalid case with its
    declared error code."""
    for name in ("kernel.mm", "kernel.conv2d", "kernel.sdpa"):
        op = REGISTRY.op(name)
        for args in op.edges():
            assert "result" in _ask(name, args), (name, args)
        for case in op.invalid:
            args = case.args().value
            reply = _ask(name, args)
            assert reply.get("error", {}).get("code") == case.code, (name, case.description, reply)


def test_conv2d_window_too_large_names_field():
    """A window larger than the image plus one (the seed's negative output size) is
    invalid_input naming w's shape."""
    x, w = np.zeros((1, 1, 2, 2), F32), np.zeros((1, 1, 4, 1), F32)
    error = _ask("kernel.conv2d", {"x": _wire(x), "w": _wire(w)})["error"]
    assert error["code"] == "invalid_input" and "args.w.shape" in error["message"]


@FAST
@given(REGISTRY.op("kernel.mm").strategy())
def test_mm_kernels_bit_exact(args):
    """The numba and cupy mm kernels equal the spec bit for bit on the op's domain."""
    want = mm(**args)
    _same(want, numba_k.mm_batch([args["a"]], [args["b"]])["c"][0])
    _same(want, cupy_k.mm_batch([args["a"]], [args["b"]])["c"][0])


@pytest.mark.parametrize("shape", [(37, 70, 45), (64, 33, 96), (5, 130, 3), (8, 0, 40)])
def test_numba_mm_blocked_shapes_bit_exact(shape):
    """The blocked, parallel numba mm equals the spec on shapes with partial row tiles and
    column strips."""
    m, k, n = shape
    rng = np.random.default_rng(m * 1000 + n)
    a, b = random_tensor(rng, (m, k), 3.0), random_tensor(rng, (k, n), 3.0)
    _same(mm(a, b), numba_k.mm_batch([a], [b])["c"][0])


@FAST
@given(REGISTRY.op("kernel.conv2d").strategy())
def test_conv2d_kernels_bit_exact(args):
    """The numba and cupy conv2d kernels equal the spec bit for bit on the op's domain."""
    want = conv2d(**args)
    _same(want, numba_k.conv2d_batch([args["x"]], [args["w"]])["y"][0])
    _same(want, cupy_k.conv2d_batch([args["x"]], [args["w"]])["y"][0])


@FAST
@given(REGISTRY.op("kernel.sdpa").strategy())
def test_sdpa_kernels(args):
    """The numba sdpa equals the spec bit for bit (glibc's expf); the cupy one, with a float64
    exp rounded once, is within the declared envelope."""
    want = sdpa(**args)
    _same(want, numba_k.sdpa_batch([args["q"]], [args["k"]], [args["v"]])["y"][0])
    got = cupy_k.sdpa_batch([args["q"]], [args["k"]], [args["v"]])["y"][0]
    assert SDPA_ENVELOPE == "ulp:f32=8,floor=1" and SDPA.holds(want, got)


def _torch(name: str):
    pytest.importorskip("torch")
    from crucible_spec.torch_diff import load

    return load()[name].call


def _sum_bound(terms: int, magnitude: np.ndarray) -> np.ndarray:
    """4 * terms * eps * sum|products|, plus underflow slack."""
    return 4.0 * terms * EPS * magnitude + terms * 2.0 ** -149


@FAST
@given(REGISTRY.op("kernel.mm").strategy())
def test_torch_mm_within_relative_bound(args):
    """torch.mm sums in another order: each element is within 4 K eps sum_k |a||b| of the spec."""
    a, b = args["a"], args["b"]
    got = _torch("kernel.mm")(a=a, b=b)["c"]
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    diff = np.abs(mm(a, b).astype(np.float64) - got)
    assert np.all(diff <= _sum_bound(max(a.shape[1], 1), mag))


@FAST
@given(REGISTRY.op("kernel.conv2d").strategy())
def test_torch_conv2d_within_relative_bound(args):
    """F.conv2d sums in another order: each element is within 4 (Ci Kh Kw) eps sum |x||w| of
    the spec."""
    x, w = args["x"], args["w"]
    got = _torch("kernel.conv2d")(x=x, w=w)["y"]
    mag = _conv64(np.abs(x.astype(np.float64)), np.abs(w.astype(np.float64)))
    diff = np.abs(conv2d(x, w).astype(np.float64) - got)
    assert np.all(diff <= _sum_bound(max(int(np.prod(w.shape[1:])), 1), mag))


def _conv64(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    nb, ci_n, hi, wi = x.shape
    co_n, _, kh_n, kw_n = w.shape
    ho, wo = hi - kh_n + 1, wi - kw_n + 1
    y = np.zeros((nb, co_n, ho, wo))
    for ci in range(ci_n):
        for kh in range(kh_n):
            for kw in range(kw_n):
                y += x[:, None, ci, kh:kh + ho, kw:kw + wo] * w[None, :, ci, kh, kw, None, None]
    return y


@FAST
@given(REGISTRY.op("kernel.sdpa").strategy())
def test_torch_sdpa_within_relative_bound(args):
    """F.scaled_dot_product_attention (its own order and exp): each element is within
    (2 dS + 8 (S + D + 8) eps) sum_j attn |v| of the spec, dS = 4 D eps scale max sum_d |q||k|
    being the score error bound."""
    q, k, v = args["q"], args["k"], args["v"]
    if q.size == 0:
        return
    got = _torch("kernel.sdpa")(q=q, k=k, v=v)["y"]
    want = sdpa(q, k, v).astype(np.float64)
    _, s, d = q.shape
    q64, k64, v64 = (t.astype(np.float64) for t in (q, k, v))
    scale = 1.0 / np.sqrt(d)
    scores = np.abs(q64) @ np.abs(k64).transpose(0, 2, 1) * scale
    ds = 4.0 * d * EPS * scores.max(axis=2, keepdims=True)
    logits = q64 @ k64.transpose(0, 2, 1) * scale
    attn = np.exp(logits - logits.max(axis=2, keepdims=True))
    attn /= attn.sum(axis=2, keepdims=True)
    mag = attn @ np.abs(v64)
    bound = (2.0 * ds + 8.0 * (s + d + 8) * EPS) * mag + 2.0 ** -140
    assert np.all(np.abs(want - got) <= bound), np.max(np.abs(want - got) / bound)


def test_sdpa_envelope_holds_on_random_batches():
    """On random inputs of the domain's scale, the cupy sdpa stays within the envelope."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        shape = (1, int(rng.integers(1, 20)), int(rng.integers(1, 12)))
        q, k, v = (random_tensor(rng, shape, 8.0) for _ in range(3))
        want = np.empty(shape, F32)
        numba_k.sdpa_into(q, k, v, want)
        assert SDPA.holds(want, cupy_k.sdpa_into(q, k, v))


@pytest.mark.parametrize("n", [0, 1])
def test_bench_inputs_decode(n):
    """The bench inputs have the documented shapes (mm n x n, conv2d 1 x 64 x n x n with
    64 x 64 x 3 x 3 filters, sdpa 1 x n x 64)."""
    rng = np.random.default_rng(0)
    (mm_args,) = REGISTRY.op("kernel.mm").bench(n + 3, rng)
    (conv_args,) = REGISTRY.op("kernel.conv2d").bench(n + 3, rng)
    (sdpa_args,) = REGISTRY.op("kernel.sdpa").bench(n + 3, rng)
    assert mm_args["a"].shape == (n + 3, n + 3)
    assert conv_args["x"].shape == (1, 64, n + 3, n + 3) and conv_args["w"].shape == (64, 64, 3, 3)
    assert sdpa_args["q"].shape == (1, n + 3, 64)
