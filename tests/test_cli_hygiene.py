"""Every subcommand, given bad files and bad flags, answers with an exit status of 1 or 2 and one
line `crucible-spec: ...` (or argparse's usage error), never a traceback; an unexpected
exception is one line, a bug-report hint and exit 70, with the traceback only under --debug."""

from __future__ import annotations

import argparse
import random

import pytest

from crucible_spec.cli import _leaves, build_parser, main
from crucible_spec.conformance.seed_runs import mlp_stream
from crucible_spec.spec.crtrace import write_crtrace
from crucible_spec.spec.pipeline import trace_of
from crucible_spec.spec.trace_build_ops import recorded_ops

F, OUT = "{F}", "{OUT}"
"""Placeholders: the bad input file, and an output path in a missing directory."""

COMMANDS: dict[str, list[str]] = {
    "ops": ["ops", "--profile-of-nothing"],
    "prove": ["prove", "PO8.60", "--report", OUT],
    "mutate": ["mutate", "--functions", "no_such_function*", "--results", F],
    "serve": ["serve", "--profile", "no-such-profile"],
    "conform": ["conform", "--impl", "true", "--ops", "hash.fmix64", "--xfail", F],
    "vectors generate": ["vectors", "generate", "--profile", "no-such-profile"],
    "vectors verify": ["vectors", "verify", "--dir", F],
    "real fill": ["real", "fill", "--profile", "pyc@fdf1563", "--impl", "true", "--out", F],
    "real check": ["real", "check", "--dir", F],
    "errata": ["errata", "--profile", "no-such-profile"],
    "oracle diff": ["oracle", "diff", "TensorMeta", F, F],
    "oracle explain": ["oracle", "explain", "hash.fmix64", F, F],
    "oracle trace": ["oracle", "trace", F, F],
    "oracle plan": ["oracle", "plan", F, F],
    "oracle dag": ["oracle", "dag", F, F],
    "oracle cdag": ["oracle", "cdag", F, F],
    "oracle replay": ["oracle", "replay", F, F],
    "bench": ["bench", "--ops", "hash.fmix64", "--sizes", "10", "--json", OUT],
    "record": ["record", F, "-o", OUT],
    "analyze": ["analyze", F],
    "synth": ["synth", "--ops", "100", "-o", OUT],
    "lean-coverage": ["lean-coverage", "--nope"],
    "fuzz": ["fuzz", "--reader", "no-such-reader", "--report", OUT],
    "dump": ["dump", F],
    "paper": ["paper", "--out", OUT, "--prove-report", F],
    "render": ["render", F, "-o", OUT],
    "torch-diff": ["torch-diff", "--ops", "kernel.add", "--json", OUT],
    "warm": ["warm", "--ops", "no.such.op*", "--jobs", "1"],
}
"""Each command with arguments that make it fail fast on a bad input."""

BAD_FILES = {
    "missing": None,
    "a directory": "dir",
    "empty": b"",
    "random bytes": random.Random(0).randbytes(4096),
    "JSON null": b"null",
    "a JSON list": b"[1, 2, 3]",
    "a crtrace claiming 2^32-1 ops": b"CRTR\x01\0\0\0\xff\xff\xff\xff\0\0\0\0",
    "a crtrace named .py": write_crtrace(trace_of(recorded_ops(mlp_stream()))),
}


def _name(parser: argparse.ArgumentParser) -> str:
    return parser.prog.removeprefix("crucible-spec ")


def _subparsers() -> argparse._SubParsersAction:
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


LEAVES = {_name(p): p for p in _leaves(_subparsers())}


def test_every_command_is_covered():
    assert set(LEAVES) == set(COMMANDS)


def _call(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse's own usage errors
        return e.code


def _check(capsys, argv: list[str], valid: bool = False) -> None:
    code = _call(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err, (argv, err)
    assert code in ((0, 1, 2) if valid else (1, 2)), (argv, code, err)
    if code == 2 and ": error: " not in err:
        assert err.startswith("crucible-spec: ") and err.count("\n") == 1, (argv, err)


def _bad_file(tmp_path, kind: str) -> str:
    content = BAD_FILES[kind]
    path = tmp_path / ("bad.py" if kind.endswith(".py") else "bad.bin")
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    return str(path)


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_files_give_one_line_never_a_traceback(tmp_path, capsys, command, kind):
    argv = COMMANDS[command]
    bad, out = _bad_file(tmp_path, kind), str(tmp_path / "missing" / "out")
    _check(capsys, [bad if a == F else out if a == OUT else a for a in argv],
           valid=kind == "a crtrace named .py" and OUT not in argv)


def _numeric_options() -> list[tuple[str, str]]:
    """(command, option) for every option whose value is a number checked at parse time."""
    out = []
    for name, parser in LEAVES.items():
        for action in parser._actions:
            kind = getattr(action.type, "__name__", "")
            if action.option_strings and kind in ("positive_int", "count", "seconds",
                                                  "percent", "op_count", "seed_value"):
                out.append((name, action.option_strings[-1]))
    return out


@pytest.mark.parametrize("value", ["-5", "-1", "nan", "x"])
@pytest.mark.parametrize("command,option", _numeric_options())
def test_nonsense_numbers_are_usage_errors(capsys, command, option, value):
    argv = [a for a in COMMANDS[command] if a not in (F, OUT)]
    with pytest.raises(SystemExit) as exit_:
        main([*command.split(), *argv[len(command.split()):], option, value])
    assert exit_.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_numeric_options_include_the_issue_cases():
    options = set(_numeric_options())
    for case in [("conform", "--fuzz"), ("prove", "--jobs"), ("prove", "--timeout"),
                 ("conform", "--timeout"), ("mutate", "--workers")]:
        assert case in options


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unknown_flag_is_a_usage_error(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([*command.split(), "--no-such-flag"])
    assert exit_.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def _explode(args):
    raise RuntimeError("a planted bug")


def test_an_unexpected_exception_is_exit_70_with_a_hint(monkeypatch, capsys):
    parser = LEAVES["ops"]
    monkeypatch.setattr(parser, "_defaults", {**parser._defaults, "func": _explode})
    monkeypatch.setattr("crucible_spec.cli.build_parser", lambda: _parser_with(parser))
    assert main(["ops"]) == 70
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "crucible-spec: internal error: RuntimeError: a planted bug"
    assert "please report it" in err[1] and len(err) == 2
    assert main(["ops", "--debug"]) == 70
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and "RuntimeError: a planted bug" in err


def _parser_with(leaf: argparse.ArgumentParser) -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="crucible-spec")
    sub = root.add_subparsers(dest="command", required=True)
    sub._name_parser_map["ops"] = leaf
    sub.choices["ops"] = leaf
    return root


def test_a_file_is_recognised_by_its_magic_not_its_name(tmp_path, capsys):
    trace = tmp_path / "trace.json"
    trace.write_bytes(BAD_FILES["a crtrace named .py"])
    assert main(["analyze", str(trace)]) == 0
    fake = tmp_path / "fake.crtrace"
    fake.write_text('{"ops": []}')
    capsys.readouterr()
    assert main(["analyze", str(fake)]) == 2
    assert "is not a .crtrace" in capsys.readouterr().err
