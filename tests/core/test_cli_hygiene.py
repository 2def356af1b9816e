"""What the CLI fuzz harness (test_cli_fuzz.py) does not check: an unexpected exception is one
line, a bug-report hint and exit 70, with the traceback only under --debug; an input file is
recognised by its magic, not its name."""

from __future__ import annotations

import argparse

from crucible_spec.cli import _leaves, build_parser, main
from crucible_spec.conformance.seed_runs import mlp_stream
from crucible_spec.spec.crucible.crtrace import write_crtrace
from crucible_spec.spec.crucible.pipeline import trace_of
from crucible_spec.spec.crucible.trace_build_ops import recorded_ops


def _name(parser: argparse.ArgumentParser) -> str:
    return parser.prog.removeprefix("crucible-spec ")


def _subparsers() -> argparse._SubParsersAction:
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


LEAVES = {_name(p): p for p in _leaves(_subparsers())}


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
    trace.write_bytes(write_crtrace(trace_of(recorded_ops(mlp_stream()))))
    assert main(["analyze", str(trace)]) == 0
    fake = tmp_path / "fake.crtrace"
    fake.write_text('{"ops": []}')
    capsys.readouterr()
    assert main(["analyze", str(fake)]) == 2
    assert "is not a .crtrace" in capsys.readouterr().err
