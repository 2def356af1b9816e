"""Chapter 12's elementwise and layout kernels (facts sheet §14): golden bits through `serve`,
numba and cupy against the spec, errors naming the field, and torch within the envelopes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.diff import tensor_envelope, within_envelope
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible import cpu_kernels as spec
from crucible_spec.spec.crucible.kernel_ops import wire
from crucible_spec.spec.crucible.libm import libm_name

load_all()

OPS = ("kernel.sub", "kernel.mul", "kernel.relu", "kernel.relu_bwd", "kernel.gelu",
       "kernel.sigmoid", "kernel.silu", "kernel.fill", "kernel.transpose_2d",
       "kernel.index_select")
EXACT = tuple(op for op in OPS if op not in ("kernel.gelu", "kernel.sigmoid", "kernel.silu"))
GOLDEN = {
    "kernel.gelu": "805e3abda2f81dbe00000000af03b13e0c2dfa3f",
    "kernel.sigmoid": "a920f43d034dc13e0000003f7f591f3fea7b613f",
    "kernel.silu": "a92074be034d41be000000007f599f3eea7be13f",
}
"""§14.1's samples at [-2, -0.5, 0, 0.5, 2] (gelu bd3a5e80 ..., written little-endian)."""
SAMPLE = wire([5], [-2, -0.5, 0, 0.5, 2])


def _ask(op: str, args: dict, impl: str = "reference") -> dict:
    return answer(json.dumps({"id": 1, "op": op, "args": args}),
                  Implementation(impl, profile_errata("crucible")), "crucible")


def _f32(t: dict) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(t["data"]), dtype="<f4").reshape(t["shape"])


@pytest.mark.skipif(libm_name() != "glibc", reason="the golden bits are glibc's")
@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("op", sorted(GOLDEN))
def test_golden_bits_through_serve(op, impl):
    """gelu, sigmoid and silu at the facts' five inputs give the facts' bits exactly."""
    out = _ask(op, {"a": SAMPLE}, impl)
    assert out["ok"], out
    assert out["result"]["c"] == {"shape": [5], "data": GOLDEN[op]}


@pytest.mark.parametrize("op", sorted(GOLDEN))
def test_golden_bits_cupy_within_envelope(op):
    """The cupy kernels' answers at the facts' inputs are within the op's envelope."""
    out = _ask(op, {"a": SAMPLE}, "cupy")
    assert within_envelope(REGISTRY.ops[op], {"c": {"shape": [5], "data": GOLDEN[op]}},
                           out["result"])


def test_hand_worked_values():
    """sub, mul, relu, relu_bwd, fill, transpose_2d and index_select on values worked by hand."""
    r = _ask("kernel.sub", {"a": wire([3], [1, 0, 5]), "b": wire([3], [3, -0.0, 5])})["result"]
    assert _f32(r["c"]).tolist() == [-2, 0, 0]
    r = _ask("kernel.mul", {"a": wire([2], [1.5, -2]), "b": wire([2], [4, 0])})["result"]
    assert _f32(r["c"]).view(np.uint32).tolist() == [0x40C00000, 0x80000000]
    r = _ask("kernel.relu", {"a": wire([4], [-0.0, float("nan"), -1, 3])})["result"]
    assert _f32(r["c"]).view(np.uint32).tolist() == [0, 0, 0, 0x40400000]
    r = _ask("kernel.relu_bwd", {"grad": wire([3], [7, 8, 9]),
                                 "input": wire([3], [1, -0.0, float("nan")])})["result"]
    assert _f32(r["c"]).tolist() == [7, 0, 0]
    r = _ask("kernel.fill", {"shape": [2, 2], "value": "0x7f800001"})["result"]
    assert r["c"] == {"shape": [2, 2], "data": "0100807f" * 4}
    r = _ask("kernel.transpose_2d", {"x": wire([1, 2, 3], [1, 2, 3, 4, 5, 6])})["result"]
    assert r["y"]["shape"] == [1, 3, 2] and _f32(r["y"]).reshape(-1).tolist() == [1, 4, 2, 5,
                                                                                   3, 6]
    r = _ask("kernel.index_select", {"x": wire([2, 3, 1], [0, 1, 2, 3, 4, 5]), "idx": 2})
    assert r["result"]["y"] == {"shape": [2, 1], "data": wire([2], [2, 5])["data"]}


@pytest.mark.parametrize("impl", ["numba", "cupy"])
@pytest.mark.parametrize("op", OPS)
def test_edges_match_reference(op, impl):
    """Every edge of every op answers alike on the reference and the kernel (bit for bit, or
    within the envelope for gelu, sigmoid and silu)."""
    o = REGISTRY.ops[op]
    for args in o.edges():
        want, got = _ask(op, args), _ask(op, args, impl)
        assert want["ok"] and got["ok"], (args, want, got)
        if o.compare == "exact":
            assert got["result"] == want["result"], args
        else:
            assert within_envelope(o, want["result"], got["result"]), args


@settings(max_examples=1, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("op", OPS)
def test_invalid_cases_name_the_field(op, data):
    """Each declared invalid case is answered with its code, naming an args field."""
    for case in REGISTRY.ops[op].invalid:
        out = _ask(op, data.draw(case.args()))
        assert not out["ok"] and out["error"]["code"] == case.code, (case.description, out)
        assert "args" in out["error"]["message"], out


def test_index_out_of_range_message():
    """index_select with idx = S is invalid_input at args.idx."""
    out = _ask("kernel.index_select", {"x": wire([1, 2, 2]), "idx": 2})
    assert out["error"]["code"] == "invalid_input"
    assert out["error"]["message"].startswith("args.idx")


def _kernel_vs_spec(op: str, backend: str, args: dict) -> None:
    o = REGISTRY.ops[op]
    want = REGISTRY.references[op](**args)
    got = Implementation(backend).run_batch(o, [args])[0]
    env = tensor_envelope(o)
    for name, w in want.items():
        g = np.asarray(got[name], dtype=np.float32)
        assert g.shape == w.shape, (op, name)
        if o.compare == "exact":
            assert g.tobytes() == w.tobytes(), (op, args)
        else:
            assert env.holds(w, g), (op, args)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("backend", ["numba", "cupy"])
@pytest.mark.parametrize("op", OPS)
def test_kernels_against_spec_on_the_domain(op, backend, data):
    """numba and cupy kernels equal the spec (or stay within its envelope) on the op's domain."""
    _kernel_vs_spec(op, backend, data.draw(REGISTRY.ops[op].strategy()))


def test_numba_bit_exact_on_transcendentals():
    """numba's gelu, sigmoid and silu equal the spec bit for bit over wide random inputs."""
    rng = np.random.default_rng(12)
    x = (rng.random(3000, dtype=np.float32) * np.float32(240) - np.float32(120))
    for name in ("gelu", "sigmoid", "silu"):
        got = REGISTRY.kernels["numba"][f"kernel.{name}"](a=[x])["c"][0]
        assert got.tobytes() == getattr(spec, name)(x).tobytes(), name


TORCH_RELATIVE = 1e-6
"""Where torch's order is not the spec's (silu divides; relu keeps NaN, not in the domain),
each element is within this relative distance of the spec's (or both are 0 or equal)."""


@settings(max_examples=30, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("op", OPS)
def test_torch_within_envelope(op, data):
    """torch on CPU is within the envelope where its order is the spec's, else within a
    relative 1e-6."""
    pytest.importorskip("torch")
    from crucible_spec.torch_diff import SAME, load

    eq = load()[op]
    args = data.draw(REGISTRY.ops[op].strategy())
    want = REGISTRY.references[op](**args)
    got = eq.call(**args)
    o = REGISTRY.ops[op]
    for name, w in want.items():
        g = np.asarray(got[name], dtype=np.float32)
        assert g.shape == w.shape
        if eq.order == SAME:
            assert tensor_envelope(o).holds(w, g), (op, args)
        else:
            w64, g64 = w.astype(np.float64), g.astype(np.float64)
            with np.errstate(all="ignore"):
                rel = np.abs(w64 - g64) / np.maximum(np.abs(w64), 1e-30)
            assert np.all((w64 == g64) | (rel <= TORCH_RELATIVE)), (op, args)
