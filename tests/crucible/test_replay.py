"""Chapter 11 replay engine and CrucibleContext, chapter 18 TransactionLog and RegionCache:
the seed tests' expectations, reference against numba, errata per profile and the model-checked
obligations (the properties over generated inputs are obligations:
proofs/crucible/properties_replay.py)."""

from __future__ import annotations

import pytest
from hypothesis import find, given

from crucible_spec.conformance import golden_replay
from crucible_spec.engine import Implementation
from crucible_spec.proofs.core import runner
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.witness import check

SEED = profile_errata("crucible@8d2680a2")
REF, REF_SEED = Implementation("reference"), Implementation("reference", SEED)
OURS = ("replay.engine", "context.simulate", "txlog.simulate", "region_cache.simulate",
        "vigil.dispatch")
CASES = golden_replay.cases({})


def op(schema: int, shape: int, scope: int = 0, callsite: int = 0) -> dict:
    return {"schema_hash": hex(schema), "shape_hash": hex(shape), "scope_hash": hex(scope),
            "callsite_hash": hex(callsite)}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.op}:{c.note[:40]}")
def test_seed_test_expectations_hold_under_the_seed_profile(case):
    assert REF_SEED.call(case.op, case.args) == case.result


def test_every_replay_op_has_seed_expectations():
    assert {c.op for c in CASES} == set(OURS)


def test_default_profile_differs_from_the_seed_only_in_the_vigil_mode():
    """E11.2 is the only erratum these scenarios meet: the fallback's mode is DIVERGED."""
    for case in CASES:
        got = REF.call(case.op, case.args)
        if got != case.result:
            assert case.op == "vigil.dispatch"
            assert {k for k in got if got[k] != case.result[k]} <= {"mode", "changes"}
            assert 2 in [c["mode"] for c in got["changes"]]


@pytest.mark.parametrize("eid", ["E11.1", "E11.2", "E11.3", "E11.4", "E11.5", "E18.9"])
def test_errata_witnesses_reproduce(eid):
    assert check(REGISTRY.errata[eid]) == "reproduced"


def test_scope_and_callsite_are_guards_only_in_the_spec():
    region = [op(1, 2, 3, 4), op(5, 6)]
    for level, stream_op in (("scope", op(1, 2, 9, 4)), ("callsite", op(1, 2, 3, 9))):
        spec = REF.call("replay.engine", {"region": region, "stream": [stream_op]})
        assert spec["statuses"] == [1] and spec["first_divergence"]["level"] == level
        seed = REF_SEED.call("replay.engine", {"region": region, "stream": [stream_op]})
        assert seed["statuses"] == [0] and seed["first_divergence"] is None


@pytest.mark.parametrize("errata", [frozenset(), SEED], ids=["crucible", "seed"])
@given(args=REGISTRY.ops["replay.engine"].strategy())
def test_numba_engine_matches_the_reference(errata, args):
    numba = Implementation("numba", errata)
    assert numba.route(REGISTRY.ops["replay.engine"]).how == "kernel"
    wire = REGISTRY.ops["replay.engine"].args.encode(args)
    assert numba.call("replay.engine", wire) == \
        Implementation("reference", errata).call("replay.engine", wire)


@pytest.mark.slow
def test_numba_engine_long_stream_and_odd_hex():
    region = [op(0x100 + i, 0x200 + i) for i in range(50)]
    stream = region * 2000
    stream[777] = op(0xBAD, 0x200)
    stream[1234] = {"schema_hash": "0X10A", "shape_hash": "0x20a"}
    wire = {"region": region, "stream": stream}
    assert Implementation("numba").call("replay.engine", wire) == REF.call("replay.engine", wire)


def test_context_switch_migrates_prefix_slots_of_the_smaller_size():
    a = {"ops": [{"schema_hash": "0x1", "output_slot_ids": [0]},
                 {"schema_hash": "0x2", "input_slot_ids": [0], "output_slot_ids": [1]}],
         "plan": {"slots": [{"offset_bytes": 0, "nbytes": 2048},
                            {"offset_bytes": 2048, "nbytes": 256}]}}
    b = {"ops": [{"schema_hash": "0x1", "output_slot_ids": [1]},
                 {"schema_hash": "0x3", "input_slot_ids": [1], "output_slot_ids": [0]}],
         "plan": {"slots": [{"offset_bytes": 0, "nbytes": 256},
                            {"offset_bytes": 256, "nbytes": 512}]}}
    steps = [{"op": "activate", "region": 0},
             {"op": "advance", "schema_hash": "0x1", "shape_hash": "0x0"},
             {"op": "switch", "region": 1, "pos": 1},
             {"op": "advance", "schema_hash": "0x3", "shape_hash": "0x0"}]
    spec = REF.call("context.simulate", {"regions": [a, b], "steps": steps})
    seed = REF_SEED.call("context.simulate", {"regions": [a, b], "steps": steps})
    moved = {"op": 0, "old_slot": 0, "new_slot": 1}
    assert spec["results"][2] == {"ok": True, "migrations": [moved | {"nbytes": 512}]}
    assert seed["results"][2] == {"ok": True, "migrations": [moved | {"nbytes": 2048}]}
    assert spec["results"][3]["status"] == 2 and spec["compiled_iterations"] == 1
    assert spec["diverged_count"] == 0 and spec["active_region"] == 1


def test_context_rejects_steps_outside_their_preconditions():
    two = {"ops": [{"schema_hash": "0x64", "shape_hash": "0xc8", "output_slot_ids": [0]},
                   {"schema_hash": "0x65", "shape_hash": "0xc9", "input_slot_ids": [0],
                    "output_slot_ids": [1]}],
           "plan": {"pool_bytes": 2048, "slots": [{"offset_bytes": 0, "nbytes": 1024},
                                                  {"offset_bytes": 1024, "nbytes": 1024}]}}
    bad = [{"regions": [], "steps": [{"op": "deactivate"}, {"op": "register_external",
                                                            "slot": 0, "ptr": "0x1"}]},
           {"regions": [two, {"ops": [{"schema_hash": "0x9"}], "plan": {"slots": []}}],
            "steps": [{"op": "activate", "region": 0},
                      {"op": "advance", "schema_hash": "0x64", "shape_hash": "0xc8"},
                      {"op": "switch", "region": 1, "pos": 1}]}]
    for args in bad:
        with pytest.raises(SpecError) as e:
            REF.call("context.simulate", args)
        assert e.value.code == "invalid_input" and "args.steps[" in e.value.message


def test_txlog_wrap_overwrites_the_active_transaction_in_the_seed():
    steps = [{"op": "begin", "step": 1}, {"op": "commit", "slot": 0},
             {"op": "activate", "slot": 0}] + [{"op": "begin", "step": 2 + k} for k in range(4)]
    spec = REF.call("txlog.simulate", {"capacity": 4, "steps": steps})
    seed = REF_SEED.call("txlog.simulate", {"capacity": 4, "steps": steps})
    assert spec["active_status"] == 3 and spec["entries"][0]["step_id"] == 1
    assert seed["active"] == 0 and seed["active_status"] == 0
    assert seed["entries"][0]["step_id"] == 5


def test_find_alternate_is_most_recent_first_and_skips_unplanned():
    ops = [op(1, 1), op(2, 2)]
    regions = [{"ops": ops, "plan": {"slots": []}, "content_hash": "0x1"},
               {"ops": ops, "plan": {"slots": []}, "content_hash": "0x2"},
               {"ops": ops, "content_hash": "0x3"}]
    steps = [{"op": "insert", "region": k} for k in range(3)] + [
        {"op": "find_alternate", "pos": 1, "schema_hash": "0x2", "shape_hash": "0x2"},
        {"op": "find_alternate", "pos": 1, "schema_hash": "0x2", "shape_hash": "0x2",
         "exclude": 1},
        {"op": "find_alternate", "pos": 2, "schema_hash": "0x2", "shape_hash": "0x2"},
        {"op": "plan_ready", "region": 2},
        {"op": "find_alternate", "pos": 0, "schema_hash": "0x1", "shape_hash": "0x1"}]
    r = REF.call("region_cache.simulate", {"regions": regions, "steps": steps})
    assert [x.get("region") for x in r["results"][3:]] == [1, 0, None, None, 2]


@pytest.mark.parametrize("name", OURS)
def test_invalid_inputs_are_rejected_with_a_path(name):
    op_ = REGISTRY.ops[name]
    for case in op_.invalid:
        with pytest.raises(SpecError) as e:
            REF.call(name, find(case.args(), lambda _: True))
        assert e.value.code == case.code and e.value.message.startswith("args.")


@pytest.mark.parametrize("po", ["PO11.1", "PO11.2", "PO11.5"])
@pytest.mark.slow
def test_model_checked_obligations_hold_and_kill_their_mutants(po, tmp_path):
    settings = runner.Settings(cache_root=tmp_path, use_cache=False)
    ob = REGISTRY.obligations[po]
    assert runner.check_obligation(ob, None, settings).status == runner.PROVED
    for m in ob.mutants:
        assert runner.check_obligation(ob, m.name, settings).status == runner.REFUTED
