"""numba kernel for the .crtrace loader: the TensorMeta records, read in place, into the columns
TraceArrays holds, in one pass with no per-field copies.

Protocol, per meta row i (the fields are strided views of the record array over the file):
1. Widen: ndim (u8), dtype, device type and device index (i8, sign-extended) to int64; the
   pointer as is. Sizes and strides are not copied: TraceArrays keeps the strided views.
2. Suspect: the row is flagged as trace_file.suspects flags it (a bool byte over 1, ndim over
   8, a dtype byte that is no ScalarType, a used size or stride outside the SMALL range); the
   caller runs the spec's read_meta on exactly the flagged rows.
3. Storage size: compute_storage_nbytes over the first min(ndim, 8) dims, as
   tensor_meta.storage_nbytes_into computes it (element size if 0-d, 0 if a size is 0, else
   (max - min offset + 1) * element size, in wrapping u64). A flagged row's value is unused.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _span(sizes, strides, i, n, element_size):
    high = np.int64(0)
    low = np.int64(0)
    for j in range(n):
        if sizes[i, j] == 0:
            return np.uint64(0)
        extent = (sizes[i, j] - 1) * strides[i, j]
        if extent > 0:
            high += extent
        else:
            low += extent
    if n == 0:
        return element_size
    return (np.uint64(high) - np.uint64(low) + np.uint64(1)) * element_size


@njit(cache=True)
def meta_columns_into(sizes, strides, m_ptr, m_ndim, m_dtype, m_device_type, m_device_idx,
                      m_requires_grad, size_by_byte, scalar_byte, small, ptr, ndim, dtype,
                      device_type, device_idx, nbytes, suspect):
    """Fill the output columns (steps 1-3) for every row of the m_* field views."""
    max_dims = sizes.shape[1]
    for i in range(ndim.size):
        nd = np.int64(m_ndim[i])
        dt = np.int64(m_dtype[i])
        ndim[i] = nd
        dtype[i] = dt
        device_type[i] = np.int64(m_device_type[i])
        device_idx[i] = np.int64(m_device_idx[i])
        ptr[i] = m_ptr[i]
        used = min(nd, max_dims)
        large = False
        for j in range(max_dims):
            s = sizes[i, j]
            t = strides[i, j]
            if j < used and (s < 0 or s >= small or t <= -small or t >= small):
                large = True
        code = np.uint8(m_dtype[i])
        suspect[i] = (m_requires_grad[i] > 1 or nd > max_dims or not scalar_byte[code]
                      or large)
        nbytes[i] = _span(sizes, strides, i, used, np.uint64(size_by_byte[code]))
