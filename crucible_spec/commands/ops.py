"""`crucible-spec ops`: the coverage table."""

from __future__ import annotations

import argparse
import json


def run(args: argparse.Namespace) -> int:
    from .. import coverage

    table = coverage.rows()
    print(json.dumps(coverage.as_json(table), indent=2) if args.json else coverage.render(table))
    return 1 if args.check and any(r.holes for r in table) else 0


def add_parser(sub) -> None:
    p = sub.add_parser("ops", help="coverage table of every op",
                       description="Print every registered op with its chapter, which "
                                   "implementations exist (or why one is n/a), how many "
                                   "conformance vectors cover it, its proof obligations and "
                                   "errata.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--check", action="store_true", help="exit 1 if any op has a coverage hole")
    p.set_defaults(func=run)
