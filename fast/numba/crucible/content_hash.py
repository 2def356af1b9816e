"""numba kernel for the content hash: one chain per region, ops in order. The size and stride
grids are passed C-contiguous (some callers hold strided views), so the kernel compiles for one
signature."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.hashing import KDIMMIX
from ...core import bits
from ...core.content_batch import regions

DIMMIX = np.array(KDIMMIX, dtype=np.uint64)


@njit(cache=True)
def _mix(h, x):
    """wymix with a zero operand counted as PHI."""
    return bits.wymix(h if h != 0 else bits.PHI_U64, x if x != 0 else bits.PHI_U64)


@njit(cache=True)
def content_into(region_ops, schema, op_inputs, op_scalars, ndim, sizes, strides, packed,
                 scalars, dimmix, out):
    for r in range(out.size):
        h = bits.PHI_U64
        for o in range(region_ops[r], region_ops[r + 1]):
            h = _mix(h, schema[o])
            for t in range(op_inputs[o], op_inputs[o + 1]):
                fold = np.uint64(0)
                for d in range(ndim[t]):
                    fold ^= sizes[t, d] * dimmix[d]
                    fold ^= strides[t, d] * dimmix[d + 8]
                h = _mix(h ^ fold, packed[t])
            for s in range(op_scalars[o], op_scalars[o + 1]):
                h = bits.fnv1a_step(h, scalars[s])
        out[r] = bits.fmix64(h)


@kernel("dag.content_hash", "numba")
def content_batch(ops):
    g = regions(ops)
    out = np.empty(len(ops), dtype=np.uint64)
    content_into(g.region_ops, g.schema, g.op_inputs, g.op_scalars, g.ndim,
                 np.ascontiguousarray(g.sizes), np.ascontiguousarray(g.strides), g.packed,
                 g.scalars, DIMMIX, out)
    return {"out": out}
