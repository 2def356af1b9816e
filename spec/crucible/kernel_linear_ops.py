"""Chapter 12 ops of the linear CPU kernels: `kernel.mm`, `kernel.conv2d` (bit-exact) and
`kernel.sdpa` (within SDPA_ENVELOPE, for its expf)."""

from __future__ import annotations

from ..core.errors import InvalidInput
from ..core.f32_tensor import F32Tensor, element_count, f32_values, random_tensor, tensors_of_shape
from ..core.registry import InvalidCase, declare
from ..core.schema import Field, record
from ..core.strategies import st
from .cpu_kernels_linear import conv2d, mm, sdpa
from .kernel_ops import wire

MATRIX = F32Tensor(rank=2)
IMAGES = F32Tensor(rank=4)
SEQUENCES = F32Tensor(rank=3)
NAN, INF = float("nan"), float("inf")

SDPA_ENVELOPE = "ulp:f32=8,floor=1"
"""sdpa results may differ from the spec by 8 float32 ulps per element, or, where the spec's
|y| is below 2, by 8 ulps of 2 (2^-19 absolute): y sums attn * v over j with cancellation, so
a small y carries the absolute error of its larger terms (the domain's |v| is at most 8). The
only operation a kernel may do differently is expf: the cupy kernel computes exp in float64 and
rounds once, while the spec calls glibc's expf. Measured over 40000 random inputs (B 1-2, S
1-24, D 1-16, q, k, v uniform in [-s, s] for s = 8, 3, 1, 0.3): the float64-rounded path is
99.9% bit-identical to the spec, its largest error is 2.77 * 2^-24 * max_j |v[j, d]| (so at most
2^-19.5 in the domain), which is within 2 ulps of 2 below 2 and within 4 ulps above 2^-1;
plain ulps (no floor) reach 128 where y nearly cancels. The numba kernel (glibc's expf) is
bit-exact."""


def _check_mm(args: dict) -> None:
    (m, k), (k2, n) = args["a"].shape, args["b"].shape
    if k != k2:
        raise InvalidInput(f"args.b.shape: {k2} rows, but a has {k} columns")
    element_count([m, n], "result.c.shape")


def _check_conv2d(args: dict) -> None:
    _, ci, hi, wi = args["x"].shape
    co, ci2, kh, kw = args["w"].shape
    if ci != ci2:
        raise InvalidInput(f"args.w.shape[1]: {ci2} input channels, but x has {ci}")
    if kh > hi + 1 or kw > wi + 1:
        raise InvalidInput(f"args.w.shape: a {kh}x{kw} window does not fit a {hi}x{wi} image "
                           "(the output would have a negative dim)")
    element_count([args["x"].shape[0], co, hi - kh + 1, wi - kw + 1], "result.y.shape")


def _check_sdpa(args: dict) -> None:
    shape = args["q"].shape
    for name in ("k", "v"):
        if args[name].shape != shape:
            raise InvalidInput(f"args.{name}.shape: {list(args[name].shape)}, but q has "
                               f"{list(shape)}")
    element_count([shape[1], shape[1]], "the attention matrix [S, S]")


@st.composite
def _mm_args(draw) -> dict:
    m, k, n = (draw(st.integers(0, 6)) for _ in range(3))
    return {"a": draw(tensors_of_shape((m, k))), "b": draw(tensors_of_shape((k, n)))}


@st.composite
def _conv2d_args(draw) -> dict:
    nb, ci, co, kh, kw = (draw(st.integers(0, 3)) for _ in range(5))
    hi = draw(st.integers(max(kh - 1, 0), 5))
    wi = draw(st.integers(max(kw - 1, 0), 5))
    return {"x": draw(tensors_of_shape((nb, ci, hi, wi))),
            "w": draw(tensors_of_shape((co, ci, kh, kw)))}


@st.composite
def _sdpa_args(draw) -> dict:
    shape = (draw(st.integers(0, 3)), draw(st.integers(0, 6)), draw(st.integers(0, 6)))
    values = f32_values(-8.0, 8.0)
    return {name: draw(tensors_of_shape(shape, values)) for name in ("q", "k", "v")}


def _bench_mm(n: int, rng) -> list[dict]:
    """n gives an n x n by n x n product (n^3 multiply-adds); 1024 is the usual size."""
    return [{"a": random_tensor(rng, (n, n)), "b": random_tensor(rng, (n, n))}]


def _bench_conv2d(n: int, rng) -> list[dict]:
    """n gives a ResNet basic-block 3x3 convolution: one n x n image of 64 channels, 64
    filters of 64 x 3 x 3 (56 is ResNet-18's first stage)."""
    return [{"x": random_tensor(rng, (1, 64, n, n)), "w": random_tensor(rng, (64, 64, 3, 3), 0.1)}]


def _bench_sdpa(n: int, rng) -> list[dict]:
    """n gives one sequence of n positions with a head of 64 (B = 1, S = n, D = 64)."""
    return [{name: random_tensor(rng, (1, n, 64)) for name in ("q", "k", "v")}]


declare(
    "kernel.mm", chapter=12,
    summary="C = A B, each C[i, j] summed over k in order from +0.0, no FMA; bit-exact.",
    args=record(a=Field(MATRIX, "A [M, K]"), b=Field(MATRIX, "B [K, N]")),
    result=record(c=Field(MATRIX, "C [M, N]")),
    spec=(mm,), check=_check_mm, domain=_mm_args,
    invalid=(
        InvalidCase("inner dims that differ", lambda: st.just({"a": wire([2, 3]),
                                                               "b": wire([2, 2])})),
        InvalidCase("a negative dim", lambda: st.just({"a": {"shape": [-1, 2], "data": ""},
                                                       "b": wire([2, 1])})),
        InvalidCase("a vector for A", lambda: st.just({"a": wire([3]), "b": wire([3, 1])}),
                    "bad_request"),
        InvalidCase("2^40 elements", lambda: st.just({"a": {"shape": [1 << 20, 1 << 20],
                                                            "data": ""}, "b": wire([1, 1])})),
        InvalidCase("an output of 2^28 elements from empty inputs",
                    lambda: st.just({"a": wire([1 << 14, 0]), "b": wire([0, 1 << 14])})),
    ),
    edges=lambda: [
        {"a": wire([2, 2], [1, 2, 3, 4]), "b": wire([2, 2], [5, 6, 7, 8])},
        {"a": wire([1, 3], [1e38, 1e38, -1e38]), "b": wire([3, 1], [10, 10, 10])},
        {"a": wire([1, 3], [1, 2 ** -24, 2 ** -24]), "b": wire([3, 1], [1, 1, 1])},
        {"a": wire([1, 2], [-0.0, -0.0]), "b": wire([2, 1], [1, 1])},
        {"a": wire([2, 2], [INF, 0, NAN, 1]), "b": wire([2, 2], [0, 1, 2, 3])},
        {"a": wire([2, 0]), "b": wire([0, 3])},
        {"a": wire([0, 4]), "b": wire([4, 2])},
    ],
    bench=_bench_mm, work=lambda n: n ** 3,
    obligations=("PO12.520", "PO12.521"),
)

declare(
    "kernel.conv2d", chapter=12,
    summary="Valid-mode 2-D cross-correlation, stride 1; each output sums ci, kh, kw in that "
            "order from +0.0, no FMA; bit-exact.",
    args=record(x=Field(IMAGES, "X [N, Ci, Hi, Wi]"), w=Field(IMAGES, "W [Co, Ci, Kh, Kw]")),
    result=record(y=Field(IMAGES, "Y [N, Co, Hi - Kh + 1, Wi - Kw + 1]")),
    spec=(conv2d,), check=_check_conv2d, domain=_conv2d_args,
    invalid=(
        InvalidCase("channels that differ", lambda: st.just({"x": wire([1, 2, 3, 3]),
                                                             "w": wire([1, 3, 1, 1])})),
        InvalidCase("a window taller than the image plus one",
                    lambda: st.just({"x": wire([1, 1, 2, 2]), "w": wire([1, 1, 4, 4])})),
        InvalidCase("a negative dim", lambda: st.just({"x": {"shape": [1, 1, -3, 3],
                                                             "data": ""},
                                                       "w": wire([1, 1, 1, 1])})),
        InvalidCase("a matrix for X", lambda: st.just({"x": wire([3, 3]),
                                                       "w": wire([1, 1, 1, 1])}), "bad_request"),
        InvalidCase("2^40 elements", lambda: st.just({"x": {"shape": [1 << 10] * 4, "data": ""},
                                                      "w": wire([1, 1, 1, 1])})),
        InvalidCase("an output of 2^40 elements from an empty filter",
                    lambda: st.just({"x": wire([1, 0, 1 << 12, 1 << 12]),
                                     "w": wire([1 << 16, 0, 1, 1])})),
    ),
    edges=lambda: [
        {"x": wire([1, 1, 3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]),
         "w": wire([1, 1, 2, 2], [1, 0, 0, -1])},
        {"x": wire([1, 2, 1, 1], [1e38, -1e38]), "w": wire([2, 2, 1, 1], [10, 10, 1, 1])},
        {"x": wire([1, 2, 2, 1], [1, 2 ** -24, 1, 1]), "w": wire([1, 2, 2, 1], [1, 1, 2 ** -24,
                                                                              0])},
        {"x": wire([1, 1, 2, 2], [-0.0, -0.0, NAN, INF]), "w": wire([1, 1, 1, 1], [1])},
        {"x": wire([1, 1, 2, 2], [1, 2, 3, 4]), "w": wire([2, 1, 3, 3])},
        {"x": wire([2, 0, 2, 2]), "w": wire([3, 0, 1, 1])},
    ],
    bench=_bench_conv2d, work=lambda n: 64 * 64 * 9 * max(n - 2, 1) ** 2,
    obligations=("PO12.522",),
)

declare(
    "kernel.sdpa", chapter=12,
    summary="Single-head attention, no mask: softmax(Q K^T / sqrt(D)) V per batch, sums in "
            "order, glibc expf; within 8 ulps (floor 2).",
    args=record(q=Field(SEQUENCES, "Q [B, S, D]"), k=Field(SEQUENCES, "K [B, S, D]"),
                v=Field(SEQUENCES, "V [B, S, D]")),
    result=record(y=Field(SEQUENCES, "Y [B, S, D]")),
    spec=(sdpa,), check=_check_sdpa, domain=_sdpa_args, compare=SDPA_ENVELOPE,
    invalid=(
        InvalidCase("K of another shape", lambda: st.just({"q": wire([1, 2, 2]),
                                                           "k": wire([1, 3, 2]),
                                                           "v": wire([1, 2, 2])})),
        InvalidCase("a negative dim", lambda: st.just({"q": {"shape": [1, -2, 2], "data": ""},
                                                       "k": wire([1, 2, 2]),
                                                       "v": wire([1, 2, 2])})),
        InvalidCase("2^40 elements", lambda: st.just({"q": {"shape": [1 << 20, 1 << 20, 1],
                                                            "data": ""},
                                                      "k": wire([1, 1, 1]),
                                                      "v": wire([1, 1, 1])})),
        InvalidCase("an attention matrix of 2^28 elements",
                    lambda: st.just({name: wire([1, 1 << 14, 0]) for name in "qkv"})),
    ),
    edges=lambda: [
        {"q": wire([1, 2, 2], [1, 0, 0, 1]), "k": wire([1, 2, 2], [1, 0, 0, 1]),
         "v": wire([1, 2, 2], [1, 2, 3, 4])},
        {"q": wire([1, 2, 1], [100, -100]), "k": wire([1, 2, 1], [100, -100]),
         "v": wire([1, 2, 1], [1, -1])},
        {"q": wire([1, 2, 1], [NAN, 1]), "k": wire([1, 2, 1], [1, 1]),
         "v": wire([1, 2, 1], [1, 1])},
        {"q": wire([1, 1, 1], [INF]), "k": wire([1, 1, 1], [1]), "v": wire([1, 1, 1], [-0.0])},
        {"q": wire([2, 0, 3]), "k": wire([2, 0, 3]), "v": wire([2, 0, 3])},
        {"q": wire([1, 2, 0]), "k": wire([1, 2, 0]), "v": wire([1, 2, 0])},
    ],
    bench=_bench_sdpa, work=lambda n: 2 * 64 * n * n,
    obligations=("PO12.523", "PO12.524"),
)
