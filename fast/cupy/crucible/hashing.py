"""cupy kernels for the chapter 8 hashes: data-parallel over the batch."""

from __future__ import annotations

import numpy as np

from ....spec.core.registry import kernel
from ...core import bits
from ..core.xp import to_device, to_host, xp


@kernel("hash.fmix64", "cupy")
def fmix64_batch(x):
    return {"out": to_host(bits.fmix64(to_device(x)))}


@kernel("hash.wymix", "cupy")
def wymix_batch(a, b):
    return {"out": to_host(bits.wymix(to_device(a), to_device(b)))}


@kernel("hash.kdimmix", "cupy")
def kdimmix_batch(index):
    i = to_device(index.astype(np.uint64))
    return {"out": to_host((i + np.uint64(1)) * bits.PHI_U64)}


def fnv1a_ragged(values, offsets):
    """FNV-1a of every item, one step per byte position across all items still running."""
    m = xp()
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    h = m.full(lengths.shape[0], bits.FNV_OFFSET_U64, dtype=m.uint64)
    longest = int(lengths.max()) if lengths.shape[0] else 0
    for t in range(longest):
        active = m.nonzero(lengths > t)[0]
        h[active] = bits.fnv1a_step(h[active], values[starts[active] + t].astype(m.uint64))
    return h


def fnv1a_column(ragged):
    return fnv1a_ragged(to_device(ragged.values), to_device(ragged.offsets))


@kernel("hash.fnv1a", "cupy")
def fnv1a_batch(data):
    return {"out": to_host(fnv1a_column(data))}


@kernel("hash.schema", "cupy")
def schema_hash_batch(name):
    present, names = name
    return {"out": to_host(xp().where(to_device(present), fnv1a_column(names), np.uint64(0)))}


@kernel("hash.scope", "cupy")
def scope_hash_batch(path):
    present, paths = path
    return {"out": to_host(xp().where(to_device(present), fnv1a_column(paths), np.uint64(0)))}


def shape_bytes(sizes, tensor_offsets, item_offsets):
    """The ShapeHash byte stream of every item: per tensor, ndim byte then 8 bytes per size."""
    m = xp()
    ndim = tensor_offsets[1:] - tensor_offsets[:-1]
    tensor_len = 1 + 8 * ndim
    tensor_start = m.zeros(ndim.shape[0] + 1, dtype=m.int64)
    m.cumsum(tensor_len, out=tensor_start[1:])
    stream = m.zeros(int(tensor_start[-1]), dtype=m.uint8)
    stream[tensor_start[:-1]] = ndim.astype(m.uint8)
    owner = m.repeat(m.arange(ndim.shape[0]), ndim)
    k = m.arange(sizes.shape[0]) - tensor_offsets[owner]
    size_at = tensor_start[owner] + 1 + 8 * k
    size_bytes = sizes.view(m.uint8).reshape(-1, 8)
    for b in range(8):
        stream[size_at + b] = size_bytes[:, b]
    return stream, tensor_start[item_offsets]


@kernel("hash.shape", "cupy")
def shape_hash_batch(shapes):
    tensors = shapes.values
    stream, offsets = shape_bytes(to_device(tensors.values), to_device(tensors.offsets),
                                  to_device(shapes.offsets))
    return {"out": to_host(fnv1a_ragged(stream, offsets))}
