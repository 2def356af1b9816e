"""torch equivalents of the linear kernels. torch's CPU matmul, convolution and attention sum
in blocks and with fused multiply-adds, so their order is not the spec's: tests hold them to a
relative bound of the size of the sum instead of an ulp envelope."""

from __future__ import annotations

import numpy as np

from . import equivalent

ORDER = "reduction order: torch sums in vectorised blocks with fused multiply-adds"


def _t(a: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


@equivalent("kernel.mm", order=ORDER)
def mm(a, b) -> dict:
    return {"c": (_t(a) @ _t(b)).numpy()}


@equivalent("kernel.conv2d", order=ORDER)
def conv2d(x, w) -> dict:
    import torch.nn.functional as F

    shape = (x.shape[0], w.shape[0], x.shape[2] - w.shape[2] + 1, x.shape[3] - w.shape[3] + 1)
    if x.size == 0 or w.size == 0 or 0 in shape:
        return {"y": np.zeros(shape, dtype=np.float32)}
    return {"y": F.conv2d(_t(x), _t(w)).numpy()}


@equivalent("kernel.sdpa", order=ORDER + "; its own vectorised exp")
def sdpa(q, k, v) -> dict:
    import torch.nn.functional as F

    if q.size == 0:
        return {"y": np.zeros(q.shape, dtype=np.float32)}
    return {"y": F.scaled_dot_product_attention(_t(q), _t(k), _t(v)).numpy()}
