"""`crucible-spec serve`: the wire protocol on stdin/stdout."""

from __future__ import annotations

import argparse
import sys

from .common import profile_errata

MOST_LINE_BYTES = 1 << 40
"""The largest --max-line-bytes (1 TiB): a line is read into memory whole."""


def _positive(text: str) -> int:
    value = int(text)
    if not 1 <= value <= MOST_LINE_BYTES:
        raise argparse.ArgumentTypeError(f"must be in 1..{MOST_LINE_BYTES}")
    return value


def run(args: argparse.Namespace) -> int:
    from ..conformance.serve import MAX_LINE_BYTES, serve
    from ..engine import Implementation

    impl = Implementation(args.impl, profile_errata(args.profile))
    return serve(impl, args.profile, sys.stdin.buffer, sys.stdout,
                 args.max_line_bytes or MAX_LINE_BYTES, batch=not args.no_batch)


def layers(args: argparse.Namespace) -> tuple[str, ...]:
    """What serving needs registered: the ops and their references, and the chosen backend's
    kernels; not the proof obligations nor the other backend (start-up stays short)."""
    return ("spec", "reference") + (() if args.impl == "reference" else (f"fast.{args.impl}",))


def add_parser(sub) -> None:
    p = sub.add_parser(
        "serve", help="answer wire-protocol requests on stdin",
        description="Read one JSON request per line on stdin and write one JSON response per "
                    "line on stdout: {\"id\", \"op\", \"args\"} -> {\"id\", \"ok\", \"result\"} "
                    "or {\"id\", \"ok\": false, \"error\": {\"code\", \"message\"}}. "
                    "{\"id\": 0, \"op\": \"hello\", \"args\": {}} describes the server "
                    "and declares the batch form: {\"id\", \"op\", \"batch\": [args, ...]} "
                    "-> {\"id\", \"ok\": true, \"results\": [{\"ok\", \"result\" or "
                    "\"error\"}, ...]}, one per item, each what the item gets alone. "
                    "Args are checked against the op's JSON Schema (crucible-spec ops --json): "
                    "a malformed one is bad_request or invalid_input naming the field. "
                    "Exits 0 at end of input.")
    p.add_argument("--impl", default="reference", choices=["reference", "numba", "cupy"],
                   help="implementation answering the ops (default: reference)")
    p.add_argument("--profile", default="crucible",
                   help="errata profile (default: crucible, the intended behaviour)")
    p.add_argument("--max-line-bytes", type=_positive, metavar="N",
                   help="answer a longer request line bad_request without reading it whole "
                        "(default: 64 MiB)")
    p.add_argument("--no-batch", action="store_true",
                   help="serve the single-line protocol only: hello does not declare the batch "
                        "form, and a batch request is bad_request")
    p.set_defaults(func=run, layers=layers)
