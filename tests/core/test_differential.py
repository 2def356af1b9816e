"""Differential conformance: every kernel of every backend against the reference, on
hypothesis-generated batches from each op's declared domain (design §2). Derived from the
registry: a new op or kernel is covered the moment it is registered."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.conformance.diff import within_envelope
from crucible_spec.engine import Implementation, decode_args, run_reference
from crucible_spec.spec.core.registry import BACKENDS, REGISTRY

PAIRS = sorted((name, b) for b in BACKENDS for name in REGISTRY.kernels[b])


def test_every_op_has_a_kernel_or_a_reason_per_backend():
    for name, op in REGISTRY.ops.items():
        for b in BACKENDS:
            has_kernel = name in REGISTRY.kernels[b]
            assert has_kernel != (b in op.not_applicable), (name, b)
            assert b not in op.not_applicable or op.not_applicable[b].strip()


@pytest.mark.parametrize("name,backend", PAIRS)
@settings(max_examples=60)
@given(data=st.data())
@pytest.mark.slow
def test_kernel_matches_reference_on_generated_batches(name, backend, data):
    assert_batch_matches(name, backend, data, frozenset(), 24)


def assert_batch_matches(name: str, backend: str, data, errata: frozenset[str],
                         max_size: int) -> None:
    """A drawn batch gives the same answers from the backend as from the reference."""
    op = REGISTRY.ops[name]
    drawn = data.draw(st.lists(op.strategy(), min_size=1, max_size=max_size), label="batch")
    items = [decode_args(op, op.args.encode(a)) for a in drawn]
    expected = [op.result.encode(run_reference(op, a, errata)) for a in items]
    got = [op.result.encode(r) for r in Implementation(backend, errata).run_batch(op, items)]
    assert len(got) == len(expected)
    for want, have in zip(expected, got, strict=True):
        assert have == want or within_envelope(op, want, have)


@pytest.mark.parametrize("name,backend", PAIRS)
def test_kernel_handles_an_empty_batch(name, backend):
    op = REGISTRY.ops[name]
    assert Implementation(backend).run_batch(op, []) == []
