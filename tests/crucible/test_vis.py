"""Chapter 6: the trace visualiser's block detector. Every expected value below is worked out
by hand from the header's rules (first-match family cascade, forward blocks by scope path at
a depth, 31-op backward chunks, the optimizer up to its last addcdiv_, the height test), never
taken from the code under test."""

from __future__ import annotations

import pytest

from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.crucible.vis import (
    E6_8,
    TraceOp,
    classify_family,
    detect_blocks,
    scope_tail,
    truncate_scope,
)

SEED = profile_errata("crucible@8d2680a2")
SPEC_IMPL, SEED_IMPL = Implementation("reference"), Implementation("reference", SEED)


def _op(name: str, scope: str = "", sizes: tuple[int, ...] = ()) -> dict:
    return {"name": name, "scope": scope, "out_sizes": list(sizes)}


def _detect(ops: list[dict], depth: int = 4, impl: Implementation = SPEC_IMPL) -> dict:
    return impl.call("vis.detect_blocks", {"ops": ops, "depth": depth})


def _spans(result: dict) -> list[tuple[int, int, int, str]]:
    return [(b["kind"], b["start_op"], b["end_op"], b["label"]) for b in result["blocks"]]


@pytest.mark.parametrize(("name", "family"), [
    ("addmm", 0), ("bmm", 0), ("linear", 0), ("mse_loss_backward", 9), ("nll_loss_forward", 9),
    ("embedding_dense_backward", 10), ("aten::relu_", 4), ("gelu_backward", 4),
    ("log_softmax", 4), ("logsumexp", 7), ("argmax", 7), ("_to_copy", 6), ("cat", 6),
    ("expand", 6), ("neg", 5), ("convolution_backward", 1), ("native_layer_norm", 2),
    ("_scaled_dot_product_flash_attention", 3), ("_foreach_add_", 8), ("addcdiv_", 8),
    ("max_pool2d_with_indices", 11), ("upsample_nearest2d", 11), ("threshold_backward", 12),
    ("", 12),
])
def test_classify_family_by_hand(name, family):
    assert classify_family(name) == family
    assert SPEC_IMPL.call("vis.classify_family", {"name": name}) == {"family": family}


def test_expand_is_elementwise_in_the_seed_e6_7():
    assert SEED_IMPL.call("vis.classify_family", {"name": "expand"}) == {"family": 5}
    assert SEED_IMPL.call("vis.classify_family", {"name": "view"}) == {"family": 6}


def test_scope_helpers():
    assert truncate_scope("a.b.c.d.e", 3) == "a.b.c"
    assert truncate_scope("a.b", 4) == "a.b"
    assert truncate_scope("a.b", 0) == ""
    assert scope_tail("a.b.c.d.e") == "d.e"
    assert scope_tail("a") == "a"
    assert scope_tail("") == "(root)"
    assert scope_tail(".a") == ".a"
    assert scope_tail(".a", frozenset({E6_8})) == "a"
    assert scope_tail(".a.b", frozenset({E6_8})) == "a.b"


def test_empty_trace():
    assert _detect([]) == {"architecture": 2, "fwd_end": 0, "bwd_end": 0, "optim_start": 0,
                           "blocks": []}


def test_forward_blocks_follow_the_truncated_scope():
    ops = [_op("addmm", "model.encoder.layers.0.attn.q_proj", (2, 16, 64)),
           _op("view", "model.encoder.layers.0.attn.k_proj"),
           _op("relu_", "model.encoder.layers.1.mlp")]
    r = _detect(ops)
    assert (r["fwd_end"], r["bwd_end"], r["optim_start"]) == (2, 2, 3)
    assert _spans(r) == [(0, 0, 1, "layers.0 [2x16x64]"), (0, 2, 2, "layers.1")]
    assert r["blocks"][0]["scope_path"] == "model.encoder.layers.0"
    assert r["blocks"][0]["out_shape"] == "2x16x64"
    # depth 5 keeps "model.encoder.layers.1.mlp" whole (five components): its tail is "1.mlp"
    assert _spans(_detect(ops, depth=5)) == [(0, 0, 1, "0.attn [2x16x64]"),
                                             (0, 2, 2, "1.mlp")]
    assert _spans(_detect(ops, depth=0)) == [(0, 0, 2, "(root) [2x16x64]")]


def test_a_70_op_backward_is_chunked_31_31_8_then_adam_and_epilogue():
    adam = ["lerp_", "mul_", "addcmul_", "sqrt", "div", "add_", "addcdiv_"]
    ops = ([_op("linear", "model.fc", (4, 10)), _op("convolution_backward")]
           + [_op("mm")] * 69 + [_op(n) for n in adam * 2] + [_op("copy_", "", (4,)),
                                                              _op("zero_")])
    assert len(ops) == 87
    r = _detect(ops)
    assert (r["fwd_end"], r["bwd_end"], r["optim_start"]) == (0, 70, 71)
    assert _spans(r) == [(0, 0, 0, "model.fc [4x10]"), (1, 1, 31, "Backward"),
                         (1, 32, 62, "Backward"), (1, 63, 70, "Backward"),
                         (2, 71, 84, "Optimizer (2 params)"), (3, 85, 86, "Epilogue [4]")]
    assert [b["num_ops"] for b in r["blocks"]] == [1, 31, 31, 8, 14, 2]
    assert [b["phase"] for b in r["blocks"]] == [0, 1, 1, 1, 2, 2]


def test_an_optimizer_without_addcdiv_is_one_op_and_the_rest_is_epilogue():
    r = _detect([_op("sum", "m"), _op("convolution_backward"), _op("_foreach_add_"),
                 _op("copy_")])
    assert (r["fwd_end"], r["bwd_end"], r["optim_start"]) == (0, 1, 2)
    assert _spans(r) == [(0, 0, 0, "m"), (1, 1, 1, "Backward"), (2, 2, 2, "Optimizer (0 params)"),
                         (3, 3, 3, "Epilogue")]


def test_optimizer_ops_before_any_backward_start_no_optimizer():
    r = _detect([_op("_foreach_add_", "m"), _op("addcdiv_", "m")])
    assert (r["fwd_end"], r["optim_start"]) == (1, 2)
    assert _spans(r) == [(0, 0, 1, "m")]


def test_a_trace_that_starts_in_backward_e6_6():
    ops = [_op("threshold_backward")]
    assert _spans(_detect(ops)) == [(1, 0, 0, "Backward")]
    assert _spans(_detect(ops, impl=SEED_IMPL)) == [(0, 0, 0, "(root)"), (1, 0, 0, "Backward")]
    assert _detect(ops)["fwd_end"] == 0


def test_a_leading_dot_scope_label_e6_8():
    assert _spans(_detect([_op("relu", ".a")])) == [(0, 0, 0, ".a")]
    assert _spans(_detect([_op("relu", ".a")], impl=SEED_IMPL)) == [(0, 0, 0, "a")]


def _heights(*hs: int) -> list[dict]:
    return [_op("convolution", f"m.b{i}", (8, 64, h, h)) for i, h in enumerate(hs)]


@pytest.mark.parametrize(("heights", "arch"), [
    ((64, 32, 16, 32, 64), 0), ((14, 14, 14, 14, 14), 1), ((14, 14, 14, 14, 15), 1),
    ((10, 12, 15, 18, 19), 2), ((14, 15, 14), 1), ((8, 32), 2), ((1, 2, 1, 2), 1),
    ((1, 2, 1, 2, 1), 0), ((2**30,) * 5, 1),
])
def test_architecture_from_forward_heights(heights, arch):
    assert _detect(_heights(*heights))["architecture"] == arch


def test_spatial_extent_comes_from_a_4d_output_as_int32():
    one = detect_blocks([TraceOp("convolution", "m", (2, 3, 5, 7))]).blocks[0]
    assert (one.spatial_h, one.spatial_w, one.out_shape) == (5, 7, "2x3x5x7")
    five = detect_blocks([TraceOp("conv3d", "m", (1, 2, 3, 4, 5))]).blocks[0]
    assert (five.spatial_h, five.out_shape, five.label) == (0, "1x2x3x4", "m [1x2x3x4]")
    wide = detect_blocks([TraceOp("convolution", "m", (1, 1, 2**31, 2**32 + 5))]).blocks[0]
    assert (wide.spatial_h, wide.spatial_w) == (-2**31, 5)


def test_the_shape_is_the_last_op_with_an_output():
    r = _detect([_op("mm", "m", (2, 2)), _op("add", "m", (3,)), _op("view", "m")])
    assert _spans(r) == [(0, 0, 2, "m [3]")]


@pytest.mark.parametrize("args", [
    {"ops": [], "depth": -1}, {"ops": [], "depth": 2**32},
    {"ops": [_op("mm", "", (2, -1))]}, {"ops": [_op("mm", "", (1,) * 9)]},
    {"ops": [_op("mm", "a\x00b")]},
])
def test_invalid_inputs(args):
    with pytest.raises(SpecError) as e:
        SPEC_IMPL.call("vis.detect_blocks", args)
    assert e.value.code == "invalid_input"
