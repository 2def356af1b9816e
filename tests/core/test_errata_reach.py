"""Errata reach every op they affect: each op that hashes inside answers as the real code
under the faithful profile, every result witness sits in both profiles' vectors with answers
that differ, widths hold on every erratum path, and a terminal ends the DAG walk."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings

from crucible_spec.conformance import vectors
from crucible_spec.engine import Implementation
from crucible_spec.proofs.core.patch import edited
from crucible_spec.proofs.core.result_widths import (
    check_widths,
    distinct_profiles,
    width_problems,
)
from crucible_spec.spec.core.errata import (
    DEFAULT_PROFILE,
    profile_errata,
    profiles,
    result_witnesses,
)
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.content_hash import packed_meta
from crucible_spec.witness import answer, matches

SEED = "crucible@8d2680a2"
WITNESSES = [(e.id, op, k, w) for e in sorted(REGISTRY.errata.values(), key=lambda e: e.id)
             for k, (op, w) in enumerate(result_witnesses(e))]
KNOWN_GAPS = {
    ("E6.1", "pipeline.run"), ("E6.4", "pipeline.run"), ("E6.5", "pipeline.run"),
    ("E7.1", "pipeline.run"), ("E8.3", "pipeline.run"), ("E8.4", "pipeline.run"),
    ("E6.5", "trace.build"), ("E18.2", "crtrace.decode"),
    ("E8.3", "cipher.simulate"), ("E8.4", "cipher.simulate"),
    ("E9.2", "cdag.encode_branch"), ("E18.7", "cdag.encode_branch"),
    ("E11.1", "context.simulate"), ("E11.1", "region_cache.simulate"),
    ("E6.1", "vigil.dispatch"), ("E6.4", "vigil.dispatch"), ("E6.5", "vigil.dispatch"),
    ("E7.1", "vigil.dispatch"), ("E8.3", "vigil.dispatch"), ("E8.4", "vigil.dispatch"),
    ("E11.1", "vigil.dispatch"), ("E11.3", "vigil.dispatch"), ("E18.5", "vigil.dispatch"),
    ("E18.9", "vigil.dispatch"), ("E10.1", "pipeline.run"), ("E10.1", "vigil.dispatch"),
    ("E6.5", "ir.lower"),
}
"""(erratum, op) pairs outside chapters 8 and 9 that still lack a witness on that op."""
REAL_META = {"data_ptr": "0x0", "device_idx": -24, "device_type": -9, "dtype": 56, "ndim": 0,
             "sizes": [], "strides": []}
"""A tensor whose real content hash (schema 0x138) is 0x936f864631821f42."""


@cache
def _suite(profile: str) -> dict[str, list[vectors.Case]]:
    return vectors.load(vectors.VECTORS_DIR, profile)


def _impl(profile: str, name: str = "reference") -> Implementation:
    return Implementation(name, profile_errata(profile))


@pytest.mark.parametrize(("eid", "op", "k", "w"), WITNESSES,
                         ids=[f"{eid}-{op}-{k}" for eid, op, k, _ in WITNESSES])
def test_each_op_answers_its_witness_as_the_seed_under_the_faithful_profile(eid, op, k, w):
    assert matches(answer(_impl(REGISTRY.errata[eid].seed), op, w["args"]), w["seed"])
    assert matches(answer(_impl(DEFAULT_PROFILE), op, w["args"]), w["spec"])


@pytest.mark.parametrize(("eid", "op", "k", "w"), WITNESSES,
                         ids=[f"{eid}-{op}-{k}" for eid, op, k, _ in WITNESSES])
def test_each_witness_is_in_both_profiles_vectors_with_answers_that_differ(eid, op, k, w):
    found = {}
    for profile in (DEFAULT_PROFILE, REGISTRY.errata[eid].seed):
        cases = _suite(profile)[op]
        hits = [c for c in cases if c.args == w["args"]]
        assert hits, f"{eid}: no {op} vector of {profile} holds its witness"
        found[profile] = hits[0].result or {"error": hits[0].error}
    spec, seed = found[DEFAULT_PROFILE], found[REGISTRY.errata[eid].seed]
    assert spec != seed and matches(spec, w["spec"]) and matches(seed, w["seed"])


def test_every_op_a_result_erratum_reaches_has_a_witness_there():
    have = {(eid, op) for eid, op, _, _ in WITNESSES}
    missing = {(eid, name) for name in REGISTRY.ops for eid in REGISTRY.errata_for(name)
               if REGISTRY.errata[eid].flag == "result" and (eid, name) not in have}
    assert missing <= KNOWN_GAPS, sorted(missing - KNOWN_GAPS)


def test_faithful_diff_of_arms_in_opposite_order_is_the_real_codes_branch_mismatch():
    def dag(arms: list[dict]) -> dict:
        return {"nodes": [{"kind": "region", "content_hash": "0x1"},
                          {"kind": "region", "content_hash": "0x2"},
                          {"kind": "branch", "guard": {"kind": 1, "op_index": 0}, "arms": arms}],
                "root": 2}
    a = dag([{"value": 3, "target": 0}, {"value": 5, "target": 1}])
    b = dag([{"value": 5, "target": 1}, {"value": 3, "target": 0}])
    assert _impl(SEED).call("dag.diff", {"a": a, "b": b}) == {"kind": 3, "depth": 0}
    assert _impl(DEFAULT_PROFILE).call("dag.diff", {"a": a, "b": b}) == {"kind": 0, "depth": 0}


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("dag", [
    {"nodes": [{"kind": "terminal", "next": 1}, {"kind": "region", "content_hash": "0x1"}],
     "root": 0},
    {"nodes": [{"kind": "terminal", "next": 1},
               {"kind": "region", "content_hash": "0x1", "next": 0}], "root": 1},
])
@pytest.mark.parametrize("op", ["dag.merkle", "dag.replay"])
def test_a_terminal_with_a_next_is_invalid_input(impl, dag, op):
    with pytest.raises(SpecError) as e:
        _impl(SEED, impl).call(op, {"dag": dag})
    assert e.value.code == "invalid_input" and "nodes[0].next" in str(e.value)


def test_a_terminal_with_a_null_next_is_a_terminal():
    dag = {"nodes": [{"kind": "terminal", "next": None}], "root": 0}
    assert _impl(DEFAULT_PROFILE).call("dag.merkle", {"dag": dag}) == \
        {"merkle": ["0x0000000000000000"], "node_count": 1}


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_faithful_cdag_encode_holds_the_real_content_hash_of_a_negative_device_type(impl):
    region = {"ops": [{"inputs": [REAL_META], "schema_hash": "0x138"}], "has_plan": False}
    data = bytes.fromhex(_impl(SEED, impl).call("cdag.encode", {"region": region})["hex"])
    assert int.from_bytes(data[24:32], "little") == 0x936F864631821F42


def test_the_width_check_finds_the_unmasked_seed_packing():
    value = {"ops": [{"inputs": [REAL_META], "schema_hash": "0x138"}]}
    assert width_problems("dag.content_hash", SEED, value) == []
    with edited(packed_meta, ") & mask(64)", ")"):
        problems = width_problems("dag.content_hash", SEED, value)
    assert problems and problems[0].startswith("wymix operand")


@pytest.mark.parametrize("name", sorted(REGISTRY.ops))
def test_results_and_mixer_operands_fit_their_widths(name):
    @settings(max_examples=5, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(REGISTRY.ops[name].strategy())
    def check(value):
        check_widths(name, value)

    check()


def test_the_widths_check_runs_an_op_handed_no_errata_once_and_others_per_errata_set():
    """An op that declares no errata is handed none under any profile; one that does is run
    once per distinct set of errata among the profiles."""
    sets = {profile_errata(p) for p in profiles()}
    for name, op in REGISTRY.ops.items():
        chosen = distinct_profiles(name)
        assert len(chosen) == (len(sets) if op.errata else 1), name
        assert {profile_errata(p) for p in chosen} == (sets if op.errata else
                                                      {profile_errata(chosen[0])})
