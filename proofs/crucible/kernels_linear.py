"""Chapter 12 obligations of the linear CPU kernels: each sum's order, start and rounding are
pinned by an independent statement of the same sum (whole-array float32 updates, one per
reduction index in order), and by cases where only one order or one rounding gives the bits."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ...spec.core.f32_tensor import f32_values, tensors_of_shape
from ...spec.core.registry import Mutant
from ...spec.crucible.cpu_kernels import softmax_row
from ...spec.crucible.cpu_kernels_linear import conv2d, mm, sdpa
from ...spec.crucible.libm import sqrtf
from ..core.obligation import Property, property_obligation

F32 = np.float32
TINY = 2.0 ** -24
FUZZ = 1.0 + 2.0 ** -12


def _same_bits(want: np.ndarray, got: np.ndarray) -> None:
    assert want.shape == got.shape, (want.shape, got.shape)
    w, g = np.asarray(want, F32), np.asarray(got, F32)
    assert w.tobytes() == g.tobytes(), (w, g)


def _f32(rows) -> np.ndarray:
    return np.array(rows, dtype=F32)


def _updates_mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C as K rank-1 float32 updates in k order, from +0.0."""
    c = np.zeros((a.shape[0], b.shape[1]), dtype=F32)
    with np.errstate(all="ignore"):
        for t in range(a.shape[1]):
            c = c + np.outer(a[:, t], b[t, :]).astype(F32)
    return c


@st.composite
def _matrices(draw, k: st.SearchStrategy | None = None) -> tuple[np.ndarray, np.ndarray]:
    m, n = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    kk = draw(k if k is not None else st.integers(0, 5))
    return draw(tensors_of_shape((m, kk))), draw(tensors_of_shape((kk, n)))


MM_CASES = (
    (_f32([[1.0, TINY, TINY]]), _f32([[1.0], [1.0], [1.0]])),
    (_f32([[FUZZ, 1.0]]), _f32([[FUZZ], [-(1.0 + 2.0 ** -11)]])),
    (_f32([[-0.0], [3.0]]), _f32([[1.0, -0.0, 2.0]])),
    (_f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), _f32([[1.0, 0.5], [-1.0, 2.0], [0.25, 3.0]])),
)


def _mm_updates(case) -> None:
    a, b = case
    _same_bits(_updates_mm(a, b), mm(a, b))


def _mm_products(case) -> None:
    a, b = case
    c = mm(a, b)
    with np.errstate(all="ignore"):
        p = np.outer(a[:, 0], b[0, :]).astype(F32)
    _same_bits(np.where(p == 0, F32(0.0), p), c)
    _same_bits(c[::-1], mm(a[::-1].copy(), b))


@property_obligation(
    "PO12.520",
    "kernel.mm with K = 1 is the rounded product, a zero product giving +0.0 (the sum starts at "
    "+0.0), and reversing A's rows reverses C's rows.",
    covers=("kernel.mm",),
    subject=mm,
    mutants=(
        Mutant.edit("sum starts at -0.0", "the accumulator starts at -0.0", mm,
                    "total = F32(0.0)", "total = F32(-0.0)"),
        Mutant.edit("first term dropped", "k starts at 1", mm, "for t in range(k):",
                    "for t in range(1, k):"),
        Mutant.edit("row index from the end", "C's row i reads A's last row", mm,
                    "a[i, t]", "a[m - 1 - i, t]"),
    ),
)
def mm_products(_subject):
    return [Property("hand cases", _mm_products,
                     cases=lambda: [(_f32([[-0.0], [2.0]]), _f32([[1.0, -3.0]])),
                                    (_f32([[1.5], [-0.5]]), _f32([[FUZZ, 0.0]]))]),
            Property("generated K = 1", _mm_products, strategy=lambda: _matrices(st.just(1)),
                     examples=200)]


@property_obligation(
    "PO12.521",
    "kernel.mm equals K rank-1 float32 updates of a zero matrix in k order: every C[i, j] adds "
    "its products in k order from +0.0, each product and each sum rounded to binary32 (no "
    "fused multiply-add, no other order).",
    covers=("kernel.mm",),
    subject=mm,
    mutants=(
        Mutant.edit("k reversed", "the sum runs k from K - 1 down", mm, "for t in range(k):",
                    "for t in range(k - 1, -1, -1):"),
        Mutant.edit("fused multiply-add", "each step rounds once, as an FMA does", mm,
                    "total = total + a[i, t] * b[t, j]",
                    "total = F32(np.float64(total) + np.float64(a[i, t]) * np.float64(b[t, j]))"),
        Mutant.edit("float64 accumulator", "the products are summed in float64", mm,
                    "total = F32(0.0)", "total = np.float64(0.0)"),
        Mutant.edit("B transposed", "B is read as B[j, k]", mm, "b[t, j]", "b[j % k, t % n]"),
    ),
)
def mm_order(_subject):
    return [Property("order and rounding cases", _mm_updates, cases=lambda: MM_CASES),
            Property("generated matrices", _mm_updates, strategy=_matrices, examples=200)]


def _updates_conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Y as float32 updates of shifted windows, ci then kh then kw in order, from +0.0."""
    nb, ci_n, hi, wi = x.shape
    co_n, _, kh_n, kw_n = w.shape
    ho, wo = hi - kh_n + 1, wi - kw_n + 1
    y = np.zeros((nb, co_n, ho, wo), dtype=F32)
    with np.errstate(all="ignore"):
        for ci in range(ci_n):
            for kh in range(kh_n):
                for kw in range(kw_n):
                    y = y + (x[:, None, ci, kh:kh + ho, kw:kw + wo]
                             * w[None, :, ci, kh, kw, None, None]).astype(F32)
    return y


def _conv_updates(case) -> None:
    x, w = case
    _same_bits(_updates_conv(x, w), conv2d(x, w))


@st.composite
def _conv_args(draw) -> tuple[np.ndarray, np.ndarray]:
    nb, ci, co = draw(st.integers(0, 2)), draw(st.integers(0, 3)), draw(st.integers(0, 2))
    kh, kw = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    hi, wi = draw(st.integers(max(kh - 1, 0), 5)), draw(st.integers(max(kw - 1, 0), 5))
    return draw(tensors_of_shape((nb, ci, hi, wi))), draw(tensors_of_shape((co, ci, kh, kw)))


def _conv_cases() -> list:
    big = [1.0, TINY, TINY]
    return [
        (_f32(big).reshape(1, 3, 1, 1), _f32([1.0, 1.0, 1.0]).reshape(1, 3, 1, 1)),
        (_f32(big).reshape(1, 1, 3, 1), _f32([1.0, 1.0, 1.0]).reshape(1, 1, 3, 1)),
        (_f32(big).reshape(1, 1, 1, 3), _f32([1.0, 1.0, 1.0]).reshape(1, 1, 1, 3)),
        (_f32([1.0, TINY, TINY, 0.0]).reshape(1, 2, 2, 1),
         _f32([1.0, 1.0, 1.0, 0.0]).reshape(1, 2, 2, 1)),
        (_f32([1.0, TINY, TINY, 0.0]).reshape(1, 1, 2, 2),
         _f32([1.0, 1.0, 1.0, 0.0]).reshape(1, 1, 2, 2)),
        (_f32(range(12)).reshape(1, 1, 3, 4), _f32([1.0, -2.0, 0.5, 3.0, 0.25, -1.0]
                                                   ).reshape(1, 1, 2, 3)),
    ]


@property_obligation(
    "PO12.522",
    "kernel.conv2d equals float32 updates of a zero output by shifted windows of X times one "
    "weight, over ci, then kh, then kw in order: valid-mode cross-correlation (no flip, no "
    "padding, stride 1), each product and sum rounded to binary32 with the channel sum "
    "interleaved (not summed per channel first).",
    covers=("kernel.conv2d",),
    subject=conv2d,
    mutants=(
        Mutant.edit("convolution", "the window is flipped (true convolution)", conv2d,
                    "w[co, ci, kh, kw]", "w[co, ci, kh_n - 1 - kh, kw_n - 1 - kw]"),
        Mutant.edit("kh reversed", "the kernel rows are summed from the bottom", conv2d,
                    "for kh in range(kh_n):", "for kh in range(kh_n - 1, -1, -1):"),
        Mutant.edit("ci reversed", "the channels are summed from the last", conv2d,
                    "for ci in range(ci_n):", "for ci in range(ci_n - 1, -1, -1):"),
        Mutant.edit("kw reversed", "the kernel columns are summed from the right", conv2d,
                    "for kw in range(kw_n):", "for kw in range(kw_n - 1, -1, -1):"),
        Mutant.edit("rows and columns swapped", "the window's offsets are exchanged", conv2d,
                    "x[n, ci, ho + kh, wo + kw]", "x[n, ci, ho + kw % hi, wo + kh % wi]"),
    ),
)
def conv2d_order(_subject):
    return [Property("order and indexing cases", _conv_updates, cases=_conv_cases),
            Property("generated images", _conv_updates, strategy=_conv_args, examples=150)]


def _sdpa_formula(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Scores as D rank-1 updates, times 1/sqrtf(D); rows through softmax_row; Y as S updates."""
    nb, s, dim = q.shape
    y = np.zeros(q.shape, dtype=F32)
    with np.errstate(all="ignore"):
        scale = F32(1.0) / sqrtf(F32(dim))
        for b in range(nb):
            dot = np.zeros((s, s), dtype=F32)
            for d in range(dim):
                dot = dot + np.outer(q[b, :, d], k[b, :, d]).astype(F32)
            attn = np.stack([softmax_row(r) for r in dot * scale]) if s else dot
            for j in range(s):
                y[b] = y[b] + (attn[:, j, None] * v[b, j][None, :]).astype(F32)
    return y


def _sdpa_matches(case) -> None:
    q, k, v = case
    _same_bits(_sdpa_formula(q, k, v), sdpa(q, k, v))


@st.composite
def _sequences(draw) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    shape = (draw(st.integers(0, 2)), draw(st.integers(0, 4)), draw(st.integers(0, 4)))
    return tuple(draw(tensors_of_shape(shape, f32_values(-4.0, 4.0))) for _ in range(3))


def _sdpa_cases() -> list:
    t = _f32
    return [
        (t([[[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]]]), t([[[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]]]),
         t([[[1.0, TINY, 0.0], [TINY, 1.0, -1.0]]])),
        (t([[[1.0], [3.0]]]), t([[[2.0], [-1.0]]]), t([[[1.0], [TINY]]])),
        (t([[[0.3, 0.7], [1.1, -0.2], [0.9, 0.4]]]), t([[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]]),
         t([[[1.0, 0.0], [0.0, 1.0], [TINY, TINY]]])),
        (t([[[1.01, 0.0, 0.0], [1.01, 0.0, 0.0]]]), t([[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]),
         t([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])),
    ]


@property_obligation(
    "PO12.523",
    "kernel.sdpa equals: scores summed over d in order as float32 rank-1 updates, times "
    "1/sqrtf(D) (a reciprocal, then a multiply), each row through the shared softmax_row, and "
    "Y summed over j in order from +0.0.",
    covers=("kernel.sdpa",),
    subject=sdpa,
    mutants=(
        Mutant.edit("divide by sqrt", "the scores are divided by sqrtf(D)", sdpa,
                    "attn[i, j] = dot * scale", "attn[i, j] = dot / sqrtf(F32(dim))",
                    occurrence=2),
        Mutant.edit("scale by 1/D", "the scale is 1/D", sdpa,
                    "scale = F32(1.0) / sqrtf(F32(dim))", "scale = F32(1.0) / F32(dim)"),
        Mutant.edit("j reversed", "Y sums the positions from the last", sdpa,
                    "for j in range(s):\n                    total",
                    "for j in range(s - 1, -1, -1):\n                    total"),
        Mutant.edit("keys and queries swapped", "attn[i, j] uses K[i] and Q[j]", sdpa,
                    "q[b, i, d] * k[b, j, d]", "q[b, j, d] * k[b, i, d]"),
    ),
)
def sdpa_formula(_subject):
    return [Property("hand cases", _sdpa_matches, cases=_sdpa_cases),
            Property("generated sequences", _sdpa_matches, strategy=_sequences, examples=120)]


def _sdpa_shapes(case) -> None:
    q, k, v = case
    y = sdpa(q, k, v)
    if q.shape[1] == 1:
        with np.errstate(all="ignore"):
            _same_bits(np.where(v == 0, F32(0.0), v), y)
    if q.shape[1] >= 1:
        flat = np.broadcast_to(k[:, :1, :], k.shape).copy()
        uniform = sdpa(q, flat, v)
        _same_bits(uniform, sdpa(v, flat, v))
        _same_bits(uniform, sdpa(-q, flat, v))


@property_obligation(
    "PO12.524",
    "kernel.sdpa with one position returns V (a -0.0 as +0.0: the softmax of one score is "
    "exactly 1 and the sum starts at +0.0); when every key is the same each row's weights are "
    "equal, so Y does not depend on Q.",
    covers=("kernel.sdpa",),
    subject=sdpa,
    mutants=(
        Mutant.edit("no softmax", "the scores are used unnormalised", sdpa,
                    "attn[i] = softmax_row(attn[i])", "attn[i] = attn[i]"),
        Mutant.edit("softmax over columns", "the softmax runs down a column", sdpa,
                    "attn[i] = softmax_row(attn[i])", "attn[:, i] = softmax_row(attn[:, i])"),
        Mutant.edit("sum starts at -0.0", "Y's sums start at -0.0", sdpa,
                    "total = F32(0.0)", "total = F32(-0.0)"),
    ),
)
def sdpa_shapes(_subject):
    t = _f32
    cases = [(t([[[2.0, -1.0]]]), t([[[0.5, 3.0]]]), t([[[-0.0, 1.5]]])),
             (t([[[1.0], [2.0]]]), t([[[1.0], [5.0]]]), t([[[1.0], [-1.0]]])),
             (t([[[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]]]), t([[[1.0, 1.0], [2.0, 0.0], [0.0, 1.0]]]),
              t([[[1.0, -0.0], [-2.0, 0.5], [0.25, 4.0]]]))]
    return [Property("hand cases", _sdpa_shapes, cases=lambda: cases),
            Property("generated sequences", _sdpa_shapes, strategy=_sequences, examples=120)]
