"""`crucible-spec errata`: every known divergence of a seed from the spec, with its witness."""

from __future__ import annotations

import argparse
import json

from .common import profile_errata


def run(args: argparse.Namespace) -> int:
    from ..spec.core.registry import REGISTRY, po_sort_key
    from ..witness import check

    chosen = profile_errata(args.profile) if args.profile else set(REGISTRY.errata)
    items = [REGISTRY.errata[i] for i in sorted(chosen, key=po_sort_key)]
    checks = {e.id: check(e) for e in items}
    if args.json:
        print(json.dumps([{**e.__dict__, "check": checks[e.id]} for e in items], indent=2))
    else:
        for e in items:
            print(f"{e.id}  [{e.flag}] {e.title}")
            later = f" (still in {', '.join(e.also_seeds)})" if e.also_seeds else ""
            print(f"    seed: {e.seed} at {e.location}{later}")
            print(f"    ops: {', '.join(e.ops) or '-'}")
            print(f"    witness: {json.dumps(e.witness, sort_keys=True)}  ({checks[e.id]})")
            print(f"    {e.detail}\n")
        print(f"{len(items)} errata")
    return 1 if any(c.startswith("NOT") for c in checks.values()) else 0


def add_parser(sub) -> None:
    p = sub.add_parser("errata", help="list the errata with their witnesses",
                       description="Every place a seed implementation departs from the spec: "
                                   "id, flag, location, affected ops, a witness input and what "
                                   "each side answers. Result witnesses are rerun live (exit 1 "
                                   "if one no longer holds).")
    p.add_argument("--profile", help="only the errata this profile turns on")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)
