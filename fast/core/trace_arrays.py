"""Drained ops as flat arrays for the build kernel: per op its schema, flags, counts, first
meta (-1 when it has none) and scalars; per meta its pointer, dims, packing and storage size."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...spec.crucible.build_trace import RecordedOp, trace_op_of
from ...spec.crucible.content_hash import E8_4
from ...spec.crucible.crtrace import meta_starts_of
from ...spec.crucible.tensor_meta import MAX_DIMS
from ...spec.crucible.trace_entry import TraceOp
from ...spec.crucible.trace_ring import MAX_SCALARS
from ...spec.crucible.types import NONE32
from ..numba.crucible.tensor_meta import storage_nbytes_into
from .tables import SIZE_BY_BYTE


@dataclass
class TraceArrays:
    schema: np.ndarray
    flags: np.ndarray
    meta_start: np.ndarray
    n_in: np.ndarray
    n_out: np.ndarray
    scalar_off: np.ndarray
    scalars: np.ndarray
    ptr: np.ndarray
    ndim: np.ndarray
    sizes: np.ndarray
    strides: np.ndarray
    dtype: np.ndarray
    device_type: np.ndarray
    device_idx: np.ndarray
    nbytes: np.ndarray

    def packed(self, errata: frozenset[str]) -> np.ndarray:
        """The packed meta of every tensor: bytes, or the seed's sign-extended dtype and
        device type under E8.4."""
        wide = E8_4 in errata
        dtype = self.dtype.astype(np.int64).view(np.uint64) if wide else self.dtype & 0xFF
        device = self.device_type.astype(np.int64).view(np.uint64) if wide else \
            self.device_type & 0xFF
        return (dtype.astype(np.uint64) | device.astype(np.uint64) << np.uint64(8)
                | (self.device_idx & 0xFF).astype(np.uint64) << np.uint64(16))

    def window(self, start: int, count: int) -> TraceArrays:
        """Ops [start, start + count) with their metas and scalars, meta starts rebased."""
        stop = start + count
        ms = self.meta_start[start:stop]
        valid = ms >= 0
        ends = ms + self.n_in[start:stop] + self.n_out[start:stop]
        lo = int(ms[valid].min()) if valid.any() else 0
        hi = int(ends[valid].max()) if valid.any() else 0
        s0, s1 = int(self.scalar_off[start]), int(self.scalar_off[stop])
        return TraceArrays(
            self.schema[start:stop], self.flags[start:stop], np.where(valid, ms - lo, -1),
            self.n_in[start:stop], self.n_out[start:stop], self.scalar_off[start:stop + 1] - s0,
            self.scalars[s0:s1], *(a[lo:hi] for a in (
                self.ptr, self.ndim, self.sizes, self.strides, self.dtype, self.device_type,
                self.device_idx, self.nbytes)))


def storage_nbytes(ndim: np.ndarray, sizes: np.ndarray, strides: np.ndarray,
                   dtype: np.ndarray) -> np.ndarray:
    """compute_storage_nbytes of every meta (the chapter 5 kernel over the used dims)."""
    used = np.arange(MAX_DIMS)[None, :] < ndim[:, None]
    offsets = np.zeros(ndim.size + 1, dtype=np.int64)
    np.cumsum(ndim, out=offsets[1:])
    out = np.empty(ndim.size, dtype=np.uint64)
    size = SIZE_BY_BYTE[dtype.astype(np.int8).view(np.uint8)].astype(np.uint64)
    storage_nbytes_into(sizes.view(np.int64)[used], strides.view(np.int64)[used], offsets, size,
                        out)
    return out


def arrays_of(recorded: list[RecordedOp]) -> TraceArrays:
    metas = [m for r in recorded for m in (r.metas or [])]
    grid = np.array([[m["sizes"], m["strides"]] for m in metas], dtype=np.int64).reshape(
        len(metas), 2, MAX_DIMS)
    field = {k: np.array([m[k] for m in metas], dtype=np.int64)
             for k in ("ndim", "dtype", "device_type", "device_idx")}
    return arrays_from(
        schema=np.array([r.schema_hash for r in recorded], dtype=np.uint64),
        flags=np.array([r.op_flags for r in recorded], dtype=np.uint8),
        n_in=np.array([r.num_inputs for r in recorded], dtype=np.int64),
        n_out=np.array([r.num_outputs for r in recorded], dtype=np.int64),
        scalar_counts=np.array([len(r.scalars) for r in recorded], dtype=np.int64),
        scalars=np.array([s for r in recorded for s in r.scalars], dtype=np.int64),
        ptr=np.array([m["data_ptr"] for m in metas], dtype=np.uint64), ndim=field["ndim"],
        sizes=grid[:, 0], strides=grid[:, 1], dtype=field["dtype"],
        device_type=field["device_type"], device_idx=field["device_idx"])


def arrays_from(schema: np.ndarray, flags: np.ndarray, n_in: np.ndarray, n_out: np.ndarray,
                scalar_counts: np.ndarray, scalars: np.ndarray, ptr: np.ndarray,
                ndim: np.ndarray, sizes: np.ndarray, strides: np.ndarray, dtype: np.ndarray,
                device_type: np.ndarray, device_idx: np.ndarray) -> TraceArrays:
    """The arrays of ops given as columns: every scalar of each op in order (`scalar_counts`
    of them; the first MAX_SCALARS are kept), metas inputs then outputs, int64 grids."""
    starts = np.array(meta_starts_of((n_in + n_out).tolist()), dtype=np.int64)
    starts[starts == NONE32] = -1
    kept = np.minimum(scalar_counts, MAX_SCALARS)
    scalar_off = np.zeros(schema.size + 1, dtype=np.int64)
    np.cumsum(kept, out=scalar_off[1:])
    given = np.repeat(np.cumsum(scalar_counts) - scalar_counts, kept)
    rank = np.arange(int(scalar_off[-1]), dtype=np.int64) - np.repeat(scalar_off[:-1], kept)
    sizes, strides = sizes.view(np.uint64), strides.view(np.uint64)
    return TraceArrays(
        schema=schema, flags=flags, meta_start=starts, n_in=n_in, n_out=n_out,
        scalar_off=scalar_off, scalars=scalars.view(np.uint64)[given + rank], ptr=ptr,
        ndim=ndim, sizes=sizes, strides=strides, dtype=dtype, device_type=device_type,
        device_idx=device_idx, nbytes=storage_nbytes(ndim, sizes, strides, dtype))


def ops_of(recorded: list[RecordedOp], kernels: dict[int, int],
           errata: frozenset[str]) -> list[TraceOp]:
    return [trace_op_of(r, kernels, errata) for r in recorded]
