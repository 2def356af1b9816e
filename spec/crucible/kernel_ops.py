"""Chapter 12 ops of the CPU kernels (`kernel.<name>`): float32 tensors in and out (see
`f32_tensor`), bit-exact unless the op declares an envelope."""

from __future__ import annotations

from ..core.errors import InvalidInput
from ..core.f32_tensor import F32Tensor, random_tensor, tensors_of_shape
from ..core.registry import InvalidCase, declare
from ..core.schema import Field, record
from ..core.strategies import st
from .cpu_kernels import add

TENSOR = F32Tensor()


def wire(shape: list[int], values: list[float] | None = None) -> dict:
    """A tensor's wire form, for edges and invalid cases."""
    import numpy as np

    n = int(np.prod(shape, dtype=np.int64))
    data = np.array(values if values is not None else [0.0] * n, dtype="<f4")
    return {"shape": list(shape), "data": data.tobytes().hex()}


# ── kernel.add ────────────────────────────────────────────────────────────────────────────────


def _check_add(args: dict) -> None:
    n, bias_n = args["a"].size, args["b"].size
    if not (1 <= bias_n <= n or n == bias_n == 0):
        raise InvalidInput(f"args.b: {bias_n} bias elements for {n} elements of a "
                           "(need 1 <= bias_n <= n)")


@st.composite
def _add_args(draw) -> dict:
    shape = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    a = draw(tensors_of_shape(tuple(shape)))
    tail = draw(st.integers(0, len(shape)))
    b = draw(tensors_of_shape(tuple(shape[tail:])))
    return {"a": a, "b": b}


declare(
    "kernel.add", chapter=12,
    summary="C = A + B with bias tiling: C[i] = A[i] + B[i mod bias_n]; bit-exact.",
    args=record(a=Field(TENSOR, "A, any shape"),
                b=Field(TENSOR, "B: as many elements as A, or a bias of 1..n elements")),
    result=record(c=Field(TENSOR, "C, A's shape")),
    spec=(add,), check=_check_add, domain=_add_args,
    invalid=(
        InvalidCase("a bias longer than A", lambda: st.just({"a": wire([2]), "b": wire([3])})),
        InvalidCase("a negative dim", lambda: st.just({"a": {"shape": [-1], "data": ""},
                                                       "b": wire([1])})),
        InvalidCase("2^40 elements", lambda: st.just({"a": {"shape": [1 << 20, 1 << 20],
                                                            "data": ""}, "b": wire([1])})),
        InvalidCase("data shorter than the shape",
                    lambda: st.just({"a": {"shape": [2], "data": "0000803f"}, "b": wire([1])})),
        InvalidCase("a shape that is not a list",
                    lambda: st.just({"a": {"shape": 3, "data": ""}, "b": wire([1])}),
                    "bad_request"),
    ),
    edges=lambda: [
        {"a": wire([2, 3], [1, 2, 3, 4, 5, 6]), "b": wire([3], [0.5, -0.5, 0])},
        {"a": wire([4], [0, -0.0, 1e38, -1e38]), "b": wire([4], [-0.0, -0.0, 1e38, -1e38])},
        {"a": wire([0]), "b": wire([0])},
        {"a": wire([3], [float("inf"), float("nan"), 1]), "b": wire([1], [float("-inf")])},
    ],
    bench=lambda n, rng: [{"a": random_tensor(rng, (n,)), "b": random_tensor(rng, (n,))}],
    work=lambda n: n,
)
