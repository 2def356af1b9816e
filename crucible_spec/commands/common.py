"""Helpers shared by the subcommands: usage errors, values checked at parse time, reading a
user-named input (recognised by its magic), profile and op selection, and writing a user-named
output file whole or not at all."""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import math
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO

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


def integer(text: str, least: int, most: int | None = None) -> int:
    """An integer written as 100000, 100_000 or 1e5, from `least` to `most` (an argparse
    type's check)."""
    try:
        value: int | None = int(text)
    except ValueError:
        try:
            f = float(text)
        except ValueError:
            f = math.nan
        value = int(f) if f.is_integer() else None
    if value is None or value < least:
        raise argparse.ArgumentTypeError(f"expected an integer >= {least}, got {text!r}")
    if most is not None and value > most:
        raise argparse.ArgumentTypeError(f"{text} is out of range: it must be at most {most}")
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
    """The bytes of a user-named input file, or a UsageError naming it. A FIFO is read as
    far as its writer writes, and as empty when none has it open (rather than waiting for one
    for ever)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:
            return f.read()
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
    from ..spec.core.errata import profile_errata as lookup

    try:
        return lookup(name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def select_ops(patterns: list[str] | None, keep=lambda op: True) -> list:
    """Registered ops matching any glob (all when none is given), sorted by name."""
    from ..spec.core.registry import REGISTRY

    ops = [op for name, op in sorted(REGISTRY.ops.items()) if keep(op)
           and (not patterns or any(fnmatch.fnmatch(name, p) for p in patterns))]
    if not ops:
        raise UsageError(f"no op matches {' '.join(patterns or [])} (see 'crucible-spec ops')")
    return ops


STDOUT = "-"
"""The output path that means standard output, where a command's format allows it."""

SPECIAL = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
           stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}
"""What a non-regular output target is, by its file type."""


def check_output(path: str | Path, force: bool, stdout_ok: bool = False) -> None:
    """Refuse an output path that exists and is not a regular file (a directory, FIFO, device or
    socket: even with `force`), one whose directory does not exist, an existing file unless
    `force`, and '-' unless `stdout_ok`."""
    if str(path) == STDOUT:
        if not stdout_ok:
            raise UsageError("this output cannot go to standard output ('-'): name a file")
        return
    target = Path(path)
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise UsageError(f"cannot write {target}: {e.strerror or e}") from None
    if mode is not None and not stat.S_ISREG(mode):
        what = SPECIAL.get(stat.S_IFMT(mode), "not a regular file")
        raise UsageError(f"{target} is {what}, not an output file: it is never replaced")
    if not target.parent.is_dir():
        raise UsageError(f"cannot write {target}: directory {target.parent} does not exist")
    if os.path.lexists(target) and not force:
        raise UsageError(f"{target} exists; pass --force to replace it")


def output_stream(path: str | Path) -> TextIO:
    """Where a command's messages go when it writes `path`: stderr when the output itself is
    standard output, else stdout."""
    return sys.stderr if str(path) == STDOUT else sys.stdout


def check_output_dir(path: str | Path) -> None:
    """Refuse an output directory that is an existing file, or whose parent does not exist."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} is a file, not an output directory")
    if not target.exists() and not target.resolve().parent.is_dir():
        raise UsageError(f"cannot write {target}: directory {target.resolve().parent} "
                         "does not exist")


def write_output(path: str | Path, data: bytes, force: bool, stdout_ok: bool = False) -> None:
    """Write `data` to `path` whole or not at all, as write_chunks does."""
    write_chunks(path, [data], force, len(data), stdout_ok=stdout_ok)


def write_chunks(path: str | Path, chunks: Iterable[bytes | memoryview], force: bool,
                 size: int | None = None, progress: Callable[[int], None] = lambda done: None,
                 stdout_ok: bool = False) -> int:
    """Write the chunks in order to `path` (checked by check_output; '-' is stdout where
    `stdout_ok`) through a temporary file in its directory renamed over it once complete, so a
    reader sees the old file or the new one, never a part; the temporary is removed on any
    exit, SIGTERM and SIGHUP included. `size`, when known, is checked against the free space
    first; the file gets the mode the umask gives. `progress` gets the bytes written so far
    after each chunk. Returns the size."""
    check_output(path, force, stdout_ok)
    if str(path) == STDOUT:
        return _to_stdout(chunks, progress)
    target = Path(path)
    if size is not None:
        _check_space(target, size)
    tmp = None
    with _signals_exit():
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                       dir=target.parent)
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as out:
                written = 0
                for chunk in chunks:
                    written += out.write(chunk)
                    progress(written)
                out.flush()
                os.fsync(out.fileno())
            check_output(target, force)
            os.replace(tmp, target)
        except BaseException as e:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            if isinstance(e, OSError):
                raise UsageError(f"cannot write {target}: {e.strerror or e}") from None
            raise
    return written


def _to_stdout(chunks: Iterable[bytes | memoryview], progress: Callable[[int], None]) -> int:
    """The chunks written to standard output's bytes; returns the size."""
    sys.stdout.flush()
    out, written = sys.stdout.buffer, 0
    for chunk in chunks:
        written += out.write(chunk)
        progress(written)
    out.flush()
    return written


def _check_space(target: Path, size: int) -> None:
    """Refuse a write of `size` bytes that the target's file system has no room for."""
    try:
        free = shutil.disk_usage(target.parent).free
    except OSError:
        return
    if size > free:
        raise UsageError(f"cannot write {target}: it needs {size} bytes and its file system has "
                         f"{free} free")


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class Terminated(SystemExit):
    """SIGTERM or SIGHUP while a file was being written: exit 128 + the signal's number."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(128 + signum)


@contextlib.contextmanager
def _signals_exit() -> Iterator[None]:
    """While a file is written, SIGTERM and SIGHUP raise Terminated (so the temporary file is
    removed on the way out) instead of ending the process on the spot; outside the main
    thread, signals cannot be caught and nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = (signal.SIGTERM, signal.SIGHUP)
    previous = {s: signal.signal(s, _raise_terminated) for s in wanted}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
