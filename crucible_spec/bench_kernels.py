"""What a user would pick instead of chapter 12's kernels: numpy and torch (CPU) on the same
bench inputs, timed beside the kernels by `crucible-spec bench` (not bit-exact with the spec:
they sum in their own orders and use their own exp)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .bench import Baseline


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _numpy(fn: Callable) -> Callable[[int, list[dict]], Callable[[], object]]:
    return lambda n, items: (lambda: [fn(**it) for it in items])


def _with_torch(fn: Callable) -> Callable[[int, list[dict]], Callable[[], object] | None]:
    def make(n: int, items: list[dict]) -> Callable[[], object] | None:
        torch = _torch()
        if torch is None:
            return None
        args = [{k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                 for k, v in it.items()} for it in items]
        return lambda: [fn(torch, **a) for a in args]

    return make


KERNEL_BASELINES: dict[str, tuple[Baseline, ...]] = {
    "kernel.add": (
        Baseline("numpy a + b", None, _numpy(lambda a, b: a + b)),
        Baseline("torch a + b", None, _with_torch(lambda t, a, b: a + b)),
    ),
}
"""Per kernel op, its library equivalents (torch's only where torch is installed)."""
