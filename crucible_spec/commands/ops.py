"""`crucible-spec ops`: the coverage table, and each op's JSON Schema contract."""

from __future__ import annotations

import argparse
import json
import sys


def run(args: argparse.Namespace) -> int:
    from .. import coverage
    from ..conformance import contract
    from ..spec.core.json_schema import arg_schema, result_schema
    from ..spec.core.registry import REGISTRY

    if args.rules:
        print(rule_table())
        return 0
    if args.schemas:
        for name in contract.write():
            print(f"wrote {contract.SCHEMA_DIR.name}/{name}")
        return 0
    table = coverage.rows()
    if args.json:
        rows = [row | {"args": arg_schema(REGISTRY.ops[row["op"]]),
                       "result": result_schema(REGISTRY.ops[row["op"]])}
                for row in coverage.as_json(table)]
        print(json.dumps(rows, indent=2))
    else:
        print(coverage.render(table))
    if not args.check:
        return 0
    stale = contract.stale()
    for name in stale:
        print(f"conformance/schemas/{name} is not up to date (run crucible-spec ops --schemas)",
              file=sys.stderr)
    return 1 if stale or any(r.holes for r in table) else 0


def rule_table() -> str:
    """Every e-graph rewrite rule (SympleX's, the README's, the spec's, the planted unsound
    ones) with the verdict z3 and the evaluator give it."""
    from ..spec.symplex.egraph.ops import rules_op
    from .console import render, table

    header = ["rule", "source", "verdict", "reals", "ieee", "lhs -> rhs"]
    body = [[r["name"], r["source"], r["verdict"], r["reals"], r["ieee"],
             f"{r['lhs']} -> {r['rhs']}"]
            for r in rules_op()["rules"]]
    return render(table(header, body))


def add_parser(sub) -> None:
    p = sub.add_parser("ops", help="coverage table of every op",
                       description="Print every registered op with its chapter, which "
                                   "implementations exist (or why one is n/a), how many "
                                   "conformance vectors cover it, its proof obligations and "
                                   "errata. --json adds each op's args and result JSON Schema "
                                   "(draft 2020-12), the contract serve checks requests "
                                   "against.")
    p.add_argument("--json", action="store_true",
                   help="machine-readable output, with each op's args and result JSON Schema")
    p.add_argument("--check", action="store_true",
                   help="exit 1 if any op has a coverage hole or conformance/schemas/ is stale")
    p.add_argument("--rules", action="store_true",
                   help="list the e-graph's rewrite rules, each with its soundness verdict")
    p.add_argument("--schemas", action="store_true",
                   help="write each op's JSON Schema to conformance/schemas/ (and an index, "
                        "and the protocol's envelopes: protocol.json)")
    p.set_defaults(func=run)
