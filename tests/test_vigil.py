"""Vigil's foreground dispatch (vigil.dispatch): properties over generated streams, regions
made by the background pipeline from recorded loops, errata per profile, and `oracle replay`."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given

from crucible_spec.cli import main
from crucible_spec.engine import Implementation
from crucible_spec.spec.crtrace import write_crtrace
from crucible_spec.spec.errata import profile_errata
from crucible_spec.spec.iteration_detector import K
from crucible_spec.spec.registry import REGISTRY
from crucible_spec.spec.replay_region import regions_from_recording
from crucible_spec.spec.vigil_ops import chain_recording, load_regions
from crucible_spec.synthetic import iteration_length, synthetic_trace

SEED = profile_errata("crucible@8d2680a2")
REF, REF_SEED = Implementation("reference"), Implementation("reference", SEED)
NONE = 4294967295
SHAPE_A = [0x200 + i for i in range(8)]
SHAPE_B = [0x200, 0x201, 0x202, *(0x300 + i for i in range(3, 8))]


def loop(shapes: list[int], lo: int = 0, hi: int = 8) -> list[dict]:
    return [{"schema_hash": hex(0x100 + i), "shape_hash": hex(shapes[i])} for i in range(lo, hi)]


def _active_by_index(result: dict, n: int) -> list[int | None]:
    active, out, changes = None, [], {}
    for c in result["changes"]:
        changes.setdefault(c["at"], []).append(c)
    for i in range(n):
        for c in changes.get(i, []):
            if c["event"] in ("aligned", "switched", "fallback"):
                active = c["region"]
        out.append(active)
    return out


@given(REGISTRY.ops["vigil.dispatch"].strategy())
def test_compiled_decisions_name_a_matching_region_op(args):
    wire = REGISTRY.ops["vigil.dispatch"].args.encode(args) | {"handles": True}
    r = REF.call("vigil.dispatch", wire)
    regions = load_regions(args["regions"], args["recordings"], frozenset())
    items = [s for s in args["stream"] if "publish" not in s]
    decisions = r["decisions"]
    assert len(decisions) == len(items)
    stream_at = [i for i, s in enumerate(args["stream"]) if "publish" not in s]
    active = _active_by_index(r, len(args["stream"]))
    for d, item, at in zip(decisions, items, stream_at, strict=True):
        if d["status"] == 1:
            assert d["action"] == 0 and d["op_index"] == NONE and at not in r["recorded"]
        if d["action"] == 1:
            region = regions[active[at]]
            got = (int(item["schema_hash"], 16), int(item["shape_hash"], 16),
                   int(item.get("scope_hash", "0x0"), 16), 0)
            outs = [h and h["slot"] for h in d["outputs"]]
            assert any(tuple(o.guard) == got and (o.output_slot_ids or []) == outs
                       for o in region.ops)
            for h in d["outputs"] + d["inputs"]:
                if h and "offset" in h:
                    slot = region.plan.slots[h["slot"]]
                    assert h["offset"] == slot.offset_bytes < region.plan.pool_bytes or \
                        slot.nbytes == 0
    recorded = set(r["recorded"])
    assert all(decisions[stream_at.index(i)] == {"action": 0, "status": 0, "op_index": NONE}
               for i in recorded)
    assert r["diverged_count"] >= sum(d["status"] == 1 for d in decisions)
    assert r["compiled_iterations"] >= sum(d["status"] == 2 for d in decisions)
    assert (r["ctx_mode"] == 1) == (r["active_region"] is not None)


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
