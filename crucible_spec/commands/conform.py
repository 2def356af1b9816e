"""`crucible-spec conform`: the conformance runner for an external implementation."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

from . import console
from .common import (
    UsageError,
    check_output,
    count,
    integer,
    positive_int,
    profile_errata,
    read_input,
    seconds,
    select_ops,
    write_output,
)


def _xfail(path: str | None):
    from ..conformance.runner import Xfail

    if not path:
        return Xfail()
    try:
        entries = json.loads(read_input(path))
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"--xfail {path} is not JSON: {e}") from None
    if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
        raise UsageError(f"--xfail {path}: expected a JSON object {{\"op\" or \"op:case\": "
                         f"\"reason\"}}")
    return Xfail(entries)


MAX_FUZZ = 100_000
"""The most generated inputs --fuzz sends an op (1,000 blocks of 100)."""


def fuzz_count(text: str) -> int:
    """An argparse type: a --fuzz count, 0 to MAX_FUZZ."""
    return integer(text, 0, MAX_FUZZ)


def implementation(text: str) -> list[str]:
    """The --impl command as words, or a UsageError when it is empty, unbalanced or names no
    program that can run."""
    try:
        command = shlex.split(text)
    except ValueError as e:
        raise UsageError(f"--impl {text!r}: {e}") from None
    if not command:
        raise UsageError("--impl needs a command")
    if shutil.which(command[0]) is None:
        raise UsageError(f"--impl: {command[0]} is not a program that can run (no such "
                         f"executable file, nor a command on PATH)")
    return command


def _limits(args: argparse.Namespace):
    """The per-response timeouts, the op and run budgets and the hang limit of the options."""
    from ..conformance.runner import Limits

    for name in ("timeout", "first_timeout", "op_budget", "run_budget"):
        if getattr(args, name) == float("inf"):
            raise UsageError(f"--{name.replace('_', '-')} must be a finite number of seconds")
    return Limits(args.timeout, args.first_timeout, args.op_budget, args.run_budget,
                  args.max_hangs)


def _sharded(args: argparse.Namespace, command: list[str], suite: dict, errata: frozenset,
             manifest: str, limits):
    """The run as a campaign of shards on Dask: (hello, results, events) as run_suite gives."""
    import hypothesis

    from .. import SPEC_VERSION
    from ..conformance import sharded

    xfail = tuple(sorted(_xfail(args.xfail).entries.items()))
    setup = sharded.Setup(tuple(command), errata, xfail, args.seed, limits,
                          time.time() + limits.run_budget, args.profile, args.window,
                          args.time_reference)
    key = {"command": command, "profile": args.profile, "seed": args.seed, "xfail": xfail,
           "spec_version": SPEC_VERSION, "manifest_sha256": manifest,
           "hypothesis": hypothesis.__version__, "limits": limits.to_json()}
    job = sharded.Campaign(setup, suite, args.fuzz)
    with console.steps("conform", 1) as s:
        tally = sharded.run(job, results=Path(args.results) if args.results else None, key=key,
                            workers=args.workers or os.cpu_count() or 1,
                            scheduler=args.scheduler, progress=s.note)
    wall = time.monotonic() - tally.start
    print(f"{tally.done} shards ({tally.reused} reused) in {wall:.1f} s, {tally.requests} "
          f"cases sent, {tally.requests / max(wall, 1e-9):.0f} cases/s", file=sys.stderr)
    return job.merge()


def _one_case(suite: dict, profile: str, wanted: str) -> tuple[dict, dict[str, int]]:
    """The suite cut to the case `wanted` (`<profile>/<chapter>/<op>.jsonl:<line>`), with
    the index of that case so its id stays the same."""
    from ..spec.core.registry import REGISTRY

    form = f"expected {profile}/<chapter>/<op>.jsonl:<line>, as the report prints it"
    head, _, line = wanted.rpartition(".jsonl:")
    parts = head.split("/")
    if not line.isdigit() or len(parts) != 3 or parts[0] != profile:
        raise UsageError(f"--case {wanted!r}: {form}")
    op = REGISTRY.ops.get(parts[2])
    if op is None or str(op.chapter) != parts[1] or op.name not in suite:
        raise UsageError(f"--case {wanted!r}: no op {parts[2]!r} in chapter {parts[1]} of "
                         f"profile {profile}")
    k = int(line) - 1
    if not 0 <= k < len(suite[op.name]):
        raise UsageError(f"--case {wanted!r}: {op.name} has {len(suite[op.name])} cases")
    return {op.name: [suite[op.name][k]]}, {op.name: k}


def _in_chapter_order(suite: dict) -> dict:
    from ..spec.core.registry import REGISTRY

    return dict(sorted(suite.items(), key=lambda kv: (REGISTRY.ops[kv[0]].chapter, kv[0])))


def run(args: argparse.Namespace) -> int:
    from ..conformance import report_card, vectors
    from ..conformance.client import Client
    from ..conformance.junit import junit_xml
    from ..conformance.runner import run_suite

    errata = profile_errata(args.profile)
    limits = _limits(args)
    command = implementation(args.impl)
    for path in filter(None, (args.report, args.junit)):
        check_output(path, args.force)
    if args.results:
        check_output(args.results, force=True)
    root = Path(args.vectors) if args.vectors else vectors.VECTORS_DIR
    try:
        suite = vectors.load(root, args.profile)
    except (OSError, ValueError) as e:
        raise UsageError(str(e)) from None
    chosen = {op.name for op in select_ops(args.ops)}
    suite = _in_chapter_order({n: cases for n, cases in suite.items() if n in chosen})
    base: dict[str, int] = {}
    if args.case:
        suite, base = _one_case(suite, args.profile, args.case)
    manifest = vectors.manifest_sha256(root, args.profile)
    if args.workers or args.scheduler or args.results:
        greeting, results, events = _sharded(args, command, suite, errata, manifest, limits)
    else:
        with console.steps("conform", len(suite)) as s:
            greeting, results, events = run_suite(
                Client(command, timeout=limits.timeout, first_timeout=limits.first_timeout,
                       window=args.window),
                suite, errata, _xfail(args.xfail), fuzz=args.fuzz, fuzz_seed=args.seed,
                limits=limits, profile=args.profile, index_base=base,
                done=lambda r: s.step(f"{r.op} {r.status}"),
                time_reference=args.time_reference)
    print(report_card.render(results, events, greeting, limits, verbose=args.verbose))
    if args.report:
        document = report_card.card(command, args.profile, manifest, greeting, results, events,
                                    args.fuzz, limits)
        text = json.dumps(document, indent=2, sort_keys=True) + "\n"
        write_output(args.report, text.encode(), args.force)
        print(f"report card: {args.report}")
    if args.junit:
        write_output(args.junit, junit_xml(results, args.profile), args.force)
        print(f"junit: {args.junit}")
    return 0 if report_card.totals(results)["failed"] == 0 else 1


def add_parser(sub) -> None:
    p = sub.add_parser(
        "conform", help="run the conformance suite against an implementation",
        description="Start IMPL (a command that speaks the wire protocol, see 'serve'), send "
                    "every vector of the profile, compare each answer with the reference and "
                    "print a per-op table, the first difference of each failure (JSON path, "
                    "and for byte strings the byte offset and the field it belongs to), and a "
                    "closing line. A crashing, hanging, garbage-printing or flooding "
                    "implementation, or one that answers with a null or wrong id, is restarted "
                    "and reported as such. An op gives up after --max-hangs hangs or 3 "
                    "failures in a row, or when --op-budget or --run-budget is spent: every "
                    "wait ends at the budget's end, so a run takes at most --run-budget "
                    "seconds and the time to stop one process. Answers 'resource_limit' "
                    "(an input beyond the implementation's limits) are counted apart, never "
                    "passed. Exit 1 on any failure. With "
                    "--workers, --scheduler or --results the run is split into shards on Dask "
                    "distributed, with progress (shards done, cases/s) on stderr.")
    p.add_argument("--impl", required=True, metavar="CMD",
                   help='the implementation command, e.g. "./my_impl --flag"')
    p.add_argument("--profile", default="crucible", help="errata profile (default crucible)")
    p.add_argument("--ops", nargs="*", metavar="GLOB", help="only these ops (default: all)")
    p.add_argument("--report", metavar="FILE", help="write the JSON report card")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --report or --junit file")
    p.add_argument("--xfail", metavar="FILE",
                   help='known failures: JSON {"op" or "op:case": "reason"}')
    p.add_argument("--junit", metavar="FILE",
                   help="also write the run as JUnit XML (a test case per vector case, named "
                        "by its case id; a test suite per chapter), which CI systems read")
    p.add_argument("--case", metavar="ID",
                   help="run one case alone, by the id a report prints "
                        "(crucible/8/hash.fnv1a.jsonl:3)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="list unsupported ops in the table instead of folding them into one "
                        "line")
    p.add_argument("--fuzz", type=fuzz_count, default=0, metavar="N",
                   help="also send N generated inputs per op (at most "
                        f"{MAX_FUZZ}) and shrink any failure")
    p.add_argument("--seed", type=count, default=0, help="fuzzing seed (default 0)")
    p.add_argument("--timeout", type=seconds, default=10.0,
                   help="seconds to wait for each response (default 10)")
    p.add_argument("--first-timeout", type=seconds, default=60.0,
                   help="seconds to wait for the first response of each op after the "
                        "implementation (re)starts, which may include starting up or "
                        "compiling that op (default 60)")
    p.add_argument("--op-budget", type=seconds, default=300.0, metavar="S",
                   help="seconds one op may take in all, its vectors and then its fuzzing "
                        "(each fuzz block an equal share of what the vectors left); the rest "
                        "of its cases are skipped (default 300)")
    p.add_argument("--run-budget", type=seconds, default=3600.0, metavar="S",
                   help="seconds the whole run may take; the cases left are skipped "
                        "(default 3600)")
    p.add_argument("--max-hangs", type=positive_int, default=3, metavar="N",
                   help="give up on an op (skip the rest of its cases) after N hangs in all, "
                        "in a row or not (default 3)")
    p.add_argument("--window", type=positive_int, default=64, metavar="N",
                   help="keep up to N requests in flight (pipelined; answers must still come "
                        "in request order, and a request's timeout runs from when it is "
                        "written, or from the previous answer if later); 1 sends one request "
                        "and waits for its answer before the next (default 64)")
    p.add_argument("--time-reference", action="store_true",
                   help="also run the reference on every vector case to fill the report's "
                        "reference time column and ratio (the expected answers come from the "
                        "vectors either way)")
    p.add_argument("--vectors", metavar="DIR", help="vectors directory (default: bundled)")
    p.add_argument("--workers", type=positive_int, default=None, metavar="W",
                   help="run as shards (each op's vectors, each block of 100 fuzz inputs) on a "
                        "local Dask cluster of W worker processes, each with its own "
                        "implementation process; the table, report and exit status are those "
                        "of a single-process run")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the shards on the Dask cluster of this scheduler "
                        "(tcp://host:8786); its workers need crucible-spec and IMPL")
    p.add_argument("--results", metavar="FILE",
                   help="append each finished shard to this JSON-lines file and reuse it on a "
                        "rerun with the same IMPL, profile, seed, xfail and spec version "
                        "(implies the sharded run, one worker per CPU unless --workers)")
    p.set_defaults(func=run)
