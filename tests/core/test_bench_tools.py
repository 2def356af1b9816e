"""`bench --tools`: the commands a user waits on run as processes on synthetic traces, each
exits as it should, and the rows carry every run's seconds, the median and the goal. Nothing
here asserts a speed: speed is what bench reports, not what a test checks.

The planted change's offset comes from the .crtrace format (16-byte header, 80-byte op records
with the schema hash first)."""

from __future__ import annotations

import functools
import json
import statistics

from crucible_spec import bench_tools
from crucible_spec.bench_tools import ToolRow, render_tools, time_tools, tools_json, write_trace
from crucible_spec.cli import main
from crucible_spec.synthetic_file import synthetic_file


def test_the_second_oracle_trace_differs_in_one_bit_of_one_schema_hash(tmp_path):
    plain, flipped = tmp_path / "a.crtrace", tmp_path / "b.crtrace"
    write_trace(plain, 300)
    write_trace(flipped, 300, flip_at=180)
    a, b = plain.read_bytes(), flipped.read_bytes()
    assert a == synthetic_file(300)
    diff = [k for k, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    assert diff == [16 + 180 * 80] and a[diff[0]] ^ b[diff[0]] == 1


def test_each_command_runs_as_often_as_asked_and_exits_as_it_should():
    rows = time_tools(2, oracle_ops=400, analyze_ops=900)
    assert [(r.name, r.ops, r.goal_s) for r in rows] == [("oracle trace", 400, 3.0),
                                                          ("analyze", 900, 5.0)]
    for r in rows:
        assert len(r.times) == 2 and not r.failed
        assert r.median_s == statistics.median(r.times)
    text = render_tools(rows)
    assert "oracle trace" in text and "< 3.0 s" in text and "< 5.0 s" in text
    assert "FAILED" not in text
    assert [t["command"] for t in tools_json(rows)] == ["oracle trace", "analyze"]


def test_a_verdict_reads_the_exit_and_the_median_against_the_goal():
    def row(times, failed=False):
        return ToolRow("x", 1, 3.0, 0, [], times, failed)

    assert row([1.0, 9.0, 2.0]).within_goal  # median 2.0
    assert not row([4.0, 1.0, 5.0]).within_goal  # median 4.0
    assert not row([1.0], failed=True).within_goal
    assert not row([]).within_goal
    text = render_tools([row([4.0, 1.0, 5.0]), row([1.0], failed=True), row([1.0])])
    assert [line.split()[-1] for line in text.splitlines()[2:]] == ["goal", "FAILED", "ok"]


def test_bench_tools_alone_prints_and_writes_only_the_tool_rows(tmp_path, capsys,
                                                                monkeypatch):
    monkeypatch.setattr(bench_tools, "time_tools",
                        functools.partial(time_tools, oracle_ops=300, analyze_ops=600))
    out = tmp_path / "bench.json"
    assert main(["bench", "--tools", "--tool-runs", "1", "--impl", "numba", "-q",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "oracle trace" in text and "analyze" in text and "x ref" not in text
    report = json.loads(out.read_text())
    assert report["rows"] == [] and [t["ops"] for t in report["tools"]] == [300, 600]
