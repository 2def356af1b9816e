"""The command-line fuzz harness: command lines for every subcommand built from the parser itself
(each argument with hostile values and each kind of bad file), run in process through
crucible_spec.cli.main under a time limit, and what a run may not do (exit other than 0, 1 or
2, a traceback, too long, too much memory)."""

from __future__ import annotations

import argparse
import io
import os
import random
import re
import resource
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from crucible_spec.cli import _leaves, build_parser, main
from crucible_spec.conformance.golden import golden
from crucible_spec.spec.crucible.crtrace import write_crtrace
from crucible_spec.synthetic import synthetic_trace

HOSTILE = ("1e30", "18446744073709551617", "99999999999999999999999", "-1", "-1e30", "0",
           "1.5", "0x10", "nan", "inf", "-inf", "x", "", " ", "é∂𝕏\u202e", "\udcff", "*")
"""Values every option and positional is tried with: huge, negative, fractional, NaN and
infinite numbers, words, empty, unicode (an undecodable argv byte is \\udcff)."""

FILE_KINDS = ("missing", "directory", "fifo", "empty", "random", "truncated", "huge-count",
              "null", "crtrace", "script.py", "cdag", "json")
"""The kinds of file a path argument is given: missing, a directory, a FIFO (no writer), empty,
random bytes, a .crtrace cut in half, a .crtrace header claiming 2^32-1 ops, JSON null; and
valid files maybe of another format than the one wanted (a .crtrace, one named .py, a CDAG
region, a JSON object)."""

PATH_METAVAR = re.compile(r"FILE|DIR|PATH")
"""An option whose metavar matches takes a path."""

UNKNOWN_FLAG = "--no-such-flag"

TIME_LIMIT_S = 60.0
"""Seconds one command line may run."""

MEMORY_LIMIT_B = 1 << 30
"""How much one command line may raise the process's peak memory."""


@dataclass(frozen=True)
class Rule:
    """How a command is driven: options always given first, positionals it may be given
    instead of drawn ones (a {kind} token is a file of that kind), and the options never
    varied, with why."""

    options: tuple[str, ...] = ()
    positionals: tuple[str, ...] = ()
    fixed: tuple[str, ...] = ()
    why: str = ""


MLP = str(Path(__file__).resolve().parents[2] / "examples" / "mlp.py")

RULES: dict[str, Rule] = {
    # Long-running or far-reaching work is driven with arguments that finish or fail fast;
    # `why` says what a varied option would do.
    "prove": Rule(("--list",), fixed=("--list",), why="without --list every obligation runs"),
    "mutate": Rule(("--list", "--functions", "no_such_function*"), fixed=("--list", "--functions"),
                   why="a mutant is planted in the source tree itself"),
    "conform": Rule(("--impl", "true", "--ops", "hash.fmix64"),
                    fixed=("--ops", "--workers", "--scheduler", "--results"),
                    why="every op, or a Dask cluster, takes minutes"),
    "vectors generate": Rule(("--profile", "no-such-profile", "--out", "gen"), fixed=("--out",),
                             why="the default --out is the bundled suite in the source tree"),
    "vectors verify": Rule(("--dir", "{directory}"), why="the bundled suite takes long"),
    "vectors export": Rule(("--profile", "vyre@0.6.5", "--out", "exported"), fixed=("--profile",),
                           why="every profile's suite is thousands of files to write"),
    "real fill": Rule(("--profile", "pyc@fdf1563", "--impl", "true", "--ops", "hash.fmix64",
                       "--out", "real"), fixed=("--ops", "--out"),
                      why="the default --out is the bundled set in the source tree"),
    "real check": Rule(("--dir", "{directory}"), why="the bundled set takes long"),
    "bench": Rule(("--ops", "hash.fmix64", "--sizes", "10", "--quality-sizes", "10",
                   "--repeat", "1", "--reference-budget", "0.1"),
                  fixed=("--sizes", "--quality-sizes", "--repeat", "--serve", "--cmd"),
                  why="valid large sizes time for minutes; --serve and --cmd start processes"),
    "record": Rule(("-o", "out.crtrace", "--iterations", "1"), (MLP,)),
    "synth": Rule(("--ops", "60", "-o", "out.crtrace")),
    "fuzz": Rule(("--reader", "cdag", "--seconds", "0.3"), fixed=("--seconds",),
                 why="a valid large --seconds fuzzes for that long"),
    "paper": Rule(("--check", "--out", "missing-papers"), fixed=("--check", "--out"),
                  why="rendering the paper takes about a minute"),
    "torch-diff": Rule(("--ops", "kernel.add", "--seeds", "1"), fixed=("--seeds",),
                       why="every seed measures every size"),
    "warm": Rule(("--ops", "no.such.op*"), fixed=("--ops",),
                 why="compiling every kernel takes minutes"),
}


@dataclass(frozen=True)
class Argument:
    """One argument of a command as its parser declares it."""

    flag: str | None
    """The option string (None for a positional)."""
    nargs: object
    choices: tuple[str, ...]
    append: bool
    path: bool

    @property
    def takes_values(self) -> bool:
        return self.nargs != 0


@dataclass(frozen=True)
class Command:
    """A subcommand: its words and its arguments."""

    name: str
    arguments: tuple[Argument, ...]
    rule: Rule

    @property
    def positionals(self) -> list[Argument]:
        return [a for a in self.arguments if a.flag is None]

    @property
    def varied(self) -> list[Argument]:
        return [a for a in self.arguments if a.flag is not None and a.flag not in self.rule.fixed]


def _argument(action: argparse.Action) -> Argument:
    flag = max(action.option_strings, key=len) if action.option_strings else None
    choices = tuple(str(c) for c in action.choices or ())
    return Argument(flag, action.nargs, choices, isinstance(action, argparse._AppendAction),
                    bool(PATH_METAVAR.search(str(action.metavar or ""))))


def commands() -> dict[str, Command]:
    """Every subcommand of the parser, nested ones included."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for leaf in _leaves(sub):
        name = leaf.prog.removeprefix("crucible-spec ")
        kept = [a for a in leaf._actions if not isinstance(a, argparse._HelpAction)
                and a.dest not in ("debug", "quiet")]
        out[name] = Command(name, tuple(_argument(a) for a in kept), RULES.get(name, Rule()))
    return out


def _count(nargs: object) -> st.SearchStrategy[int]:
    """How many values an argument of this nargs takes."""
    return {None: st.just(1), "?": st.integers(0, 1), "*": st.integers(0, 2),
            "+": st.integers(1, 2)}.get(nargs, st.just(nargs if isinstance(nargs, int) else 1))


def values(argument: Argument) -> st.SearchStrategy[str]:
    """A hostile value, a kind of file (a {kind} token) or one of the argument's choices."""
    return st.one_of(st.sampled_from(HOSTILE), st.sampled_from([f"{{{k}}}" for k in FILE_KINDS]),
                     *([st.sampled_from(argument.choices)] if argument.choices else []))


@st.composite
def command_lines(draw, command: Command) -> list[str]:
    """The command's words and base, each positional a drawn value, then up to three of its
    varied options with drawn values, maybe an unknown flag."""
    argv = [*command.name.split()]
    if command.rule.positionals and draw(st.booleans()):
        argv += command.rule.positionals
    else:
        for p in command.positionals:
            argv += [draw(values(p)) for _ in range(draw(_count(p.nargs)))]
    argv += command.rule.options
    for option in draw(st.lists(st.sampled_from(command.varied), max_size=3, unique=True)
                       if command.varied else st.just([])):
        argv.append(option.flag)
        if option.takes_values:
            argv += [draw(values(option)) for _ in range(draw(_count(option.nargs)))]
    if draw(st.integers(0, 9)) == 0:
        argv.insert(draw(st.integers(len(command.name.split()), len(argv))), UNKNOWN_FLAG)
    return argv


def make_files(root: Path) -> dict[str, Path]:
    """One file of each kind under `root` (a missing one is a path that does not exist)."""
    root.mkdir(parents=True, exist_ok=True)
    trace = write_crtrace(synthetic_trace(60, "mlp", 0))
    paths = {kind: root / (kind if "." in kind else f"{kind}.bin") for kind in FILE_KINDS}
    paths["directory"].mkdir()
    os.mkfifo(paths["fifo"])
    paths["empty"].write_bytes(b"")
    paths["random"].write_bytes(random.Random(0).randbytes(4096))
    paths["truncated"].write_bytes(trace[:len(trace) // 2])
    paths["huge-count"].write_bytes(b"CRTR\x01\0\0\0\xff\xff\xff\xff\0\0\0\0")
    paths["null"].write_text("null")
    paths["crtrace"].write_bytes(trace)
    paths["script.py"].write_bytes(trace)
    paths["cdag"].write_bytes(bytes.fromhex(golden()["cdag"]["regions"][0]["hex"]))
    paths["json"].write_text('{"ops": [], "x": [1, 2, 3]}')
    return paths


def resolve(argv: list[str], files: dict[str, Path]) -> list[str]:
    """The command line with each {kind} token replaced by the path of that kind of file."""
    return [str(files[a[1:-1]]) if a[1:-1] in files and a[0] == "{" else a for a in argv]


class TooSlow(BaseException):
    """A command line ran past TIME_LIMIT_S (a BaseException, so no command catches it)."""


def _too_slow(signum, frame) -> None:
    raise TooSlow(f"ran past {TIME_LIMIT_S:g} s")


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    old = signal.signal(signal.SIGALRM, _too_slow)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@dataclass(frozen=True)
class Run:
    """What one command line did."""

    argv: tuple[str, ...]
    code: object
    err: str
    peak_growth: int

    def problem(self) -> str | None:
        """Why this run breaks the rules, or None."""
        if self.code not in (0, 1, 2):
            return f"exit {self.code}"
        if "Traceback" in self.err:
            return "a traceback"
        if self.peak_growth > MEMORY_LIMIT_B:
            return f"peak memory grew by {self.peak_growth >> 20} MiB"
        return None


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run(argv: list[str], seconds: float = TIME_LIMIT_S) -> Run:
    """Run one command line in process: stdin empty, stdout and stderr captured."""
    before = _peak()
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict"), io.StringIO()
    stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
    try:
        with redirect_stdout(out), redirect_stderr(err), time_limit(seconds):
            try:
                code: object = main(argv)
            except SystemExit as e:
                code = e.code
            except TooSlow as e:
                code = f"none: it {e}"
    finally:
        sys.stdin = stdin
    return Run(tuple(argv), code, err.getvalue(), _peak() - before)
