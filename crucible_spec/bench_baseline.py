"""A bench baseline: what a user would run instead of an op's kernel, timed beside it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Baseline:
    """A comparison point for an op at n items: `make(n, items)` prepares (untimed) and returns
    the callable that is timed, on the op's own bench items or on n of its own; it produces
    `nbytes(n)` bytes, as the op's kernel does, or (nbytes None) the op's result another way:
    what a user would pick instead, shown as seconds and the kernel's time over its own."""

    name: str
    nbytes: Callable[[int], int] | None
    make: Callable[[int, list[dict]], Callable[[], object] | None]
