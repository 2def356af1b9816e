"""numba kernels for .crtrace: op records <-> ring entries, one record per iteration."""

from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit
from numba.types import Array, int64, uint8, uint64

from ....spec.core.registry import kernel
from ....spec.crucible.crtrace import TRACE_OP_RECORD
from ....spec.crucible.trace_ring import ENTRY, MAX_SCALARS
from ...core.crtrace_batch import decode_batch, encode_batch
from ..core.layout import gather, scatter

R = TRACE_OP_RECORD.offsets
E = ENTRY.offsets
R_SCOPE, R_CALLSITE, R_SCALARS = R["scope_hash"], R["callsite_hash"], R["scalar_values"]
R_COUNTS, R_GRAD, R_FLAGS = R["num_inputs"], R["grad_enabled"], R["inference_mode"]
E_COUNTS, E_GRAD, E_FLAGS, E_SCALARS = (E["num_inputs"], E["grad_enabled"], E["op_flags"],
                                       E["scalar_values"])


@njit(uint64(Array(uint8, 1, "C", readonly=True), int64), cache=True)
def _u64(row, at):
    """The little-endian u64 at byte `at` of a record (an explicit signature: called with
    constant offsets, it would otherwise compile once per offset, typed as a literal)."""
    v = np.uint64(0)
    for b in range(8):
        v |= np.uint64(row[at + b]) << np.uint64(8 * b)
    return v


@njit(cache=True)
def records_to_entries(records, entries, tensors, scope, callsite):
    """The loader's conversion: hashes and counts copied, grad = byte != 0, op_flags = the last
    byte, the first min(num_scalars, 5) scalars; tensors = inputs + outputs."""
    for i in range(records.shape[0]):
        r = records[i]
        e = entries[i]
        e[0:16] = r[0:16]
        e[E_COUNTS:E_COUNTS + 6] = r[R_COUNTS:R_COUNTS + 6]
        e[E_GRAD] = 1 if r[R_GRAD] != 0 else 0
        e[E_FLAGS] = r[R_FLAGS]
        nsc = min(np.int64(r[R_COUNTS + 4]) | np.int64(r[R_COUNTS + 5]) << 8, MAX_SCALARS)
        e[E_SCALARS:E_SCALARS + 8 * nsc] = r[R_SCALARS:R_SCALARS + 8 * nsc]
        tensors[i] = (np.int64(r[R_COUNTS]) | np.int64(r[R_COUNTS + 1]) << 8) + \
            (np.int64(r[R_COUNTS + 2]) | np.int64(r[R_COUNTS + 3]) << 8)
        scope[i] = _u64(r, R_SCOPE)
        callsite[i] = _u64(r, R_CALLSITE)


@njit(cache=True)
def entries_to_records(entries, scope, callsite, records):
    """The writer's inverse: one 80-byte record per entry."""
    for i in range(entries.shape[0]):
        e = entries[i]
        r = records[i]
        r[0:16] = e[0:16]
        for b in range(8):
            r[R_SCOPE + b] = np.uint8((scope[i] >> np.uint64(8 * b)) & np.uint64(0xFF))
            r[R_CALLSITE + b] = np.uint8((callsite[i] >> np.uint64(8 * b)) & np.uint64(0xFF))
        r[R_SCALARS:R_SCALARS + 40] = e[E_SCALARS:E_SCALARS + 40]
        r[R_COUNTS:R_COUNTS + 6] = e[E_COUNTS:E_COUNTS + 6]
        r[R_GRAD] = e[E_GRAD]
        r[R_FLAGS] = e[E_FLAGS]


def convert(records):
    n = records.shape[0]
    entries = np.zeros((n, ENTRY.size), dtype=np.uint8)
    tensors = np.empty(n, dtype=np.int64)
    scope = np.empty(n, dtype=np.uint64)
    callsite = np.empty(n, dtype=np.uint64)
    records_to_entries(records, entries, tensors, scope, callsite)
    return entries, tensors, scope, callsite


def restore(entries, scope, callsite):
    records = np.zeros((entries.shape[0], TRACE_OP_RECORD.size), dtype=np.uint8)
    entries_to_records(entries, scope, callsite, records)
    return records


kernel("crtrace.decode", "numba")(partial(decode_batch, convert=convert, gather=gather))
kernel("crtrace.encode", "numba")(partial(encode_batch, restore, scatter))
