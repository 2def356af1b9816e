"""`crucible-spec vectors`: generate, verify and export the conformance vectors."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import console
from .common import UsageError, check_output_dir, positive_int, profile_errata, write_output


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


def run_export(args: argparse.Namespace) -> int:
    from ..conformance import vectors

    root = Path(args.dir) if args.dir else vectors.VECTORS_DIR
    out = Path(args.out)
    check_output_dir(out)
    if out.is_dir() and any(out.iterdir()) and not args.force:
        raise UsageError(f"{out} is not empty; pass --force to write into it")
    if out.resolve() == root.resolve():
        raise UsageError(f"{out} holds the stored suites: export to another directory")
    for profile in _profiles(args.profile):
        try:
            complete = vectors.export(root, profile, out,
                                      lambda path, data: write_output(path, data, force=True))
        except (OSError, ValueError) as e:
            raise UsageError(str(e)) from None
        total = sum(f["count"] for f in complete.manifest["files"].values())
        print(f"{profile}: {len(complete.files)} ops, {total} cases -> {out / profile}")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from ..conformance import vector_store, vectors

    root = Path(args.dir) if args.dir else vectors.VECTORS_DIR
    problems = []
    chosen = _profiles(args.profile)
    for profile in chosen:
        found = vectors.verify(root, profile, base_verified=vector_store.BASE_PROFILE in chosen)
        problems += found
        print(f"{profile}: {'ok' if not found else f'{len(found)} problems'}")
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


def add_parser(sub) -> None:
    p = sub.add_parser("vectors", help="generate, verify or export the conformance vectors",
                       description="Conformance vectors: the default profile's suite lives in "
                                   "conformance/vectors/crucible/<chapter>/<op>.jsonl with a "
                                   "manifest; every other profile in conformance/vectors/"
                                   "<profile>/ as an overlay on it (overlay.json lists the "
                                   "cases it replaces). 'export' writes a profile's complete "
                                   "suite.")
    vsub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    g = vsub.add_parser("generate", help="write the vectors (deterministic)",
                        description="Write every registered op's vectors: golden values of the "
                                    "real Crucible, edge cases, invalid inputs and seeded "
                                    "hypothesis draws. Two runs give byte-identical files. "
                                    "The default profile is written whole (first, where DIR "
                                    "has none), any other as an overlay on it.")
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
    e = vsub.add_parser("export", help="write profiles' complete suites, flat",
                        description="Write each profile's complete suite, default and overlay "
                                    "merged, to DIR/<profile>/<chapter>/<op>.jsonl with its "
                                    "manifest.json: the flat layout an implementer runs.")
    e.add_argument("--out", metavar="DIR", required=True,
                   help="root directory; refused when it exists and is not empty, unless "
                        "--force")
    e.add_argument("--profile", action="append", help="profile (repeatable; default: all "
                                                      "that differ)")
    e.add_argument("--dir", metavar="DIR", help="where the stored suites are (default: the "
                                                "bundled suite)")
    e.add_argument("--force", action="store_true",
                   help="write into a non-empty DIR (files of the same name are replaced)")
    e.set_defaults(func=run_export)

