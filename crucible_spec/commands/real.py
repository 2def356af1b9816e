"""`crucible-spec real`: fill the real-code vectors from a seed's adapter, and check the faithful
profiles against them."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from . import console
from .common import UsageError, check_output_dir, positive_int, profile_errata, select_ops


def _client(command: str, timeout: float):
    from ..conformance.client import Client

    argv = shlex.split(command)
    if not argv:
        raise UsageError("--impl needs a command")
    return Client(argv, timeout=timeout, first_timeout=max(timeout, 60.0), window=1)


def _greet(client, profile: str) -> dict:
    """The adapter's hello, which must name the profile being filled."""
    from ..conformance.client import OK

    reply = client.request(0, "hello", {})
    if reply.kind != OK or reply.response.get("ok") is not True:
        raise UsageError(f"the implementation did not answer hello: "
                         f"{reply.detail or reply.response}")
    greeting = reply.response["result"]
    if greeting.get("profile") != profile:
        raise UsageError(f"the implementation says it is profile {greeting.get('profile')!r}, "
                         f"not {profile!r}")
    return greeting


def run_fill(args: argparse.Namespace) -> int:
    from ..conformance import real_vectors

    profile_errata(args.profile)
    root = Path(args.out) if args.out else real_vectors.REAL_DIR
    check_output_dir(root)
    client = _client(args.impl, args.timeout)
    try:
        greeting = _greet(client, args.profile)
        answered = set(greeting.get("ops", []))
        ops = select_ops(args.ops, lambda op: op.name in answered)
        filled = []
        with console.steps(f"real {args.profile}", len(ops)) as bar:
            for op in ops:
                filled.append(real_vectors.fill_op(client, op, args.count))
                bar.step(op.name)
    finally:
        client.close()
    seed = {"impl": greeting.get("impl"), "build": greeting.get("build")}
    command = (f"crucible-spec real fill --profile {args.profile} --impl ADAPTER "
               f"--count {args.count}" + "".join(f" --ops {p}" for p in args.ops or []))
    real_vectors.write(root, args.profile, filled, seed, command, args.count)
    rows = [(f.op.name, len(f.cases), sum(f.unsupported.values()), sum(f.failed.values()))
            for f in filled]
    console.print_table(("op", "cases", "unsupported", "failed"), rows,
                        title=f"real vectors of {args.profile} -> {root / args.profile}")
    for f in filled:
        for why, n in sorted(f.failed.items()):
            print(f"{f.op.name}: {n} not answered: {why}", file=sys.stderr)
    return 1 if any(f.failed for f in filled) else 0


def run_check(args: argparse.Namespace) -> int:
    from ..conformance import real_vectors

    root = Path(args.dir) if args.dir else real_vectors.REAL_DIR
    profiles = args.profile or real_vectors.real_profiles(root)
    if not profiles:
        raise UsageError(f"no real-code vectors under {root}")
    bad = 0
    for profile in profiles:
        profile_errata(profile)
        if not (root / profile / "manifest.json").is_file():
            raise UsageError(f"no real-code vectors for {profile} under {root}")
        total = len(real_vectors.load(profile, root))
        for backend in args.impl or ["reference"]:
            found = real_vectors.check(profile, backend, root)
            bad += len(found)
            print(f"{profile} [{backend}]: {total - len(found)} of {total} real cases agree")
            for m in found[:args.show]:
                print(f"  {m.describe()}")
        explained, unexplained = real_vectors.explain(profile, root)
        bad += len(unexplained)
        print(f"{profile} [default profile]: differs on {len(explained) + len(unexplained)}, "
              f"{len(unexplained)} of them explained by no erratum")
        for m in unexplained[:args.show]:
            print(f"  {m.describe()}")
    return 1 if bad else 0


def add_parser(sub) -> None:
    p = sub.add_parser("real", help="real-code vectors: fill them from a seed, check against them",
                       description="Real-code vectors live in conformance/real-vectors/<profile>/"
                                   "<chapter>/<op>.jsonl with a manifest of their provenance. "
                                   "`fill` asks a wire-protocol adapter of a seed's real code; "
                                   "`check` compares the faithful profile with them.")
    rsub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    f = rsub.add_parser("fill", help="answer the cases of a profile by a seed's real code",
                        description="For each op the adapter's hello lists (and --ops selects): "
                                    "the bundled suite's cases (golden values, erratum "
                                    "witnesses, edges, invalid draws) and COUNT seeded draws "
                                    "from the op's domain, each answered by the adapter. "
                                    "Answers 'unsupported' are left out and counted. Exit 1 if "
                                    "the adapter crashed or hung on any case.")
    f.add_argument("--profile", required=True, help="the seed's faithful profile, which the "
                                                    "adapter's hello must name")
    f.add_argument("--impl", required=True, metavar="CMD", help="the adapter's command")
    f.add_argument("--ops", action="append", metavar="GLOB", help="only these ops (repeatable)")
    f.add_argument("--count", type=positive_int, default=300,
                   help="draws from each op's domain (default 300)")
    f.add_argument("--timeout", type=float, default=30.0,
                   help="seconds to wait for each answer (default 30)")
    f.add_argument("--out", metavar="DIR", help="root directory (default: the bundled "
                                                "real-code vectors)")
    f.set_defaults(func=run_fill)
    c = rsub.add_parser("check", help="check faithful profiles against the real-code vectors",
                        description="Every real case must be answered by the profile exactly as "
                                    "the real code answered it, and every case the default "
                                    "profile answers otherwise must be explained by an erratum "
                                    "of the profile on that op. Exit 1 on any mismatch.")
    c.add_argument("--profile", action="append", help="profile (repeatable; default: all)")
    c.add_argument("--impl", action="append", choices=("reference", "numba", "cupy"),
                   help="backend (repeatable; default: reference)")
    c.add_argument("--dir", metavar="DIR", help="root directory (default: the bundled set)")
    c.add_argument("--show", type=positive_int, default=10,
                   help="mismatches to print per profile and backend (default 10)")
    c.set_defaults(func=run_check)
