"""`crucible-spec conform`: the conformance runner for an external implementation."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from .common import Progress, UsageError, profile_errata, select_ops


def _xfail(path: str | None):
    from ..conformance.runner import Xfail

    if not path:
        return Xfail()
    try:
        entries = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"--xfail {path}: {e}") from None
    if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
        raise UsageError(f"--xfail {path}: expected a JSON object {{\"op\" or \"op:case\": "
                         f"\"reason\"}}")
    return Xfail(entries)


def run(args: argparse.Namespace) -> int:
    from ..conformance import report_card, vectors
    from ..conformance.client import Client
    from ..conformance.runner import run_suite

    command = shlex.split(args.impl)
    if not command:
        raise UsageError("--impl needs a command")
    errata = profile_errata(args.profile)
    root = Path(args.vectors) if args.vectors else vectors.VECTORS_DIR
    try:
        suite = vectors.load(root, args.profile)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    chosen = {op.name for op in select_ops(args.ops)}
    suite = {name: cases for name, cases in suite.items() if name in chosen}
    progress = Progress()
    greeting, results, events = run_suite(
        Client(command, timeout=args.timeout, first_timeout=args.first_timeout), suite, errata,
        _xfail(args.xfail), fuzz=args.fuzz, fuzz_seed=args.seed, progress=progress)
    progress.done()
    print(report_card.render(results, events, greeting))
    if args.report:
        document = report_card.card(command, args.profile,
                                    vectors.manifest_sha256(root, args.profile), greeting,
                                    results, events, args.fuzz)
        Path(args.report).write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        print(f"report card: {args.report}")
    return 0 if report_card.totals(results)["failed"] == 0 else 1


def add_parser(sub) -> None:
    p = sub.add_parser(
        "conform", help="run the conformance suite against an implementation",
        description="Start IMPL (a command that speaks the wire protocol, see 'serve'), send "
                    "every vector of the profile, compare each answer with the reference and "
                    "print a per-op table, the first difference of each failure (JSON path, "
                    "and for byte strings the byte offset and the field it belongs to), and a "
                    "closing line. A crashing, hanging, garbage-printing or flooding "
                    "implementation is restarted and reported. Exit 1 on any failure.")
    p.add_argument("--impl", required=True, metavar="CMD",
                   help='the implementation command, e.g. "./my_impl --flag"')
    p.add_argument("--profile", default="crucible", help="errata profile (default crucible)")
    p.add_argument("--ops", nargs="*", metavar="GLOB", help="only these ops (default: all)")
    p.add_argument("--report", metavar="FILE", help="write the JSON report card")
    p.add_argument("--xfail", metavar="FILE",
                   help='known failures: JSON {"op" or "op:case": "reason"}')
    p.add_argument("--fuzz", type=int, default=0, metavar="N",
                   help="also send N generated inputs per op and shrink any failure")
    p.add_argument("--seed", type=int, default=0, help="fuzzing seed (default 0)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for each response (default 10)")
    p.add_argument("--first-timeout", type=float, default=60.0,
                   help="seconds to wait for the first response of each op after the "
                        "implementation (re)starts, which may include starting up or "
                        "compiling that op (default 60)")
    p.add_argument("--vectors", metavar="DIR", help="vectors directory (default: bundled)")
    p.set_defaults(func=run)
