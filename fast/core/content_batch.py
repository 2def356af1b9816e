"""Batch layout of regions for the content-hash kernels: flat arrays of ops, input tensors
and scalars with offsets, parsed once by the spec's own reader."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...spec.crucible.content_hash import scalars_hashed, trace_ops_from_wire
from ...spec.crucible.tensor_meta import MAX_DIMS


@dataclass(frozen=True)
class Regions:
    """region_ops[r]:region_ops[r+1] are region r's ops; likewise op_inputs, op_scalars."""

    region_ops: np.ndarray
    schema: np.ndarray
    op_inputs: np.ndarray
    op_scalars: np.ndarray
    ndim: np.ndarray
    sizes: np.ndarray
    strides: np.ndarray
    packed: np.ndarray
    scalars: np.ndarray


def offsets(counts: list[int]) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def regions(batch: list) -> Regions:
    ops = [trace_ops_from_wire(r) for r in batch]
    flat = [op for region in ops for op in region]
    metas = [m for op in flat for m in op.inputs]
    scalars = [s for op in flat for s in scalars_hashed(op)]
    grid = np.zeros((len(metas), 2, MAX_DIMS), dtype=np.int64)
    for k, m in enumerate(metas):
        grid[k, 0], grid[k, 1] = m["sizes"], m["strides"]
    dtype = np.array([m["dtype"] for m in metas], dtype=np.int64) & 0xFF
    device = np.array([m["device_type"] for m in metas], dtype=np.int64) & 0xFF
    index = np.array([m["device_idx"] for m in metas], dtype=np.int64) & 0xFF
    return Regions(
        region_ops=offsets([len(r) for r in ops]),
        schema=np.array([op.schema_hash for op in flat], dtype=np.uint64),
        op_inputs=offsets([len(op.inputs) for op in flat]),
        op_scalars=offsets([len(scalars_hashed(op)) for op in flat]),
        ndim=np.array([m["ndim"] for m in metas], dtype=np.int64),
        sizes=grid[:, 0].view(np.uint64), strides=grid[:, 1].view(np.uint64),
        packed=(dtype | device << 8 | index << 16).astype(np.uint64),
        scalars=np.array(scalars, dtype=np.int64).view(np.uint64))
