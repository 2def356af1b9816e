"""Answers of the real Crucible at 8d2680a2 (clang 19, libc++, -std=c++2c -O2, x86-64), called
through a wire adapter on its own headers and vessel_api.cpp: the faithful profile reproduces
each, the default profile keeps the intended answer. Every expected value below is what the
real code answered."""

from __future__ import annotations

import pytest

from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import SEEDS, profile_errata
from crucible_spec.witness import answer, matches

SEED = Implementation("reference", profile_errata(SEEDS["crucible"]))
DEFAULT = Implementation("reference")


def _sums(extern_a: dict, extern_b: dict) -> dict:
    node = {"kind": 3, "inputs": [0], "dtype": 6, "sizes": [4]}
    return {"graph": {"nodes": [{"id": 0, "kind": 0, "inputs": [], "dtype": 6, "sizes": [4, 8]},
                                {**node, "id": 1, "extern": extern_a},
                                {**node, "id": 2, "extern": extern_b}],
                      "outputs": [1, 2]}}


def _conv(i: int, h: int) -> dict:
    return {"name": "convolution", "scope": f"m.b{i}", "out_sizes": [8, 64, h, h]}


REAL = [
    # sizeof/offsetof on the real headers cannot name a RingKernel or checkpoint struct
    ("layout.info", {"struct": "HlcState"}, {"error": "invalid_input"}),
    ("layout.info", {"struct": "ControlBlock"}, {"error": "invalid_input"}),
    ("layout.info", {"struct": "Guard"},
     {"sizeof": 12, "alignof": 4,
      "offsets": {"kind": 0, "pad": 1, "op_index": 4, "arg_index": 8, "dim_index": 10}}),
    # Graph::eliminate_common_subexpressions on two unnamed lowered reductions
    ("ir.cse", _sums({"name": None}, {"name": None}),
     {"eliminated": 1, "dead": [2], "outputs": [1, 1], "num_uses": [1, 2, 0]}),
    ("ir.cse", _sums({"name": None, "constant_args": [0]}, {"name": None, "constant_args": [1]}),
     {"eliminated": 1, "dead": [2], "outputs": [1, 1], "num_uses": [1, 2, 0]}),
    ("ir.cse", _sums({"name": "REDUCE_SUM"}, {"name": "REDUCE_SUM"}),
     {"eliminated": 0, "dead": []}),
    # vis::detect_blocks: 2 * lo wraps in int32
    ("vis.detect_blocks", {"ops": [_conv(i, 2**30) for i in range(5)]}, {"architecture": 0}),
]


@pytest.mark.parametrize("op,args,seed", REAL)
def test_the_faithful_profile_answers_as_the_real_code(op, args, seed):
    assert matches(answer(SEED, op, args), seed)


@pytest.mark.parametrize("op,args,intended", [
    ("layout.info", {"struct": "HlcState"},
     {"sizeof": 16, "alignof": 16, "offsets": {"physical": 0, "logical": 8}}),
    ("ir.cse", _sums({"name": None, "constant_args": [0]}, {"name": None, "constant_args": [1]}),
     {"eliminated": 0, "dead": []}),
    ("vis.detect_blocks", {"ops": [_conv(i, 2**30) for i in range(5)]}, {"architecture": 1}),
])
def test_the_default_profile_keeps_the_intended_answer(op, args, intended):
    assert matches(answer(DEFAULT, op, args), intended)
