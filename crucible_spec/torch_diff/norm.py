"""torch equivalents of the normalisation and pooling kernels. cross_entropy's loss comes back
as a float32 value (a 0-d array), not as bits: compare it with the spec's bits decoded."""

from __future__ import annotations

import numpy as np

from ..spec.crucible.cpu_kernels_norm import f32_of_bits
from . import equivalent

SUMS = "reduction order: torch sums in vectorised blocks, not one ordered loop"


def _t(a: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


def _np(t) -> np.ndarray:
    return t.detach().numpy().astype(np.float32)


@equivalent("kernel.softmax", order="torch's own vectorised exp, and its sums in blocks")
def softmax(x) -> dict:
    import torch.nn.functional as F

    return {"y": _np(F.softmax(_t(x), dim=-1)) if x.size else np.empty(x.shape, np.float32)}


@equivalent("kernel.layer_norm", order=SUMS)
def layer_norm(x, gamma, beta, eps) -> dict:
    import torch.nn.functional as F

    d = x.shape[1]
    return {"y": _np(F.layer_norm(_t(x), (d,), _t(gamma), _t(beta),
                                  float(f32_of_bits(eps))))}


@equivalent("kernel.batch_norm", order=SUMS)
def batch_norm(x, gamma, beta, eps) -> dict:
    import torch.nn.functional as F

    return {"y": _np(F.batch_norm(_t(x), None, None, _t(gamma), _t(beta), training=True,
                                  eps=float(f32_of_bits(eps))))}


@equivalent("kernel.maxpool2d")
def maxpool2d(x, k) -> dict:
    """The same comparisons in the same order, so the same bits, for inputs without NaN: the
    seed's scan from -inf never takes a NaN, while torch's max pooling propagates it."""
    import torch.nn.functional as F

    n, c, h, w = x.shape
    if n * c * (h // k) * (w // k) == 0:
        return {"y": np.empty((n, c, h // k, w // k), dtype=np.float32)}
    return {"y": _np(F.max_pool2d(_t(x), k, stride=k))}


@equivalent("kernel.avgpool_global", order=SUMS)
def avgpool_global(x) -> dict:
    return {"y": _np(_t(x).mean(dim=2))}


@equivalent("kernel.cross_entropy", order="torch's own vectorised exp and log (log_softmax, "
            "not a clamped log of the probability), and its sums in blocks")
def cross_entropy(logits, targets) -> dict:
    import torch
    import torch.nn.functional as F

    x = _t(logits)
    t = torch.tensor(list(targets), dtype=torch.int64)
    return {"probs": _np(F.softmax(x, dim=-1)),
            "loss": _np(F.cross_entropy(x, t, reduction="mean"))}
