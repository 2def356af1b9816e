"""torch equivalents of the elementwise kernels."""

from __future__ import annotations

import numpy as np

from . import equivalent


def _t(a: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


@equivalent("kernel.add")
def add(a, b) -> dict:
    reps = a.size // b.size if b.size else 0
    tiled = _t(b.reshape(-1)).repeat(reps + 1)[: a.size] if a.size else _t(b.reshape(-1))
    return {"c": (_t(a.reshape(-1)) + tiled).numpy().reshape(a.shape)}
