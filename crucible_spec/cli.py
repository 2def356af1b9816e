"""The `crucible-spec` command line."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from pathlib import Path

from . import __version__, load_all

STATE_DIR = Path(".crucible-spec")


class UsageError(Exception):
    """A user mistake: reported as one line on stderr, exit status 2, no traceback."""


def _profile_errata(name: str) -> frozenset[str]:
    from .spec.errata import profile_errata

    try:
        return profile_errata(name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def cmd_ops(args: argparse.Namespace) -> int:
    from . import coverage

    table = coverage.rows()
    if args.json:
        print(json.dumps(coverage.as_json(table), indent=2))
    else:
        print(coverage.render(table))
    return 1 if args.check and any(r.holes for r in table) else 0


def _select_obligations(patterns: list[str]) -> list[str]:
    from .spec.registry import REGISTRY

    if not patterns:
        return list(REGISTRY.obligations)
    chosen = [i for i in REGISTRY.obligations if any(fnmatch.fnmatch(i, p) for p in patterns)]
    if not chosen:
        raise UsageError(f"no proof obligation matches {' '.join(patterns)} "
                         f"(see 'crucible-spec prove --list')")
    return chosen


def cmd_prove(args: argparse.Namespace) -> int:
    from .proofs import report, runner
    from .proofs.cache import cache_dir
    from .spec.registry import REGISTRY, po_sort_key

    ids = _select_obligations(args.ids)
    if args.list:
        for i in sorted(ids, key=po_sort_key):
            po = REGISTRY.obligations[i]
            print(f"{i:10} {po.kind:8} {po.statement}")
        return 0
    jobs = args.jobs or os.cpu_count() or 1
    settings = runner.Settings(cache_dir(args.cache), not args.no_cache, args.timeout, jobs)
    tty = sys.stderr.isatty()

    def progress(o: runner.Outcome, done: int, total: int) -> None:
        if tty:
            print(f"\r[{done}/{total}] {o.id} {o.verdict}".ljust(40), end="", file=sys.stderr,
                  flush=True)

    start = time.perf_counter()
    outcomes = runner.run(ids, mutants=args.mutants, settings=settings, progress=progress)
    wall = time.perf_counter() - start
    if tty:
        print("\r".ljust(40) + "\r", end="", file=sys.stderr)
    print(report.table(outcomes, args.mutants))
    print(report.summary(outcomes, args.mutants, wall))
    default = STATE_DIR / "reports" / ("prove-mutants.json" if args.mutants else "prove.json")
    path = Path(args.report) if args.report else default
    report.write_report(path, outcomes, args.mutants, wall, jobs)
    print(f"report: {path}")
    return 0 if report.ok(outcomes, args.mutants) else 1


def cmd_serve(args: argparse.Namespace) -> int:
    from .conformance.serve import serve
    from .engine import Implementation

    impl = Implementation(args.impl, _profile_errata(args.profile))
    return serve(impl, args.profile, sys.stdin.buffer, sys.stdout)


def _select_ops(patterns: list[str] | None, keep) -> list:
    from .spec.registry import REGISTRY

    ops = [op for name, op in sorted(REGISTRY.ops.items()) if keep(op)
           and (not patterns or any(fnmatch.fnmatch(name, p) for p in patterns))]
    if not ops:
        raise UsageError(f"no op matches {' '.join(patterns or [])} (see 'crucible-spec ops')")
    return ops


def _int_list(text: str) -> list[int]:
    try:
        values = [int(float(x)) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated sizes, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("sizes must be positive")
    return values


def cmd_bench(args: argparse.Namespace) -> int:
    from . import bench
    from .conformance.serve import device_of

    ops = _select_ops(args.ops, lambda op: op.bench is not None)
    backends = args.impl or ["numba", "cupy"]
    tty = sys.stderr.isatty()

    def progress(msg: str) -> None:
        if tty:
            print(f"\r{msg}".ljust(60), end="", file=sys.stderr, flush=True)

    rows = bench.run(ops, args.sizes, backends, args.ref_max, args.repeat, args.seed, progress)
    if tty:
        print("\r".ljust(60) + "\r", end="", file=sys.stderr)
    device = {b: device_of(b) for b in backends}
    print("devices: " + "; ".join(f"{b}: {d}" for b, d in device.items()))
    print(bench.render(rows, backends))
    if args.json:
        Path(args.json).write_text(json.dumps(bench.as_json(rows, device), indent=2) + "\n")
        print(f"json: {args.json}")
    return 1 if any(r.mismatch for r in rows) else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="crucible-spec",
        description="The executable yellowpaper of Crucible: op registry, reference oracle, "
                    "fast kernels, proof obligations and the conformance protocol.",
    )
    p.add_argument("--version", action="version", version=f"crucible-spec {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    ops = sub.add_parser("ops", help="coverage table of every op",
                         description="Print every registered op with its chapter, which "
                                     "implementations exist (or why one is n/a), how many "
                                     "conformance cases cover it, its proof obligations and "
                                     "errata.")
    ops.add_argument("--json", action="store_true", help="machine-readable output")
    ops.add_argument("--check", action="store_true",
                     help="exit 1 if any op has a coverage hole")
    ops.set_defaults(func=cmd_ops)

    prove = sub.add_parser(
        "prove", help="check the proof obligations",
        description="Check proof obligations in parallel and print id, statement, result and "
                    "seconds. Results of z3 queries are cached by the sha256 of the exact "
                    "query and the z3 version. Exits 1 if any obligation is refuted, unknown "
                    "or broken; with --mutants, if any mutant survives.")
    prove.add_argument("ids", nargs="*", metavar="ID",
                       help="obligation ids or globs (PO8.*); default: all")
    prove.add_argument("--mutants", action="store_true",
                       help="check that every obligation fails on each of its mutants")
    prove.add_argument("-j", "--jobs", type=int, default=0,
                       help="parallel workers (default: one per CPU)")
    prove.add_argument("--timeout", type=float, default=None,
                       help="seconds per z3 query, overriding each obligation's own")
    prove.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    prove.add_argument("--cache", metavar="DIR",
                       help="cache directory (default $CRUCIBLE_SPEC_CACHE or "
                            ".crucible-spec/cache/proofs)")
    prove.add_argument("--report", metavar="FILE",
                       help="JSON report path (default .crucible-spec/reports/prove.json)")
    prove.add_argument("--list", action="store_true", help="list the obligations and exit")
    prove.set_defaults(func=cmd_prove)

    serve = sub.add_parser(
        "serve", help="answer wire-protocol requests on stdin",
        description="Read one JSON request per line on stdin and write one JSON response per "
                    "line on stdout: {\"id\", \"op\", \"args\"} -> {\"id\", \"ok\", \"result\"} "
                    "or {\"id\", \"ok\": false, \"error\": {\"code\", \"message\"}}. "
                    "{\"id\": 0, \"op\": \"hello\", \"args\": {}} describes the server. "
                    "Exits 0 at end of input.")
    serve.add_argument("--impl", default="reference", choices=["reference", "numba", "cupy"],
                       help="implementation answering the ops (default: reference)")
    serve.add_argument("--profile", default="crucible",
                       help="errata profile (default: crucible, the intended behaviour)")
    serve.set_defaults(func=cmd_serve)

    bench = sub.add_parser(
        "bench", help="time reference vs numba vs cupy",
        description="Time each op's reference, numba and cupy implementations on the same "
                    "generated inputs at several sizes. Kernel times exclude converting Python "
                    "values to columns; end-to-end times include it. Fast results are checked "
                    "against the reference wherever it ran (exit 1 on a mismatch).")
    bench.add_argument("--ops", nargs="*", metavar="GLOB", help="ops to time (default: all)")
    bench.add_argument("--sizes", type=_int_list, default=[1_000, 10_000, 100_000],
                       help="comma-separated batch sizes (default 1000,10000,100000)")
    bench.add_argument("--impl", action="append", choices=["numba", "cupy"],
                       help="fast backend to time (repeatable; default both)")
    bench.add_argument("--ref-max", type=int, default=100_000,
                       help="largest size the reference is timed at (default 100000)")
    bench.add_argument("--repeat", type=int, default=3, help="kernel timings: best of N")
    bench.add_argument("--seed", type=int, default=0, help="input generator seed")
    bench.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    bench.set_defaults(func=cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        load_all()
        return args.func(args)
    except UsageError as e:
        print(f"crucible-spec {args.command}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
