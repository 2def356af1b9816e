"""`crucible-spec prove`: check the proof obligations."""

from __future__ import annotations

import argparse
import fnmatch
import os
import time
from pathlib import Path

from . import console
from .common import STATE_DIR, UsageError, check_output, positive_int, seconds, write_output


def _select(patterns: list[str]) -> list[str]:
    from ..spec.core.registry import REGISTRY

    if not patterns:
        return list(REGISTRY.obligations)
    chosen = [i for i in REGISTRY.obligations if any(fnmatch.fnmatch(i, p) for p in patterns)]
    if not chosen:
        raise UsageError(f"no proof obligation matches {' '.join(patterns)} "
                         f"(see 'crucible-spec prove --list')")
    return chosen


def run(args: argparse.Namespace) -> int:
    from ..proofs.core import report, runner
    from ..proofs.core.cache import cache_dir
    from ..spec.core.registry import REGISTRY, po_sort_key

    ids = _select(args.ids)
    if args.report:
        check_output(args.report, args.force)
    if args.list:
        for i in sorted(ids, key=po_sort_key):
            po = REGISTRY.obligations[i]
            print(f"{i:10} {po.kind:8} {po.statement}")
        return 0
    jobs = args.jobs or os.cpu_count() or 1
    settings = runner.Settings(cache_dir(args.cache), not args.no_cache, args.timeout, jobs)
    start = time.perf_counter()
    total = sum(len(REGISTRY.obligations[i].mutants) for i in ids) if args.mutants else len(ids)
    with console.steps("prove", total) as s:
        outcomes = runner.run(ids, mutants=args.mutants, settings=settings,
                              progress=lambda o, done, total: s.step(
                                  f"{o.id} {o.verdict} ({o.seconds:.1f} s)"))
    wall = time.perf_counter() - start
    print(report.table(outcomes, args.mutants))
    print(report.summary(outcomes, args.mutants, wall))
    if len(outcomes) > 1:
        print(f"most expensive ({min(len(outcomes), report.MOST_EXPENSIVE)}):")
        print(report.expensive_table(outcomes))
    default = STATE_DIR / "reports" / ("prove-mutants.json" if args.mutants else "prove.json")
    path = Path(args.report) if args.report else default
    if not args.report:
        path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, report.report_json(outcomes, args.mutants, wall, jobs,
                                          args.require_all).encode(),
                 args.force or not args.report)
    print(f"report: {path}")
    return 0 if report.ok(outcomes, args.mutants, args.require_all) else 1


def add_parser(sub) -> None:
    p = sub.add_parser(
        "prove", help="check the proof obligations",
        description="Check proof obligations in parallel and print id, statement, result and "
                    "seconds. Results of z3 queries are cached by the sha256 of the exact "
                    "query and the z3 version. An obligation that needs an optional package "
                    "that is not installed (egglog, ...) is reported 'skipped: needs X'. "
                    "Exits 1 if any obligation is refuted, unknown or broken, or with "
                    "--require-all skipped; with --mutants, if any mutant survives.")
    p.add_argument("ids", nargs="*", metavar="ID", help="obligation ids or globs (PO8.*); "
                                                        "default: all")
    p.add_argument("--mutants", action="store_true",
                   help="check that every obligation fails on each of its mutants")
    p.add_argument("--require-all", action="store_true",
                   help="fail (exit 1) when an obligation is skipped for a missing package")
    p.add_argument("-j", "--jobs", type=positive_int, default=None,
                   help="parallel workers (default: one per CPU)")
    p.add_argument("--timeout", type=seconds, default=None,
                   help="seconds per z3 query, overriding each obligation's own")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--cache", metavar="DIR", help="cache directory (default "
                   "$CRUCIBLE_SPEC_CACHE or .crucible-spec/cache/proofs)")
    p.add_argument("--report", metavar="FILE",
                   help="JSON report path (default .crucible-spec/reports/prove.json)")
    p.add_argument("--force", action="store_true", help="replace an existing --report file")
    p.add_argument("--list", action="store_true", help="list the obligations and exit")
    p.set_defaults(func=run)
