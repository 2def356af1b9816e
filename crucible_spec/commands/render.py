"""`crucible-spec render`: a recorded trace as a picture of its blocks (the trace view)."""

from __future__ import annotations

import argparse

from .common import (
    UsageError,
    check_output,
    count,
    output_stream,
    profile_errata,
    read_crtrace,
    write_output,
)


def run(args: argparse.Namespace) -> int:
    from ..paper.graphs import render_dot
    from ..paper.plots import pipeline_of
    from ..paper.trace_view import view_dot
    from ..spec.core.errors import InvalidInput
    from ..spec.crucible.crtrace import parse_crtrace
    from ..spec.crucible.pipeline import Window

    check_output(args.output, args.force, stdout_ok=True)
    data = read_crtrace(args.trace)
    errata = profile_errata(args.profile)
    try:
        trace = parse_crtrace(data, errata)
        regions = [] if args.whole else pipeline_of(data, errata).regions
    except InvalidInput as e:
        raise UsageError(f"{args.trace}: not a valid .crtrace: {e.message}") from None
    if args.region is not None and args.region >= len(regions):
        raise UsageError(f"{args.trace} has {len(regions)} regions: there is no region "
                         f"{args.region}")
    if regions:
        k = len(regions) - 1 if args.region is None else args.region
        window, what = regions[k].window, f"region {k}"
    else:
        window, what = Window(len(trace.entries), 0, len(trace.entries)), "the whole trace"
    dot, found = view_dot(trace, window, f"{args.trace}, {what}", errata)
    write_output(args.output, render_dot(dot).encode(), args.force, stdout_ok=True)
    print(f"{args.output}: {what} (ops {window.start}..{window.start + window.count - 1}), "
          f"{len(found.blocks)} blocks, architecture {found.architecture.name.lower()}",
          file=output_stream(args.output))
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "render", help="draw a .crtrace as blocks (SVG)",
        description="Cut one iteration of a recorded trace into forward, backward, optimizer "
                    "and epilogue blocks with the spec's block detector (vis.detect_blocks), "
                    "colour each block by its ops' main family (vis.classify_family), and lay "
                    "them out with Graphviz's dot (needs the `dot` program). By default the "
                    "last region the pipeline builds (the steady-state iteration); the whole "
                    "trace when it has no region or with --whole.")
    p.add_argument("trace", metavar="TRACE.crtrace")
    p.add_argument("-o", "--output", required=True, metavar="FILE.svg",
                   help="the SVG to write ('-': standard output)")
    p.add_argument("--force", action="store_true", help="replace FILE.svg if it exists")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--region", type=count, metavar="K",
                       help="draw region K (0-based) instead of the last one")
    which.add_argument("--whole", action="store_true", help="draw every op of the trace")
    p.add_argument("--profile", default="crucible",
                   help="errata profile (default crucible; crucible@8d2680a2 reproduces the "
                        "seed's detector)")
    p.set_defaults(func=run)
