"""Helpers shared by the subcommands: usage errors, profile and op selection, progress."""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

STATE_DIR = Path(".crucible-spec")


class UsageError(Exception):
    """A user mistake: reported as one line on stderr, exit status 2, no traceback."""


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


class Progress:
    """A one-line progress indicator on stderr, shown only when stderr is a terminal."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()

    def __call__(self, message: str) -> None:
        if self.tty:
            print(f"\r{message[:70]}".ljust(72), end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.tty:
            print("\r".ljust(72) + "\r", end="", file=sys.stderr, flush=True)
