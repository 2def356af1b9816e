"""Chapter 12 ops of the normalisation and pooling kernels (`kernel.softmax`, `layer_norm`,
`batch_norm`, `maxpool2d`, `avgpool_global`, `cross_entropy`); float32 tensors in and out (see
`f32_tensor`). Those without a transcendental are bit-exact; softmax and cross_entropy call
expf (and logf) and are compared within SOFTMAX_ENVELOPE and CROSS_ENTROPY_ENVELOPE.

batch_norm and avgpool_global take X as [N, C, HW], the seed's own arguments: a caller with an
NCHW tensor passes it reshaped to [N, C, H * W] (the bytes are the same).
"""

from __future__ import annotations

import math

from ..core.errors import InvalidInput
from ..core.f32_tensor import (
    MAX_ELEMENTS,
    F32Tensor,
    element_count,
    f32_values,
    random_tensor,
    tensors_of_shape,
)
from ..core.registry import InvalidCase, declare
from ..core.schema import BITS32, I32, U32, Field, List, record
from ..core.strategies import st
from .cpu_kernels_norm import (
    EPS_BITS,
    avgpool_global,
    batch_norm,
    cross_entropy,
    layer_norm,
    maxpool2d,
    softmax,
)
from .kernel_ops import wire

SOFTMAX_ENVELOPE = "ulp:f32=4"
"""softmax results may differ from the spec by up to 4 float32 ulps (ordered-integer distance;
+0 and -0 are 0 apart). The spec calls glibc's expf; the cupy path computes each exp in
binary64 and rounds it once, so now and then an exp is 1 ulp off glibc's; that element moves,
and through the row sum so does the reciprocal that scales the whole row. Measured, cupy path
vs spec: 2.6 million random rows of D = 1..6 (values uniform in +-1e4, +-200, +-90, +-20, +-1):
at most 3 ulps; 390,000 rows of D = 1..4,096 (+-1e4 down to +-0.01): at most 4 ulps (6
elements at 4, 119 at 3, 4,045 at 2, 12,834 at 1 in 115,000 rows). torch's F.softmax sums in
another order and is not held to this envelope (see the torch equivalent)."""

CROSS_ENTROPY_ENVELOPE = "ulp:f32=4"
"""cross_entropy's probs (a softmax, so SOFTMAX_ENVELOPE's 4 ulps) and its loss (float32 bits)
may differ from the spec by up to 4 ulps. Measured, cupy path (binary64 exp and log, each
rounded once; the loss summed on the host in the spec's order) vs spec over 240,000 random
rows (B = 1..8, C = 1..1,024): probs at most 4 ulps, the loss at most 2 ulps."""

TENSOR2 = F32Tensor(rank=2)
TENSOR1 = F32Tensor(rank=1)
TENSOR3 = F32Tensor(rank=3)
TENSOR4 = F32Tensor(rank=4)
EPS = Field(BITS32, "eps as float32 bits (default 1e-5f)", EPS_BITS)


def bits_wire(shape: list[int], words: str) -> dict:
    """A tensor's wire form from its elements' float32 bits, written as big-endian hex words."""
    data = b"".join(int(w, 16).to_bytes(4, "little") for w in words.split())
    return {"shape": list(shape), "data": data.hex()}


MM2 = bits_wire([2, 3], "3e02dd2a bd482eaa bda930e5 bd8b5899 3d408ac2 3c8217e1")
"""The MLP test's second matmul (facts §14.1), whose softmax is a golden value."""


def _neg(rank: int) -> dict:
    return {"shape": [-1] + [1] * (rank - 1), "data": ""}


def _huge(rank: int) -> dict:
    return {"shape": [1 << 20, 1 << 20] + [1] * (rank - 2), "data": ""}


def _eps() -> st.SearchStrategy:
    return st.sampled_from([EPS_BITS, 0, 0x3A83126F, 0x3F800000]) | st.integers(0, 0x3F800000)


@st.composite
def _shape(draw, rank: int, hi: int = 5) -> tuple[int, ...]:
    return tuple(draw(st.integers(0, hi)) for _ in range(rank))


def _values() -> st.SearchStrategy:
    return f32_values() | f32_values(-20.0, 20.0) | f32_values(-1.0, 1.0)


# ── kernel.softmax ────────────────────────────────────────────────────────────────────────────


def _check_rows(x, path: str) -> None:
    b, d = x.shape
    if b > 0 and d == 0:
        raise InvalidInput(f"{path}: {b} rows of 0 elements (each row needs D >= 1; the seed "
                           "reads x[0])")


@st.composite
def _softmax_args(draw) -> dict:
    b = draw(st.integers(0, 5))
    d = draw(st.integers(1, 6)) if b else draw(st.integers(0, 3))
    return {"x": draw(tensors_of_shape((b, d), draw(st.sampled_from(
        [f32_values(), f32_values(-20.0, 20.0), f32_values(-1.0, 1.0)]))))}


def _rows_bench(n: int, rng) -> tuple[int, int]:
    """n elements as rows of 1,024 (at least one row)."""
    return max(n // 1024, 1), 1024


declare(
    "kernel.softmax", chapter=12,
    summary="Y = softmax of each row of X [B, D]: std::max scan, expf, ordered sum, one "
            "reciprocal; within 4 ulps (expf).",
    args=record(x=Field(TENSOR2, "X [B, D], D >= 1 when B > 0")),
    result=record(y=Field(TENSOR2, "Y [B, D]")),
    spec=(softmax,), check=lambda a: _check_rows(a["x"], "args.x"), domain=_softmax_args,
    compare=SOFTMAX_ENVELOPE, obligations=("PO12.540",),
    invalid=(
        InvalidCase("a negative dim", lambda: st.just({"x": _neg(2)})),
        InvalidCase("rows of no element", lambda: st.just({"x": wire([2, 0])})),
        InvalidCase("a 1-D X", lambda: st.just({"x": wire([3])}), "bad_request"),
        InvalidCase("2^40 elements", lambda: st.just({"x": _huge(2)})),
    ),
    edges=lambda: [
        {"x": MM2},
        {"x": wire([1, 4], [float("nan"), 1, 2, 3])},
        {"x": wire([1, 4], [1, float("nan"), 2, 3])},
        {"x": wire([1, 3], [float("inf"), 0, 1])},
        {"x": wire([1, 3], [float("-inf"), float("-inf"), 0])},
        {"x": wire([2, 1], [-0.0, 1e38])},
        {"x": wire([1, 2], [1e4, -1e4])},
        {"x": wire([0, 5])},
    ],
    bench=lambda n, rng: [{"x": random_tensor(rng, _rows_bench(n, rng), 4.0)}],
    work=lambda n: n,
)
"""Bench n: n elements as max(n / 1024, 1) rows of D = 1,024."""


# ── kernel.layer_norm ─────────────────────────────────────────────────────────────────────────


def _check_affine(args: dict, width: int, what: str) -> None:
    for name in ("gamma", "beta"):
        if args[name].shape[0] != width:
            raise InvalidInput(f"args.{name}: {args[name].shape[0]} elements, but X has "
                               f"{width} {what}")


@st.composite
def _layer_norm_args(draw) -> dict:
    b, d = draw(_shape(2))
    values = draw(st.sampled_from([f32_values(), f32_values(-20.0, 20.0)]))
    return {"x": draw(tensors_of_shape((b, d), values)),
            "gamma": draw(tensors_of_shape((d,), values)),
            "beta": draw(tensors_of_shape((d,), values)), "eps": draw(_eps())}


def _ln_bench(n: int, rng) -> list[dict]:
    b, d = _rows_bench(n, rng)
    return [{"x": random_tensor(rng, (b, d)), "gamma": random_tensor(rng, (d,)),
             "beta": random_tensor(rng, (d,)), "eps": EPS_BITS}]


declare(
    "kernel.layer_norm", chapter=12,
    summary="Y = layer norm of each row of X [B, D]: ordered mean and biased variance, "
            "inv = 1 / sqrtf(var + eps), y = (((x - mean) * inv) * gamma) + beta; bit-exact.",
    args=record(x=Field(TENSOR2, "X [B, D]"), gamma=Field(TENSOR1, "gamma [D]"),
                beta=Field(TENSOR1, "beta [D]"), eps=EPS),
    result=record(y=Field(TENSOR2, "Y [B, D]")),
    spec=(layer_norm,), check=lambda a: _check_affine(a, a["x"].shape[1], "columns"),
    domain=_layer_norm_args, obligations=("PO12.542",),
    invalid=(
        InvalidCase("a negative dim", lambda: st.just({"x": _neg(2), "gamma": wire([1]),
                                                       "beta": wire([1])})),
        InvalidCase("gamma of the wrong length", lambda: st.just(
            {"x": wire([2, 3]), "gamma": wire([2]), "beta": wire([3])})),
        InvalidCase("beta of the wrong length", lambda: st.just(
            {"x": wire([2, 3]), "gamma": wire([3]), "beta": wire([4])})),
        InvalidCase("2^40 elements", lambda: st.just({"x": _huge(2), "gamma": wire([1]),
                                                      "beta": wire([1])})),
        InvalidCase("an eps wider than 32 bits", lambda: st.just(
            {"x": wire([1, 1]), "gamma": wire([1]), "beta": wire([1]), "eps": "0x100000000"})),
    ),
    edges=lambda: [
        {"x": wire([2, 4], [1, 2, 3, 4, 5, 5, 5, 5]), "gamma": wire([4], [1, 1, 2, -1]),
         "beta": wire([4], [0, 0.5, -0.0, 0])},
        {"x": wire([1, 3], [1e30, -1e30, 0]), "gamma": wire([3], [1, 1, 1]),
         "beta": wire([3], [0, 0, 0]), "eps": "0x0"},
        {"x": wire([1, 2], [3, 3]), "gamma": wire([2], [1, 1]), "beta": wire([2], [0, 0]),
         "eps": "0x0"},
        {"x": wire([1, 3], [float("nan"), 1, 2]), "gamma": wire([3], [1, 1, 1]),
         "beta": wire([3], [0, 0, 0])},
        {"x": wire([1, 2], [1, 2]), "gamma": wire([2], [1, 1]), "beta": wire([2], [0, 0]),
         "eps": "0xbf800000"},
        {"x": wire([3, 0]), "gamma": wire([0]), "beta": wire([0])},
        {"x": wire([0, 2]), "gamma": wire([2], [1, 1]), "beta": wire([2], [0, 0])},
    ],
    bench=_ln_bench,
    work=lambda n: n,
)
"""Bench n: n elements as max(n / 1024, 1) rows of D = 1,024."""


# ── kernel.batch_norm ─────────────────────────────────────────────────────────────────────────


@st.composite
def _batch_norm_args(draw) -> dict:
    n, c, hw = draw(_shape(3, 4))
    values = draw(st.sampled_from([f32_values(), f32_values(-20.0, 20.0)]))
    return {"x": draw(tensors_of_shape((n, c, hw), values)),
            "gamma": draw(tensors_of_shape((c,), values)),
            "beta": draw(tensors_of_shape((c,), values)), "eps": draw(_eps())}


declare(
    "kernel.batch_norm", chapter=12,
    summary="Y = batch norm of X [N, C, HW] with training-mode statistics per channel (n "
            "outer, hw inner); bit-exact.",
    args=record(x=Field(TENSOR3, "X [N, C, HW] (an NCHW tensor with H, W flattened)"),
                gamma=Field(TENSOR1, "gamma [C]"), beta=Field(TENSOR1, "beta [C]"), eps=EPS),
    result=record(y=Field(TENSOR3, "Y [N, C, HW]")),
    spec=(batch_norm,), check=lambda a: _check_affine(a, a["x"].shape[1], "channels"),
    domain=_batch_norm_args, obligations=("PO12.542",),
    invalid=(
        InvalidCase("a negative dim", lambda: st.just({"x": _neg(3), "gamma": wire([1]),
                                                       "beta": wire([1])})),
        InvalidCase("gamma of the wrong length", lambda: st.just(
            {"x": wire([1, 2, 3]), "gamma": wire([3]), "beta": wire([2])})),
        InvalidCase("a 4-D X", lambda: st.just(
            {"x": wire([1, 2, 2, 2]), "gamma": wire([2]), "beta": wire([2])})),
        InvalidCase("2^40 elements", lambda: st.just({"x": _huge(3), "gamma": wire([1]),
                                                      "beta": wire([1])})),
    ),
    edges=lambda: [
        {"x": wire([2, 2, 2], [1, 2, 10, 10, 3, 4, -10, 30]), "gamma": wire([2], [1, 0.5]),
         "beta": wire([2], [0, 1])},
        {"x": wire([1, 1, 3], [float("inf"), 0, 1]), "gamma": wire([1], [1]),
         "beta": wire([1], [0])},
        {"x": wire([3, 1, 1], [7, 7, 7]), "gamma": wire([1], [2]), "beta": wire([1], [-0.0]),
         "eps": "0x0"},
        {"x": wire([0, 2, 3]), "gamma": wire([2], [1, 1]), "beta": wire([2], [0, 0])},
        {"x": wire([2, 3, 0]), "gamma": wire([3], [1, 1, 1]), "beta": wire([3], [0, 0, 0])},
    ],
    bench=lambda n, rng: [{"x": random_tensor(rng, (8, 64, max(n // 512, 1))),
                           "gamma": random_tensor(rng, (64,)),
                           "beta": random_tensor(rng, (64,)), "eps": EPS_BITS}],
    work=lambda n: n,
)
"""Bench n: X [8, 64, max(n / 512, 1)] (n elements), gamma and beta [64]."""


# ── kernel.maxpool2d ──────────────────────────────────────────────────────────────────────────


def _check_pool(args: dict) -> None:
    k = args["k"]
    if k < 1:
        raise InvalidInput("args.k: the window must be at least 1 (the seed divides by K)")
    n, c, h, w = args["x"].shape
    element_count([n, c, h // k, w // k], "result.y.shape")


@st.composite
def _maxpool_args(draw) -> dict:
    shape = draw(_shape(2, 3)) + draw(_shape(2, 6))
    return {"x": draw(tensors_of_shape(shape, _values())), "k": draw(st.integers(1, 4))}


declare(
    "kernel.maxpool2d", chapter=12,
    summary="Y [N, C, H/K, W/K] = K x K max pooling, stride K, std::max from -inf over kh, "
            "kw; bit-exact.",
    args=record(x=Field(TENSOR4, "X [N, C, H, W]"),
                k=Field(U32, "K, the window and the stride (>= 1; default 2)", 2)),
    result=record(y=Field(TENSOR4, "Y [N, C, floor(H/K), floor(W/K)]")),
    spec=(maxpool2d,), check=_check_pool, domain=_maxpool_args, obligations=("PO12.543",),
    invalid=(
        InvalidCase("a negative dim", lambda: st.just({"x": _neg(4)})),
        InvalidCase("a window of 0", lambda: st.just({"x": wire([1, 1, 2, 2]), "k": 0})),
        InvalidCase("a 3-D X", lambda: st.just({"x": wire([1, 2, 2])}), "bad_request"),
        InvalidCase("2^40 elements", lambda: st.just({"x": _huge(4)})),
    ),
    edges=lambda: [
        {"x": wire([1, 1, 4, 4], list(range(16)))},
        {"x": wire([1, 1, 2, 2], [float("nan"), 1, 2, 3])},
        {"x": wire([1, 1, 2, 2], [1, float("nan"), 2, 0])},
        {"x": wire([1, 1, 2, 2], [-0.0, 0.0, -0.0, -0.0])},
        {"x": wire([1, 1, 2, 2], [0.0, -0.0, -0.0, -0.0])},
        {"x": wire([1, 1, 2, 2], [float("-inf")] * 4)},
        {"x": wire([1, 2, 3, 5], [float(i % 7) - 3 for i in range(30)]), "k": 2},
        {"x": wire([1, 1, 3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]), "k": 4},
        {"x": wire([1, 1, 2, 3], [1, 2, 3, 4, 5, 6]), "k": 1},
        {"x": wire([0, 1, 2, 2])},
    ],
    bench=lambda n, rng: [{"x": random_tensor(rng, (1, 64, max(math.isqrt(n // 64), 2),
                                                   max(math.isqrt(n // 64), 2))), "k": 2}],
    work=lambda n: n,
)
"""Bench n: X [1, 64, s, s] with s = sqrt(n / 64) (about n elements), K = 2."""


# ── kernel.avgpool_global ─────────────────────────────────────────────────────────────────────


declare(
    "kernel.avgpool_global", chapter=12,
    summary="Y [N, C] = (ordered sum over hw of X [N, C, HW]) * (1 / (float)HW); bit-exact "
            "(HW = 0 gives 0 * inf, a NaN, as the seed does).",
    args=record(x=Field(TENSOR3, "X [N, C, HW] (an NCHW tensor with H, W flattened)")),
    result=record(y=Field(TENSOR2, "Y [N, C]")),
    spec=(avgpool_global,), obligations=("PO12.544",),
    domain=lambda: _shape(3, 5).flatmap(lambda s: st.fixed_dictionaries(
        {"x": tensors_of_shape(s, _values())})),
    invalid=(
        InvalidCase("a negative dim", lambda: st.just({"x": _neg(3)})),
        InvalidCase("a 2-D X", lambda: st.just({"x": wire([2, 2])}), "bad_request"),
        InvalidCase("2^40 elements", lambda: st.just({"x": _huge(3)})),
    ),
    edges=lambda: [
        {"x": wire([1, 2, 3], [1, 2, 3, 0.1, 0.2, 0.3])},
        {"x": wire([1, 1, 3], [3e38, 3e38, -3e38])},
        {"x": wire([1, 1, 2], [float("inf"), float("-inf")])},
        {"x": wire([2, 2, 0])},
        {"x": wire([0, 3, 4])},
    ],
    bench=lambda n, rng: [{"x": random_tensor(rng, (8, 64, max(n // 512, 1)))}],
    work=lambda n: n,
)
"""Bench n: X [8, 64, max(n / 512, 1)] (n elements)."""


# ── kernel.cross_entropy ──────────────────────────────────────────────────────────────────────


def _check_ce(args: dict) -> None:
    b, c = args["logits"].shape
    targets = args["targets"]
    if len(targets) != b:
        raise InvalidInput(f"args.targets: {len(targets)} targets for {b} rows of logits")
    _check_rows(args["logits"], "args.logits")
    for i, t in enumerate(targets):
        if not 0 <= t < c:
            raise InvalidInput(f"args.targets[{i}]: class {t} is outside 0..{c - 1}")


@st.composite
def _ce_args(draw) -> dict:
    b = draw(st.integers(0, 5))
    c = draw(st.integers(1, 6)) if b else draw(st.integers(0, 3))
    values = draw(st.sampled_from([f32_values(), f32_values(-20.0, 20.0), f32_values(-1.0, 1.0)]))
    return {"logits": draw(tensors_of_shape((b, c), values)),
            "targets": draw(st.lists(st.integers(0, max(c - 1, 0)), min_size=b, max_size=b))}


def _ce_bench(n: int, rng) -> list[dict]:
    b, c = _rows_bench(n, rng)
    return [{"logits": random_tensor(rng, (b, c), 4.0),
             "targets": rng.integers(0, c, size=b).tolist()}]


declare(
    "kernel.cross_entropy", chapter=12,
    summary="probs = softmax(logits [B, C]); loss = -(sum in b order of logf(std::max(probs[b, "
            "t_b], 1e-7f))) / (float)B as float32 bits; within 4 ulps (expf, logf).",
    args=record(logits=Field(TENSOR2, "logits [B, C], C >= 1 when B > 0"),
                targets=Field(List(I32, MAX_ELEMENTS), "B target classes, 0 <= t < C")),
    result=record(probs=Field(TENSOR2, "probs [B, C]"),
                  loss=Field(BITS32, "the mean loss as float32 bits (a NaN for B = 0)")),
    spec=(cross_entropy,), check=_check_ce, domain=_ce_args, compare=CROSS_ENTROPY_ENVELOPE,
    obligations=("PO12.541",),
    invalid=(
        InvalidCase("a negative dim", lambda: st.just({"logits": _neg(2), "targets": []})),
        InvalidCase("a target past the classes", lambda: st.just(
            {"logits": wire([1, 3]), "targets": [3]})),
        InvalidCase("a negative target", lambda: st.just(
            {"logits": wire([1, 3]), "targets": [-1]})),
        InvalidCase("fewer targets than rows", lambda: st.just(
            {"logits": wire([2, 3]), "targets": [0]})),
        InvalidCase("rows of no class", lambda: st.just(
            {"logits": wire([1, 0]), "targets": [0]})),
        InvalidCase("2^40 elements", lambda: st.just({"logits": _huge(2), "targets": []})),
    ),
    edges=lambda: [
        {"logits": MM2, "targets": [0, 2]},
        {"logits": wire([1, 2], [100, -100]), "targets": [1]},
        {"logits": wire([1, 2], [100, -100]), "targets": [0]},
        {"logits": wire([1, 3], [float("nan"), 0, 1]), "targets": [1]},
        {"logits": wire([1, 1], [5]), "targets": [0]},
        {"logits": wire([0, 4]), "targets": []},
    ],
    bench=_ce_bench,
    work=lambda n: n,
)
"""Bench n: n logits as max(n / 1024, 1) rows of C = 1,024, random targets."""
