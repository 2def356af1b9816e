"""Differential conformance under the seed profile: every fast kernel that models errata runs
with all of Crucible 8d2680a2's errata on, against the reference under the same errata, on
batches from the op's domain, and reproduces the seed side of each witness it models (under
the profile of that erratum's own seed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import SEEDS, profile_errata
from crucible_spec.spec.core.registry import BACKENDS, REGISTRY
from crucible_spec.witness import answer, matches
from tests.core.test_differential import assert_batch_matches

SEED = profile_errata(SEEDS["crucible"])
PAIRS = sorted((name, b) for b in BACKENDS for name, models in REGISTRY.kernel_models[b].items()
               if models)
WITNESSES = sorted((e, name, b) for name, b in PAIRS
                   for e in REGISTRY.kernel_models[b][name]
                   if REGISTRY.errata[e].flag == "result" and "args" in REGISTRY.errata[e].witness
                   and REGISTRY.errata[e].witness.get("op", REGISTRY.errata[e].ops[0]) == name)


def test_modelling_kernels_answer_the_seed_profile_themselves():
    assert {name for name, _ in PAIRS} >= {"trace.build", "dag.guard_hash"}
    for name, backend in PAIRS:
        assert Implementation(backend, SEED).route(REGISTRY.ops[name]).how == "kernel", name


@pytest.mark.parametrize("name,backend", PAIRS)
@settings(max_examples=20)
@given(data=st.data())
@pytest.mark.slow
def test_kernel_matches_the_reference_under_the_seed_profile(name, backend, data):
    assert_batch_matches(name, backend, data, SEED, 16)


@pytest.mark.parametrize("eid,name,backend", WITNESSES)
def test_kernel_reproduces_both_sides_of_the_witnesses_it_models(eid, name, backend):
    w = REGISTRY.errata[eid].witness
    seed = profile_errata(REGISTRY.errata[eid].seed)
    assert matches(answer(Implementation(backend, seed), name, w["args"]), w["seed"])
    assert matches(answer(Implementation(backend), name, w["args"]), w["spec"])
