"""`crucible-spec analyze` and the oracle's trace, plan and dag diffs, on the seed's own runs
written as .crtrace files."""

from __future__ import annotations

import json

import pytest

from crucible_spec.cli import main
from crucible_spec.conformance.seed_runs import PIPELINE_RUNS, e2e_stream, mlp_stream
from crucible_spec.spec.crucible.crtrace import write_crtrace
from crucible_spec.spec.crucible.pipeline import trace_of
from crucible_spec.spec.crucible.trace_build_ops import recorded_ops, trace_build


@pytest.fixture
def mlp_file(tmp_path):
    path = tmp_path / "mlp.crtrace"
    path.write_bytes(write_crtrace(trace_of(recorded_ops(mlp_stream()))))
    return str(path)


def _json(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["analyze", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_analyze_reports_the_seed_region(mlp_file, capsys):
    expected = PIPELINE_RUNS["MLP trace"][1]["regions"][0]
    report = _json(capsys, mlp_file, "--profile", "crucible@8d2680a2")
    assert report["boundaries"] == [24] and report["retained"] == 5
    (region,) = report["regions"]
    for key in ("start", "num_ops", "content_hash", "merkle_hash", "num_edges", "num_slots",
                "num_external", "pool_bytes"):
        assert region[key] == expected[key], key
    assert region["data_flow_edges"] == 10 and region["alias_edges"] == 0
    assert region["lower_bound"] <= region["pool_bytes"]
    assert region["greedy_pool_bytes"] >= region["lower_bound"]
    assert region["quality"] == round(region["pool_bytes"] / region["lower_bound"], 4)


def test_analyze_reference_and_numba_agree(mlp_file, capsys):
    fast = _json(capsys, mlp_file)
    ref = _json(capsys, mlp_file, "--impl", "reference")
    assert fast.pop("impl") == "numba" and ref.pop("impl") == "reference"
    assert fast == ref


def test_analyze_text_names_hashes_pool_and_dag(mlp_file, capsys):
    assert main(["analyze", mlp_file]) == 0
    out = capsys.readouterr().out
    assert "0x54b300b4f0a5396f" in out and "768" in out
    assert "iterations: 1 boundary at ops 24" in out
    assert "kernel cache: 1 compiled, 0 hits" in out
    assert "pool/bound" in out and "planner quality (pool / live-bytes lower bound): worst" in out


@pytest.mark.parametrize("content,message", [(b"CRTR\x02", "not a valid .crtrace"),
                                             (None, "cannot read")])
def test_analyze_bad_input_is_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "bad.crtrace"
    if content is not None:
        path.write_bytes(content)
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_oracle_trace_names_the_first_divergent_op_and_slot(tmp_path, mlp_file, capsys):
    got = trace_build(mlp_stream()[10:20], [])
    got["ops"][3]["output_slot_ids"] = [99]
    got["slots"][4]["death_op"] += 1
    path = tmp_path / "got.json"
    path.write_text(json.dumps(got))
    assert main(["oracle", "trace", mlp_file, str(path)]) == 1
    out = capsys.readouterr().out
    assert "op 3: op[3].output_slot_ids[0]" in out
    assert "slot 4: slot[4].death_op" in out
    assert main(["oracle", "trace", mlp_file, mlp_file]) == 0


def test_oracle_plan_reports_the_offset_and_the_overlap(tmp_path, capsys):
    chain = {"ops": e2e_stream()[8:16]}
    got = trace_build(chain["ops"], [])
    got["slots"][1]["offset_bytes"] = 0  # slot 1 lives (1, 2), as slot 0 (0, 1) does
    (tmp_path / "args.json").write_text(json.dumps(chain))
    (tmp_path / "got.json").write_text(json.dumps(got))
    assert main(["oracle", "plan", str(tmp_path / "args.json"), str(tmp_path / "got.json")]) == 1
    out = capsys.readouterr().out
    assert "slot 1: offset expected 4096, got 0" in out
    assert "invariant" in out


def test_oracle_dag_names_the_divergent_node(tmp_path, capsys):
    def chain(*contents: int) -> dict:
        nodes = [{"kind": "terminal"}]
        for c in reversed(contents):
            nodes.append({"kind": "region", "ops": [{"schema_hash": hex(c)}],
                          "next": len(nodes) - 1})
        return {"dag": {"nodes": nodes, "root": len(nodes) - 1}}

    (tmp_path / "a.json").write_text(json.dumps(chain(1, 2, 3)))
    (tmp_path / "b.json").write_text(json.dumps(chain(1, 5, 3)))
    assert main(["oracle", "dag", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 1
    out = capsys.readouterr().out
    assert out.startswith("depth 1: CONTENT_MISMATCH: expected node 2")
    assert main(["oracle", "dag", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 0


def test_analyze_says_how_boundaries_and_regions_relate(capsys):
    """The bundled MLP recording repeats a 34-op iteration from op 0 (`dump`: op 0 and op 34
    are the same aten::t). The detector takes the first K = 5 schema hashes as its signature
    and reports a boundary at the K-th op of the third iteration (68 + 4 = 72), then of every
    later one (106, 140); the completed iteration before it is ops 34..67."""
    from pathlib import Path

    mlp = Path(__file__).resolve().parents[2] / "examples" / "traces" / "mlp.crtrace"
    capsys.readouterr()
    assert main(["analyze", str(mlp), "--impl", "reference"]) == 0
    out = capsys.readouterr().out
    assert "iterations: 3 boundaries at ops 72, 106, 140" in out
    assert ("region 0 (ops 34..67) is closed at op 72 = 67 + 5, and the next iteration starts "
            "at op 68") in out
    assert "ops 0..33 precede region 0: warm-up" in out
    assert ("ops 136..169 (34, from the last boundary's signature on) are not a completed "
            "iteration yet") in out
