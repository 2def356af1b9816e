"""Proof obligations of chapter 12's normalisation and pooling kernels (PO12.540-544): each
pins the loop order, the rounding or the std::max semantics of the spec's own functions."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from ...spec.core.f32_tensor import f32_values, tensors_of_shape
from ...spec.core.registry import Mutant
from ...spec.crucible.cpu_kernels import softmax_row
from ...spec.crucible.cpu_kernels_norm import (
    PROB_FLOOR,
    avgpool_global,
    batch_norm,
    bits_of_f32,
    cross_entropy,
    f32_of_bits,
    layer_norm,
    maxpool2d,
    softmax,
)
from ...spec.crucible.libm import logf
from ..core.obligation import Property, property_obligation

F32 = np.float32
NAN = F32(np.nan)
GOLDEN_MM2 = "3e02dd2a bd482eaa bda930e5 bd8b5899 3d408ac2 3c8217e1"
GOLDEN_SOFTMAX = "3ec154b6 3ea205b4 3e9ca595 3e9f8726 3eb2fa88 3ead7e51"
"""The MLP test's mm2 and its softmax (facts §14.1)."""


def _words(text: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.array([int(w, 16) for w in text.split()], dtype=np.uint32).view(
        np.float32).reshape(shape)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal shapes and values (+0 equals -0; NaN equals NaN)."""
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


# ── PO12.540: softmax ─────────────────────────────────────────────────────────────────────────


def _small_int_rows() -> st.SearchStrategy:
    return st.tuples(st.integers(1, 4), st.integers(1, 6)).flatmap(
        lambda s: st.tuples(tensors_of_shape(s, st.integers(-20, 20).map(float)),
                            st.integers(-64, 64)))


def _softmax_shift(case) -> None:
    x, c = case
    y = softmax(x)
    assert _same_bits(softmax((x + F32(c)).astype(F32)), y), (x, c)
    assert _same_bits(softmax(x[::-1].copy()), y[::-1]), x
    for r in range(x.shape[0]):
        assert _same_bits(y[r], softmax_row(x[r])), r


def _softmax_cases():
    return [None]


def _softmax_fixed(_case) -> None:
    got = softmax(_words(GOLDEN_MM2, (2, 3)))
    assert _same_bits(got, _words(GOLDEN_SOFTMAX, (2, 3))), got
    assert _same_bits(softmax(np.array([[F32(-3.5)]], dtype=F32)), np.ones((1, 1), F32))
    for d in (3, 5, 7):
        want = np.full((1, d), F32(1.0) / F32(d), dtype=F32)
        assert _same_bits(softmax(np.full((1, d), F32(-9.0), dtype=F32)), want), d
    nan_first = softmax(np.array([[NAN, 1.0, 2.0]], dtype=F32))
    assert np.all(np.isnan(nan_first)), nan_first


@property_obligation(
    "PO12.540",
    "softmax: each row is softmax_row of that row (rows permute with the output); subtracting "
    "the std::max scan from x[0] makes a row of small integers shifted by an integer give the "
    "same bits; a row of one element is 1; a row of D equal values is 1 * (1/D); a NaN at "
    "x[0] makes the row NaN; the MLP test's softmax of mm2 is the facts' golden bits.",
    covers=("kernel.softmax",),
    subject=softmax,
    mutants=(
        Mutant.edit("row 0 everywhere", "every row is computed from the first",
                    softmax, "softmax_row(x[r])", "softmax_row(x[0])"),
        Mutant.edit("no max subtraction", "exp of x, not of x - max",
                    softmax_row, "expf(x[d] - mx)", "expf(x[d])", occurrence=2),
        Mutant.edit("max from zero", "the scan starts at 0, not at x[0]",
                    softmax_row, "mx = x[0]", "mx = F32(0.0)", occurrence=2),
        Mutant.edit("divide by the sum", "each y is divided by the sum, not scaled by 1/sum",
                    softmax_row, "y[d] = y[d] * inv", "y[d] = y[d] / total", occurrence=2),
    ),
)
def softmax_rows(_subject):
    return [Property("the golden row, one element, equal values and a leading NaN",
                     _softmax_fixed, cases=_softmax_cases),
            Property("rows of small integers shifted, reversed and one by one",
                     _softmax_shift, strategy=_small_int_rows, examples=150)]


# ── PO12.541: cross_entropy ───────────────────────────────────────────────────────────────────


def _ce_rows() -> st.SearchStrategy:
    return st.integers(1, 6).flatmap(lambda c: st.tuples(
        tensors_of_shape((1, c), f32_values(-20.0, 20.0)), st.integers(0, c - 1)))


def _ce_one_row(case) -> None:
    x, t = case
    probs, loss = cross_entropy(x, [t])
    p = probs[0, t]
    want = F32(F32(0.0) - logf(p if p >= PROB_FLOOR else PROB_FLOOR))
    assert bits_of_f32(loss) == bits_of_f32(want), (x, t, loss, want)
    _, twice = cross_entropy(np.concatenate([x, x]), [t, t])
    assert bits_of_f32(twice) == bits_of_f32(loss), (x, t, twice, loss)


def _ce_fixed(_case) -> None:
    _, loss = cross_entropy(np.array([[0.0, -200.0]], dtype=F32), [1])
    assert bits_of_f32(loss) == bits_of_f32(F32(0.0) - logf(F32(1e-7))), loss
    _, loss = cross_entropy(np.array([[0.0, -200.0, 1.0]], dtype=F32), [0])
    _, wide = cross_entropy(np.array([[0.0, -200.0, 1.0]] * 2, dtype=F32), [0, 0])
    assert bits_of_f32(wide) == bits_of_f32(loss), (wide, loss)
    _, loss = cross_entropy(np.array([[NAN, 0.0, 1.0]], dtype=F32), [1])
    assert np.isnan(loss), loss
    _, loss = cross_entropy(np.zeros((0, 3), dtype=F32), [])
    assert np.isnan(loss), loss


@property_obligation(
    "PO12.541",
    "cross_entropy: for one row the loss is 0 - logf(std::max(p_t, 1e-7f)); two copies of a "
    "row give the same loss (a mean over B, not a sum, not over C); a target probability that "
    "underflows to 0 is clamped to 1e-7f; a NaN probability stays NaN (std::max keeps its "
    "first argument); B = 0 gives 0 / 0, a NaN.",
    covers=("kernel.cross_entropy",),
    subject=cross_entropy,
    mutants=(
        Mutant.edit("no clamp", "logf of the probability itself",
                    cross_entropy, "logf(std_max(probs[b, t], PROB_FLOOR))",
                    "logf(probs[b, t])"),
        Mutant.edit("clamp arguments swapped", "std::max(1e-7f, p): a NaN probability is "
                    "clamped", cross_entropy, "std_max(probs[b, t], PROB_FLOOR)",
                    "std_max(PROB_FLOOR, probs[b, t])"),
        Mutant.edit("sum, not mean", "the loss is not divided by B",
                    cross_entropy, "loss = loss / F32(len(targets))", "loss = loss"),
        Mutant.edit("mean over classes", "the loss is divided by C",
                    cross_entropy, "F32(len(targets))", "F32(logits.shape[1])"),
        Mutant.edit("empty batch is 0", "B = 0 divides by 1",
                    cross_entropy, "F32(len(targets))", "F32(max(len(targets), 1))"),
        Mutant.edit("sign", "the log is added", cross_entropy, "loss = loss - logf",
                    "loss = loss + logf", occurrence=2),
    ),
)
def cross_entropy_loss(_subject):
    return [Property("an underflowing target, classes vs rows, a NaN, an empty batch",
                     _ce_fixed, cases=_softmax_cases),
            Property("single rows and doubled rows", _ce_one_row, strategy=_ce_rows,
                     examples=150)]


# ── PO12.542: layer_norm and batch_norm ───────────────────────────────────────────────────────

EPS = f32_of_bits(0x3727C5AC)


def _pm_rows() -> st.SearchStrategy:
    """Rows [m - delta, m + delta, ...] (even length) with m, delta powers of two."""
    return st.tuples(st.integers(1, 3), st.integers(-4, 4), st.integers(-3, 3),
                     st.integers(0, 1)).flatmap(lambda t: tensors_of_shape(
                         (2 * t[0],), f32_values(-4.0, 4.0)).map(lambda g, t=t: (t, g)))


def _ln_pm(case) -> None:
    (half, m, e, neg), gamma = case
    mid, delta = F32(2.0 ** m) * F32(-1 if neg else 1), F32(2.0 ** e)
    x = np.array([[mid - delta, mid + delta] * half], dtype=F32)
    beta = np.linspace(-1, 1, 2 * half, dtype=F32)
    y = layer_norm(x, gamma, beta, F32(0.0))
    want = np.array([-1.0, 1.0] * half, dtype=F32) * gamma + beta
    assert _same_values(y[0], want.astype(F32)), (x, gamma, y, want)
    xs = np.stack([x[0], (x[0] * F32(2.0)).astype(F32)])
    assert _same_values(layer_norm(xs, gamma, beta, F32(0.0))[1], y[0])


def _norm_fixed(_case) -> None:
    for c, d in ((3.0, 4), (-0.375, 3), (1024.0, 5), (0.0, 1)):
        x = np.full((2, d), F32(c), dtype=F32)
        gamma = np.arange(1, d + 1, dtype=F32)
        beta = np.linspace(-2, 2, d, dtype=F32)
        y = layer_norm(x, gamma, beta, EPS)
        assert _same_values(y, np.stack([beta, beta])), (c, y)
        b = batch_norm(x.reshape(2, 1, d), gamma[:1], beta[:1], EPS)
        assert _same_values(b, np.full((2, 1, d), beta[0], dtype=F32)), (c, b)


def _channels() -> st.SearchStrategy:
    return st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4)).flatmap(
        lambda s: st.tuples(tensors_of_shape(s, f32_values(-100.0, 100.0)),
                            tensors_of_shape((s[1],), f32_values(-4.0, 4.0)),
                            tensors_of_shape((s[1],), f32_values(-4.0, 4.0))))


def _bn_as_ln(case) -> None:
    x, gamma, beta = case
    n, c, hw = x.shape
    y = batch_norm(x, gamma, beta, EPS)
    for ch in range(c):
        row = x[:, ch, :].reshape(1, n * hw)
        want = layer_norm(row, np.full(n * hw, gamma[ch], F32), np.full(n * hw, beta[ch], F32),
                          EPS)
        assert _same_bits(y[:, ch, :].reshape(1, n * hw), want), (x, ch)


def _bn_fixed(_case) -> None:
    x = np.array([1e8, -1e8, 1, 1], dtype=F32).reshape(2, 1, 2)
    x = np.concatenate([x, x[:, :, ::-1]], axis=1)
    _bn_as_ln((x, np.array([1, 2], F32), np.array([0.5, -0.5], F32)))


@property_obligation(
    "PO12.542",
    "layer_norm and batch_norm: a constant row (of a dyadic value) gives beta exactly, eps "
    "keeping 1/sqrtf from infinity; rows m - d, m + d (powers of two, eps = 0) give -gamma + "
    "beta and gamma + beta: the variance is biased and gamma scales before beta adds; rows are "
    "independent; batch_norm of a channel is layer_norm of its N * HW elements gathered n "
    "outer, hw inner, with gamma[c] and beta[c].",
    covers=("kernel.layer_norm", "kernel.batch_norm"),
    subject=layer_norm,
    mutants=(
        Mutant.edit("unbiased variance", "var is divided by D - 1",
                    layer_norm, "var = var / count", "var = var / (count - F32(1.0))"),
        Mutant.edit("no eps", "inv = 1 / sqrtf(var)", layer_norm, "sqrtf(var + eps)",
                    "sqrtf(var)", occurrence=2),
        Mutant.edit("beta before gamma", "y = ((x - mean) * inv + beta) * gamma",
                    layer_norm, "(x[r, d] - mean) * inv * gamma[d] + beta[d]",
                    "((x[r, d] - mean) * inv + beta[d]) * gamma[d]"),
        Mutant.edit("row 0's mean", "every row uses the first row's sum",
                    layer_norm, "mean = mean + x[r, d]", "mean = mean + x[0, d]"),
        Mutant.edit("batch norm hw outer", "the channel sums run hw outer, n inner",
                    batch_norm, "for n in range(nn):\n            for hw in range(hh):\n"
                    "                mean = mean + x[n, c, hw]",
                    "for hw in range(hh):\n            for n in range(nn):\n"
                    "                mean = mean + x[n, c, hw]"),
        Mutant.edit("batch norm per sample count", "the count is HW, not N * HW",
                    batch_norm, "count = F32(nn * hh)", "count = F32(hh)"),
        Mutant.edit("batch norm no eps", "inv = 1 / sqrtf(var)", batch_norm,
                    "sqrtf(var + eps)", "sqrtf(var)", occurrence=2),
    ),
)
def norm_rows(_subject):
    return [Property("constant rows and a cancelling channel", _norm_fixed,
                     cases=_softmax_cases),
            Property("a channel whose n-outer sum differs from hw-outer", _bn_fixed,
                     cases=_softmax_cases),
            Property("rows m - d, m + d", _ln_pm, strategy=_pm_rows, examples=150),
            Property("batch_norm is layer_norm of each gathered channel", _bn_as_ln,
                     strategy=_channels, examples=150)]


# ── PO12.543: maxpool2d ───────────────────────────────────────────────────────────────────────


def _pool_cases():
    return [None]


def _pool_fixed(_case) -> None:
    y = maxpool2d(np.array([NAN, 1, 2, NAN], dtype=F32).reshape(1, 1, 2, 2), 2)
    assert y[0, 0, 0, 0] == 2, y
    y = maxpool2d(np.full((1, 1, 2, 2), NAN, dtype=F32), 2)
    assert y[0, 0, 0, 0] == -np.inf, y
    for first in (F32(-0.0), F32(0.0)):
        x = np.array([first, -first, -first, -first], dtype=F32).reshape(1, 1, 2, 2)
        assert _same_bits(maxpool2d(x, 2)[0, 0, 0], np.array([first], dtype=F32))
    x = np.arange(30, dtype=F32).reshape(1, 1, 5, 6)
    want = np.array([[7, 9, 11], [19, 21, 23]], dtype=F32).reshape(1, 1, 2, 3)
    assert _same_bits(maxpool2d(x, 2), want), maxpool2d(x, 2)


def _pool_random() -> st.SearchStrategy:
    return st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 6),
                     st.integers(1, 6), st.integers(1, 3)).flatmap(
        lambda s: st.tuples(tensors_of_shape(s[:4], f32_values(-50.0, 50.0)), st.just(s[4])))


def _pool_max(case) -> None:
    x, k = case
    n, c, h, w = x.shape
    y = maxpool2d(x, k)
    assert y.shape == (n, c, h // k, w // k)
    for idx in np.ndindex(*y.shape):
        a, b, i, j = idx
        assert y[idx] == x[a, b, i * k:(i + 1) * k, j * k:(j + 1) * k].max(), (x, k, idx)
    tail = x.copy()
    tail[:, :, (h // k) * k:, :] = F32(1e30)
    tail[:, :, :, (w // k) * k:] = F32(1e30)
    assert _same_bits(maxpool2d(tail, k), y)


@property_obligation(
    "PO12.543",
    "maxpool2d: each output is the largest value of its K x K window (stride K, floor(H/K) x "
    "floor(W/K) windows; rows and columns past them unread); the std::max scan from -inf "
    "never takes a NaN (a window of NaNs gives -inf) and keeps the first of +0 and -0.",
    covers=("kernel.maxpool2d",),
    subject=maxpool2d,
    mutants=(
        Mutant.edit("arguments swapped", "std::max(x, mx): a NaN is taken",
                    maxpool2d, "std_max(mx, x[n, c, i * k + kh, j * k + kw])",
                    "std_max(x[n, c, i * k + kh, j * k + kw], mx)"),
        Mutant.edit("start at the first element", "the scan starts at the window's first "
                    "element, so a NaN there stays", maxpool2d, "mx = F32(-np.inf)",
                    "mx = x[n, c, i * k, j * k]"),
        Mutant.edit("stride 1", "windows overlap", maxpool2d, "x[n, c, i * k + kh, j * k + kw]",
                    "x[n, c, i + kh, j + kw]"),
        Mutant.edit("ceil", "a partial window at the edge is pooled", maxpool2d,
                    "ho, wo = h // k, w // k", "ho, wo = -(-h // k), -(-w // k)"),
    ),
)
def maxpool_windows(_subject):
    return [Property("NaN windows, signed zeros, a 5 x 6 input", _pool_fixed,
                     cases=_pool_cases),
            Property("random windows", _pool_max, strategy=_pool_random, examples=150)]


# ── PO12.544: avgpool_global ──────────────────────────────────────────────────────────────────


def _avg_fixed(_case) -> None:
    y = avgpool_global(np.full((1, 1, 3), F32(0.1), dtype=F32))
    assert bits_of_f32(y[0, 0]) == 0x3DCCCCCE, y
    assert np.isnan(avgpool_global(np.zeros((1, 2, 0), dtype=F32))).all()
    x = np.array([1e8, 1.0, -1e8, 1.0], dtype=F32).reshape(1, 1, 4)
    assert avgpool_global(x)[0, 0] == F32(0.25), avgpool_global(x)
    _avg_fold(np.array([3.0] * 20 + [1e8] + [3.0] * 11, dtype=F32).reshape(1, 1, 32))


def _avg_random() -> st.SearchStrategy:
    return st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 5)).flatmap(
        lambda s: tensors_of_shape(s, f32_values(-100.0, 100.0)))


def _avg_fold(x) -> None:
    y = avgpool_global(x)
    n, c, hw = x.shape
    inv = F32(1.0) / F32(hw)
    for a in range(n):
        for b in range(c):
            total = F32(0.0)
            for v in x[a, b]:
                total = F32(total + v)
            assert bits_of_f32(y[a, b]) == bits_of_f32(F32(total * inv)), (x, a, b)
    if hw == 1:
        assert _same_values(y, x[:, :, 0].copy())


@property_obligation(
    "PO12.544",
    "avgpool_global: Y[n, c] is the hw-ordered sum times the rounded reciprocal 1/(float)HW, "
    "not the sum divided by HW (three 0.1f give 0.10000001f); HW = 1 gives X (-0 as +0: "
    "the sum starts at +0); HW = 0 gives 0 * inf, a NaN; in the ordered sum of 1e8, 1, "
    "-1e8, 1 the first 1 is absorbed (0.25).",
    covers=("kernel.avgpool_global",),
    subject=avgpool_global,
    mutants=(
        Mutant.edit("divide", "the sum is divided by HW", avgpool_global,
                    "y[n, c] = total * inv", "y[n, c] = total / F32(hh)"),
        Mutant.edit("pairwise sum", "numpy's pairwise sum", avgpool_global,
                    "for hw in range(hh):\n                total = total + x[n, c, hw]",
                    "total = x[n, c].sum(dtype=F32)"),
        Mutant.edit("empty is 0", "HW = 0 gives 0, not NaN", avgpool_global,
                    "inv = F32(1.0) / F32(hh)", "inv = F32(1.0) / F32(max(hh, 1))"),
        Mutant.edit("wrong channel", "the sum reads channel 0", avgpool_global,
                    "total = total + x[n, c, hw]", "total = total + x[n, 0, hw]"),
    ),
)
def avgpool_mean(_subject):
    return [Property("three 0.1f, an empty channel, absorbed terms", _avg_fixed,
                     cases=_pool_cases),
            Property("random channels folded in order", _avg_fold, strategy=_avg_random,
                     examples=150)]
