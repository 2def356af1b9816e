"""`crucible-spec bench`: time reference vs numba vs cupy."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .common import Progress, select_ops


def _sizes(text: str) -> list[int]:
    try:
        values = [int(float(x)) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated sizes, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("sizes must be positive")
    return values


def run(args: argparse.Namespace) -> int:
    from .. import bench
    from ..conformance.serve import device_of

    ops = select_ops(args.ops, lambda op: op.bench is not None)
    backends = args.impl or ["numba", "cupy"]
    progress = Progress()
    rows = bench.run(ops, args.sizes, backends, args.ref_max, args.repeat, args.seed, progress)
    progress.done()
    device = {b: device_of(b) for b in backends}
    print("devices: " + "; ".join(f"{b}: {d}" for b, d in device.items()))
    print(bench.render(rows, backends))
    if args.json:
        Path(args.json).write_text(json.dumps(bench.as_json(rows, device), indent=2) + "\n")
        print(f"json: {args.json}")
    return 1 if any(r.mismatch for r in rows) else 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "bench", help="time reference vs numba vs cupy",
        description="Time each op's reference, numba and cupy implementations on the same "
                    "generated inputs at several sizes. Kernel times exclude converting Python "
                    "values to columns; end-to-end times include it. Fast results are checked "
                    "against the reference wherever it ran (exit 1 on a mismatch).")
    p.add_argument("--ops", nargs="*", metavar="GLOB", help="ops to time (default: all)")
    p.add_argument("--sizes", type=_sizes, default=[1_000, 10_000, 100_000],
                   help="comma-separated batch sizes (default 1000,10000,100000)")
    p.add_argument("--impl", action="append", choices=["numba", "cupy"],
                   help="fast backend to time (repeatable; default both)")
    p.add_argument("--ref-max", type=int, default=100_000,
                   help="largest size the reference is timed at (default 100000)")
    p.add_argument("--repeat", type=int, default=3, help="kernel timings: best of N")
    p.add_argument("--seed", type=int, default=0, help="input generator seed")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.set_defaults(func=run)
