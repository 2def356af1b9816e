"""Chapter 12 obligations of the elementwise and layout CPU kernels: what pins each kernel's
comparison, rounding, operation order and indexing."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ...spec.core.f32_tensor import f32_values, tensors_of_shape
from ...spec.core.registry import Mutant
from ...spec.crucible.cpu_kernels import (
    F32,
    add,
    f32_of_bits,
    fill,
    gelu,
    index_select,
    mul,
    relu,
    relu_bwd,
    sigmoid,
    silu,
    sub,
    transpose_2d,
)
from ...spec.crucible.libm import libm_name
from ..core.obligation import Property, property_obligation

NAN = float("nan")


def _bits(a: np.ndarray) -> list[int]:
    return np.ascontiguousarray(a, dtype=np.float32).reshape(-1).view(np.uint32).tolist()


def _arr(values) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def _vectors(n_max: int = 12) -> st.SearchStrategy:
    return st.integers(0, n_max).flatmap(lambda n: tensors_of_shape((n,)))


# ── PO12.500: relu and relu_bwd ───────────────────────────────────────────────────────────────


def _relu_holds(a: np.ndarray) -> None:
    got = relu(a)
    assert got.shape == a.shape
    for x, xb, g in zip(a.reshape(-1), _bits(a), _bits(got), strict=True):
        assert g == (xb if x > 0 else 0), (x, hex(g))
    assert _bits(relu_bwd(a, a)) == _bits(got)
    ones = np.ones_like(a)
    assert _bits(relu_bwd(ones, a)) == [0x3F800000 if x > 0 else 0 for x in a.reshape(-1)]


def _relu_cases() -> list[np.ndarray]:
    return [_arr([-0.0, 0.0, NAN, -NAN, 1e-45, -1e-45, float("inf"), float("-inf"), 2.0, -3.0]),
            _arr([]), _arr([[1.5, -0.0], [NAN, 4.0]])]


@property_obligation(
    "PO12.500",
    "relu gives A[i]'s own bits where A[i] > 0 and +0 everywhere else (-0, NaN of either sign, "
    "negatives); relu_bwd(grad, input) passes grad[i] exactly where input[i] > 0 and is +0 "
    "elsewhere, so relu(A) = relu_bwd(A, A) bit for bit and relu_bwd(1, A) is the step function.",
    covers=("kernel.relu", "kernel.relu_bwd"),
    subject=relu,
    mutants=(
        Mutant.edit(">= for >", "relu(-0) keeps -0 and relu(0) reads A", relu,
                    "x[i] if x[i] > F32(0.0)", "x[i] if x[i] >= F32(0.0)"),
        Mutant.edit("NaN passes", "relu written as not (A <= 0): NaN passes through", relu,
                    "x[i] if x[i] > F32(0.0)", "x[i] if not x[i] <= F32(0.0)"),
        Mutant.edit("relu_bwd passes the input", "the backward pass returns input, not grad",
                    relu_bwd, "c[i] = g[i] if", "c[i] = x[i] if"),
        Mutant.edit("relu_bwd tests grad", "the mask is taken from grad, not input", relu_bwd,
                    "if x[i] > F32(0.0)", "if g[i] > F32(0.0)"),
        Mutant.edit("-0 for zero", "the else branch is -0", relu, "else F32(0.0)",
                    "else F32(-0.0)"),
    ),
)
def relu_masks(_subject):
    return [Property("signed zeros, NaNs, infinities, subnormals", _relu_holds, cases=_relu_cases),
            Property("generated vectors", _relu_holds, strategy=_vectors, examples=150)]


# ── PO12.501: sub and mul round once, pairwise ────────────────────────────────────────────────


def _rounded_once(a: np.ndarray, b: np.ndarray, op) -> np.ndarray:
    with np.errstate(all="ignore"):
        return op(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)


def _sub_mul_hold(case: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = case
    assert _bits(add(a, b)) == _bits(_rounded_once(a, b, np.add)), (a, b)
    assert _bits(sub(a, b)) == _bits(_rounded_once(a, b, np.subtract)), (a, b)
    assert _bits(mul(a, b)) == _bits(_rounded_once(a, b, np.multiply)), (a, b)
    assert sub(a, b).shape == mul(a, b).shape == a.shape


def _pairs() -> st.SearchStrategy:
    return st.integers(0, 10).flatmap(lambda n: st.tuples(tensors_of_shape((n,)),
                                                          tensors_of_shape((n,))))


def _tiled_holds(case: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = case
    tiled = np.resize(b.reshape(-1), a.size).reshape(a.shape)
    assert _bits(add(a, b)) == _bits(_rounded_once(a, tiled, np.add)), (a, b)


def _tiled_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    return [(_arr([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), _arr([10.0, 20.0, 30.0])),
            (_arr([1.0, 2.0, 3.0, 4.0, 5.0]), _arr([0.5, -0.5])),
            (_arr([7.0, 8.0]), _arr([-0.0]))]


def _sub_mul_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    return [(_arr([1.0, 2.0, 7.0]), _arr([3.0, 5.0, 11.0])),
            (_arr([1.0, 3e38, 1e-30, 0.0]), _arr([1e-8, -3e38, 1e-30, -0.0])),
            (_arr([[2.5, -1.0], [0.1, 16777216.0]]), _arr([[0.5, -1.0], [0.3, 1.0]])),
            (_arr([1e-45, 3e-45]), _arr([1.0, 1.0]))]


@property_obligation(
    "PO12.501",
    "add, sub and mul pair A[i] with B[i] and round once: each C[i] is the binary64 sum, "
    "difference or product of A[i] and B[i] rounded to binary32 (binary64 holds a binary32 "
    "product exactly and rounds a sum so that one rounding to binary32 is correct); add with "
    "a shorter B pairs A[i] with B[i mod |B|]; shape kept.",
    covers=("kernel.add", "kernel.sub", "kernel.mul"),
    subject=sub,
    mutants=(
        Mutant.edit("add tiles by division", "B[i // |B|] instead of B[i mod |B|]", add,
                    "y[i % y.size]", "y[min(i // y.size, y.size - 1)]"),
        Mutant.edit("add skips the first tile", "B[(i + 1) mod |B|]", add,
                    "y[i % y.size]", "y[(i + 1) % y.size]"),
        Mutant.edit("reversed sub", "B - A", sub, "c[i] = x[i] - y[i]", "c[i] = y[i] - x[i]"),
        Mutant.edit("sub adds", "A + B", sub, "c[i] = x[i] - y[i]", "c[i] = x[i] + y[i]"),
        Mutant.edit("mul pairs with B reversed", "B read back to front", mul,
                    "c[i] = x[i] * y[i]", "c[i] = x[i] * y[y.size - 1 - i]"),
        Mutant.edit("mul through a half", "A * B computed as (A * 0.5) * (B * 2): an extra "
                    "rounding at subnormals and overflow", mul, "c[i] = x[i] * y[i]",
                    "c[i] = (x[i] * F32(0.5)) * (y[i] * F32(2.0))"),
    ),
)
def sub_mul_round_once(_subject):
    return [Property("hand-picked pairs", _sub_mul_hold, cases=_sub_mul_cases),
            Property("bias tiling", _tiled_holds, cases=_tiled_cases),
            Property("generated pairs", _sub_mul_hold, strategy=_pairs, examples=150)]


# ── PO12.502: gelu, sigmoid and silu ──────────────────────────────────────────────────────────

GOLDEN_INPUTS = (-2.0, -0.5, 0.0, 0.5, 2.0)
GOLDEN = {
    "gelu": (0xBD3A5E80, 0xBE1DF8A2, 0x00000000, 0x3EB103AF, 0x3FFA2D0C),
    "sigmoid": (0x3DF420A9, 0x3EC14D03, 0x3F000000, 0x3F1F597F, 0x3F617BEA),
    "silu": (0xBE7420A9, 0xBE414D03, 0x00000000, 0x3E9F597F, 0x3FE17BEA),
}
"""The facts sheet's glibc samples (§14.1)."""
SILU_WITNESS = 0x3F8C3FAC
"""x = 1.0956931: x * (1 / (1 + e)) and x / (1 + e) round differently here."""


def _transcendental_holds(a: np.ndarray) -> None:
    s = sigmoid(a)
    assert _bits(silu(a)) == _bits(mul(a, s)), "silu is A times sigmoid(A)"
    x = a.reshape(-1)
    for v, g, sg in zip(x, _bits(gelu(a)), s.reshape(-1), strict=True):
        if v >= F32(6.0):
            assert g == _bits(_arr([v]))[0], ("gelu(x) = x where erf(x k) = 1", v)
        if v <= F32(-10.0):
            assert g == 0x80000000, ("gelu(x) = -0 where erf(x k) = -1", v)
        if v == 0:
            assert g == _bits(_arr([v]))[0], ("gelu(+-0) = +-0", v)
            assert sg == F32(0.5)
        if v >= F32(0.0):
            assert F32(0.5) <= sg <= F32(1.0), ("sigmoid of x >= 0 in [0.5, 1]", v, sg)
        else:
            assert F32(0.0) <= sg <= F32(0.5), ("sigmoid of x < 0 in [0, 0.5]", v, sg)


def _golden_holds(_case: None) -> None:
    x = _arr(GOLDEN_INPUTS)
    if libm_name() == "glibc":
        for name, fn in (("gelu", gelu), ("sigmoid", sigmoid), ("silu", silu)):
            assert tuple(_bits(fn(x))) == GOLDEN[name], name
    w = _arr([f32_of_bits(SILU_WITNESS)])
    assert _bits(silu(w)) == _bits(mul(w, sigmoid(w)))


@property_obligation(
    "PO12.502",
    "gelu, sigmoid and silu reproduce the facts sheet's glibc samples at -2, -0.5, 0, 0.5, 2; "
    "silu(A) is bit for bit A * sigmoid(A) (a multiplication by the sigmoid, not a division "
    "by 1 + expf(-A)); sigmoid(+-0) = 0.5 and sigmoid maps x >= 0 into [0.5, 1] and x < 0 "
    "into [0, 0.5]; gelu(x) = x for x >= 6, gelu(x) = -0 for x <= -10, gelu(+-0) = +-0.",
    covers=("kernel.gelu", "kernel.sigmoid", "kernel.silu"),
    subject=gelu,
    mutants=(
        Mutant.edit("erf without k", "erff(A) instead of erff(A k)", gelu,
                    "erff(x[i] * GELU_K)", "erff(x[i])"),
        Mutant.edit("gelu 1 - erf", "1 - erff instead of 1 + erff", gelu,
                    "h * (F32(1.0) + e)", "h * (F32(1.0) - e)"),
        Mutant.edit("sigmoid of +A", "expf(A) instead of expf(-A)", sigmoid,
                    "e = expf(-x[i])", "e = expf(x[i])"),
        Mutant.edit("silu divides", "A / (1 + e) instead of A * s", silu, "c[i] = x[i] * s",
                    "c[i] = x[i] / (F32(1.0) + e)"),
        Mutant.edit("silu of the wrong sign", "s from expf(A)", silu, "e = expf(-x[i])",
                    "e = expf(x[i])"),
    ),
)
def transcendentals(_subject):
    return [Property("the facts' samples and a silu rounding witness", _golden_holds,
                     cases=lambda: [None]),
            Property("hand-picked inputs", _transcendental_holds, cases=lambda: [
                _arr([-0.0, 0.0, 6.0, 100.0, -10.0, -1e4, 1e-45, -3.5, 1.0956931])]),
            Property("generated vectors", _transcendental_holds,
                     strategy=lambda: st.integers(0, 8).flatmap(
                         lambda n: tensors_of_shape((n,), f32_values(-120, 120))),
                     examples=100)]


# ── PO12.503: fill, transpose_2d and index_select copy bits ───────────────────────────────────


def _layout_holds(x: np.ndarray) -> None:
    batch, m, n = x.shape
    y = transpose_2d(x)
    assert y.shape == (batch, n, m)
    assert _bits(y) == _bits(np.ascontiguousarray(x.transpose(0, 2, 1)))
    assert _bits(transpose_2d(y)) == _bits(x)
    for idx in range(m):
        row = index_select(x, idx)
        assert row.shape == (batch, n)
        assert _bits(row) == _bits(np.ascontiguousarray(x[:, idx, :])), idx
    for bits in (0x7F800001, 0x80000000, 0xFFC00001, 0x3F800000):
        c = fill([batch, m, n], bits)
        assert c.shape == (batch, m, n) and set(_bits(c)) <= {bits}


def _layout_cases() -> list[np.ndarray]:
    nan_payload = f32_of_bits(0x7FA00001)
    return [np.arange(24, dtype=np.float32).reshape(2, 3, 4),
            np.arange(18, dtype=np.float32).reshape(3, 2, 3),
            _arr([[[nan_payload, -0.0], [1e-45, float("-inf")]]]),
            np.zeros((0, 2, 3), dtype=np.float32), np.zeros((2, 3, 0), dtype=np.float32)]


@property_obligation(
    "PO12.503",
    "transpose_2d, index_select and fill only move bits: Y[b, j, i] = X[b, i, j] for every "
    "matrix (so transposing twice is the identity), index_select(X, idx) is X[:, idx, :] for "
    "each 0 <= idx < S, and fill writes the given pattern into every element (a signalling "
    "NaN's payload and -0 included).",
    covers=("kernel.transpose_2d", "kernel.index_select", "kernel.fill"),
    subject=transpose_2d,
    mutants=(
        Mutant.edit("no transpose", "Y written in X's order", transpose_2d,
                    "y[b * n * m + j * m + i]", "y[b * n * m + i * n + j]"),
        Mutant.edit("batch offset dropped", "every matrix read from the first", transpose_2d,
                    "src[b * m * n + i * n + j]", "src[i * n + j]"),
        Mutant.edit("index from the wrong stride", "rows strided by D instead of S",
                    index_select, "(b * s + idx) * d", "(b * d + idx) * d"),
        Mutant.edit("fill through a double", "the value converted via a Python float "
                    "(quiets a signalling NaN)", fill, "c[i] = v", "c[i] = F32(float(v))"),
    ),
)
def layout_copies(_subject):
    return [Property("hand-picked tensors", _layout_holds, cases=_layout_cases),
            Property("generated tensors", _layout_holds,
                     strategy=lambda: st.lists(st.integers(0, 5), min_size=3, max_size=3).flatmap(
                         lambda s: tensors_of_shape(tuple(s))), examples=100)]
