"""numba kernels for the layout ops: leaf gather and scatter over record byte matrices."""

from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ...core.layout_batch import decode_batch, encode_batch


@njit(cache=True)
def gather_into(records, offsets, sizes, out):
    """out[i, l] = little-endian value of leaf l of record i."""
    for i in range(records.shape[0]):
        for leaf in range(offsets.size):
            v = np.uint64(0)
            for b in range(sizes[leaf]):
                v |= np.uint64(records[i, offsets[leaf] + b]) << np.uint64(8 * b)
            out[i, leaf] = v


@njit(cache=True)
def scatter_into(values, offsets, sizes, out):
    """Write each leaf value's little-endian bytes into its record (out is zeroed)."""
    for i in range(values.shape[0]):
        for leaf in range(offsets.size):
            v = values[i, leaf]
            for b in range(sizes[leaf]):
                out[i, offsets[leaf] + b] = np.uint8((v >> np.uint64(8 * b)) & np.uint64(0xFF))


def readonly(a: np.ndarray) -> np.ndarray:
    """A C-contiguous read-only view of `a`: numba types a read-only array apart from a
    writable one, so passing one kind always compiles gather_into for one signature."""
    view = np.ascontiguousarray(a).view()
    view.flags.writeable = False
    return view


def gather(records, offsets, sizes):
    out = np.empty((records.shape[0], offsets.size), dtype=np.uint64)
    gather_into(readonly(records), offsets, sizes, out)
    return out


def scatter(values, offsets, sizes, size):
    out = np.zeros((values.shape[0], size), dtype=np.uint8)
    scatter_into(values, offsets, sizes, out)
    return out


kernel("layout.decode", "numba")(partial(decode_batch, gather=gather))
kernel("layout.encode", "numba")(partial(encode_batch, scatter=scatter))
