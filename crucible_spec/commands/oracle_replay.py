"""`oracle replay`: where and why replay of a new stream leaves compiled mode."""

from __future__ import annotations

import argparse
import json

from .common import UsageError, count, profile_errata


def run_replay(args: argparse.Namespace) -> int:
    from ..conformance.oracle_replay import SourceError, load_regions, load_stream, replay_report

    errata = profile_errata(args.profile)
    try:
        regions = load_regions(args.recording, errata)
        stream = load_stream(args.stream, errata)
        region = len(regions) - 1 if args.region is None else args.region
        report = replay_report(regions, region, stream, errata)
    except SourceError as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.describe())
    return 1 if report.left_compiled else 0


def add_actions(osub) -> None:
    """Add this action to the `oracle` sub-parsers."""
    r = osub.add_parser(
        "replay", help="where and why replay of a new stream leaves compiled mode",
        description="Publish a recorded region to the spec's Vigil, dispatch a new op stream "
                    "and report where replay leaves compiled mode: the op index, the region op "
                    "it met, the guard that failed (schema, shape, scope or callsite, as the "
                    "profile checks them), expected and got hashes, and whether a cached "
                    "alternate was tried. RECORDING is a .crtrace (its background pipeline's "
                    "regions) or JSON: a region {ops, plan?}, vigil.dispatch args ({regions, "
                    "recordings}, or a whole request), or recorded ops with inputs/outputs. "
                    "STREAM is a .crtrace or a JSON list of ops (or {stream: [...]}). Exit 1 "
                    "if replay leaves compiled mode.")
    r.add_argument("recording", metavar="RECORDING")
    r.add_argument("stream", metavar="STREAM")
    r.add_argument("--region", type=count, default=None,
                   help="which region of the recording (default: the last one published)")
    r.add_argument("--profile", default="crucible", help="errata profile (default crucible)")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.set_defaults(func=run_replay)
