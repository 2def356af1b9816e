"""PyTorch equivalents of chapter 12's kernels, for differential checks (`torch` extra).

Each `TorchEquivalent` computes an op's result fields with torch on CPU from the op's decoded
arguments. `order` says whether torch evaluates every output element with the spec's own
sequence of binary32 operations ("same"), or why it does not (a reduction order, a different
libm): where it is "same", the op's envelope must cover the measured distance.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..spec.core.f32_tensor import ulp_distances

SAME = "same"


@dataclass(frozen=True)
class TorchEquivalent:
    """How torch computes op `op`: decoded args -> {result field: float32 array}."""

    op: str
    call: Callable[..., dict[str, np.ndarray]]
    order: str = SAME


EQUIVALENTS: dict[str, TorchEquivalent] = {}


def equivalent(op: str, order: str = SAME) -> Callable[[Callable], Callable]:
    """Register `fn(**args)` as torch's way of computing `op`."""

    def deco(fn: Callable) -> Callable:
        if op in EQUIVALENTS:
            raise ValueError(f"{op}: torch equivalent registered twice")
        EQUIVALENTS[op] = TorchEquivalent(op, fn, order)
        return fn

    return deco


def load() -> dict[str, TorchEquivalent]:
    """Every registered equivalent (imports this package's modules, and so torch)."""
    for info in pkgutil.iter_modules(__path__, f"{__name__}."):
        importlib.import_module(info.name)
    return EQUIVALENTS


def largest_ulps(spec: dict[str, np.ndarray], torch_result: dict[str, np.ndarray]) -> float:
    """The largest per-element ulp distance over every result field (shapes must agree)."""
    worst = 0.0
    for name, want in spec.items():
        want = np.asarray(want, dtype=np.float32)
        got = np.asarray(torch_result[name], dtype=np.float32)
        if want.shape != got.shape:
            raise ValueError(f"{name}: torch shape {got.shape}, spec shape {want.shape}")
        if want.size:
            worst = max(worst, float(np.max(ulp_distances(want, got))))
    return worst
