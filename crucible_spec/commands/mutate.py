"""`crucible-spec mutate`: plant generated bugs in the spec and report which checks kill them."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import random
import time
from pathlib import Path

from . import console
from .common import (
    STATE_DIR,
    UsageError,
    check_output,
    count,
    percent,
    positive_int,
    seconds,
    write_output,
)

DEFAULT_CHAPTERS = "1-11,17,18"
EQUIVALENT_FILE = Path(__file__).resolve().parent.parent.parent / "proofs" / \
    "equivalent_mutants.tsv"


MAX_CHAPTER = 99
"""The highest chapter number --chapters takes (the spec's are far below)."""


def parse_chapters(text: str) -> set[int]:
    """'1-11,17,18' -> {1, ..., 11, 17, 18}; each chapter from 1 to MAX_CHAPTER."""
    out: set[int] = set()
    form = f"--chapters: {text!r} is not a list of chapters like 1-11,17 (1 to {MAX_CHAPTER})"
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            first, last = int(lo), int(hi or lo)
            if not 1 <= first <= last <= MAX_CHAPTER:
                raise UsageError(form)
            out.update(range(first, last + 1))
    except ValueError:
        raise UsageError(form) from None
    return out


def parse_checks(text: str) -> tuple[str, ...]:
    from ..mutants import CHECKS

    chosen = tuple(c.strip() for c in text.split(",") if c.strip())
    unknown = [c for c in chosen if c not in CHECKS]
    if unknown or not chosen:
        raise UsageError(f"--checks: choose from {', '.join(CHECKS)} (got {text!r})")
    return tuple(c for c in CHECKS if c in chosen)


def select(args: argparse.Namespace) -> list[str]:
    """The mutant ids to run: chapters, function globs, then a seeded sample."""
    from ..proofs.core import mutation

    ids = [m.id for m in mutation.generate(parse_chapters(args.chapters))]
    if args.functions:
        ids = [i for i in ids if any(fnmatch.fnmatch(i.split("@")[0], f"*{p}")
                                     for p in args.functions)]
    if not ids:
        raise UsageError("no mutant matches the chapters and functions given")
    if args.sample and args.sample < len(ids):
        ids = sorted(random.Random(args.seed).sample(ids, args.sample))
    return ids


def run(args: argparse.Namespace) -> int:
    from .. import campaign, mutants

    checks = parse_checks(args.checks)
    if args.report:
        check_output(args.report, args.force)
    if args.results:
        check_output(args.results, force=True)
    ids = select(args)
    if args.list:
        for i in ids:
            print(i)
        return 0
    root = STATE_DIR / "mutate"
    results = Path(args.results) if args.results else root / "results.jsonl"
    start = time.perf_counter()
    with console.messages("mutate") as show:
        verdicts = campaign.run(ids, checks=checks, root=root, results=results,
                                equivalent=mutants.load_equivalent(EQUIVALENT_FILE),
                                workers=args.workers or os.cpu_count() or 1,
                                scheduler=args.scheduler, timeout_s=args.timeout, progress=show)
    wall = time.perf_counter() - start
    print(campaign.table(campaign.tally(verdicts, lambda v: v.chapter), "chapter"))
    rep = campaign.report(verdicts, wall)
    all_row = campaign.tally(verdicts, lambda v: v.chapter)["all"]
    print(f"{len(verdicts)} mutants in {wall:.1f} s ({len(verdicts) / max(wall, 1e-9):.2f}/s); "
          f"prove alone kills {100 * all_row.ratio(all_row.prove):.1f}%, all checks "
          f"{100 * all_row.ratio(all_row.killed):.1f}% of {all_row.live} non-equivalent")
    if args.survivors:
        for s in rep["survivors"]:
            print(f"survived: {s}")
    path = Path(args.report) if args.report else STATE_DIR / "reports" / "mutate.json"
    if not args.report:
        path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, json.dumps(rep, indent=1, sort_keys=True).encode(),
                 args.force or not args.report)
    print(f"report: {path}")
    ok = (args.min_prove is None or 100 * all_row.ratio(all_row.prove) >= args.min_prove) and \
        (args.min_all is None or 100 * all_row.ratio(all_row.killed) >= args.min_all)
    return 0 if ok else 1


def add_parser(sub) -> None:
    p = sub.add_parser(
        "mutate", help="plant generated bugs in the spec and see which checks kill them",
        description="Generate mutants of the spec's functions (operators swapped, comparison "
                    "bounds moved, constants off by one, masks dropped, and/or swapped, "
                    "arguments or fields swapped), plant each in place and run the checks "
                    "that call the mutated function: the proof obligations, then the "
                    "conformance vectors, then the tests. Reports per chapter how many are "
                    "killed by prove alone and by all checks. Runs on a Dask cluster (local "
                    "by default); results are appended to a file and reused on the next run "
                    "while the function's source is unchanged.")
    p.add_argument("--chapters", default=DEFAULT_CHAPTERS,
                   help=f"chapters whose spec modules are mutated (default {DEFAULT_CHAPTERS})")
    p.add_argument("--functions", nargs="*", metavar="GLOB",
                   help="only functions whose module:qualname ends with GLOB "
                        "(e.g. 'iteration_detector:*')")
    p.add_argument("--sample", type=count, default=0, metavar="N",
                   help="a seeded random sample of N mutants (default: all)")
    p.add_argument("--seed", type=count, default=0, help="seed of the sample (default 0)")
    p.add_argument("--checks", default="prove,vectors,tests",
                   help="checks to run, in this order (default prove,vectors,tests)")
    p.add_argument("--workers", type=positive_int, default=None,
                   help="worker processes of the local cluster (default: one per CPU)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a Dask scheduler address (tcp://host:8786) instead of a local cluster")
    p.add_argument("--timeout", type=seconds, default=300.0,
                   help="seconds per check under one mutant; a hang counts as a kill (300)")
    p.add_argument("--results", metavar="FILE",
                   help="JSON-lines results, resumed from (default "
                        ".crucible-spec/mutate/results.jsonl)")
    p.add_argument("--report", metavar="FILE",
                   help="JSON report (default .crucible-spec/reports/mutate.json)")
    p.add_argument("--force", action="store_true", help="replace an existing --report file")
    p.add_argument("--survivors", action="store_true", help="list every surviving mutant")
    p.add_argument("--min-prove", type=percent, metavar="PCT",
                   help="exit 1 when prove alone kills less than PCT%% of the live mutants")
    p.add_argument("--min-all", type=percent, metavar="PCT",
                   help="exit 1 when all checks together kill less than PCT%%")
    p.add_argument("--list", action="store_true", help="list the selected mutant ids and exit")
    p.set_defaults(func=run)
