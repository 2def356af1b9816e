"""torch equivalents of the elementwise kernels."""

from __future__ import annotations

import numpy as np

from . import equivalent


def _t(a: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32).reshape(np.shape(a)))


@equivalent("kernel.add")
def add(a, b) -> dict:
    reps = a.size // b.size if b.size else 0
    tiled = _t(b.reshape(-1)).repeat(reps + 1)[: a.size] if a.size else _t(b.reshape(-1))
    return {"c": (_t(a.reshape(-1)) + tiled).numpy().reshape(a.shape)}


@equivalent("kernel.sub")
def sub(a, b) -> dict:
    return {"c": (_t(a) - _t(b)).numpy()}


@equivalent("kernel.mul")
def mul(a, b) -> dict:
    return {"c": (_t(a) * _t(b)).numpy()}


@equivalent("kernel.relu", order="torch's relu keeps a NaN, where the seed gives +0")
def relu(a) -> dict:
    import torch

    return {"c": torch.relu(_t(a)).numpy()}


@equivalent("kernel.relu_bwd")
def relu_bwd(grad, input) -> dict:
    import torch

    return {"c": torch.ops.aten.threshold_backward(_t(grad), _t(input), 0.0).numpy()}


@equivalent("kernel.gelu")
def gelu(a) -> dict:
    """torch's exact gelu: x * 0.5 * (1 + erf(x * (float)M_SQRT1_2)), the seed's sequence, with
    torch's own vectorised erf."""
    import torch

    return {"c": torch.nn.functional.gelu(_t(a)).numpy()}


@equivalent("kernel.sigmoid")
def sigmoid(a) -> dict:
    """torch: (1 + exp(-x)).reciprocal(), one division: the seed's sequence, torch's exp."""
    import torch

    return {"c": torch.sigmoid(_t(a)).numpy()}


@equivalent("kernel.silu", order="torch divides x by 1 + exp(-x) (the seed multiplies x by "
            "the reciprocal) with its own vectorised exp")
def silu(a) -> dict:
    import torch

    return {"c": torch.nn.functional.silu(_t(a)).numpy()}


@equivalent("kernel.fill")
def fill(shape, value) -> dict:
    import torch

    bits = torch.full(tuple(shape), value - (1 << 32) if value >= 1 << 31 else value,
                      dtype=torch.int32)
    return {"c": bits.view(torch.float32).numpy()}


@equivalent("kernel.transpose_2d")
def transpose_2d(x) -> dict:
    return {"y": _t(x).transpose(1, 2).contiguous().numpy()}


@equivalent("kernel.index_select")
def index_select(x, idx) -> dict:
    return {"y": _t(x)[:, idx, :].contiguous().numpy()}
