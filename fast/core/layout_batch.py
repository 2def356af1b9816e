"""Batch adapters for `layout.decode` / `layout.encode`, shared by both backends.

Records are grouped by struct; a backend supplies the kernel pair that moves leaf values
between an (n, sizeof) byte matrix and an (n, leaves) uint64 matrix; `layout_columns` turns
that matrix into wire field values and back, one member at a time across the batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from ...spec.core.layout import Struct, leaves
from ...spec.core.layout_ops import find_struct
from ...spec.core.schema import BYTES, Utf8
from .layout_columns import decode_columns, encode_columns

Gather = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
Scatter = Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]


@dataclass(frozen=True)
class LeafTable:
    """Byte offset and size of every leaf of one struct, as kernel inputs."""

    offsets: np.ndarray
    sizes: np.ndarray


@cache
def leaf_table(s: Struct) -> LeafTable:
    ls = leaves(s)
    return LeafTable(np.array([x.offset for x in ls], dtype=np.int64),
                     np.array([x.size for x in ls], dtype=np.int64))


def _groups(names: list[str]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        groups.setdefault(name, []).append(i)
    return groups


def decode_batch(struct, hex, gather: Gather) -> dict:
    """layout.decode over a batch: gather leaves per struct, then rebuild the fields."""
    names = Utf8().from_column(struct)
    images = BYTES.from_column(hex)
    out: list = [None] * len(names)
    for name, idx in _groups(names).items():
        s = find_struct(name)
        table = leaf_table(s)
        records = np.frombuffer(b"".join(images[i] for i in idx), dtype=np.uint8)
        raw = gather(records.reshape(len(idx), s.size), table.offsets, table.sizes)
        for fields, i in zip(decode_columns(s, raw), idx, strict=True):
            out[i] = fields
    return {"fields": out}


def encode_batch(struct, fields, scatter: Scatter) -> dict:
    """layout.encode over a batch: parse the fields, then scatter leaves into zeroed records."""
    names = Utf8().from_column(struct)
    out: list = [None] * len(names)
    for name, idx in _groups(names).items():
        s = find_struct(name)
        table = leaf_table(s)
        values = encode_columns(s, [fields[i] for i in idx])
        records = scatter(values, table.offsets, table.sizes, s.size)
        for row, i in zip(records, idx, strict=True):
            out[i] = row.tobytes()
    return {"hex": BYTES.to_column(out)}

