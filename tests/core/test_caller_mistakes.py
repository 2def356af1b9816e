"""A caller's mistake is one line and exit 2, never exit 70 ("a bug of ours"): the command lines a
new user hit (issue 30), and conform's hello, --impl and --fuzz."""

from __future__ import annotations

import pytest

from crucible_spec.cli import main
from crucible_spec.commands.conform import MAX_FUZZ
from crucible_spec.conformance import report_card
from crucible_spec.conformance.runner import Limits, OpResult
from crucible_spec.synthetic import synthetic_trace

README = "README.md"


def _code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse's usage errors
        return e.code


def _error_line(err: str) -> str:
    """The one error line: `crucible-spec: ...` alone, or argparse's after its usage lines."""
    lines = err.splitlines()
    if lines and lines[0].startswith("usage: "):
        return lines[-1]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("argv,words", [
    (["synth", "--ops", "5e9"], "at most 4294967295"),
    (["synth", "--ops", "1e30"], "at most 4294967295"),
    (["synth", "--ops", "4294967295"], "10695310715 metas"),
    (["bench", "--ops", "hash.fmix64", "--sizes", "1e30"], "at most 100000000"),
    (["bench", "--ops", "hash.fmix64", "--sizes", "10,inf"], "'inf'"),
])
def test_sizes_past_what_a_command_can_hold_are_usage_errors(tmp_path, capsys, argv, words):
    """2^32 - 1 ops of mlp are exactly 84,215,045 iterations of 51 ops, each with 127 metas
    (the spec writer's iteration, below): 10,695,310,715 metas, past the header's u32."""
    assert 51 * 84_215_045 == 2**32 - 1 and 127 * 84_215_045 == 10_695_310_715
    assert len(synthetic_trace(51, "mlp", 0).metas) == 127
    out = ["-o", str(tmp_path / "t.crtrace")] if argv[0] == "synth" else []
    assert _code([*argv, *out]) == 2
    assert words in _error_line(capsys.readouterr().err)
    assert list(tmp_path.iterdir()) == []


def test_record_of_a_file_that_is_not_python_is_one_line(tmp_path, capsys):
    out = tmp_path / "x.crtrace"
    pytest.importorskip("torch")
    assert _code(["record", README, "-o", str(out)]) == 2
    line = _error_line(capsys.readouterr().err)
    assert line.startswith(f"crucible-spec: {README}: importing it raised SyntaxError")
    assert not out.exists()


def test_conform_with_a_missing_implementation_is_one_line(capsys):
    assert _code(["conform", "--impl", "./does-not-exist", "--ops", "hash.*"]) == 2
    err = capsys.readouterr()
    assert err.out == ""
    assert _error_line(err.err) == ("crucible-spec: --impl: ./does-not-exist is not a program "
                                    "that can run (no such executable file, nor a command on "
                                    "PATH)")


def test_conform_fuzz_is_bounded_at_parse_time(capsys):
    assert _code(["conform", "--impl", "true", "--fuzz", "100000000000000000000000"]) == 2
    assert "at most 100000" in _error_line(capsys.readouterr().err)
    assert MAX_FUZZ == 100_000
    main_help = _help(capsys, ["conform", "--help"])
    assert "at most 100000" in " ".join(main_help.split())


def _help(capsys, argv: list[str]) -> str:
    assert _code(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("greeting,line", [
    ({"impl": "c", "profile": "crucible", "device": "cpu"},
     "implementation: c (profile crucible, cpu)"),
    ({"profile": "crucible"},
     "implementation: unnamed (profile crucible); its hello gives no impl, device"),
    ({}, "implementation: unnamed; its hello gives no impl, profile, device"),
    (None, "implementation: no hello"),
])
def test_the_hello_line_never_prints_none(greeting, line):
    assert report_card.hello_line(greeting) == line


def _table(results: list[OpResult]) -> list[list[str]]:
    text = report_card.render(results, [], {"impl": "x", "profile": "crucible", "device": "cpu"},
                              Limits())
    return [row.split() for row in text.splitlines()[1:4]]


def test_the_table_shows_the_fuzz_count_when_there_was_fuzzing():
    fuzzed = OpResult("hash.fmix64", cases=4, passed=4,
                      fuzz={"examples": 40, "requests": 37, "failure": None})
    header, _, row = _table([fuzzed])
    assert header[:5] == ["ch", "op", "status", "cases", "fuzz"]
    assert row[:5] == ["8", "hash.fmix64", "pass", "4", "37"]
    header, _, row = _table([OpResult("hash.fmix64", cases=4, passed=4)])
    assert "fuzz" not in header and row[:4] == ["8", "hash.fmix64", "pass", "4"]


@pytest.mark.parametrize("chapters", ["1-99999999999999", "0", "5-3", "100", "1-11,x"])
def test_mutate_chapters_out_of_range_are_one_line(capsys, chapters):
    """A range to 10^14 built a set of 10^14 chapters (memory, then exit 70)."""
    assert _code(["mutate", "--list", "--functions", "no_such*", "--chapters", chapters]) == 2
    assert "1 to 99" in _error_line(capsys.readouterr().err)
