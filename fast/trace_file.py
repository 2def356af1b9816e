"""A .crtrace image straight into TraceArrays: the spec frames the file and reads its names;
op records and metas are read as numpy record arrays, with no per-op Python."""

from __future__ import annotations

import numpy as np

from ..spec.crtrace import (
    E18_2,
    HEADER_SIZE,
    TRACE_OP_RECORD,
    check_meta_total,
    frame,
    parse_names,
)
from ..spec.errata import NO_ERRATA
from ..spec.tensor_meta import TENSOR_META
from ..spec.trace_ring import MAX_SCALARS
from .trace_arrays import TraceArrays, storage_nbytes

RECORD = TRACE_OP_RECORD.np_dtype()
META = TENSOR_META.np_dtype()
DEFAULT_META = np.frombuffer(TENSOR_META.pack(TENSOR_META.default_values()), dtype=np.uint8)


def meta_bytes(data: bytes, start: int, size: int, count: int) -> np.ndarray:
    """The metas as full TensorMeta byte rows; a short record is a prefix of a default meta."""
    raw = np.empty((count, TENSOR_META.size), dtype=np.uint8)
    raw[:] = DEFAULT_META
    raw[:, :size] = np.frombuffer(data, np.uint8, count=size * count,
                                  offset=start).reshape(count, size)
    return raw


def _metas(data: bytes, start: int, size: int, count: int) -> np.ndarray:
    return meta_bytes(data, start, size, count).view(META).reshape(count)


def load_arrays(data: bytes, errata: frozenset[str] = NO_ERRATA
                ) -> tuple[TraceArrays, np.ndarray, np.ndarray, dict[int, str]]:
    """The trace's arrays, its scope and callsite hashes, and its names, exactly as the spec's
    loader reads them (same checks, same errors)."""
    f = frame(data, errata)
    names = parse_names(data, f.meta_end)
    rec = np.frombuffer(data, RECORD, count=f.num_ops, offset=HEADER_SIZE)
    n_in = rec["num_inputs"].astype(np.int64)
    n_out = rec["num_outputs"].astype(np.int64)
    tensors = n_in + n_out
    if E18_2 in errata:
        tensors &= 0xFFFF
    check_meta_total(int(tensors.sum()), f.num_metas, errata)
    ends = np.cumsum(tensors)
    meta_start = np.where(tensors > 0, ends - tensors, -1)
    nsc = np.minimum(rec["num_scalars"].astype(np.int64), MAX_SCALARS)
    scalar_off = np.zeros(f.num_ops + 1, dtype=np.int64)
    np.cumsum(nsc, out=scalar_off[1:])
    keep = np.arange(MAX_SCALARS)[None, :] < nsc[:, None]
    m = _metas(data, f.meta_start, f.meta_size, f.num_metas)
    ndim = m["ndim"].astype(np.int64)
    dtype = m["dtype"].astype(np.int64)
    sizes, strides = m["sizes"].astype(np.uint64), m["strides"].astype(np.uint64)
    arrays = TraceArrays(
        schema=rec["schema_hash"].copy(), flags=rec["inference_mode"].copy(),
        meta_start=meta_start, n_in=n_in, n_out=n_out, scalar_off=scalar_off,
        scalars=rec["scalar_values"][keep].view(np.uint64), ptr=m["data_ptr"].copy(),
        ndim=ndim, sizes=sizes, strides=strides, dtype=dtype,
        device_type=m["device_type"].astype(np.int64),
        device_idx=m["device_idx"].astype(np.int64),
        nbytes=storage_nbytes(ndim, sizes, strides, dtype))
    return arrays, rec["scope_hash"].copy(), rec["callsite_hash"].copy(), names
