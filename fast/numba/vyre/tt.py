"""numba kernel for vyre's tt_contract_step. The wrapping u32 sum is associative and
commutative, so the kernel walks the core row by row (a outer, lanes inner: contiguous, and
vectorised) instead of lane by lane; every term is the spec's truncated 16.16 product,
computed in u64 as (x * y) >> 16 less the sign corrections shifted into place (the signed
high word's corrections, moved below the OR), then cut to u32."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.errata import NO_ERRATA
from ....spec.core.registry import kernel
from ....spec.core.schema import Ragged
from ....spec.vyre.tt import E12_300

M32 = np.uint64(0xFFFFFFFF)


@njit(cache=True, inline="always")
def fixed_term(x, y, signed):
    """fmul(x, y) for u32 lanes held in u64."""
    term = (x * y) >> np.uint64(16)
    if signed:
        mx = np.uint64(0) - (x >> np.uint64(31))
        my = np.uint64(0) - (y >> np.uint64(31))
        term -= ((y << np.uint64(16)) & mx) + ((x << np.uint64(16)) & my)
    return term & M32


@njit(cache=True)
def contract_into(acc, core, r_prev, r_next, signed, out):
    """out[t] = sum over a of fmul(acc[a], core[a * r_next + t]) mod 2^32."""
    for t in range(r_next):
        out[t] = 0
    for a in range(r_prev):
        x = np.uint64(acc[a])
        row = a * r_next
        for t in range(r_next):
            out[t] += np.uint32(fixed_term(x, np.uint64(core[row + t]), signed))


@njit(cache=True)
def contract_batch(acc, acc_off, core, core_off, r_prev, r_next, signed, out, out_off):
    for i in range(r_prev.size):
        contract_into(acc[acc_off[i]:], core[core_off[i]:], np.int64(r_prev[i]),
                      np.int64(r_next[i]), signed, out[out_off[i]:out_off[i + 1]])


def prepare(acc_in, core, r_prev, r_next, errata=NO_ERRATA):
    out_off = np.zeros(r_next.size + 1, dtype=np.int64)
    np.cumsum(r_next, out=out_off[1:])
    out = np.empty(int(out_off[-1]), dtype=np.uint32)
    return (acc_in.values, acc_in.offsets, core.values, core.offsets, r_prev, r_next,
            E12_300 not in errata, out, out_off)


def core_step(state) -> Ragged:
    contract_batch(*state)
    return Ragged(state[-2], state[-1])


@kernel("vyre.tt_contract_step", "numba", models=(E12_300,))
def tt_contract_step_batch(acc_in, core, r_prev, r_next, errata=NO_ERRATA):
    return {"acc_out": core_step(prepare(acc_in, core, r_prev, r_next, errata))}


tt_contract_step_batch.prepare, tt_contract_step_batch.core = prepare, core_step
