"""cupy kernel for chapter 5: storage spans, one padded (views x 8) matrix at a time."""

from __future__ import annotations

import numpy as np

from ....spec.core.registry import kernel
from ....spec.crucible.tensor_meta import MAX_DIMS
from ...core.tables import SIZE_BY_BYTE
from ..core.xp import to_device, to_host, xp


def dense(values, offsets, fill: int):
    """A ragged column as an (items x 8) matrix, missing dimensions set to `fill`."""
    m = xp()
    n = offsets.shape[0] - 1
    lengths = offsets[1:] - offsets[:-1]
    row = m.repeat(m.arange(n), lengths)
    col = m.arange(values.shape[0]) - offsets[:-1][row]
    out = m.full((n, MAX_DIMS), fill, dtype=m.int64)
    out[row, col] = values
    return out, lengths


@kernel("meta.storage_nbytes", "cupy")
def storage_nbytes_batch(sizes, strides, dtype):
    m = xp()
    s, lengths = dense(to_device(sizes.values), to_device(sizes.offsets), 1)
    d, _ = dense(to_device(strides.values), to_device(strides.offsets), 0)
    extent = (s - 1) * d
    high = m.where(extent > 0, extent, 0).sum(axis=1).astype(m.uint64)
    low = m.where(extent < 0, extent, 0).sum(axis=1).astype(m.uint64)
    size = to_device(SIZE_BY_BYTE[dtype.view(np.uint8)].astype(np.uint64))
    span = (high - low + np.uint64(1)) * size
    out = m.where(lengths == 0, size, m.where((s == 0).any(axis=1), np.uint64(0), span))
    return {"nbytes": to_host(out.astype(m.uint64))}
