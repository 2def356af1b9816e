"""numba kernel for chapter 2: element sizes by table lookup."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ...core.tables import SIZE_BY_BYTE


@njit(cache=True)
def element_size_into(dtype, table, out):
    for i in range(dtype.size):
        out[i] = table[dtype[i]]


@kernel("types.element_size", "numba")
def element_size_batch(dtype):
    out = np.empty(dtype.size, dtype=np.uint8)
    element_size_into(dtype.view(np.uint8), SIZE_BY_BYTE, out)
    return {"element_size": out}
