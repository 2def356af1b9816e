"""Every field of one op of a .crtrace file, with its byte offset: the op record's members, then
the TensorMeta of each input and output (`inputs[1].sizes[0]`). The unit the trace diffs walk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..spec.core.errata import NO_ERRATA
from ..spec.core.errors import InvalidInput
from ..spec.core.layout import Leaf, leaf_name, leaves
from ..spec.crucible.crtrace import (
    DEFAULT_META,
    HEADER_SIZE,
    TRACE_OP_RECORD,
    Frame,
    LoadedTrace,
    entry_of,
    frame,
    parse_crtrace,
    read_meta,
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


@dataclass(frozen=True)
class OpShape:
    """What walking op i's fields needs: its tensor counts, its used scalars (at most 5) and
    its first meta (NONE32: none)."""

    num_inputs: int
    num_outputs: int
    scalars: int
    meta_start: int


@dataclass
class TraceFile:
    """A .crtrace image with its frame, for walking op by op. `read` checks it with the
    array loader (load_arrays: the spec loader's checks and errors) and keeps its columns;
    the spec's loaded form (`trace`) is made only when asked for."""

    data: bytes
    frame: Frame
    loaded: LoadedTrace | None = None
    columns: tuple | None = None
    """(TraceArrays, names) from load_arrays, when it read the file."""
    errata: frozenset[str] = field(default=NO_ERRATA)

    @classmethod
    def read(cls, data: bytes, errata: frozenset[str] = NO_ERRATA,
             arrays: bool = True) -> TraceFile:
        """Frame and load `data` (invalid_input naming the offset when it is no .crtrace).
        Where the array loader refuses a file, or `arrays` is false (no numba wanted), the
        spec's loader decides (E18.4 loads metas past the end that load_arrays refuses)."""
        f = frame(data, errata)
        if not arrays:
            return cls(data, f, parse_crtrace(data, errata), errata=errata)
        from ..fast.core.trace_file import load_arrays

        try:
            columns, _, _, names = load_arrays(data, errata)
        except InvalidInput:
            return cls(data, f, parse_crtrace(data, errata), errata=errata)
        return cls(data, f, None, (columns, names), errata)

    @property
    def trace(self) -> LoadedTrace:
        """The spec loader's form of the file, loaded on first use."""
        if self.loaded is None:
            self.loaded = parse_crtrace(self.data, self.errata)
        return self.loaded

    @property
    def names(self) -> dict[int, str]:
        return self.columns[1] if self.columns else self.trace.names

    @property
    def num_ops(self) -> int:
        return int(self.columns[0].schema.size) if self.columns else len(self.trace.entries)

    def shape(self, i: int) -> OpShape:
        """Op i's counts and first meta, from the columns or the loaded entries."""
        if self.columns:
            a = self.columns[0]
            start = int(a.meta_start[i])
            return OpShape(int(a.n_in[i]), int(a.n_out[i]),
                           int(a.scalar_off[i + 1] - a.scalar_off[i]),
                           NONE32 if start < 0 else start)
        e = self.trace.entries[i]
        return OpShape(e["num_inputs"], e["num_outputs"],
                       min(e["num_scalar_args"], MAX_SCALARS), self.trace.meta_starts[i])

    def ndim(self, k: int) -> int:
        """Meta k's ndim."""
        return int(self.columns[0].ndim[k]) if self.columns else self.trace.metas[k]["ndim"]

    def schema_hash(self, i: int) -> int:
        return int(self.columns[0].schema[i]) if self.columns else \
            self.trace.entries[i]["schema_hash"]

    def op_name(self, i: int) -> str:
        """The op's name from the trace's name table (keyed by schema hash), or '?'."""
        return self.names.get(self.schema_hash(i), "?")

    def op_bytes(self, i: int) -> bytes:
        """Op i's record and the records of its metas: equal bytes mean equal fields."""
        at = HEADER_SIZE + i * TRACE_OP_RECORD.size
        op = self.shape(i)
        record = self.data[at:at + TRACE_OP_RECORD.size]
        if op.meta_start == NONE32:
            return record
        n = op.num_inputs + op.num_outputs
        first = self.frame.meta_start + op.meta_start * self.frame.meta_size
        return record + self.data[first:first + n * self.frame.meta_size]

    def fields(self, i: int) -> list[Field]:
        """Op i's record members, then its inputs' and outputs' TensorMeta members."""
        at = HEADER_SIZE + i * TRACE_OP_RECORD.size
        out = [_field(leaf_name(leaf)[1:], self.data, at, leaf, None) for leaf in RECORD_LEAVES]
        op = self.shape(i)
        start = op.meta_start
        if start == NONE32:
            return out
        tensors = [f"inputs[{j}]" for j in range(op.num_inputs)] + \
                  [f"outputs[{j}]" for j in range(op.num_outputs)]
        for k, name in enumerate(tensors):
            base = self.frame.meta_start + (start + k) * self.frame.meta_size
            if start + k >= self.frame.num_metas or base + self.frame.meta_size > len(self.data):
                break  # past the metas, or past the end of a file cut short (trace_prefix)
            out.extend(_field(f"{name}{leaf_name(leaf)}", self.data, base, leaf, k)
                       for leaf in META_LEAVES if leaf.offset + leaf.size <= self.frame.meta_size)
        return out

    def window_trace(self, start: int, count: int) -> LoadedTrace:
        """Ops [start, start + count) and the metas they use as a trace of their own (meta
        starts rebased), each record and meta read as parse_crtrace reads it."""
        ops = [self.shape(i) for i in range(start, start + count)]
        used = [(op.meta_start, op.meta_start + op.num_inputs + op.num_outputs) for op in ops
                if op.meta_start != NONE32]
        lo, hi = (min(u[0] for u in used), max(u[1] for u in used)) if used else (0, 0)
        f, sub = self.frame, LoadedTrace(names=self.names)
        for i, op in enumerate(ops, start):
            at = HEADER_SIZE + i * TRACE_OP_RECORD.size
            r = TRACE_OP_RECORD.unpack(self.data[at:at + TRACE_OP_RECORD.size])
            sub.entries.append(entry_of(r))
            sub.scope_hashes.append(r["scope_hash"])
            sub.callsite_hashes.append(r["callsite_hash"])
            sub.meta_starts.append(NONE32 if op.meta_start == NONE32 else op.meta_start - lo)
        for k in range(lo, hi):
            at = f.meta_start + k * f.meta_size
            sub.metas.append(read_meta(self.data[at:at + f.meta_size] +
                                       DEFAULT_META[f.meta_size:], at, k))
        return sub

    def content_fields(self, i: int) -> list[Field]:
        """The fields of op i the content hash reads: used scalars and inputs' used dims."""
        op = self.shape(i)
        return [f for f in self.fields(i) if _hashed(f, op, self)]


def _hashed(f: Field, op: OpShape, t: TraceFile) -> bool:
    member, index = f.leaf.path[0], (f.leaf.path[1:] or (None,))[0]
    if f.tensor is None:
        return member in CONTENT_RECORD or (member == "scalar_values" and index < op.scalars)
    if f.tensor >= op.num_inputs:
        return False
    if member in ("sizes", "strides"):
        return index < t.ndim(op.meta_start + f.tensor)
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
