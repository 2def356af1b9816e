"""Chapter 12's normalisation and pooling kernels: the golden softmax through serve, hand-worked
values, invalid inputs, the numba and cupy kernels against the spec, and torch."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.diff import tensor_envelope
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.f32_tensor import f32_values, tensors_of_shape, ulp_distances
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.cpu_kernels_norm import (
    EPS_BITS,
    avgpool_global,
    batch_norm,
    cross_entropy,
    f32_of_bits,
    layer_norm,
    maxpool2d,
)
from crucible_spec.spec.crucible.kernel_norm_ops import MM2, bits_wire

load_all()

F32 = np.float32
OPS = ("kernel.softmax", "kernel.layer_norm", "kernel.batch_norm", "kernel.maxpool2d",
       "kernel.avgpool_global", "kernel.cross_entropy")
GOLDEN = "3ec154b6 3ea205b4 3e9ca595 3e9f8726 3eb2fa88 3ead7e51"
TORCH_RELATIVE = 1e-4
"""torch vs spec where torch sums in another order: every element within 1e-4 of the largest
magnitude in the result (or of 1, if that is smaller); measured at most 4e-6."""
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _ask(op: str, args: dict, backend: str = "reference") -> dict:
    impl = Implementation(backend, profile_errata("crucible"))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, "crucible")


def _tensor(wire: dict) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(wire["data"]), dtype="<f4").reshape(wire["shape"])


def _batch(op: str, backend: str, args: dict) -> dict:
    o = REGISTRY.op(op)
    cols = o.args.columns([args])
    return o.result.rows(REGISTRY.kernels[backend][op](**cols), 1)[0]


@pytest.mark.parametrize("backend", ["reference", "numba", "cupy"])
def test_golden_softmax(backend):
    """The MLP test's softmax of mm2 is the facts' golden bits through serve, on every backend."""
    r = _ask("kernel.softmax", {"x": MM2}, backend)
    assert r["ok"] and r["result"]["y"] == bits_wire([2, 3], GOLDEN)


def test_layer_norm_by_hand():
    """Rows 1 2 3 4 and 5 5 5 5 with eps 0 and 1e-5f, worked out by hand."""
    x = np.array([[1, 2, 3, 4], [5, 5, 5, 5]], dtype=F32)
    gamma, beta = np.array([1, 1, 2, -1], F32), np.array([0, 0.5, 0, 0], F32)
    y = layer_norm(x, gamma, beta, F32(0.0))
    inv = F32(1.0) / np.sqrt(F32(1.25))
    want = np.array([F32(-1.5) * inv, F32(-0.5) * inv + F32(0.5), F32(0.5) * inv * F32(2),
                     F32(1.5) * inv * F32(-1)], dtype=F32)
    assert y[0].tobytes() == want.tobytes()
    assert np.isnan(y[1]).all()
    assert np.array_equal(layer_norm(x, gamma, beta, f32_of_bits(EPS_BITS))[1], beta)


def test_batch_norm_and_pools_by_hand():
    """batch_norm of a channel 1, 3 over two samples; max pooling; the global mean."""
    x = np.array([1, 3, 10, 20], dtype=F32).reshape(2, 2, 1)
    y = batch_norm(x, np.array([1, 1], F32), np.array([0, 0], F32), F32(0.0))
    assert y.reshape(-1).tolist() == [-1.0, -1.0, 1.0, 1.0]
    p = maxpool2d(np.arange(16, dtype=F32).reshape(1, 1, 4, 4), 2)
    assert p.reshape(-1).tolist() == [5.0, 7.0, 13.0, 15.0]
    a = avgpool_global(np.array([1, 2, 3, 0.1, 0.2, 0.3], dtype=F32).reshape(1, 2, 3))
    third = F32(1.0) / F32(3.0)
    assert a.tobytes() == np.array([F32(6) * third, (F32(0.1) + F32(0.2) + F32(0.3)) * third],
                                   dtype=F32).tobytes()


def test_cross_entropy_by_hand():
    """An underflowing target probability is clamped to 1e-7f; B = 0 gives the x86 NaN."""
    probs, loss = cross_entropy(np.array([[0.0, -200.0]], dtype=F32), [1])
    assert probs.reshape(-1).tolist() == [1.0, 0.0]
    assert loss == F32(16.118095)
    r = _ask("kernel.cross_entropy", {"logits": {"shape": [0, 3], "data": ""}, "targets": []})
    assert r["result"]["loss"] == "0xffc00000"


@pytest.mark.parametrize("op", OPS)
def test_edges_agree(op):
    """Every edge answers on the reference, and numba and cupy give the same bits."""
    for args in REGISTRY.op(op).edges():
        ref = _ask(op, args)
        assert ref["ok"], (args, ref)
        for backend in ("numba", "cupy"):
            assert _ask(op, args, backend) == ref, (backend, args)


@pytest.mark.parametrize("op", OPS)
def test_invalid_cases(op):
    """Each declared invalid case is refused with its code, never a traceback."""
    cases = REGISTRY.op(op).invalid

    @settings(max_examples=1, deadline=None, database=None)
    @given(st.tuples(*(c.args() for c in cases)))
    def check(drawn):
        for case, args in zip(cases, drawn, strict=True):
            r = _ask(op, args)
            assert not r["ok"] and r["error"]["code"] == case.code, (case.description, r)

    check()


def test_wrong_lengths_named():
    """A target out of range and a gamma of the wrong length name their field."""
    r = _ask("kernel.cross_entropy", {"logits": bits_wire([1, 2], "0 0"), "targets": [2]})
    assert r["error"]["code"] == "invalid_input" and "targets[0]" in r["error"]["message"]
    r = _ask("kernel.layer_norm", {"x": bits_wire([1, 2], "0 0"), "gamma": bits_wire([1], "0"),
                                   "beta": bits_wire([2], "0 0")})
    assert "args.gamma" in r["error"]["message"]


def _within(op: str, want: dict, got: dict) -> None:
    env = tensor_envelope(REGISTRY.op(op))
    for name, w in want.items():
        if isinstance(w, np.ndarray):
            assert env.holds(w, got[name]), (name, w, got[name])
        else:
            a, b = np.array([f32_of_bits(w)]), np.array([f32_of_bits(got[name])])
            assert env.holds(a, b), (name, w, got[name])


@pytest.mark.parametrize("op", OPS)
def test_kernels_match_spec(op):
    """numba is bit-exact with the reference on the op's domain; cupy is bit-exact, or within
    the envelope for the ops with exp and log."""
    o = REGISTRY.op(op)
    ref = REGISTRY.references[op]
    exact = o.compare == "exact"

    @SETTINGS
    @given(o.strategy())
    def check(args):
        want = ref(**args)
        got = _batch(op, "numba", args)
        for name, w in want.items():
            assert np.asarray(got[name]).tobytes() == np.asarray(w).tobytes(), name
        got = _batch(op, "cupy", args)
        if exact:
            for name, w in want.items():
                assert np.asarray(got[name]).tobytes() == np.asarray(w).tobytes(), name
        else:
            _within(op, want, got)

    check()


def test_long_rows():
    """Rows of 1,024 logits: numba is bit-exact with the spec, cupy within the envelope."""
    rng = np.random.default_rng(12)
    x = ((rng.random((3, 1024), dtype=F32) * 2 - 1) * F32(8)).astype(F32)
    targets = [5, 700, 1023]
    args = {"logits": x, "targets": targets}
    want = REGISTRY.references["kernel.cross_entropy"](**args)
    got = _batch("kernel.cross_entropy", "numba", args)
    assert got["probs"].tobytes() == want["probs"].tobytes() and got["loss"] == want["loss"]
    _within("kernel.cross_entropy", want, _batch("kernel.cross_entropy", "cupy", args))


def _torch_args(op: str) -> st.SearchStrategy:
    unit = f32_values(-1.0, 1.0)
    shape = st.tuples(st.integers(1, 4), st.integers(1, 6))
    if op in ("kernel.softmax", "kernel.layer_norm"):
        return shape.flatmap(lambda s: st.fixed_dictionaries(
            {"x": tensors_of_shape(s, unit), "gamma": tensors_of_shape(s[1:], unit),
             "beta": tensors_of_shape(s[1:], unit), "eps": st.just(EPS_BITS)}))
    if op == "kernel.cross_entropy":
        return shape.flatmap(lambda s: st.fixed_dictionaries(
            {"logits": tensors_of_shape(s, unit),
             "targets": st.lists(st.integers(0, s[1] - 1), min_size=s[0], max_size=s[0])}))
    if op == "kernel.maxpool2d":
        return st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 6),
                         st.integers(1, 6), st.integers(1, 3)).filter(
            lambda s: s[2] >= s[4] and s[3] >= s[4]).flatmap(lambda s: st.fixed_dictionaries(
                {"x": tensors_of_shape(s[:4], f32_values()), "k": st.just(s[4])}))
    three = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 5)).filter(
        lambda s: s[0] * s[2] > 1)
    return three.flatmap(lambda s: st.fixed_dictionaries(
        {"x": tensors_of_shape(s, unit), "gamma": tensors_of_shape(s[1:2], unit),
         "beta": tensors_of_shape(s[1:2], unit), "eps": st.just(EPS_BITS)}))


@pytest.mark.parametrize("op", OPS)
def test_torch(op):
    """torch agrees: bit for bit where its order is the spec's (maxpool2d), else every element
    within TORCH_RELATIVE of the result's scale; cross_entropy's loss likewise."""
    pytest.importorskip("torch")
    from crucible_spec.torch_diff import SAME, load

    eq = load()[op]
    o = REGISTRY.op(op)
    names = set(o.args.fields)

    @settings(max_examples=40, deadline=None, derandomize=True)
    @given(_torch_args(op))
    def check(args):
        args = {k: v for k, v in args.items() if k in names}
        want = REGISTRY.references[op](**args)
        got = eq.call(**args)
        if "loss" in want:
            want = dict(want, loss=np.array([f32_of_bits(want["loss"])], dtype=F32))
            got = dict(got, loss=np.asarray(got["loss"], dtype=F32).reshape(1))
        for name, w in want.items():
            g = np.asarray(got[name], dtype=F32)
            if eq.order == SAME:
                assert ulp_distances(w, g).max(initial=0) == 0, name
            else:
                scale = max(1.0, float(np.abs(w).max(initial=0)))
                assert float(np.abs(w.astype(np.float64) - g).max(initial=0)) <= \
                    TORCH_RELATIVE * scale, name

    check()
