"""cupy kernel for the content hash: all regions advance one op at a time, data-parallel
over regions; the tensor folds are computed for every input at once."""

from __future__ import annotations

import numpy as np

from ....spec.core.registry import kernel
from ....spec.crucible.hashing import KDIMMIX
from ...core import bits
from ...core.content_batch import regions
from ..core.xp import to_device, to_host, xp


def _mix(m, h, x):
    phi = bits.PHI_U64
    return bits.wymix(m.where(h == 0, phi, h), m.where(x == 0, phi, x))


def _folds(m, g):
    dims = m.arange(8)[None, :] < to_device(g.ndim)[:, None]
    mixes = to_device(np.array(KDIMMIX, dtype=np.uint64))
    terms = m.where(dims, to_device(g.sizes) * mixes[:8], 0) ^ \
        m.where(dims, to_device(g.strides) * mixes[8:], 0)
    fold = m.zeros(terms.shape[0], dtype=m.uint64)
    for d in range(8):
        fold ^= terms[:, d]
    return fold


@kernel("dag.content_hash", "cupy")
def content_batch(ops):
    m = xp()
    g = regions(ops)
    folds, packed = _folds(m, g), to_device(g.packed)
    region_ops, op_inputs, op_scalars = (to_device(a) for a in
                                         (g.region_ops, g.op_inputs, g.op_scalars))
    schema, scalars = to_device(g.schema), to_device(g.scalars)
    h = m.full(len(ops), bits.PHI_U64, dtype=m.uint64)
    counts = region_ops[1:] - region_ops[:-1]
    for t in range(int(counts.max()) if len(ops) else 0):
        live = m.nonzero(counts > t)[0]
        op = region_ops[live] + t
        h[live] = _mix(m, h[live], schema[op])
        n_in = op_inputs[op + 1] - op_inputs[op]
        for j in range(int(n_in.max()) if live.size else 0):
            has = m.nonzero(n_in > j)[0]
            tensor = op_inputs[op[has]] + j
            h[live[has]] = _mix(m, h[live[has]] ^ folds[tensor], packed[tensor])
        n_sc = op_scalars[op + 1] - op_scalars[op]
        for j in range(int(n_sc.max()) if live.size else 0):
            has = m.nonzero(n_sc > j)[0]
            h[live[has]] = bits.fnv1a_step(h[live[has]], scalars[op_scalars[op[has]] + j])
    return {"out": to_host(bits.fmix64(h))}
