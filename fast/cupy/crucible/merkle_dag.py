"""cupy kernels for the DAG hashes that batch: guard hashes, feedback signatures, loop
termination hashes, data-parallel over the batch."""

from __future__ import annotations

import numpy as np

from ....spec.core.registry import kernel
from ....spec.crucible.merkle_dag import E9_1, EPS_SALT, FEEDBACK_SEED, GUARD_HIGH_SALT, TERM_SALT
from ...core import bits
from ..core.xp import to_device, to_host, xp


def _u64(a):
    return to_device(a.astype(np.uint64))


@kernel("dag.guard_hash", "cupy", models=(E9_1,))
def guard_batch(kind, op_index, arg_index, dim_index, errata):
    m = xp()
    dim = _u64(dim_index)
    packed = _u64(kind) | _u64(op_index) << np.uint64(8) | _u64(arg_index) << np.uint64(40) | \
        dim << np.uint64(56)
    h = bits.fmix64(packed)
    if E9_1 not in errata:
        high = dim >> np.uint64(8)
        h = h ^ m.where(high != 0, bits.fmix64(high ^ np.uint64(GUARD_HIGH_SALT)), 0)
    return {"out": to_host(h)}


@kernel("dag.feedback_signature", "cupy")
def feedback_batch(edges):
    m = xp()
    pairs = _u64(edges.values.values)
    starts = to_device(edges.values.offsets[edges.offsets])
    counts = (starts[1:] - starts[:-1]) // 2
    h = m.full(counts.shape[0], np.uint64(FEEDBACK_SEED), dtype=m.uint64)
    for k in range(int(counts.max()) if counts.shape[0] else 0):
        live = m.nonzero(counts > k)[0]
        at = starts[live] + 2 * k
        h[live] = bits.fmix64(h[live] ^ (pairs[at] << np.uint64(16) | pairs[at + 1]))
    h = bits.fmix64(h ^ counts.astype(m.uint64))
    return {"out": to_host(m.where(counts == 0, np.uint64(0), h))}


@kernel("dag.loopterm_hash", "cupy")
def loopterm_batch(term_kind, repeat_count, epsilon_bits):
    packed = _u64(term_kind) | _u64(repeat_count) << np.uint64(8)
    return {"out": to_host(bits.fmix64(packed ^ np.uint64(TERM_SALT))
                           ^ bits.fmix64(_u64(epsilon_bits) ^ np.uint64(EPS_SALT)))}
