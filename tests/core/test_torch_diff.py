"""torch-diff: torch's distance from the spec per kernel, and the envelope verdict."""

from __future__ import annotations

import numpy as np
import pytest

from crucible_spec.cli import main

pytest.importorskip("torch")

from crucible_spec.torch_diff import EQUIVALENTS, TorchEquivalent, load
from crucible_spec.torch_diff.measure import measure


def test_an_elementwise_op_in_the_same_order_is_bit_exact():
    """torch's a - b performs the spec's one rounding per element: 0 ulps, covered."""
    m = measure(load()["kernel.sub"], seeds=1)
    assert m.cases > 5 and m.largest == 0 and m.covered and m.must_cover


def test_a_torch_answer_one_ulp_off_is_not_covered_by_an_exact_op():
    """An equivalent that nudges every element by one ulp is 1 ulp away: outside 0 ulps."""
    sub = load()["kernel.sub"]

    def nudged(a, b):
        c = sub.call(a=a, b=b)["c"]
        return {"c": (c.view(np.uint32) ^ np.uint32(1)).view(np.float32)}

    m = measure(TorchEquivalent("kernel.sub", nudged), seeds=1)
    assert m.largest == 1 and not m.covered


def test_the_command_prints_each_op_and_exits_0_when_covered(capsys):
    """`torch-diff --ops kernel.sigmoid kernel.mul` lists both as covered."""
    assert main(["torch-diff", "-q", "--ops", "kernel.sigmoid", "kernel.mul"]) == 0
    out = capsys.readouterr().out
    assert "kernel.sigmoid" in out and "kernel.mul" in out and "NOT COVERED" not in out
    assert set(EQUIVALENTS) >= {"kernel.mm", "kernel.softmax", "kernel.conv2d"}
