"""What a user would pick instead of chapter 12's kernels: numpy, and torch (CPU) through the
op's torch equivalent, on the same bench inputs, timed beside the kernels by
`crucible-spec bench`. Neither is bit-exact with the spec: both sum in their own orders and use
their own exp."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .bench_baseline import Baseline

Instead = Callable[[int, list[dict]], Callable[[], object] | None]


def _numpy(fn: Callable) -> Instead:
    return lambda n, items: (lambda: [fn(**it) for it in items])


def _torch(op: str) -> Instead:
    """The op's torch equivalent (conversions from and to numpy included), if torch is here."""

    def make(n: int, items: list[dict]) -> Callable[[], object] | None:
        try:
            from .torch_diff import load
        except ImportError:
            return None
        try:
            call = load()[op].call
        except (ImportError, KeyError):
            return None
        return lambda: [call(**it) for it in items]

    return make


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _layer_norm(x, gamma, beta, eps) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    e = np.uint32(eps).view(np.float32)
    return (x - mean) / np.sqrt(var + e) * gamma + beta


def _sdpa(q, k, v) -> np.ndarray:
    scale = np.float32(1.0) / np.sqrt(np.float32(q.shape[-1]))
    return _softmax(q @ k.transpose(0, 2, 1) * scale) @ v


NUMPY: dict[str, Callable] = {
    "kernel.add": lambda a, b: a + b,
    "kernel.sub": lambda a, b: a - b,
    "kernel.mul": lambda a, b: a * b,
    "kernel.relu": lambda a: np.maximum(a, np.float32(0)),
    "kernel.sigmoid": lambda a: np.float32(1) / (np.float32(1) + np.exp(-a)),
    "kernel.silu": lambda a: a / (np.float32(1) + np.exp(-a)),
    "kernel.mm": lambda a, b: a @ b,
    "kernel.sdpa": _sdpa,
    "kernel.softmax": _softmax,
    "kernel.layer_norm": _layer_norm,
    "kernel.avgpool_global": lambda x: x.mean(axis=-1),
    "kernel.transpose_2d": lambda x: np.ascontiguousarray(x.transpose(0, 2, 1)),
}
"""numpy formulations (float32 throughout) of the kernels that have an obvious one."""

TORCH_OPS = ("kernel.add", "kernel.sub", "kernel.mul", "kernel.relu", "kernel.gelu",
             "kernel.sigmoid", "kernel.silu", "kernel.mm", "kernel.conv2d", "kernel.sdpa",
             "kernel.softmax", "kernel.layer_norm", "kernel.batch_norm", "kernel.maxpool2d",
             "kernel.avgpool_global", "kernel.cross_entropy", "kernel.transpose_2d")

KERNEL_BASELINES: dict[str, tuple[Baseline, ...]] = {
    op: tuple(b for b in (
        Baseline("numpy", None, _numpy(NUMPY[op])) if op in NUMPY else None,
        Baseline("torch", None, _torch(op)) if op in TORCH_OPS else None) if b is not None)
    for op in sorted(set(NUMPY) | set(TORCH_OPS))
}
"""Per kernel op, its library equivalents (torch's only where torch is installed)."""
