"""numba kernels for the DAG hashes that batch: guard hashes, feedback signatures, loop
termination hashes."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.merkle_dag import E9_1, EPS_SALT, FEEDBACK_SEED, GUARD_HIGH_SALT, TERM_SALT
from ...core import bits


@njit(cache=True)
def guard_into(kind, op_index, arg_index, dim_index, keep_low_byte_only, out):
    for i in range(out.size):
        packed = kind[i] | op_index[i] << np.uint64(8) | arg_index[i] << np.uint64(40) | \
            dim_index[i] << np.uint64(56)
        h = bits.fmix64(packed)
        high = dim_index[i] >> np.uint64(8)
        if not keep_low_byte_only and high != 0:
            h ^= bits.fmix64(high ^ np.uint64(GUARD_HIGH_SALT))
        out[i] = h


@njit(cache=True)
def feedback_into(pairs, offsets, out):
    for i in range(out.size):
        n = (offsets[i + 1] - offsets[i]) // 2
        if n == 0:
            out[i] = 0
            continue
        h = np.uint64(FEEDBACK_SEED)
        for k in range(offsets[i], offsets[i + 1], 2):
            h = bits.fmix64(h ^ (pairs[k] << np.uint64(16) | pairs[k + 1]))
        out[i] = bits.fmix64(h ^ np.uint64(n))


@njit(cache=True)
def loopterm_into(kind, repeat, eps, out):
    for i in range(out.size):
        out[i] = bits.fmix64((kind[i] | repeat[i] << np.uint64(8)) ^ np.uint64(TERM_SALT)) ^ \
            bits.fmix64(eps[i] ^ np.uint64(EPS_SALT))


def _u64(a):
    return a.astype(np.uint64)


@kernel("dag.guard_hash", "numba", models=(E9_1,))
def guard_batch(kind, op_index, arg_index, dim_index, errata):
    out = np.empty(kind.size, dtype=np.uint64)
    guard_into(_u64(kind), _u64(op_index), _u64(arg_index), _u64(dim_index), E9_1 in errata,
               out)
    return {"out": out}


@kernel("dag.feedback_signature", "numba")
def feedback_batch(edges):
    pairs = edges.values
    out = np.empty(len(edges), dtype=np.uint64)
    feedback_into(_u64(pairs.values), pairs.offsets[edges.offsets], out)
    return {"out": out}


@kernel("dag.loopterm_hash", "numba")
def loopterm_batch(term_kind, repeat_count, epsilon_bits):
    out = np.empty(term_kind.size, dtype=np.uint64)
    loopterm_into(_u64(term_kind), _u64(repeat_count), _u64(epsilon_bits), out)
    return {"out": out}
