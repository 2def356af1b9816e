"""Chapter 12 ops of the seed tests' input generator: std::mt19937's raw words
(`rng.mt19937`) and libstdc++'s uniform_real_distribution<float> over it
(`rng.mt19937_uniform`), see `mt19937`."""

from __future__ import annotations

import numpy as np

from ..core.errors import InvalidInput
from ..core.f32_tensor import F32Tensor
from ..core.registry import InvalidCase, declare
from ..core.schema import BITS32, U32, Field, List, record
from ..core.strategies import st
from .mt19937 import (
    MAX_DRAWS,
    canonical_f32,
    f32_of_bits,
    init_genrand,
    mt19937_uniform,
    mt19937_words,
    temper,
    twist,
    uniform_f32,
)

COUNT = Field(U32, f"values to draw, at most {MAX_DRAWS} (2^20)")
SEED = Field(U32, "the engine's seed (std::mt19937(seed))")
SEQUENTIAL = "each state word depends on the one before: one sequential recurrence per request"
MLP_X_BITS = ("be00788e", "3e97d47c", "3ee6c406", "bea214d6", "3e6d8fd0", "3e8f33a8",
              "3dca0d78", "3dc65960")
"""test_compute's X: the first 8 draws of dist(-0.5, 0.5) over seed 42."""


def _count(count: int) -> int:
    if count > MAX_DRAWS:
        raise InvalidInput(f"args.count: {count} draws exceed the limit of {MAX_DRAWS} (2^20)")
    return count


def _check_count(args: dict) -> None:
    _count(args["count"])


def _bits(x: float) -> str:
    return f"0x{int(np.array([x], dtype=np.float32).view(np.uint32)[0]):08x}"


def words_bench(n: int, rng) -> list[dict]:
    """n requests (n = requests), each 1024 words of a random seed: about the seed tests' own
    draws (the ViT test draws 704)."""
    return [{"seed": int(s), "count": 1024} for s in rng.integers(0, 2**32, n)]


def uniform_bench(n: int, rng) -> list[dict]:
    """n requests (n = requests), each 1024 draws of dist(-0.5, 0.5) from a random seed."""
    return [{"seed": int(s), "count": 1024, "a": 0xBF000000, "b": 0x3F000000}
            for s in rng.integers(0, 2**32, n)]


# ── rng.mt19937 ───────────────────────────────────────────────────────────────────────────────


def words_op(seed: int, count: int) -> dict:
    return {"words": mt19937_words(seed, _count(count))}


declare(
    "rng.mt19937", chapter=12,
    summary="The first count words of std::mt19937(seed): init_genrand seeding, 624-word "
            "twist, tempering.",
    args=record(seed=SEED, count=COUNT),
    result=record(words=Field(List(U32), "the engine's outputs in order")),
    spec=(words_op, mt19937_words, init_genrand, twist, temper), check=_check_count,
    obligations=("PO12.610",),
    domain=lambda: st.fixed_dictionaries({
        "seed": st.integers(0, 2**32 - 1) | st.sampled_from([0, 1, 7, 42, 5489, 2**32 - 1]),
        "count": st.integers(0, 40) | st.sampled_from([623, 624, 625, 1249])}),
    invalid=(InvalidCase("more than 2^20 draws", lambda: st.fixed_dictionaries(
                 {"seed": st.just(1), "count": st.integers(MAX_DRAWS + 1, 2**32 - 1)})),
             InvalidCase("a seed wider than 32 bits", lambda: st.just(
                 {"seed": 2**32, "count": 1}))),
    edges=lambda: [{"seed": s, "count": c} for s, c in (
        (42, 5), (42, 625), (5489, 10), (0, 3), (7, 0), (2**32 - 1, 1250))],
    bench=words_bench,
    not_applicable={"cupy": SEQUENTIAL},
)

# ── rng.mt19937_uniform ───────────────────────────────────────────────────────────────────────


def _check_range(args: dict) -> None:
    a, b = f32_of_bits(args["a"]), f32_of_bits(args["b"])
    if not (np.isfinite(a) and np.isfinite(b) and a <= b):
        raise InvalidInput(f"args.a, args.b: need finite a <= b, got {float(a)!r} and {float(b)!r}")
    with np.errstate(over="ignore"):
        if not np.isfinite(np.float32(b - a)):
            raise InvalidInput("args.b: b - a overflows float32")
    _count(args["count"])


def uniform_op(seed: int, count: int, a: int, b: int) -> dict:
    _check_range({"a": a, "b": b, "count": count})
    return {"values": mt19937_uniform(seed, count, f32_of_bits(a), f32_of_bits(b))}


@st.composite
def _uniform_args(draw) -> dict:
    lo = float(np.float32(draw(st.floats(-1e3, 1e3, width=32)
                               | st.sampled_from([-0.5, -0.3, 0.0, -0.0, 1.0]))))
    hi = draw(st.floats(lo, 1e3, width=32) | st.just(lo))
    return {"seed": draw(st.integers(0, 2**32 - 1) | st.sampled_from([7, 42])),
            "count": draw(st.integers(0, 40) | st.just(625)),
            "a": int(_bits(lo), 16), "b": int(_bits(max(lo, hi)), 16)}


def _uniform_edges() -> list[dict]:
    return [{"seed": s, "count": c, "a": _bits(a), "b": _bits(b)} for s, c, a, b in (
        (42, 64, -0.5, 0.5), (7, 64, -0.3, 0.3), (42, 8, 0.0, 1.0), (1, 16, 2.0, 2.0),
        (0, 16, -0.0, 0.0), (5489, 700, -3.4e38, 3.4e37), (3, 4, 0.0, 1e-45))]


declare(
    "rng.mt19937_uniform", chapter=12,
    summary="count draws of libstdc++'s uniform_real_distribution<float>(a, b) over "
            "std::mt19937(seed): c = float32(u) / 2^32 clamped below 1, value = c*(b-a) + a "
            "in float32; bit-exact.",
    args=record(seed=SEED, count=COUNT,
                a=Field(BITS32, "a, float32 bit pattern (finite)"),
                b=Field(BITS32, "b, float32 bit pattern (finite, a <= b, b - a finite)")),
    result=record(values=Field(F32Tensor(rank=1), "[count] float32 values")),
    spec=(uniform_op, mt19937_uniform, uniform_f32, canonical_f32, mt19937_words),
    check=_check_range, obligations=("PO12.610", "PO12.611"),
    domain=_uniform_args,
    invalid=(InvalidCase("a above b", lambda: st.just(
                 {"seed": 1, "count": 1, "a": _bits(1.0), "b": _bits(0.0)})),
             InvalidCase("a NaN bound", lambda: st.just(
                 {"seed": 1, "count": 1, "a": "0x7fc00000", "b": _bits(1.0)})),
             InvalidCase("an infinite bound", lambda: st.just(
                 {"seed": 1, "count": 1, "a": _bits(0.0), "b": "0x7f800000"})),
             InvalidCase("b - a past the largest float32", lambda: st.just(
                 {"seed": 1, "count": 1, "a": _bits(-3e38), "b": _bits(3e38)})),
             InvalidCase("more than 2^20 draws", lambda: st.just(
                 {"seed": 1, "count": MAX_DRAWS + 1, "a": _bits(0.0), "b": _bits(1.0)}))),
    edges=_uniform_edges,
    bench=uniform_bench,
    not_applicable={"cupy": SEQUENTIAL},
)
