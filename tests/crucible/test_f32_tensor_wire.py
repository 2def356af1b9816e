"""Float32 tensors on the wire: a bad shape is refused before anything is allocated."""

from __future__ import annotations

import json

import pytest

from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation


def ask(impl: str, op: str, args: dict) -> dict:
    return answer(json.dumps({"id": 1, "op": op, "args": args}), Implementation(impl), "crucible")


@pytest.mark.parametrize("impl", ["reference", "numba", "cupy"])
@pytest.mark.parametrize("shape", [[0, 3, 1 << 64], [0, (1 << 26) + 1, 1], [1 << 63, 0, 1]])
def test_a_zero_dim_does_not_excuse_a_huge_one(impl, shape):
    """[0, 3, 2^64] has no elements, but its last dim is past 2^26: invalid_input naming it
    (it once reached numpy's reshape and came back `internal`)."""
    got = ask(impl, "kernel.transpose_2d", {"x": {"shape": shape, "data": ""}})
    assert got["ok"] is False and got["error"]["code"] == "invalid_input"
    assert "args.x.shape[" in got["error"]["message"]


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_the_largest_allowed_dim_with_a_zero_dim_is_an_empty_answer(impl):
    """[0, 2^26] is within the limits: an empty tensor of that shape comes back."""
    got = ask(impl, "kernel.relu", {"a": {"shape": [0, 1 << 26], "data": ""}})
    assert got["result"]["c"] == {"shape": [0, 1 << 26], "data": ""}
