"""`oracle cdag`: first differing node, op or field of two CDAG encodings."""

from __future__ import annotations

import argparse
import json

from .common import UsageError, profile_errata, read_input


def run_cdag(args: argparse.Namespace) -> int:
    from ..conformance.oracle_cdag import as_json, cdag_diff, node_bytes
    from ..spec.core.errors import SpecError

    errata = profile_errata(args.profile)
    nodes = []
    for path in (args.expected, args.got):
        try:
            nodes.append(node_bytes(read_input(path), errata))
        except (ValueError, SpecError) as e:
            raise UsageError(f"{path} is not a CDAG node: {getattr(e, 'message', e)}") from None
    try:
        d = cdag_diff(*nodes, errata)
    except SpecError as e:
        side = args.expected if e.message.startswith("EXPECTED") else args.got
        raise UsageError(f"{side}: {e.message}") from None
    if args.json:
        print(json.dumps(as_json(d), indent=2))
    else:
        print("identical" if d is None else d.describe())
    return 0 if d is None else 1


def add_actions(osub) -> None:
    """Add this action to the `oracle` sub-parsers."""
    c = osub.add_parser(
        "cdag", help="first differing byte of two CDAG nodes, with its op and field",
        description="Compare two CDAG v7 nodes (a region or a branch): the first decoded "
                    "field that differs (ops[2].inputs[0].sizes[1], plan.slots[3].nbytes, "
                    "arms[1].value ...; the derived content and Merkle hashes last), the first "
                    "differing byte and the field of EXPECTED it lies in, both lengths, and "
                    "the derived hashes the change alters. EXPECTED and GOT are each a file "
                    "of the node's bytes, its bytes as hex text, or JSON: cdag.encode args "
                    "({region: ...}), a cdag.decode result, or cdag.encode_branch args "
                    "(encoded by the reference). Exit 1 if they differ; 2 if either is not a "
                    "valid node (the reader's offset and reason are named).")
    c.add_argument("expected", metavar="EXPECTED")
    c.add_argument("got", metavar="GOT")
    c.add_argument("--profile", default="crucible",
                   help="errata profile for encoding JSON (default crucible)")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(func=run_cdag)
