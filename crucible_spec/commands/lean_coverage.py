"""`crucible-spec lean-coverage`: which Lean theorems about the real code the project checks."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from . import console
from .common import write_output

PAPER = Path("papers") / "lean-coverage.md"


def run(args: argparse.Namespace) -> int:
    from ..proofs.crucible import lean_coverage as lc

    root = Path.cwd()
    inv, speculative = lc.load(), lc.load_speculative()
    problems = lc.shape_problems(inv) + [f"unknown id {b}" for b in lc.unknown_ids(inv, root)]
    problems += lc.speculative_problems(*speculative)
    text = lc.render(inv, speculative)
    paper = root / PAPER
    if args.check:
        if not paper.is_file() or paper.read_text() != text:
            problems.append(f"{PAPER} is not up to date (run crucible-spec lean-coverage)")
    else:
        paper.parent.mkdir(parents=True, exist_ok=True)
        write_output(paper, text.encode(), force=True)
    if args.json:
        print(json.dumps(lc.summary(inv) | {"problems": problems}, indent=2))
    else:
        console.print_table(
            ["chapter", "covered", "theorems", "%", "Lean modules"],
            [[r.chapter, r.covered, r.theorems, f"{r.percent:.1f}", ", ".join(r.modules)]
             for r in lc.chapter_rows(inv)], right=("chapter", "covered", "theorems", "%"))
        total = lc.scope_total(lc.chapter_rows(inv))
        print(f"yellowpaper chapters: {total.covered} / {total.theorems} "
              f"({total.percent:.1f}%)")
        for p in problems:
            print(f"problem: {p}")
    return 1 if problems else 0


def add_parser(sub) -> None:
    p = sub.add_parser("lean-coverage", help="coverage of the Lean theorems by proofs and tests",
                       description="Map every theorem of the Lean modules that model real C++ "
                                   "headers to the obligations, vectors, golden groups and tests "
                                   "that check it, and write papers/lean-coverage.md.")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if the paper is stale or an id is unknown")
    p.add_argument("--json", action="store_true", help="machine-readable summary")
    p.set_defaults(func=run)
