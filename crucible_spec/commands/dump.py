"""`crucible-spec dump`: a readable listing of a .crtrace, a CDAG node or a Cipher store."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from .common import UsageError, profile_errata, read_input, sniff

_RANGE = re.compile(r"^(-?\d*):(-?\d*)$")


def op_range(text: str) -> slice:
    """An argparse type: a Python-style half-open op range `a:b` (either end may be left
    out), or a single op index `a`."""
    if text.isdigit():
        return slice(int(text), int(text) + 1)
    m = _RANGE.match(text)
    if m is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an op range like 3:5, :10 or 100:")
    start, stop = (int(x) if x else None for x in m.groups())
    return slice(start, stop)


def run(args: argparse.Namespace) -> int:
    from ..conformance.dump import dump_cdag, dump_cipher, dump_trace, is_cipher_store
    from ..conformance.trace_fields import TraceFile
    from ..spec.core.errors import InvalidInput

    errata = profile_errata(args.profile)
    if is_cipher_store(Path(args.file)):
        try:
            for line in dump_cipher(Path(args.file), args.json, errata):
                print(line)
        except (InvalidInput, UnicodeDecodeError, ValueError) as e:
            raise UsageError(f"{args.file} is not a readable Cipher store: "
                             f"{getattr(e, 'message', e)}") from None
        return 0
    data = read_input(args.file)
    kind = sniff(data)
    ops = args.ops
    try:
        if kind == "crtrace":
            lines = dump_trace(TraceFile.read(data, errata), ops, args.json)
        elif kind == "cdag":
            lines = dump_cdag(data, ops, args.json, errata)
        else:
            raise UsageError(f"{args.file} is neither a .crtrace nor a CDAG node (its first "
                             f"bytes are {data[:4].hex() or 'empty'}, not 'CRTR' or 'GADC')")
        for line in lines:
            print(line)
    except InvalidInput as e:
        raise UsageError(f"{args.file} is not a valid {kind} file: {e.message}") from None
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "dump", help="readable listing of a .crtrace, CDAG node or Cipher store",
        description="List a binary file the spec reads, recognised by its magic: a .crtrace "
                    "(header; per op its index, name from the name table, schema, shape, scope "
                    "and callsite hashes, grad and flags, scalars, and each input's and "
                    "output's dtype, sizes, strides, device and pointer) or a CDAG region or "
                    "branch node (its decoded fields, then its ops); or, given a directory laid "
                    "out as a Cipher checkpoint store (objects/, HEAD, log), its head, its log "
                    "and each stored region. Exit 2 if FILE is none of these or does not "
                    "load.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--ops", type=op_range, default=slice(None), metavar="A:B",
                   help="only ops A..B-1 (Python slice syntax: 3:5, :10, 100:, -5:, or one "
                        "index)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per line: the header, then each op")
    p.add_argument("--profile", default="crucible", help="errata profile (default crucible)")
    p.set_defaults(func=run)
