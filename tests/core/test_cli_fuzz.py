"""Every subcommand under hostile command lines built from the parser itself
(tests/core/cli_fuzz.py):
each run exits 0, 1 or 2, prints no traceback, ends within its time limit and does not blow up
memory. A fixed, derandomized budget of examples per command (CLI_FUZZ_EXAMPLES, default 6);
a planted bug is found."""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crucible_spec.commands import synth
from tests.core.cli_fuzz import (
    FILE_KINDS,
    RULES,
    UNKNOWN_FLAG,
    Command,
    command_lines,
    commands,
    make_files,
    resolve,
    run,
)

EXAMPLES = int(os.environ.get("CLI_FUZZ_EXAMPLES", "6"))
COMMANDS = commands()


@contextmanager
def example_dir(root: Path) -> Iterator[dict[str, Path]]:
    """A fresh directory of bad files, the working directory while a command line runs."""
    here, where = Path.cwd(), Path(tempfile.mkdtemp(dir=root))
    files = make_files(where / "files")
    os.chdir(where)
    try:
        yield files
    finally:
        os.chdir(here)
        shutil.rmtree(where, ignore_errors=True)


def explore(command: Command, examples: int, root: Path) -> None:
    """Run `examples` drawn command lines of `command`; an AssertionError names the first one
    that breaks the rules (after hypothesis has shrunk it)."""

    @settings(max_examples=examples, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(data: st.DataObject) -> None:
        argv = data.draw(command_lines(command), label="argv")
        with example_dir(root) as files:
            r = run(resolve(argv, files))
        problem = r.problem()
        assert problem is None, f"crucible-spec {shlex.join(r.argv)}: {problem}\n{r.err[-3000:]}"

    check()


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cli-fuzz")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_hostile_command_lines_exit_0_1_or_2_without_a_traceback(root, name):
    explore(COMMANDS[name], EXAMPLES, root)


def file_lines(command: Command, kind: str) -> list[list[str]]:
    """Command lines with a file of `kind` in each place that takes a path: every positional
    at once (base options kept), then each path option alone (after the base options)."""
    words, base, token = command.name.split(), list(command.rule.options), f"{{{kind}}}"
    given = list(command.rule.positionals) or ["{crtrace}"] * len(command.positionals)
    lines = [[*words, *(token for _ in command.positionals), *base]] if command.positionals \
        else []
    return lines + [[*words, *given, *base, option.flag, token]
                    for option in command.varied if option.path]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_kind_of_file_in_every_path_argument(root, name):
    """Each kind of file (missing, a directory, a FIFO, empty, random, truncated, another
    format) in each path argument: never a traceback, never exit 70, never a wait."""
    for kind in FILE_KINDS:
        for argv in file_lines(COMMANDS[name], kind):
            with example_dir(root) as files:
                r = run(resolve(argv, files))
            assert r.problem() is None, (r.argv, r.problem(), r.err[-3000:])


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_unknown_flag_is_a_usage_error(name):
    r = run([*name.split(), UNKNOWN_FLAG])
    assert r.code == 2 and ": error: " in r.err and "Traceback" not in r.err


def test_an_argument_that_is_not_utf8_is_echoed_as_its_bytes(tmp_path):
    """A file name with a byte that is not UTF-8 reaches us as a surrogate: the summary
    line prints it back as that byte (it was exit 70, an encoding error on stdout)."""
    out = tmp_path / "\udcff.crtrace"
    r = run(["synth", "--ops", "60", "-o", str(out)])
    assert r.problem() is None and r.code == 0
    assert out.exists()


@pytest.mark.slow
def test_the_harness_finds_a_planted_bug(root, monkeypatch):
    """synth with its --shape check forgotten: an unknown shape raises ValueError deep inside,
    which the harness reports as exit 70."""
    real = synth.run

    def forgetful(args):
        if args.shape not in ("mlp", "transformer"):
            raise ValueError(f"no shape {args.shape!r}")
        return real(args)

    monkeypatch.setattr(synth, "run", forgetful)
    with pytest.raises(AssertionError, match=r"--shape .*: exit 70"):
        explore(COMMANDS["synth"], 100, root)


def test_the_rules_name_real_commands_and_options():
    for name, rule in RULES.items():
        flags = {a.flag for a in COMMANDS[name].arguments}
        assert set(rule.fixed) <= flags, name
        assert {t for t in rule.options if t.startswith("--")} <= flags, name
        assert not rule.fixed or rule.why, name


def test_every_subcommand_is_explored():
    """The harness walks the parser: a new subcommand is fuzzed without being listed."""
    assert {"synth", "oracle diff", "vectors verify", "real check", "serve"} <= set(COMMANDS)
    assert len(COMMANDS) == 29
