"""Every field of one op of a .crtrace file, with its byte offset: the op record's members, then
the TensorMeta of each input and output (`inputs[1].sizes[0]`). The unit the trace diffs walk.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..spec.core.errata import NO_ERRATA
from ..spec.core.layout import Leaf, leaf_name, leaves
from ..spec.crucible.crtrace import (
    HEADER_SIZE,
    TRACE_OP_RECORD,
    Frame,
    LoadedTrace,
    frame,
    parse_crtrace,
)
from ..spec.crucible.tensor_meta import TENSOR_META
from ..spec.crucible.trace_ring import MAX_SCALARS
from ..spec.crucible.types import NONE32

RECORD_LEAVES = leaves(TRACE_OP_RECORD)
META_LEAVES = leaves(TENSOR_META)
CONTENT_RECORD = ("schema_hash", "num_inputs", "num_scalars")
CONTENT_META = ("ndim", "dtype", "device_type", "device_idx")
"""What the content hash reads of an op (chapter 9), with its used scalars and its inputs' used
dims: two regions are the same iteration when these agree op by op; pointers, outputs, names
and flags are not hashed."""
CONTEXT_FIELDS = ("shape_hash", "scope_hash", "callsite_hash")
"""Recorded with each op, not hashed: shown as context when an op of a region differs."""


@dataclass(frozen=True)
class Field:
    """One field of an op: its path below the op, byte offset in the file, raw bytes, and which
    of the op's tensors it belongs to (None: the op record)."""

    path: str
    offset: int
    raw: bytes
    leaf: Leaf
    tensor: int | None = None

    @property
    def text(self) -> str:
        return show_leaf(self.leaf, self.raw)


@dataclass
class TraceFile:
    """A .crtrace image with its frame and loaded form, for walking op by op."""

    data: bytes
    frame: Frame
    trace: LoadedTrace

    @classmethod
    def read(cls, data: bytes, errata: frozenset[str] = NO_ERRATA) -> TraceFile:
        """Frame and load `data` (invalid_input naming the offset when it is no .crtrace)."""
        return cls(data, frame(data, errata), parse_crtrace(data, errata))

    @property
    def num_ops(self) -> int:
        return len(self.trace.entries)

    def op_name(self, i: int) -> str:
        """The op's name from the trace's name table (keyed by schema hash), or '?'."""
        return self.trace.names.get(self.trace.entries[i]["schema_hash"], "?")

    def op_bytes(self, i: int) -> bytes:
        """Op i's record and the records of its metas: equal bytes mean equal fields."""
        at = HEADER_SIZE + i * TRACE_OP_RECORD.size
        entry, start = self.trace.entries[i], self.trace.meta_starts[i]
        record = self.data[at:at + TRACE_OP_RECORD.size]
        if start == NONE32:
            return record
        n = entry["num_inputs"] + entry["num_outputs"]
        first = self.frame.meta_start + start * self.frame.meta_size
        return record + self.data[first:first + n * self.frame.meta_size]

    def fields(self, i: int) -> list[Field]:
        """Op i's record members, then its inputs' and outputs' TensorMeta members."""
        at = HEADER_SIZE + i * TRACE_OP_RECORD.size
        out = [_field(leaf_name(leaf)[1:], self.data, at, leaf, None) for leaf in RECORD_LEAVES]
        entry, start = self.trace.entries[i], self.trace.meta_starts[i]
        if start == NONE32:
            return out
        tensors = [f"inputs[{j}]" for j in range(entry["num_inputs"])] + \
                  [f"outputs[{j}]" for j in range(entry["num_outputs"])]
        for k, name in enumerate(tensors):
            base = self.frame.meta_start + (start + k) * self.frame.meta_size
            if start + k >= self.frame.num_metas or base + self.frame.meta_size > len(self.data):
                break  # past the metas, or past the end of a file cut short (trace_prefix)
            out.extend(_field(f"{name}{leaf_name(leaf)}", self.data, base, leaf, k)
                       for leaf in META_LEAVES if leaf.offset + leaf.size <= self.frame.meta_size)
        return out

    def content_fields(self, i: int) -> list[Field]:
        """The fields of op i the content hash reads: used scalars and inputs' used dims."""
        entry, start = self.trace.entries[i], self.trace.meta_starts[i]
        return [f for f in self.fields(i) if _hashed(f, entry, self.trace.metas, start)]


def _hashed(f: Field, entry: dict, metas: list[dict], start: int) -> bool:
    member, index = f.leaf.path[0], (f.leaf.path[1:] or (None,))[0]
    if f.tensor is None:
        return member in CONTENT_RECORD or (
            member == "scalar_values" and index < min(entry["num_scalar_args"], MAX_SCALARS))
    if f.tensor >= entry["num_inputs"]:
        return False
    if member in ("sizes", "strides"):
        return index < metas[start + f.tensor]["ndim"]
    return member in CONTENT_META


def _field(path: str, data: bytes, base: int, leaf: Leaf, tensor: int | None) -> Field:
    at = base + leaf.offset
    return Field(path, at, data[at:at + leaf.size], leaf, tensor)


def show_leaf(leaf: Leaf | None, raw: bytes) -> str:
    """A field's value as the spec prints it: hex for hashes and pointers, bool, or decimal."""
    value = int.from_bytes(raw, "little", signed=bool(leaf and leaf.signed))
    if leaf is None or leaf.wire == "pad":
        return raw.hex()
    if leaf.wire == "hex":
        return f"0x{value:0{2 * leaf.size}x}"
    return str(bool(value)) if leaf.wire == "bool" and value < 2 else str(value)
