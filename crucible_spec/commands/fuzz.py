"""`crucible-spec fuzz`: mutated real inputs through every reader of client input, bounded by
wall time; exit 1 on any crash, disagreement between paths, or `internal` answer."""

from __future__ import annotations

import argparse
import json
import sys

from .common import UsageError, check_output, count, seconds, write_output

DEFAULT_SECONDS = 60.0
READERS = ("crtrace", "cdag", "checkpoint", "wire")
"""The readers crucible_spec.fuzz runs (named here so the parser does not import it)."""
CALL_LIMIT_S = 30.0
"""crucible_spec.fuzz's default call limit, for --help."""


def run(args: argparse.Namespace) -> int:
    from ..fuzz import render_finding, report, run_reader

    names = args.reader or list(READERS)
    unknown = sorted(set(names) - set(READERS))
    if unknown:
        raise UsageError(f"no reader {unknown[0]!r}; choose from {', '.join(READERS)}")
    if args.report:
        check_output(args.report, args.force)
    runs = []
    for name in dict.fromkeys(names):
        print(f"{name}: fuzzing for {args.seconds:g} s (seed {args.seed})", flush=True)
        r = run_reader(name, args.seconds, args.seed, lambda r: print(
            f"  {r.reader}: {r.tried} inputs, {len(r.findings)} findings, {r.seconds:.0f} s",
            file=sys.stderr, flush=True), call_limit=args.call_limit)
        for f in r.findings:
            print(render_finding(f))
        print(f"{name}: {r.tried} inputs in {r.seconds:.1f} s, {len(r.findings)} distinct "
              f"findings ({r.repeats} repeats)", flush=True)
        runs.append(r)
    if args.report:
        text = json.dumps(report(runs, args.seed), indent=2) + "\n"
        write_output(args.report, text.encode(), args.force)
    found = sum(len(r.findings) for r in runs)
    print(f"fuzz: {sum(r.tried for r in runs)} inputs, {found} findings")
    return 1 if found else 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "fuzz", help="fuzz the readers of client input with mutated real inputs",
        description="Mutate real inputs and feed them to every path that reads them: "
                    "crtrace (.crtrace files through the spec and fast loaders, both "
                    "crtrace.decode implementations and both analyze pipelines), cdag (.cdag "
                    "regions and branches through the reference and numba readers), checkpoint "
                    "(RingKernel checkpoint files through checkpoint.decode: a refusal names "
                    "its offset, an accepted file re-encodes to its own bytes) and wire "
                    "(requests of every op through the serve handler). A crash, a "
                    "disagreement between two paths or an 'internal' answer is a finding; "
                    "each is printed with the input that shows it. Exit 1 on any finding. The "
                    "same seed gives the same inputs in the same order.")
    p.add_argument("--reader", action="append", metavar="NAME",
                   help=f"{', '.join(READERS)} (repeatable; default all)")
    p.add_argument("--seconds", type=seconds, default=DEFAULT_SECONDS,
                   help=f"wall time per reader (default {DEFAULT_SECONDS:g})")
    p.add_argument("--seed", type=count, default=0, help="mutation seed (default 0)")
    p.add_argument("--call-limit", type=seconds, default=CALL_LIMIT_S, metavar="S",
                   help="a single call running longer than S wall seconds is a hang finding; "
                        "S is stretched by the load average over the CPU count when above 1 "
                        f"(default {CALL_LIMIT_S:g})")
    p.add_argument("--report", metavar="FILE", help="write every finding and count as JSON")
    p.add_argument("--force", action="store_true", help="replace an existing report file")
    p.set_defaults(func=run)
