"""Vigil's foreground dispatch (vigil.dispatch): regions made by the background pipeline from
recorded loops, errata per profile, numba against the reference, and `oracle replay` (the
property over generated streams is obligation PO11.75)."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given

from crucible_spec.cli import main
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.crtrace import write_crtrace
from crucible_spec.spec.crucible.iteration_detector import K
from crucible_spec.spec.crucible.replay_region import regions_from_recording
from crucible_spec.spec.crucible.vigil_ops import chain_recording, chain_region
from crucible_spec.synthetic import iteration_length, synthetic_trace

SEED = profile_errata("crucible@8d2680a2")
REF, REF_SEED = Implementation("reference"), Implementation("reference", SEED)
NONE = 4294967295
SHAPE_A = [0x200 + i for i in range(8)]
SHAPE_B = [0x200, 0x201, 0x202, *(0x300 + i for i in range(3, 8))]


def loop(shapes: list[int], lo: int = 0, hi: int = 8) -> list[dict]:
    return [{"schema_hash": hex(0x100 + i), "shape_hash": hex(shapes[i])} for i in range(lo, hi)]


def test_dispatch_from_a_recorded_loop_flows_data_through_the_pool():
    """test_vigil_dispatch: 2 iterations + 5 ops recorded, then aligned and replayed."""
    rec = chain_recording(range(2), SHAPE_A, [1024] * 8, tail=K)
    regions = regions_from_recording(rec, 0)
    assert regions and regions[-1].num_ops == 8 and regions[-1].plan is not None
    r = REF.call("vigil.dispatch", {"recordings": [rec], "stream": loop(SHAPE_A) * 2})
    d = r["decisions"]
    assert [x["action"] for x in d[:5]] == [0] * 5 and r["recorded"] == []
    assert [x["status"] for x in d[5:]] == [0, 0, 2] + [0] * 7 + [2]
    assert r["compiled_iterations"] == 2 and r["ctx_mode"] == 1
    pool = regions[-1].plan.pool_bytes
    for a, b in itertools.pairwise(d[8:16]):  # op i's output is op i + 1's input
        assert a["outputs"] == b["inputs"]
    handles = [h for x in d if x["action"] == 1 for h in x["outputs"] + x["inputs"]]
    assert all(0 <= h["offset"] < pool and h["offset"] % 256 == 0 for h in handles)
    assert regions[-1].plan and not any(s.is_external for s in regions[-1].plan.slots)


def test_shape_variants_recorded_by_the_pipeline_switch_at_op_3():
    """test_region_cache: recorded variants A and B share 3 ops; replay switches both ways."""
    rec_a = chain_recording(range(2), SHAPE_A, [1024] * 8, 0, tail=K)
    rec_b = chain_recording(range(10, 16), SHAPE_B, [1024] * 3 + [2048] * 5, 1, tail=K)
    n_a = len(regions_from_recording(rec_a, 0))
    n_b = len(regions_from_recording(rec_b, 0))
    b_idx = list(range(n_a, n_a + n_b))
    stream = loop(SHAPE_A) * 2 + loop(SHAPE_A, 0, 3) + loop(SHAPE_B, 3, 4) + \
        [{"publish": b_idx}] + loop(SHAPE_B) * 2 + loop(SHAPE_A)
    r = REF_SEED.call("vigil.dispatch", {"recordings": [rec_a, rec_b],
                                         "published": list(range(n_a)), "stream": stream,
                                         "handles": False})
    d = r["decisions"]
    assert d[19] == {"action": 0, "status": 1, "op_index": NONE}
    assert d[39] == {"action": 1, "status": 0, "op_index": 4}
    assert [x["action"] for x in d[40:]] == [1] * 4 and d[-1]["status"] == 2
    assert [(m["op"], m["nbytes"]) for m in r["migrations"]] == [(0, 4096), (1, 4096),
                                                                 (2, 4096)]
    assert len(r["region_cache"]) == 2 and r["diverged_count"] == 2
    assert [c["event"] for c in r["changes"]] == ["aligned", "fallback", "published",
                                                  "aligned", "switched"]


def test_vigil_mode_and_alignment_errata_per_profile():
    region = {"ops": loop(SHAPE_A, 0, 3), "plan": {"slots": []}}
    fallback = {"regions": [region], "stream": loop(SHAPE_A, 0, 3) + loop(SHAPE_A, 2, 3)}
    assert REF.call("vigil.dispatch", fallback)["mode"] == 2
    assert REF_SEED.call("vigil.dispatch", fallback)["mode"] == 0
    a, b, c, d = ({"schema_hash": hex(x)} for x in (0xA, 0xB, 0xC, 0xD))
    overlap = {"regions": [{"ops": [a, a, b, c, d], "plan": {"slots": []}}],
               "stream": [a, a, a, b, c, d]}
    spec, seed = (x.call("vigil.dispatch", overlap) for x in (REF, REF_SEED))
    assert spec["ctx_mode"] == 1 and spec["changes"][0]["at"] == 5
    assert spec["compiled_iterations"] == 1
    assert seed["ctx_mode"] == 0 and seed["changes"] == []


def test_a_region_without_a_plan_never_compiles():
    r = REF.call("vigil.dispatch", {"regions": [{"ops": loop(SHAPE_A)}],
                                    "stream": loop(SHAPE_A) * 2})
    assert r["ctx_mode"] == 0 and [c["event"] for c in r["changes"]] == ["no_plan"]
    assert r["recorded"] == list(range(5, 16))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("replay")
    n = iteration_length("mlp")
    (d / "rec.crtrace").write_bytes(write_crtrace(synthetic_trace(3 * n + K, "mlp", 0)))
    (d / "new.crtrace").write_bytes(write_crtrace(synthetic_trace(2 * n, "mlp", 0)))
    region = {"ops": [{"schema_hash": hex(0x100 + i), "shape_hash": hex(0x200 + i),
                       "output_slot_ids": [i]} for i in range(8)],
              "plan": {"slots": [{"offset_bytes": 256 * i, "nbytes": 256} for i in range(8)]}}
    (d / "region.json").write_text(json.dumps(region))
    ops = loop(SHAPE_A)
    stream = ops * 2 + ops[:3] + [ops[3] | {"scope_hash": "0x77"}] + ops[4:]
    (d / "stream.json").write_text(json.dumps(stream))
    return d


def test_oracle_replay_names_the_failed_guard(files, capsys):
    args = ["oracle", "replay", str(files / "region.json"), str(files / "stream.json")]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "op 19: region 0 op 3: scope guard failed" in out and "no cached alternate" in out
    assert main([*args, "--profile", "crucible@8d2680a2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["divergences"] == [] and report["compiled_at"] == 4
    assert report["unchecked_matches"] == [{"index": 19, "region_op": 3, "levels": ["scope"]}]


def test_oracle_replay_of_crtrace_files(files, capsys):
    assert main(["oracle", "replay", str(files / "rec.crtrace"), str(files / "new.crtrace")]) == 0
    out = capsys.readouterr().out
    assert "aligned and compiled at op 4" in out and "never left compiled mode" in out


def test_oracle_replay_usage_errors(files, capsys):
    assert main(["oracle", "replay", str(files / "nope.json"), str(files / "stream.json")]) == 2
    assert main(["oracle", "replay", str(files / "region.json"), str(files / "stream.json"),
                 "--region", "3"]) == 2
    assert "no region 3" in capsys.readouterr().err


@pytest.mark.parametrize("errata", [frozenset(), SEED], ids=["crucible", "seed"])
@given(args=REGISTRY.ops["vigil.dispatch"].strategy())
def test_numba_dispatch_matches_the_reference(errata, args):
    numba = Implementation("numba", errata)
    assert numba.route(REGISTRY.ops["vigil.dispatch"]).how == "kernel"
    wire = REGISTRY.ops["vigil.dispatch"].args.encode(args)
    assert numba.call("vigil.dispatch", wire) == \
        Implementation("reference", errata).call("vigil.dispatch", wire)


def test_numba_dispatch_on_the_seed_scenarios_and_odd_input():
    from crucible_spec.conformance.golden_replay import cases

    numba = Implementation("numba", SEED)
    for case in cases({}):
        if case.op == "vigil.dispatch":
            assert numba.call(case.op, case.args) == case.result
    odd = {"regions": [{"ops": loop(SHAPE_A, 0, 2), "plan": {"slots": []}}],
           "stream": [{"schema_hash": "0X100", "shape_hash": "0x200"}, {"publish": [0, 0]},
                      {"schema_hash": "0x100", "shape_hash": "0x200", "inputs": []}]}
    assert numba.call("vigil.dispatch", odd) == REF_SEED.call("vigil.dispatch", odd)


# Rollback, persist and load (section 13.5; the log of section 23, the store of section 24)

A = chain_region(SHAPE_A, [1024] * 8, 0xA)
B = chain_region(SHAPE_B, [1024] * 3 + [2048] * 5, 0xB)
PASS = [{"action": 1, "status": 0, "op_index": NONE}] * 7 + \
    [{"action": 1, "status": 2, "op_index": NONE}]
ZERO = "0x0000000000000000"


def call_results(r: dict) -> list[tuple[int, str, bool]]:
    return [(c["at"], c["call"], c["ok"]) for c in r["calls"]]


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("errata", [frozenset(), SEED], ids=["crucible", "seed"])
def test_rollback_restores_the_superseded_region(impl, errata):
    """Section 23: B's activation supersedes A; rollback makes A active again, a second
    rollback fails. Section 13.5: the context is re-activated on A (cursor 0), mode_ kept."""
    x = Implementation(impl, errata)
    base = {"regions": [A, B], "published": [], "handles": False}
    r = x.call("vigil.dispatch", base | {"stream": [{"publish": 0}, {"publish": 1}]})
    assert (r["active_tx_region"], r["active_tx_step"], r["ctx_mode"]) == (1, 1, 0)
    r = x.call("vigil.dispatch", base | {"stream": [
        {"publish": 0}, {"publish": 1}, {"rollback": True}, {"rollback": True},
        *loop(SHAPE_A)]})
    assert call_results(r) == [(2, "rollback", True), (3, "rollback", False)]
    assert (r["active_tx_region"], r["active_tx_step"], r["step"]) == (0, 0, 2)
    assert (r["ctx_mode"], r["active_region"], r["mode"]) == (1, 0, 1)
    assert r["decisions"] == PASS and r["compiled_iterations"] == 1 and r["recorded"] == []
    assert [(c["event"], c["region"]) for c in r["changes"]] == [
        ("published", None), ("published", None), ("rollback", 0), ("rollback", 0)]
    assert r["cipher_head"] == ZERO


@pytest.mark.parametrize("errata,mode", [(frozenset(), 2), (SEED, 0)], ids=["crucible", "seed"])
def test_rollback_after_a_fallback_compiles_without_changing_the_mode(errata, mode):
    x = Implementation("reference", errata)
    r = x.call("vigil.dispatch", {"regions": [A, B], "published": [0, 1], "handles": False,
                                  "stream": [*loop(SHAPE_B), {"schema_hash": "0xbad"},
                                             {"rollback": True}, *loop(SHAPE_A)]})
    assert r["changes"][1]["event"] == "fallback" and call_results(r) == [(9, "rollback", True)]
    assert r["decisions"][-8:] == PASS
    assert (r["ctx_mode"], r["active_region"], r["mode"]) == (1, 0, mode)


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("errata", [frozenset(), SEED], ids=["crucible", "seed"])
def test_persist_then_load_round_trips_through_the_cipher(impl, errata):
    """Section 13.5: persist needs a cipher and an active region, stores it and moves the head
    to its content hash; load from the head activates it, caches it, sets mode COMPILED."""
    x = Implementation(impl, errata)
    r = x.call("vigil.dispatch", {"regions": [A], "published": [], "handles": False,
                                  "stream": [{"persist": True}, {"load": True}, {"publish": 0},
                                             {"persist": True}, {"load": True},
                                             *loop(SHAPE_A)]})
    assert call_results(r) == [(0, "persist", False), (1, "load", False), (3, "persist", True),
                               (4, "load", True)]
    assert r["cipher_head"] == "0x000000000000000a" and r["decisions"] == PASS
    assert (r["ctx_mode"], r["active_region"], r["mode"], r["region_cache"]) == (1, 0, 1, [0])
    none = x.call("vigil.dispatch", {"regions": [A], "cipher": False,
                                     "stream": [{"persist": True}, {"load": True}]})
    assert call_results(none) == [(0, "persist", False), (1, "load", False)]
    assert none["cipher_head"] == ZERO


def test_load_without_a_plan_still_reports_success():
    r = REF.call("vigil.dispatch", {"regions": [{"ops": loop(SHAPE_A), "content_hash": "0x5"}],
                                    "stream": [{"schema_hash": "0xbad"}, {"persist": True},
                                               {"load": True}]})
    assert call_results(r) == [(1, "persist", True), (2, "load", True)]
    assert (r["mode"], r["ctx_mode"], r["active_region"]) == (1, 0, None)


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_persist_of_a_300_op_region_fails_in_the_seed(impl):
    """Section 24: 299 ops store, 300 (without a plan) overflow the estimate (E18.5)."""
    region = {"ops": [{"schema_hash": "0x1"}] * 300, "content_hash": "0x1234"}
    args = {"regions": [region], "stream": [{"persist": True}]}
    spec = Implementation(impl).call("vigil.dispatch", args)
    assert call_results(spec) == [(0, "persist", True)]
    seed = Implementation(impl, SEED).call("vigil.dispatch", args)
    assert call_results(seed) == [(0, "persist", False)] and seed["cipher_head"] == ZERO


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_rollback_drops_the_region_that_waits_to_align(impl):
    """E11.6: B, published while A replays and then rolled back, is not aligned later."""
    a = {"ops": [{"schema_hash": "0x1"}, {"schema_hash": "0x2"}], "plan": {"slots": []}}
    b = {"ops": [{"schema_hash": "0x3"}, {"schema_hash": "0x4"}], "plan": {"slots": []}}
    args = {"regions": [a, b], "published": [0], "stream": [
        {"schema_hash": "0x1"}, {"schema_hash": "0x2"}, {"publish": 1}, {"rollback": True},
        {"schema_hash": "0x9"}, {"schema_hash": "0x3"}, {"schema_hash": "0x4"}]}
    spec, seed = (Implementation(impl, e).call("vigil.dispatch", args)
                  for e in (frozenset(), SEED))
    assert (spec["ctx_mode"], spec["recorded"]) == (0, [5, 6])
    assert (seed["ctx_mode"], seed["active_region"], seed["active_tx_region"]) == (1, 1, 0)


@pytest.mark.parametrize("item", [{"rollback": 1}, {"load": True, "x": 1}, {"persist": False}])
def test_a_malformed_call_item_is_invalid_input(item):
    with pytest.raises(SpecError) as e:
        REF.call("vigil.dispatch", {"stream": [item]})
    assert e.value.code == "invalid_input" and "args.stream[0]" in e.value.message


def test_oracle_replay_reports_each_api_call(files, capsys):
    ops = loop(SHAPE_A)
    stream = [*ops, {"persist": True}, {"rollback": True}, {"load": True}, *ops]
    (files / "calls.json").write_text(json.dumps(stream))
    args = ["oracle", "replay", str(files / "region.json"), str(files / "calls.json")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "op 8: persist() returned true; the context is compiled on region 0" in out
    assert "op 9: rollback() returned false" in out and "op 10: load() returned true" in out
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(c["index"], c["call"], c["ok"]) for c in report["calls"]] == [
        (8, "persist", True), (9, "rollback", False), (10, "load", True)]
    assert report["stream_ops"] == 16
