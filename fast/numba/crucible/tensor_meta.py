"""numba kernel for chapter 5: the storage span of a batch of views."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ...core.tables import SIZE_BY_BYTE


@njit(cache=True)
def storage_nbytes_into(sizes, strides, offsets, element_size, out):
    """Per view: element size if 0-d, 0 if any size is 0, else (max - min offset + 1) * size."""
    for i in range(out.size):
        high = np.int64(0)
        low = np.int64(0)
        empty = False
        for j in range(offsets[i], offsets[i + 1]):
            if sizes[j] == 0:
                empty = True
                break
            extent = (sizes[j] - 1) * strides[j]
            if extent > 0:
                high += extent
            else:
                low += extent
        if offsets[i] == offsets[i + 1]:
            out[i] = element_size[i]
        elif empty:
            out[i] = 0
        else:
            out[i] = (np.uint64(high) - np.uint64(low) + np.uint64(1)) * element_size[i]


@kernel("meta.storage_nbytes", "numba")
def storage_nbytes_batch(sizes, strides, dtype):
    out = np.empty(dtype.size, dtype=np.uint64)
    element_size = SIZE_BY_BYTE[dtype.view(np.uint8)].astype(np.uint64)
    storage_nbytes_into(sizes.values, strides.values, sizes.offsets, element_size, out)
    return {"nbytes": out}
