"""cupy kernels for .crtrace: op records <-> ring entries, one column slice at a time."""

from __future__ import annotations

from functools import partial

from ....spec.core.registry import kernel
from ....spec.crucible.crtrace import TRACE_OP_RECORD
from ....spec.crucible.trace_ring import ENTRY, MAX_SCALARS
from ...core.crtrace_batch import decode_batch, encode_batch
from ..core.layout import gather, scatter
from ..core.xp import to_device, to_host, xp

R = TRACE_OP_RECORD.offsets
E = ENTRY.offsets


def _u16(block, at):
    m = xp()
    return block[:, at].astype(m.int64) | block[:, at + 1].astype(m.int64) << 8


def _u64(block, at):
    m = xp()
    return block[:, at:at + 8].copy().view(m.uint64).reshape(-1)


def convert(records):
    m = xp()
    r = to_device(records)
    e = m.zeros((r.shape[0], ENTRY.size), dtype=m.uint8)
    e[:, 0:16] = r[:, 0:16]
    e[:, E["num_inputs"]:E["num_inputs"] + 6] = r[:, R["num_inputs"]:R["num_inputs"] + 6]
    e[:, E["grad_enabled"]] = (r[:, R["grad_enabled"]] != 0).astype(m.uint8)
    e[:, E["op_flags"]] = r[:, R["inference_mode"]]
    nsc = _u16(r, R["num_scalars"])
    for s in range(MAX_SCALARS):
        keep = (nsc > s)[:, None]
        src = r[:, R["scalar_values"] + 8 * s:R["scalar_values"] + 8 * s + 8]
        e[:, E["scalar_values"] + 8 * s:E["scalar_values"] + 8 * s + 8] = m.where(keep, src, 0)
    tensors = _u16(r, R["num_inputs"]) + _u16(r, R["num_outputs"])
    return (to_host(e), to_host(tensors), to_host(_u64(r, R["scope_hash"])),
            to_host(_u64(r, R["callsite_hash"])))


def restore(entries, scope, callsite):
    m = xp()
    e = to_device(entries)
    r = m.zeros((e.shape[0], TRACE_OP_RECORD.size), dtype=m.uint8)
    r[:, 0:16] = e[:, 0:16]
    r[:, R["scope_hash"]:R["scope_hash"] + 8] = to_device(scope).view(m.uint8).reshape(-1, 8)
    r[:, R["callsite_hash"]:R["callsite_hash"] + 8] = \
        to_device(callsite).view(m.uint8).reshape(-1, 8)
    r[:, R["scalar_values"]:R["scalar_values"] + 40] = \
        e[:, E["scalar_values"]:E["scalar_values"] + 40]
    r[:, R["num_inputs"]:R["num_inputs"] + 6] = e[:, E["num_inputs"]:E["num_inputs"] + 6]
    r[:, R["grad_enabled"]] = e[:, E["grad_enabled"]]
    r[:, R["inference_mode"]] = e[:, E["op_flags"]]
    return to_host(r)


kernel("crtrace.decode", "cupy")(partial(decode_batch, convert=convert, gather=gather))
kernel("crtrace.encode", "cupy")(partial(encode_batch, restore, scatter))
