"""`crucible-spec vectors`: generate and verify the conformance vectors."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import console
from .common import positive_int, profile_errata


def _profiles(names: list[str] | None) -> list[str]:
    from ..conformance.vectors import vector_profiles

    for name in names or []:
        profile_errata(name)
    return names or vector_profiles()


def run_generate(args: argparse.Namespace) -> int:
    from ..conformance import vectors

    root = Path(args.out) if args.out else vectors.VECTORS_DIR
    for profile in _profiles(args.profile):
        with console.messages(f"vectors {profile}") as progress:
            manifest = vectors.generate(root, profile, args.count, progress)
        total = sum(f["count"] for f in manifest["files"].values())
        print(f"{profile}: {len(manifest['files'])} ops, {total} cases -> {root / profile}")
        for kept in vectors.unlisted(root / profile, manifest["files"]):
            print(f"kept {kept}: not ours (the directory held no manifest before)",
                  file=sys.stderr)
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from ..conformance import vectors

    root = Path(args.dir) if args.dir else vectors.VECTORS_DIR
    problems = []
    for profile in _profiles(args.profile):
        found = vectors.verify(root, profile)
        problems += found
        print(f"{profile}: {'ok' if not found else f'{len(found)} problems'}")
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


def add_parser(sub) -> None:
    p = sub.add_parser("vectors", help="generate or verify the conformance vectors",
                       description="Conformance vectors live in "
                                   "conformance/vectors/<profile>/<chapter>/<op>.jsonl with a "
                                   "manifest per profile.")
    vsub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    g = vsub.add_parser("generate", help="write the vectors (deterministic)",
                        description="Write every registered op's vectors: golden values of the "
                                    "real Crucible, edge cases, invalid inputs and seeded "
                                    "hypothesis draws. Two runs give byte-identical files.")
    g.add_argument("--out", metavar="DIR", help="root directory (default: the bundled suite); "
                                                "files no op writes are deleted only from "
                                                "DIR/<profile> when it is new or holds a "
                                                "manifest")
    g.add_argument("--profile", action="append", help="profile (repeatable; default: all "
                                                      "that differ)")
    g.add_argument("--count", type=positive_int, default=32,
                   help="generated cases per op (default 32)")
    g.set_defaults(func=run_generate)
    v = vsub.add_parser("verify", help="check files against the manifest and the reference",
                        description="Check every vector file against its manifest (sha256, "
                                    "count), every case against the reference, and that every "
                                    "registered op has vectors. Exit 1 on any problem.")
    v.add_argument("--dir", metavar="DIR", help="root directory (default: the bundled suite)")
    v.add_argument("--profile", action="append", help="profile (repeatable)")
    v.set_defaults(func=run_verify)

