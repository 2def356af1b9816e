"""cupy kernel for vyre's tt_contract_step: one lane per thread. Every output lane of the
batch is a thread; step a of its loop reads acc_in[a] and its core column's cell a, forms the
truncated 16.16 product in u64 (less the sign corrections when signed) and adds it mod 2^32.
Threads whose item has fewer than a + 1 input lanes add nothing."""

from __future__ import annotations

import numpy as np

from ....spec.core.errata import NO_ERRATA
from ....spec.core.registry import kernel
from ....spec.core.schema import Ragged
from ....spec.vyre.tt import E12_300
from ..core.xp import to_device, to_host, xp


def fixed_terms(x, y, signed: bool):
    """fmul on u64-held u32 lanes, elementwise."""
    m = xp()
    term = (x * y) >> m.uint64(16)
    if signed:
        mx = m.uint64(0) - (x >> m.uint64(31))
        my = m.uint64(0) - (y >> m.uint64(31))
        term = term - (((y << m.uint64(16)) & mx) + ((x << m.uint64(16)) & my))
    return term & m.uint64(0xFFFFFFFF)


def contract_lanes(acc, acc_off, core, core_off, r_prev, r_next, signed: bool):
    """Every output lane of the batch, one thread each, stepping a in lockstep."""
    m = xp()
    item = m.repeat(m.arange(r_next.shape[0]), r_next)
    out_off = m.zeros(r_next.shape[0] + 1, dtype=m.int64)
    m.cumsum(r_next, out=out_off[1:])
    lane = m.arange(item.shape[0], dtype=m.int64) - out_off[item]
    width, depth = r_next[item], r_prev[item]
    total = m.zeros(item.shape[0], dtype=m.uint64)
    for a in range(int(r_prev.max()) if r_prev.shape[0] else 0):
        live = m.nonzero(depth > a)[0]
        x = acc[acc_off[item[live]] + a].astype(m.uint64)
        y = core[core_off[item[live]] + a * width[live] + lane[live]].astype(m.uint64)
        total[live] = (total[live] + fixed_terms(x, y, signed)) & m.uint64(0xFFFFFFFF)
    return total.astype(m.uint32), out_off


@kernel("vyre.tt_contract_step", "cupy", models=(E12_300,))
def tt_contract_step_batch(acc_in, core, r_prev, r_next, errata=NO_ERRATA):
    out, off = contract_lanes(to_device(acc_in.values), to_device(acc_in.offsets),
                              to_device(core.values), to_device(core.offsets),
                              to_device(r_prev.astype(np.int64)),
                              to_device(r_next.astype(np.int64)), E12_300 not in errata)
    return {"acc_out": Ragged(to_host(out), to_host(off))}
