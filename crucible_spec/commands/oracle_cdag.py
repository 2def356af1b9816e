"""`oracle cdag`: first differing node, op or field of two CDAG encodings."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .common import UsageError, profile_errata


def run_cdag(args: argparse.Namespace) -> int:
    from ..conformance.oracle_cdag import as_json, cdag_diff, node_bytes
    from ..spec.errors import SpecError

    errata = profile_errata(args.profile)
    nodes = []
    for path in (args.expected, args.got):
        try:
            nodes.append(node_bytes(Path(path).read_bytes(), errata))
        except OSError as e:
            raise UsageError(str(e)) from None
        except (ValueError, SpecError) as e:
            raise UsageError(f"{path}: {getattr(e, 'message', e)}") from None
    try:
        d = cdag_diff(*nodes)
    except SpecError as e:
        raise UsageError(f"{args.expected}: not a valid CDAG node: {e.message}") from None
    if args.json:
        print(json.dumps(as_json(d), indent=2))
    else:
        print("identical" if d is None else d.describe())
    return 0 if d is None else 1


def add_actions(osub) -> None:
    """Add this action to the `oracle` sub-parsers."""
    c = osub.add_parser(
        "cdag", help="first differing byte of two CDAG nodes, with its op and field",
        description="Compare two CDAG v7 nodes (a region or a branch) and name the first "
                    "differing byte: its offset, the op and field of EXPECTED it lies in "
                    "(ops[2].inputs[0]: TensorMeta.sizes[1], plan.slots[3]: ...), both bytes "
                    "and both lengths, and why GOT does not decode if it does not. EXPECTED "
                    "and GOT are each a file of the node's bytes, its bytes as hex text, or "
                    "JSON: cdag.encode args ({region: ...}), a cdag.decode result, or "
                    "cdag.encode_branch args (encoded by the reference). EXPECTED must be a "
                    "valid node. Exit 1 if they differ.")
    c.add_argument("expected", metavar="EXPECTED")
    c.add_argument("got", metavar="GOT")
    c.add_argument("--profile", default="crucible",
                   help="errata profile for encoding JSON (default crucible)")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(func=run_cdag)
