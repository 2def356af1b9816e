"""A .crtrace image straight into TraceArrays: the spec frames the file and reads its names;
op records and metas are read as numpy record arrays over the image, with no per-op Python.

1. Metas of full TensorMeta size are a record-array view of the file (no copy); short ones
   are first padded with the default meta (meta_rows).
2. One kernel pass (numba.meta_columns) widens the meta fields into TraceArrays' columns,
   computes every storage size and flags the rows a screen cannot clear (suspects).
3. The spec itself (read_meta) checks the flagged rows, in order, so the first error is the
   spec loader's.
4. Per-op columns (counts, meta starts, scalar offsets) are numpy over the op records."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...spec.core.errata import NO_ERRATA
from ...spec.crucible.crtrace import (
    DEFAULT_META,
    E18_2,
    HEADER_SIZE,
    SCALAR_ORDINALS,
    TRACE_OP_RECORD,
    Frame,
    check_meta_total,
    frame,
    parse_names,
    read_meta,
)
from ...spec.crucible.pipeline import metas_past_end
from ...spec.crucible.tensor_meta import MAX_DIMS, TENSOR_META
from ...spec.crucible.trace_ring import MAX_SCALARS
from ..numba.crucible.meta_columns import meta_columns_into
from .tables import SIZE_BY_BYTE
from .trace_arrays import TraceArrays

RECORD = TRACE_OP_RECORD.np_dtype()
META = TENSOR_META.np_dtype()
DEFAULT_ROW = np.frombuffer(DEFAULT_META, dtype=np.uint8)
SCALAR_BYTES = np.zeros(256, dtype=np.bool_)
"""Which dtype bytes are ScalarType ordinals."""
SCALAR_BYTES[[t & 0xFF for t in SCALAR_ORDINALS]] = True
SMALL = 1 << 27
"""Used sizes and strides in [0, 2^27) and (-2^27, 2^27): 8 extents under 2^54 each give a
span under 2^58 elements of at most 16 bytes, so it fits int64."""


def meta_rows(data: bytes, f: Frame) -> np.ndarray:
    """The metas as full TensorMeta byte rows, unchecked: a view of the image when its records
    are full size, else a padded copy (meta_bytes)."""
    if f.meta_size != TENSOR_META.size:
        raw = np.empty((f.num_metas, TENSOR_META.size), dtype=np.uint8)
        raw[:] = DEFAULT_ROW
        raw[:, :f.meta_size] = np.frombuffer(data, np.uint8, count=f.meta_size * f.num_metas,
                                             offset=f.meta_start).reshape(f.num_metas,
                                                                          f.meta_size)
        return raw
    return np.frombuffer(data, np.uint8, count=f.meta_size * f.num_metas,
                         offset=f.meta_start).reshape(f.num_metas, f.meta_size)


def meta_bytes(data: bytes, f: Frame) -> np.ndarray:
    """The metas as full TensorMeta byte rows (meta_rows), each one the spec accepts
    (check_metas)."""
    raw = meta_rows(data, f)
    check_metas(raw, f)
    return raw


def suspects(m: np.ndarray) -> np.ndarray:
    """Metas the spec might reject: a bool byte over 1, ndim over 8, a dtype byte that is no
    ScalarType, or a used size or stride outside the SMALL range. Every other meta passes
    read_meta, so this is a superset of the rejected ones."""
    ndim = m["ndim"]
    used = np.arange(MAX_DIMS)[None, :] < np.minimum(ndim, MAX_DIMS)[:, None]
    sizes, strides = m["sizes"], m["strides"]
    large = used & ((sizes < 0) | (sizes >= SMALL) | (strides <= -SMALL) | (strides >= SMALL))
    return ((m["requires_grad"] > 1) | (ndim > MAX_DIMS) | ~SCALAR_BYTES[m["dtype"].view(np.uint8)]
            | large.any(axis=1))


def check_metas(raw: np.ndarray, f: Frame) -> None:
    """The spec's read_meta on every suspect row, in order: the first meta it rejects and the
    error are the spec loader's."""
    for k in np.flatnonzero(suspects(raw.view(META).reshape(f.num_metas))).tolist():
        read_meta(raw[k].tobytes(), f.meta_start + k * f.meta_size, k)


@dataclass
class MetaColumns:
    """The per-meta columns of TraceArrays (sizes and strides: views of the meta rows), and
    which rows the spec must check."""

    ptr: np.ndarray
    ndim: np.ndarray
    sizes: np.ndarray
    strides: np.ndarray
    dtype: np.ndarray
    device_type: np.ndarray
    device_idx: np.ndarray
    nbytes: np.ndarray
    suspect: np.ndarray


def meta_columns(raw: np.ndarray) -> MetaColumns:
    """Step 2 of the module docstring over full-size meta rows."""
    n = raw.shape[0]
    m = raw.view(META).reshape(n)
    wide = [np.empty(n, np.int64) for _ in range(4)]
    c = MetaColumns(np.empty(n, np.uint64), wide[0], m["sizes"].view(np.uint64),
                    m["strides"].view(np.uint64), wide[1], wide[2], wide[3],
                    np.empty(n, np.uint64), np.empty(n, np.bool_))
    meta_columns_into(m["sizes"], m["strides"], m["data_ptr"], m["ndim"], m["dtype"],
                      m["device_type"], m["device_idx"], m["requires_grad"], SIZE_BY_BYTE,
                      SCALAR_BYTES, SMALL, c.ptr, c.ndim, c.dtype, c.device_type, c.device_idx,
                      c.nbytes, c.suspect)
    return c


def checked_meta_columns(data: bytes, f: Frame) -> MetaColumns:
    """The metas' columns, after the spec's read_meta on every flagged row (step 3)."""
    raw = meta_rows(data, f)
    c = meta_columns(raw)
    for k in np.flatnonzero(c.suspect).tolist():
        read_meta(raw[k].tobytes(), f.meta_start + k * f.meta_size, k)
    return c


def load_arrays(data: bytes, errata: frozenset[str] = NO_ERRATA
                ) -> tuple[TraceArrays, np.ndarray, np.ndarray, dict[int, str]]:
    """The trace's arrays, its scope and callsite hashes, and its names, exactly as the spec's
    loader reads them (same checks, same errors)."""
    f = frame(data, errata)
    names = parse_names(data, f.meta_end)
    m = checked_meta_columns(data, f)
    rec = np.frombuffer(data, RECORD, count=f.num_ops, offset=HEADER_SIZE)
    n_in = rec["num_inputs"].astype(np.int64)
    n_out = rec["num_outputs"].astype(np.int64)
    tensors = n_in + n_out
    if E18_2 in errata:
        tensors &= 0xFFFF
    used = int(tensors.sum())
    check_meta_total(used, f.num_metas, errata)
    meta_start = np.where(tensors > 0, np.cumsum(tensors) - tensors, -1)
    past = np.flatnonzero((meta_start >= 0) & (meta_start + n_in + n_out > f.num_metas))
    if past.size:  # E18.4: as recorded_of, never a read past the metas
        i = int(past[0])
        raise metas_past_end(i, int(n_in[i] + n_out[i]), int(meta_start[i]), f.num_metas)
    nsc = np.minimum(rec["num_scalars"].astype(np.int64), MAX_SCALARS)
    scalar_off = np.zeros(f.num_ops + 1, dtype=np.int64)
    np.cumsum(nsc, out=scalar_off[1:])
    keep = np.arange(MAX_SCALARS)[None, :] < nsc[:, None]
    arrays = TraceArrays(
        schema=rec["schema_hash"].copy(), flags=rec["inference_mode"].copy(),
        meta_start=meta_start, n_in=n_in, n_out=n_out, scalar_off=scalar_off,
        scalars=rec["scalar_values"][keep].view(np.uint64), ptr=m.ptr, ndim=m.ndim,
        sizes=m.sizes, strides=m.strides, dtype=m.dtype, device_type=m.device_type,
        device_idx=m.device_idx, nbytes=m.nbytes)
    return arrays, rec["scope_hash"].copy(), rec["callsite_hash"].copy(), names
