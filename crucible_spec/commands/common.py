"""Helpers shared by the subcommands: usage errors, values checked at parse time, reading a
user-named input (recognised by its magic), profile and op selection, and writing a user-named
output file whole or not at all."""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

STATE_DIR = Path(".crucible-spec")


class UsageError(Exception):
    """A user mistake: reported as one line on stderr, exit status 2, no traceback."""


def _number(kind, text: str, lowest, inclusive: bool):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value != value or value < lowest or (value == lowest and not inclusive):
        bound = f">= {lowest}" if inclusive else f"> {lowest}"
        raise argparse.ArgumentTypeError(f"{text} is out of range: it must be {bound}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    return _number(int, text, 1, True)


def count(text: str) -> int:
    """An argparse type: an integer of at least 0."""
    return _number(int, text, 0, True)


def seconds(text: str) -> float:
    """An argparse type: a duration in seconds, greater than 0."""
    return _number(float, text, 0.0, False)


def percent(text: str) -> float:
    """An argparse type: a percentage, 0 to 100."""
    value = _number(float, text, 0.0, True)
    if value > 100:
        raise argparse.ArgumentTypeError(f"{text} is out of range: a percentage is at most 100")
    return value


def read_input(path: str | Path) -> bytes:
    """The bytes of a user-named input file, or a UsageError naming it."""
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None


MAGICS = {b"CRTR": "crtrace", b"GADC": "cdag"}
"""The first four bytes of each binary file we read, and its kind ('GADC' is the CDAG magic
0x43444147 stored little-endian)."""


def sniff(data: bytes) -> str | None:
    """The kind of a binary file by its magic ('crtrace', 'cdag'), or None."""
    return MAGICS.get(data[:4])


KIND_NAMES = {"crtrace": "a .crtrace (magic 'CRTR')", "cdag": "a CDAG node (magic 'GADC')"}


def what_is(data: bytes) -> str:
    """What a file holds, for an error saying why it is not what a command reads: empty, a
    binary format named by its magic, text, or other binary data (its first bytes)."""
    if not data:
        return "empty"
    kind = sniff(data)
    if kind is not None:
        return KIND_NAMES[kind]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return f"binary data (its first bytes are {data[:4].hex()})"
    return "text" if data.strip() else "blank"


def read_crtrace(path: str | Path) -> bytes:
    """The bytes of a user-named .crtrace, or a UsageError when it cannot be read or its
    magic is not 'CRTR'."""
    data = read_input(path)
    if sniff(data) != "crtrace":
        raise UsageError(f"{path} is not a .crtrace (its first bytes are "
                         f"{data[:4].hex() or 'empty'}, not 'CRTR')")
    return data


def profile_errata(name: str) -> frozenset[str]:
    from ..spec.errata import profile_errata as lookup

    try:
        return lookup(name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def select_ops(patterns: list[str] | None, keep=lambda op: True) -> list:
    """Registered ops matching any glob (all when none is given), sorted by name."""
    from ..spec.registry import REGISTRY

    ops = [op for name, op in sorted(REGISTRY.ops.items()) if keep(op)
           and (not patterns or any(fnmatch.fnmatch(name, p) for p in patterns))]
    if not ops:
        raise UsageError(f"no op matches {' '.join(patterns or [])} (see 'crucible-spec ops')")
    return ops


def check_output(path: str | Path, force: bool) -> None:
    """Refuse an output path that is a directory, one whose directory does not exist, or an
    existing file unless `force`."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{target} is a directory, not an output file")
    if not target.parent.is_dir():
        raise UsageError(f"cannot write {target}: directory {target.parent} does not exist")
    if target.exists() and not force:
        raise UsageError(f"{target} exists; pass --force to replace it")


def check_output_dir(path: str | Path) -> None:
    """Refuse an output directory that is an existing file, or whose parent does not exist."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} is a file, not an output directory")
    if not target.exists() and not target.resolve().parent.is_dir():
        raise UsageError(f"cannot write {target}: directory {target.resolve().parent} "
                         "does not exist")


def write_output(path: str | Path, data: bytes, force: bool) -> None:
    """Write `data` to `path` through a temporary file in the same directory, renamed over the
    path once complete, so a reader sees the old file or the new one, never a part; an
    existing file is replaced only when `force`."""
    write_chunks(path, [data], force)


def write_chunks(path: str | Path, chunks: Iterable[bytes | memoryview], force: bool) -> int:
    """write_output of the chunks' bytes in order, each written as it comes; returns the size."""
    check_output(path, force)
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                   dir=target.parent)
    except OSError as e:
        raise UsageError(f"cannot write {target}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            size = sum(out.write(chunk) for chunk in chunks)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise UsageError(f"cannot write {target}: {e.strerror or e}") from None
        raise
    return size
