"""cupy kernels for the layout ops: one vectorised gather/scatter per leaf across records."""

from __future__ import annotations

from functools import partial

import numpy as np

from ....spec.core.registry import kernel
from ...core.layout_batch import decode_batch, encode_batch
from .xp import to_device, to_host, xp


def gather(records, offsets, sizes):
    m = xp()
    rec = to_device(records)
    out = m.zeros((rec.shape[0], offsets.size), dtype=m.uint64)
    for leaf, (off, size) in enumerate(zip(offsets.tolist(), sizes.tolist(), strict=True)):
        for b in range(size):
            out[:, leaf] |= rec[:, off + b].astype(m.uint64) << np.uint64(8 * b)
    return to_host(out)


def scatter(values, offsets, sizes, size):
    m = xp()
    vals = to_device(values)
    out = m.zeros((vals.shape[0], size), dtype=m.uint8)
    for leaf, (off, nbytes) in enumerate(zip(offsets.tolist(), sizes.tolist(), strict=True)):
        for b in range(nbytes):
            out[:, off + b] = ((vals[:, leaf] >> np.uint64(8 * b)) & np.uint64(0xFF)).astype(
                m.uint8)
    return to_host(out)


kernel("layout.decode", "cupy")(partial(decode_batch, gather=gather))
kernel("layout.encode", "cupy")(partial(encode_batch, scatter=scatter))
