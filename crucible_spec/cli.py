"""The `crucible-spec` command line: the root parser and the dispatch to `commands/`."""

from __future__ import annotations

import argparse
import sys
import traceback

from . import __version__, load_all
from .commands import (
    analyze,
    bench,
    conform,
    console,
    dump,
    errata,
    fuzz,
    lean_coverage,
    mutate,
    ops,
    oracle,
    paper,
    prove,
    real,
    record,
    render,
    serve,
    synth,
    torch_diff,
    vectors,
    warm,
)
from .commands.common import UsageError

BUG_REPORT = ("this is a bug in crucible-spec: please report it with the command line and "
              "the output of the same command run with --debug")

COMMANDS = (ops, prove, mutate, serve, conform, vectors, real, errata, oracle, bench, record,
            analyze, synth, lean_coverage, fuzz, dump, paper, render, torch_diff, warm)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="crucible-spec",
        description="The executable yellowpaper of Crucible: op registry, reference oracle, "
                    "fast kernels, proof obligations and the conformance suite.",
    )
    p.add_argument("--version", action="version", version=f"crucible-spec {__version__}")
    _add_common(p, argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    for parser in _leaves(sub):
        _add_common(parser, argparse.SUPPRESS)
    return p


def _add_common(p: argparse.ArgumentParser, default) -> None:
    p.add_argument("--debug", action="store_true", default=default,
                   help="on an unexpected error, print the whole traceback")
    p.add_argument("-q", "--quiet", action="store_true", default=default,
                   help="no progress output (results and errors are still printed)")


def _leaves(sub) -> list[argparse.ArgumentParser]:
    """Every parser under a subparsers action that runs a command (nested actions included)."""
    out = []
    for parser in dict.fromkeys(sub.choices.values()):
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        out.extend(_leaves(nested[0]) if nested else [parser])
    return out


def main(argv: list[str] | None = None) -> int:
    _echo_undecodable_bytes()
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = getattr(args, "debug", False)
    console.QUIET = getattr(args, "quiet", False)
    try:
        load_all(*([args.layers(args)] if hasattr(args, "layers") else []))
        return args.func(args)
    except UsageError as e:
        print(f"crucible-spec: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # the catch-all: one line, a hint, exit 70
        if _missing_package(e):  # the installation's limit, not a bug of ours
            print(f"crucible-spec: {e}", file=sys.stderr)
            return 2
        if debug:
            traceback.print_exc()
        print(f"crucible-spec: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        print(f"crucible-spec: {BUG_REPORT}", file=sys.stderr)
        return 70


def _missing_package(e: Exception) -> bool:
    """Whether `e` is an optional package found missing (imported here, not at start-up)."""
    from .spec.core.optional import MissingPackage

    return isinstance(e, MissingPackage)


def _echo_undecodable_bytes() -> None:
    """Let stdout write back the bytes of an argument that is not UTF-8 (a file name, say),
    as Python decoded them (surrogateescape), instead of failing on them."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="surrogateescape")


if __name__ == "__main__":
    sys.exit(main())
