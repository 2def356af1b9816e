"""numba kernel for vyre's decode_output: each item's first output buffer read as
little-endian u32 words into one preallocated column. The op's check has already refused
every item whose first buffer is not exactly 4 r_next bytes."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.core.schema import Ragged


@njit(cache=True)
def decode_into(data, byte_off, first, out, out_off):
    """out[out_off[i]:out_off[i + 1]] = the words of buffer first[i], little-endian."""
    for i in range(first.size):
        p = byte_off[first[i]]
        for k in range(out_off[i], out_off[i + 1]):
            out[k] = (np.uint32(data[p]) | (np.uint32(data[p + 1]) << np.uint32(8))
                      | (np.uint32(data[p + 2]) << np.uint32(16))
                      | (np.uint32(data[p + 3]) << np.uint32(24)))
            p += 4


def prepare(outputs, r_next):
    out_off = np.zeros(r_next.size + 1, dtype=np.int64)
    np.cumsum(r_next, out=out_off[1:])
    out = np.empty(int(out_off[-1]), dtype=np.uint32)
    first = np.ascontiguousarray(outputs.offsets[:-1], dtype=np.int64)
    return (outputs.values.values, outputs.values.offsets, first, out, out_off)


def core_step(state) -> Ragged:
    decode_into(*state)
    return Ragged(state[-2], state[-1])


@kernel("vyre.decode_output", "numba")
def decode_output_batch(outputs, r_next):
    return {"words": core_step(prepare(outputs, r_next))}


decode_output_batch.prepare, decode_output_batch.core = prepare, core_step
