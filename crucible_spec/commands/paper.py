"""`crucible-spec paper`: render the yellowpaper from the registry, check it for drift, or
build it as a static site."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from . import console
from .common import UsageError, check_output_dir, read_input


def _report(path: str) -> dict:
    try:
        report = json.loads(read_input(path))
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"{path} is not a prove report: {e}") from None
    if not isinstance(report, dict) or not isinstance(report.get("results"), list):
        raise UsageError(f"{path} is not a prove report: it has no results list")
    return report


def run(args: argparse.Namespace) -> int:
    from ..paper import build, site

    papers = Path(args.out)
    started = time.perf_counter()
    if args.check:
        if args.prove_report or args.html:
            raise UsageError("--check writes nothing: it takes neither --prove-report nor --html")
        if not papers.is_dir():
            print(f"paper drift: {papers} does not exist: run crucible-spec paper --out {papers}")
            return 1
        drift = build.check(papers)
        for d in drift:
            print(f"paper drift: {d}")
        if drift:
            print(f"{papers} is not what the registry generates: run crucible-spec paper "
                  f"--out {papers}")
            return 1
        print(f"{papers}: up to date ({time.perf_counter() - started:.1f} s)")
        return 0
    check_output_dir(papers)
    if args.html:
        check_output_dir(args.html)
    report = _report(args.prove_report) if args.prove_report else None
    build.refresh_status(papers, report)
    paper = build.render_paper(papers)
    with console.steps("figures", len(paper.figures)) as bar:
        build.write_paper(papers, paper, progress=bar.step)
    print(f"{papers}: {len(paper.texts)} pages, {len(paper.figures)} figures "
          f"({time.perf_counter() - started:.1f} s)")
    if args.html:
        pages = site.build_site(papers, Path(args.html))
        print(f"{args.html}: {pages} HTML pages ({time.perf_counter() - started:.1f} s)")
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "paper", help="render the yellowpaper (papers/) from the registry",
        description="Render the yellowpaper from the registry and the spec modules, in a part "
                    "per system (Crucible, PyC, SympleX, RingKernel, vyre): a Markdown file "
                    "per chapter (its modules' text, figures, byte tables and byte maps of its "
                    "layouts, constants, ops with a worked example, errata with witnesses, "
                    "proof obligations, an index of its definitions) and its source pages, "
                    "an index per part and for the whole, an appendix, and the figures (SVG). "
                    "The output is the same bytes on every run. --check writes nothing and "
                    "exits 1 naming the first differing file and line when the directory is "
                    "stale.")
    p.add_argument("--out", default="papers", metavar="DIR",
                   help="the paper's directory (default papers)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if DIR is not what the registry generates")
    p.add_argument("--prove-report", metavar="FILE",
                   help="refresh the recorded proof status (DIR/prove-status.json) from a "
                        "`crucible-spec prove` report first")
    p.add_argument("--html", metavar="DIR",
                   help="also build the static site (search, cross-links, figures) into DIR")
    p.set_defaults(func=run)
