"""The mutation machinery: bugs planted in the spec's own functions reach every caller and are
undone; generated mutants are stable, compile, and are judged by the checks that call them;
the Dask campaign resumes from its results; the proof cache keys cover every module."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from crucible_spec import campaign, mutants
from crucible_spec.cli import main
from crucible_spec.proofs.core import mutation, patch, runner
from crucible_spec.spec.core import bits
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible import memory_plan, trace_ring


def test_an_edit_reaches_callers_that_imported_the_function_and_is_undone():
    assert bits.align_up(300, 256) == 512
    with patch.edited(bits.align_up, "add(x,", "sub(x,"):
        assert bits.align_up(300, 256) == 0
    assert bits.align_up(300, 256) == 512
    with patch.edited(bits.pow2_index, "h & sub(capacity, 1, width)", "h & capacity"):
        assert trace_ring.pow2_index(5, 4) == 4
    assert trace_ring.pow2_index(5, 4) == 1


def test_an_edit_that_is_not_in_the_source_is_refused():
    with pytest.raises(patch.PatchError, match="is not in its source"), \
            patch.edited(bits.align_up, "no such text", "x"):
        pass
    with pytest.raises(patch.PatchError, match="not valid Python"), \
            patch.edited(bits.align_up, "return", "return return"):
        pass


def test_generated_mutants_have_stable_ids_and_all_compile():
    ids = [m.id for m in mutation.generate({1})]
    assert ids == [m.id for m in mutation.generate({1})]
    assert len(set(ids)) == len(ids)  # nested a | b | c: one id per node
    align_up = [i for i in ids if i.startswith("crucible_spec.spec.core.bits:align_up@")]
    assert align_up and all(i.split("@+")[1].startswith("2:") for i in align_up)  # the return
    for i in ids:
        if mutation.is_constant(i):
            continue
        fn, site = mutation.find(i)
        code = mutation.mutant_code(fn, site)
        assert code.co_name == fn.__code__.co_name


def test_a_mutant_of_align_up_changes_its_answer():
    fn, site = next(mutation.find(m.id) for m in mutation.generate({1})
                    if m.id.startswith("crucible_spec.spec.core.bits:align_up@")
                    and m.site.operator == "op")
    with patch.planted(fn, mutation.mutant_code(fn, site)):
        assert bits.align_up(300, 256) != 512
    assert bits.align_up(300, 256) == 512


def test_mutants_skip_error_messages_and_input_makers():
    names = {m.id.split("@")[0] for m in mutation.generate()}
    assert not any(":random_" in n for n in names)
    for m in mutation.generate({10}):
        if mutation.is_constant(m.id):
            continue
        fn, site = mutation.find(m.id)
        assert "raise" not in mutation.describe(fn, site).split("(")[0]


def test_a_constant_mutant_reaches_every_module_that_imported_it():
    from crucible_spec.spec.crucible import hashing

    ids = [m.id for m in mutation.generate({8}) if mutation.is_constant(m.id)]
    shift = next(i for i in ids if ":FMIX64_SHIFT@" in i and "33->34" in i)
    assert hashing.fmix64(1) == 0xB456BCFC34C2CB2C  # the golden value of fmix64(1)
    with mutation.planted(shift):
        assert hashing.fmix64(1) != 0xB456BCFC34C2CB2C
    assert hashing.fmix64(1) == 0xB456BCFC34C2CB2C
    assert mutation.constant_changes(0x100000001B3)[0] % 2 == 1  # a prime stays odd


def _planner_mutant() -> str:
    """The generated mutant that drops the planner's 256-byte round-up."""
    for m in mutation.generate({10}):
        if m.id.startswith("crucible_spec.spec.crucible.memory_plan:") and m.site.operator == "op":
            fn, site = mutation.find(m.id)
            if "ALIGNMENT - 1" in mutation.describe(fn, site):
                return m.id
    raise AssertionError("no mutant of the planner's round-up")


def _deps(obligations: dict[str, list[str]], ops: dict[str, list[str]] | None = None
          ) -> mutants.Dependencies:
    """Dependencies of checks on functions, as tracing would find them."""
    def traces(table):
        checks = {c for cs in table.values() for c in cs}
        return {c: mutants.Trace("k", [f for f, cs in table.items() if c in cs])
                for c in checks}

    return mutants.Dependencies(traces(obligations), traces(ops or {}))


def _deps_for(mutant_id: str) -> mutants.Dependencies:
    function = mutant_id.split("@")[0]
    return _deps({function: ["PO10.1"]}, {function: ["plan.compute|crucible"]})


@pytest.mark.slow
def test_prove_kills_a_planner_mutant_and_vectors_see_it_too(tmp_path):
    mutant_id = _planner_mutant()
    deps = _deps_for(mutant_id)
    v = mutants.evaluate(mutant_id, deps, ("prove",), tmp_path, {})
    assert (v.status, v.killed_by) == ("killed:prove", "prove:PO10.1")
    v = mutants.evaluate(mutant_id, deps, ("vectors",), tmp_path, {})
    assert v.status == "killed:vectors" and v.killed_by.startswith("vectors:plan.compute")
    assert memory_plan.align256(300) == 512  # the child process held the bug, not us


def test_listed_equivalent_mutants_and_missing_checks(tmp_path):
    mutant_id = _planner_mutant()
    v = mutants.evaluate(mutant_id, mutants.Dependencies(), ("prove", "vectors"), tmp_path, {})
    assert v.status == "survived" and v.ran == {}
    v = mutants.evaluate(mutant_id, mutants.Dependencies(), ("prove",), tmp_path,
                         {mutant_id: "the reason"})
    assert (v.status, v.equivalent) == ("equivalent", "the reason")


@pytest.mark.slow
def test_the_campaign_runs_on_a_local_cluster_and_resumes(tmp_path, monkeypatch):
    mutant_id = _planner_mutant()
    monkeypatch.setattr(mutants, "build",
                        lambda checks, root, progress, workers=1: _deps_for(mutant_id))
    results = tmp_path / "results.jsonl"
    kw = dict(checks=("prove",), root=tmp_path, results=results, equivalent={}, workers=1,
              scheduler=None, timeout_s=120, progress=lambda s: None)
    first = campaign.run([mutant_id], **kw)
    assert [v.status for v in first] == ["killed:prove"]
    assert len(results.read_text().splitlines()) == 1
    monkeypatch.setattr(campaign, "_client", lambda *a: pytest.fail("nothing left to run"))
    again = campaign.run([mutant_id], **kw)
    assert [v.killed_by for v in again] == ["prove:PO10.1"]
    row = campaign.tally(again, lambda v: v.chapter)["all"]
    assert (row.live, row.prove, row.ratio(row.prove)) == (1, 1, 1.0)


def test_a_stale_result_is_not_reused(tmp_path):
    mutant_id = _planner_mutant()
    v = mutants.Verdict(mutant_id, mutant_id.split("@")[0], 10, "0" * 16, "prove", "x")
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(v.__dict__) + "\n")
    assert campaign.load_results(path) == {}


def test_the_mutate_command_explains_bad_arguments(capsys):
    assert main(["mutate", "--chapters", "one"]) == 2
    assert "--chapters" in capsys.readouterr().err
    assert main(["mutate", "--checks", "proofs"]) == 2
    assert main(["mutate", "--list", "--functions", "bits:align_up"]) == 0
    listed = capsys.readouterr().out.split("\n")
    assert listed[0].startswith("crucible_spec.spec.core.bits:align_up@")


def test_the_evidence_cache_key_covers_every_spec_and_proofs_module(tmp_path):
    roots = []
    for root in runner.SOURCE_ROOTS:
        roots.append(tmp_path / root.name)
        shutil.copytree(root, roots[-1], ignore=shutil.ignore_patterns("__pycache__"))
    base = runner.source_digest(*roots)
    modules = [p for r in roots for p in sorted(r.rglob("*.py"))]
    assert len(modules) > 50
    for path in modules:
        text = path.read_text()
        path.write_text(text + "\n# edited\n")
        runner.source_digest.cache_clear()
        assert runner.source_digest(*roots) != base, path.name
        path.write_text(text)
    runner.source_digest.cache_clear()
    assert runner.source_digest(*roots) == base


def test_a_query_over_its_resource_budget_is_unknown_the_same_way_every_time(tmp_path):
    import z3

    from crucible_spec.proofs.core.obligation import Query

    x, y = z3.BitVecs("x y", 64)
    q = Query("hard", z3.And(x * y == 0x1234567890ABCDEF, x != 1, y != 1,
                             x != 0x1234567890ABCDEF), expect="unsat", rlimit=20_000)
    settings = runner.Settings(tmp_path, use_cache=True)
    outs = [runner.check_query(q, 600.0, settings) for _ in range(2)]
    assert [o.status for o in outs] == [runner.UNKNOWN, runner.UNKNOWN]
    assert outs[0].rlimit == outs[1].rlimit and not outs[1].cached


def test_a_cached_answer_records_z3_version_and_resources(tmp_path):
    po = REGISTRY.obligations["PO1.1"]
    settings = runner.Settings(tmp_path, use_cache=True)
    runner.check_obligation(po, None, settings)
    entries = [json.loads(p.read_text()) for p in Path(tmp_path).rglob("*.json")]
    assert entries and all(e["z3"] == runner.z3_version() and e["rlimit"] > 0
                           for e in entries)


def test_a_constant_mutant_is_checked_by_what_calls_its_readers(tmp_path):
    mutant_id = "crucible_spec.spec.crucible.hashing:FMIX64_SHIFT@+0:0 const 33->34"
    assert mutation.mutated_functions(mutant_id) == ["crucible_spec.spec.crucible.hashing:fmix64"]
    deps = _deps({"crucible_spec.spec.crucible.hashing:fmix64": ["PO8.60"]})
    v = mutants.evaluate(mutant_id, deps, ("prove",), tmp_path, {})
    assert (v.status, v.killed_by) == ("killed:prove", "prove:PO8.60")


def test_a_survivor_goes_only_through_the_checks_it_has_not_met():
    survivor = mutants.Verdict("m", "f", 1, "sha", checks=["prove", "vectors"])
    assert campaign.remaining(survivor, ("prove", "vectors", "tests")) == ("tests",)
    assert campaign.remaining(survivor, ("prove",)) == ()
    killed = mutants.Verdict("m", "f", 1, "sha", "prove", "prove:PO1.1", checks=["prove"])
    assert campaign.remaining(killed, ("prove", "vectors", "tests")) == ()
    assert campaign.remaining(None, ("prove",)) == ("prove",)


def test_a_failing_check_is_never_counted_as_a_kill(tmp_path):
    mutant_id = _planner_mutant()
    deps = _deps_for(mutant_id)
    deps.obligations["PO10.1"].passed = False
    v = mutants.evaluate(mutant_id, deps, ("prove",), tmp_path, {})
    assert v.status == "survived"


@pytest.mark.slow
def test_traces_are_reused_until_their_code_changes(tmp_path, monkeypatch):
    deps = mutants.Dependencies()
    seen = []
    real = runner.check_obligation
    monkeypatch.setattr(runner, "check_obligation",
                        lambda po, m, s: seen.append(po.id) or real(po, m, s))
    monkeypatch.setattr(mutants, "REGISTRY", type("R", (), {"obligations": {
        "PO1.1": REGISTRY.obligations["PO1.1"], "PO1.2": REGISTRY.obligations["PO1.2"]}}))
    mutants.trace_obligations(deps, lambda s: None)
    assert sorted(seen) == ["PO1.1", "PO1.2"]
    assert "crucible_spec.spec.core.bits:align_up" in deps.obligations["PO1.1"].functions
    mutants.trace_obligations(deps, lambda s: None)
    assert sorted(seen) == ["PO1.1", "PO1.2"]
    deps.obligations["PO1.2"].key = "stale"
    mutants.trace_obligations(deps, lambda s: None)
    assert sorted(seen) == ["PO1.1", "PO1.2", "PO1.2"]


@pytest.mark.slow
def test_tracing_on_two_workers_records_what_one_does():
    names = ["PO1.1", "PO1.2", "PO8.1"]
    serial = dict(mutants.traced_all(mutants._trace_obligation, names, 1, "", lambda s: None))
    pooled = dict(mutants.traced_all(mutants._trace_obligation, names, 2, "", lambda s: None))
    assert {n: out[:2] for n, out in serial.items()} == {n: out[:2] for n, out in pooled.items()}
    assert "crucible_spec.spec.core.bits:align_up" in pooled["PO1.1"][0]
    ops = ["hash.fmix64|crucible", "types.element_size|crucible"]
    pooled = dict(mutants.traced_all(mutants._trace_vectors, ops, 2, "", lambda s: None))
    assert pooled["hash.fmix64|crucible"][1] is True
    assert "crucible_spec.spec.crucible.hashing:fmix64" in pooled["hash.fmix64|crucible"][0]


@pytest.mark.slow
def test_the_tests_stage_runs_the_tests_that_call_the_function_under_the_mutant(tmp_path):
    mutant_id = _planner_mutant()
    node = "tests/core/test_analysis_properties.py::test_broken_planners_are_caught"
    deps = mutants.Dependencies(tests={node: mutants.Trace("k", [mutant_id.split("@")[0]])})
    v = mutants.evaluate(mutant_id, deps, ("tests",), tmp_path, {}, timeout_s=300)
    assert (v.status, v.killed_by) == ("killed:tests", f"tests:{node}")


@pytest.mark.slow
def test_the_tracing_plugin_records_what_each_test_calls(tmp_path):
    import os
    import subprocess
    import sys

    out = tmp_path / "trace.json"
    node = "tests/core/test_analysis_properties.py::test_broken_planners_are_caught"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "crucible_spec.mutant_plugin",
                    "-o", "addopts=", node], cwd=mutants.REPO, check=True, capture_output=True,
                   env=os.environ | {"CRUCIBLE_SPEC_TRACE_TESTS": str(out)})
    traced = json.loads(out.read_text())
    assert traced[node]["passed"] is True
    assert "crucible_spec.spec.crucible.memory_plan:align256" in traced[node]["functions"]


def test_a_survivor_is_tried_again_when_the_checks_change():
    survivor = mutants.Verdict("m", "f", 1, "sha", checks=["prove"], checks_digest="old")
    assert campaign.remaining(survivor, ("prove",), "old") == ()
    assert campaign.remaining(survivor, ("prove",), "new") == ("prove",)
    listed = mutants.Verdict("m", "f", 1, "sha", equivalent="a reason", checks_digest="old")
    assert campaign.remaining(listed, ("prove",), "new") == ("prove",)
