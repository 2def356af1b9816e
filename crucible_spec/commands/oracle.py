"""`crucible-spec oracle`: ask the reference where bytes or answers diverge."""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path

from .common import UsageError, profile_errata


def _read_json(path: str) -> dict:
    try:
        value = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: {e}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{path}: expected a JSON object")
    return value


def run_diff(args: argparse.Namespace) -> int:
    from ..conformance.oracle import diff_records
    from ..spec.errors import InvalidInput
    from ..spec.layout_ops import find_struct

    try:
        s = find_struct(args.struct)
    except InvalidInput as e:
        raise UsageError(e.message) from None
    try:
        a, b = Path(args.a).read_bytes(), Path(args.b).read_bytes()
    except OSError as e:
        raise UsageError(str(e)) from None
    diffs, notes = diff_records(s, a, b)
    if args.json:
        print(json.dumps({"struct": s.name, "notes": notes,
                          "differences": [d.__dict__ for d in diffs]}, indent=2))
    else:
        for n in notes:
            print(f"note: {n}")
        for d in diffs:
            print(d.describe(s.name))
        print(f"{len(diffs)} differing fields" if diffs or notes else "identical")
    return 1 if diffs or notes else 0


def run_explain(args: argparse.Namespace) -> int:
    from ..conformance.oracle import explain
    from ..spec.registry import REGISTRY

    if args.op not in REGISTRY.ops:
        raise UsageError(f"no op named {args.op!r} (see 'crucible-spec ops')")
    request, got = _read_json(args.args), _read_json(args.got)
    op_args = request.get("args", request) if "op" in request else request
    ex = explain(args.op, op_args, got, profile_errata(args.profile))
    op = ex.op
    print(f"{op.name} (chapter {op.chapter}): {op.summary}")
    for fn in op.spec:
        print(f"\nspec: {fn.__module__.split('.')[-1]}.{fn.__name__}{inspect.signature(fn)}")
        print("  " + (inspect.getdoc(fn) or "").replace("\n", "\n  "))
    print(f"\nexpected ({args.profile}): {json.dumps(ex.expected, sort_keys=True)}")
    print(f"got: {json.dumps(got, sort_keys=True)[:500]}")
    print("first difference: " + (ex.difference.describe() if ex.difference else "none, the "
                                  "answer is right"))
    for po_id in REGISTRY.obligations_for(op.name)[:10]:
        print(f"obligation {po_id}: {REGISTRY.obligations[po_id].statement}")
    for e_id in REGISTRY.errata_for(op.name):
        print(f"erratum {e_id}: {REGISTRY.errata[e_id].title}")
    return 1 if ex.difference else 0


def add_parser(sub) -> None:
    p = sub.add_parser("oracle", help="find where bytes or answers diverge",
                       description="Debugging tools backed by the reference.")
    osub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    d = osub.add_parser("diff", help="field-level diff of two records or record arrays",
                        description="Compare two binary files holding one record or an array "
                                    "of records of STRUCT; print every differing member with "
                                    "its record index and byte offset. Exit 1 if they differ.")
    d.add_argument("struct", help="struct name, e.g. TensorMeta or TraceRing::Entry")
    d.add_argument("a", metavar="A.bin")
    d.add_argument("b", metavar="B.bin")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    d.set_defaults(func=run_diff)
    e = osub.add_parser("explain", help="what the spec says about one answer",
                        description="Show the op's spec text, the expected answer for ARGS, the "
                                    "first difference of GOT from it, and the op's proof "
                                    "obligations and errata. ARGS.json holds the args object (or "
                                    "a whole request); GOT.json the result object (or a whole "
                                    "response). Exit 1 if GOT is wrong.")
    e.add_argument("op")
    e.add_argument("args", metavar="ARGS.json")
    e.add_argument("got", metavar="GOT.json")
    e.add_argument("--profile", default="crucible", help="errata profile (default crucible)")
    e.set_defaults(func=run_explain)
