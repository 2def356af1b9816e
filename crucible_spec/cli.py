"""The `crucible-spec` command line: the root parser and the dispatch to `commands/`."""

from __future__ import annotations

import argparse
import sys

from . import __version__, load_all
from .commands import (
    analyze,
    bench,
    conform,
    errata,
    fuzz,
    lean_coverage,
    mutate,
    ops,
    oracle,
    prove,
    record,
    serve,
    synth,
    vectors,
)
from .commands.common import UsageError

COMMANDS = (ops, prove, mutate, serve, conform, vectors, errata, oracle, bench, record, analyze,
            synth, lean_coverage, fuzz)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="crucible-spec",
        description="The executable yellowpaper of Crucible: op registry, reference oracle, "
                    "fast kernels, proof obligations and the conformance suite.",
    )
    p.add_argument("--version", action="version", version=f"crucible-spec {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        load_all()
        return args.func(args)
    except UsageError as e:
        print(f"crucible-spec {args.command}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
