"""`synth`'s .crtrace written in bulk: the bytes of write_crtrace(synthetic_trace(...)), with no
per-op Python and a bounded buffer.

A synthetic trace is one iteration repeated (the last one cut), with activation pointers moved
by k activation spans in iteration k when storages are fresh; so is its file. The data:

1. The template (cached per shape and seed): the spec's own file of one iteration,
   write_crtrace(synthetic_trace(L, shape, seed)), cut into its L op records and M metas (read
   with the record dtypes RECORD and META) and its name table, with which metas are activations
   and how many metas the first i ops use (ends[i]). Every record and meta of a longer trace is
   one of these (a moved activation differs in data_ptr alone, which no check of the spec
   writer reads, so its checks of the template hold for every length); the name table is the
   same for every length.
2. The file, with full, tail = divmod(num_ops, L), is written as a stream of chunks: the header
   for num_ops and full * M + ends[tail] metas; the records; the metas; the name table.
3. Records: a block of `group` copies of the template's records, made once, written
   full // group times, then the rest of the whole iterations and the first `tail` records.
4. Metas: a block of `group` copies of the template's metas, made once. Without fresh
   storages it is written as the records are. With them, before each write of iterations
   k0 .. k0 + n - 1 the block's activation data_ptrs are set to the template's plus
   (k0 + j) * span in its copy j (through its META view); the cut iteration's metas are the
   first ends[tail] of the template's, moved by full * span.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .fast.core.trace_file import META, RECORD
from .spec.crucible.crtrace import HEADER_SIZE, header, write_crtrace
from .synthetic import iteration, synthetic_trace

GROUP_BYTES = 1 << 24
"""About how many bytes of whole iterations one chunk holds."""


@dataclass(frozen=True)
class Template:
    """One iteration's file cut into parts (step 1)."""

    records: np.ndarray
    metas: np.ndarray
    names: bytes
    moves: np.ndarray
    ends: np.ndarray
    span: int


@lru_cache(maxsize=8)
def template(shape: str, seed: int) -> Template:
    """Step 1: the spec writer's file of one iteration, cut into records, metas and names."""
    it = iteration(shape, seed)
    length, count = len(it.entries), len(it.metas)
    data = write_crtrace(synthetic_trace(length, shape, seed))
    meta_start = HEADER_SIZE + RECORD.itemsize * length
    meta_end = meta_start + META.itemsize * count
    tensors = [e["num_inputs"] + e["num_outputs"] for e in it.entries]
    return Template(
        records=np.frombuffer(data, RECORD, count=length, offset=HEADER_SIZE),
        metas=np.frombuffer(data, META, count=count, offset=meta_start),
        names=data[meta_end:], moves=np.array(it.moves, dtype=np.bool_),
        ends=np.cumsum([0, *tensors], dtype=np.int64), span=it.span)


def meta_count(num_ops: int, shape: str = "mlp", seed: int = 0) -> int:
    """The metas of synthetic_trace(num_ops, shape, seed)."""
    t = template(shape, seed)
    full, tail = divmod(num_ops, len(t.records))
    return full * len(t.metas) + int(t.ends[tail])


def file_size(num_ops: int, shape: str = "mlp", seed: int = 0) -> int:
    """The bytes of synthetic_file(num_ops, shape, seed) (fresh storages or not)."""
    t = template(shape, seed)
    metas = meta_count(num_ops, shape, seed)
    return HEADER_SIZE + RECORD.itemsize * num_ops + META.itemsize * metas + len(t.names)


def file_chunks(num_ops: int, shape: str = "mlp", seed: int = 0, fresh_storages: bool = False,
                group_bytes: int = GROUP_BYTES) -> Iterator[bytes | memoryview]:
    """write_crtrace(synthetic_trace(num_ops, shape, seed, fresh_storages)) as consecutive
    chunks; a chunk may be a view of a buffer the next one overwrites, so write it at once."""
    if num_ops < 0:
        raise ValueError(f"num_ops must be >= 0, got {num_ops}")
    t = template(shape, seed)
    full, tail = divmod(num_ops, len(t.records))
    group = max(1, min(full, group_bytes // (t.records.nbytes + t.metas.nbytes)))
    yield header(num_ops, meta_count(num_ops, shape, seed))  # 2
    yield from repeated(np.tile(t.records, group), full, group)  # 3
    yield t.records[:tail].tobytes()
    block = np.tile(t.metas, group)  # 4
    if fresh_storages:
        yield from moved(block, t, full, group)
    else:
        yield from repeated(block, full, group)
    cut = t.metas[:t.ends[tail]].copy()
    if fresh_storages:
        cut["data_ptr"][t.moves[:len(cut)]] += np.uint64(full * t.span)
    yield cut.tobytes()
    yield t.names


def repeated(block: np.ndarray, full: int, group: int) -> Iterator[memoryview]:
    """`full` iterations from a block of `group` of them (step 3)."""
    raw = block.view(np.uint8)
    per = len(raw) // group
    for k0 in range(0, full, group):
        yield memoryview(raw[:min(group, full - k0) * per])


def moved(block: np.ndarray, t: Template, full: int, group: int) -> Iterator[memoryview]:
    """`full` iterations' metas from a block of `group`, each copy's activations moved to its
    iteration (step 4)."""
    copies = block.reshape(group, len(t.metas))["data_ptr"]
    base = t.metas["data_ptr"][t.moves]
    span = np.arange(group, dtype=np.uint64)[:, None] * np.uint64(t.span)
    raw = block.view(np.uint8)
    for k0 in range(0, full, group):
        copies[:, t.moves] = base + span + np.uint64(k0 * t.span)
        yield memoryview(raw[:min(group, full - k0) * t.metas.nbytes])


def synthetic_file(num_ops: int, shape: str = "mlp", seed: int = 0,
                   fresh_storages: bool = False) -> bytes:
    """The whole file as bytes (file_chunks joined)."""
    return b"".join(file_chunks(num_ops, shape, seed, fresh_storages))
