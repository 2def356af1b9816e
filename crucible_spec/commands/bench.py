"""`crucible-spec bench`: time reference vs numba vs cupy."""

from __future__ import annotations

import argparse
import json

from . import console
from .common import (
    UsageError,
    check_output,
    count,
    integer,
    positive_int,
    profile_errata,
    seconds,
    select_ops,
    write_output,
)

MAX_SIZE = 100_000_000
"""The largest size bench takes: a batch of 10^8 items is already gigabytes of inputs."""


def _sizes(text: str) -> list[int]:
    """An argparse type: comma-separated sizes, each an integer from 1 to MAX_SIZE."""
    values = [integer(x.strip(), 1, MAX_SIZE) for x in text.split(",") if x.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"expected comma-separated sizes, got {text!r}")
    return values


def run(args: argparse.Namespace) -> int:
    from .. import bench
    from ..bench_wire import WireError, parse_cmd, serve_impl
    from ..conformance.serve import device_of

    tools_only = args.tools and args.ops is None
    ops = [] if tools_only else select_ops(args.ops, lambda op: op.bench is not None)
    for path in (args.json, args.plot):
        if path:
            check_output(path, args.force)
    backends = args.impl or ["numba", "cupy"]
    try:
        errata = profile_errata(args.profile)
        wires = [serve_impl(b, args.profile) for b in backends if args.serve]
        wires += [parse_cmd(text) for text in args.cmd or []]
    except WireError as e:
        raise UsageError(str(e)) from None
    planned = any(op.name == "plan.compute" for op in ops) and "numba" in backends
    cells = len(ops) * len(args.sizes)
    with console.steps("bench", cells) as steps:
        try:
            rows = bench.run(ops, args.sizes, backends, args.ref_max, args.repeat, args.seed,
                             steps, args.reference_budget, wires, errata)
        except WireError as e:
            raise UsageError(str(e)) from None
    with console.messages("bench") as progress:
        quality = bench.plan_quality(args.quality_sizes, args.seed, progress) if planned else []
    tools = []
    if args.tools:
        from ..bench_tools import render_tools, time_tools

        with console.messages("bench") as progress:
            tools = time_tools(args.tool_runs, progress)
    device = {b: device_of(b) for b in backends}
    print("devices: " + "; ".join(f"{b}: {d}" for b, d in device.items()))
    if rows:
        print(bench.render(rows, backends))
    if quality:
        print(bench.render_quality(quality))
    if tools:
        print(render_tools(tools))
    if args.json:
        from ..bench_tools import tools_json

        report = bench.as_json(rows, device, quality, args.profile) | {"tools": tools_json(tools)}
        text = json.dumps(report, indent=2) + "\n"
        write_output(args.json, text.encode(), args.force)
        print(f"json: {args.json}")
    if args.plot:
        from ..bench_plot import render_svg

        write_output(args.plot, render_svg(rows).encode(), args.force)
        print(f"plot: {args.plot}")
    return 1 if any(r.mismatch for r in rows) or any(t.failed for t in tools) else 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "bench", help="time reference vs numba vs cupy",
        description="Time each op's reference, numba and cupy implementations on the same "
                    "generated inputs at several sizes. A size is the number of items in a "
                    "batch, except for whole-trace ops (detector.run, trace.build, "
                    "dag.content_hash, plan.compute), where it is the number of ops in one "
                    "synthetic transformer trace, and pyc.alloc, where it is the number of "
                    "requests in one plan. Each side is timed on inputs already "
                    "converted to what it works on: 'reference' runs on decoded arguments "
                    "(an op whose reference decodes its own JSON arguments has that decoding "
                    "left out; 'ref e2e' includes it); a kernel is timed columns in, columns "
                    "out, and a kernel with a prepare step (numba trace.build, plan.compute "
                    "and pyc.alloc) on its core alone, its conversion of the columns into its "
                    "own arrays left out. 'x ref' is reference / kernel. End-to-end times take "
                    "Python values in and out, as serve pays; 'e2e x ref' is ref e2e / e2e. "
                    "Fast results are checked against the reference wherever it ran (exit 1 "
                    "on a mismatch). Some ops also time baselines that produce as many bytes "
                    "(philox.offset: numba's raw Philox4x32 stream, numpy's Philox4x64 "
                    "random_raw, a plain memory copy), shown in GB/s and M u32/s. With "
                    "plan.compute and numba, a planner-quality table follows: on n scattered "
                    "slots (the E10.1 witness's generator), the pool of the spec's free list and "
                    "of the seed's against the live-bytes lower bound. --serve and --cmd add wire "
                    "columns: the same requests piped through a process that speaks the "
                    "protocol, timed from the first request to the last answer; where its "
                    "hello declares the batch form, in batch requests of up to 4096 items, "
                    "with a 'json:' line comparing that time with the json module's own parse "
                    "of the same request lines and write of the same answer lines. The reference "
                    "stops after --reference-budget seconds and is scaled by items ('~'). "
                    "--tools times the commands a user waits on against their goals: 'oracle "
                    "trace' on two 100k-op traces (under 3 s) and 'analyze' of a 1e6-op trace "
                    "(under 5 s), each as its own process, file loading included.")
    p.add_argument("--ops", nargs="*", metavar="GLOB", help="ops to time (default: all)")
    p.add_argument("--sizes", type=_sizes, default=[1_000, 10_000, 100_000],
                   help="comma-separated sizes: items per batch, or ops per trace, each at "
                        f"most {MAX_SIZE} (default 1000,10000,100000)")
    p.add_argument("--impl", action="append", choices=["numba", "cupy"],
                   help="fast backend to time (repeatable; default both)")
    p.add_argument("--ref-max", type=count, default=100_000,
                   help="largest size the reference is timed at (default 100000)")
    p.add_argument("--repeat", type=positive_int, default=3,
                   help="kernel timings: best of N, fewer once the runs took a second "
                        "(default 3; the reference runs once)")
    p.add_argument("--seed", type=count, default=0, help="input generator seed")
    p.add_argument("--profile", default="crucible",
                   help="errata profile every side answers under: the reference, the kernels, "
                        "serve (--serve) and the answers a --cmd's are checked against "
                        "(default: crucible, the intended behaviour; a seed's profile, such as "
                        "crucible@8d2680a2, to check the seed's real code while timing it)")
    p.add_argument("--quality-sizes", type=_sizes, default=[1_000, 10_000, 100_000],
                   help="slot counts of the planner-quality table (default 1000,10000,100000; "
                        "1e6 adds about 15 s)")
    p.add_argument("--reference-budget", type=seconds, default=20.0, metavar="S",
                   help="the reference runs a batch's items until S seconds are spent, and its "
                        "time for the batch is scaled by items, marked '~' (default 20)")
    p.add_argument("--serve", action="store_true",
                   help="also time 'crucible-spec serve --impl B' for each backend B: the same "
                        "requests in batch requests (serve declares the batch form), timed from "
                        "the first request to the last answer (start-up excluded), answers "
                        "checked against the reference")
    p.add_argument("--cmd", action="append", metavar="[NAME=]COMMAND",
                   help="also time any command that speaks the wire protocol (the C++ "
                        "implementation, say) the same way, as a column NAME (repeatable)")
    p.add_argument("--tools", action="store_true",
                   help="time 'oracle trace' on two synthetic 100k-op traces and 'analyze' of "
                        "a synthetic 1e6-op trace as a user runs them (start-up and loading "
                        "included), interleaved, against their goals (3 s, 5 s); without --ops "
                        "the op table is left out")
    p.add_argument("--tool-runs", type=positive_int, default=5, metavar="N",
                   help="runs of each --tools command; the median is reported (default 5)")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--plot", metavar="FILE.svg",
                   help="also write a log-scale bar chart of seconds per implementation, per "
                        "op and size, as SVG")
    p.add_argument("--force", action="store_true", help="replace an existing --json or --plot file")
    p.set_defaults(func=run)
