"""`crucible-spec torch-diff`: how far PyTorch's kernels are from the spec's, in ulps."""

from __future__ import annotations

import argparse
import json

from . import console
from .common import UsageError, check_output, positive_int, write_output


def run(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("torch-diff needs PyTorch: pip install -e '.[torch]'") from None
    from ..torch_diff import load
    from ..torch_diff.measure import measure

    equivalents = load()
    chosen = sorted(equivalents) if not args.ops else [o for o in sorted(equivalents)
                                                       if any(p in o for p in args.ops)]
    if not chosen:
        raise UsageError(f"no op with a torch equivalent matches {args.ops}")
    if args.json:
        check_output(args.json, args.force)
    rows = []
    with console.messages("torch-diff") as progress:
        for name in chosen:
            progress(name)
            rows.append(measure(equivalents[name], args.seeds))
    body = [[m.op, f"{m.cases}" + (f" (+{m.refused} left out)" if m.refused else ""),
             f"{m.largest:g}", f"{m.enveloped:g}", m.at, str(m.envelope),
             ("covered" if m.covered else "NOT COVERED") if m.must_cover else m.order]
            for m in rows]
    print(console.render(console.table(
        ["op", "cases", "largest ulps", "floored", "at", "envelope", "order / verdict"], body,
        right=["cases", "largest ulps", "floored", "envelope"])))
    if args.json:
        text = json.dumps([m.__dict__ for m in rows], indent=2) + "\n"
        write_output(args.json, text.encode(), args.force)
    return 1 if any(m.must_cover and not m.covered for m in rows) else 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "torch-diff", help="ulp distances between PyTorch's kernels and the spec's",
        description="For each chapter 12 kernel with a PyTorch (CPU) equivalent: run its edges "
                    "and its bench inputs at small sizes, compare torch's answer with the "
                    "spec's (from the numba kernel, bit-exact with the spec) element by "
                    "element, and print the largest distance in ulps. Where torch evaluates "
                    "every element with the spec's own operations (order 'same') the op's "
                    "envelope must cover the distance (exit 1 if not); elsewhere the order "
                    "column says why torch legitimately differs.")
    p.add_argument("--ops", nargs="*", metavar="TEXT", help="ops whose name contains TEXT")
    p.add_argument("--seeds", type=positive_int, default=2,
                   help="bench inputs per size (default 2)")
    p.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    p.add_argument("--force", action="store_true", help="replace an existing --json file")
    p.set_defaults(func=run)
