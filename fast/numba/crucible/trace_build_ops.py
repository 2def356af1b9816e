"""`trace.build` on the wire, read and written by numba and numpy: serve's quick path for a batch
of traces (conformance/quick_batch.py), the long requests whose json module parse, per-value
decode and per-op dicts cost more than the build itself.

1. The items are `{"ops":[<op>,...]}` or `{"ops":[...],"kernels":[[<hash>,<id>],...]}`, compact
   (no whitespace). An op gives each of its fields at most once, in any order, but its inputs
   before its outputs; a meta gives each TensorMeta member at most once, its sizes and strides
   at most 8 long (the rest are 0), absent members their defaults; every value is an integer
   or boolean as `json_scan.read_value` reads it. Ops and metas go into rows of words.
2. Refused as well (then the usual path answers, with the error): a meta of more than 8
   dimensions, more than 65535 inputs, outputs or scalars in an op, too many kernels.
3. The rows become the build kernel's arrays (`arrays_from`), the kernel and the planner run,
   and each result is written as its compact JSON text a column at a time (`rows_text`):
   exactly the text of `graph_to_wire`'s dict, which the differential tests hold it to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit

from ....spec.core.layout import ArrayOf, Prim, bool_, default_of, hash64, u8
from ....spec.core.registry import REGISTRY
from ....spec.core.schema import Ragged
from ....spec.core.wire_columns import rows_text
from ....spec.crucible.ckernel import TABLE_CAP
from ....spec.crucible.tensor_meta import MAX_DIMS, TENSOR_META
from ....spec.crucible.tensor_slot import TENSOR_SLOT
from ....spec.crucible.trace_build_ops import EDGE_OUT, ENTRY_OUT, MAX_TENSORS, SLOT_OUT
from ....spec.crucible.types import unpack_op_flags
from ...core.trace_arrays import TraceArrays, arrays_from
from ..core.json_scan import (
    at,
    first_columns,
    next_item,
    read_field,
    read_object,
    read_value,
)
from .build_trace import Built, built_and_planned

_OPEN_OBJ, _CLOSE_OBJ, _OPEN_ARR, _CLOSE_ARR, _COMMA = 123, 125, 91, 93, 44
VALUE, INPUTS, OUTPUTS, SCALARS = 0, 1, 2, 3
"""What an op field holds: one value, its input metas, its output metas, its scalars."""
OP_FIELDS = {"schema_hash": hash64, "shape_hash": hash64, "scope_hash": hash64,
             "callsite_hash": hash64, "op_flags": u8, "grad_enabled": bool_,
             "inputs": INPUTS, "outputs": OUTPUTS, "scalars": SCALARS}
"""The fields of a recorded op: a scalar's C type, or what its list holds."""


def _names(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The `"name":` bytes of each field, concatenated, and where each starts."""
    tokens = [json.dumps(n).encode("ascii") + b":" for n in names]
    return (np.frombuffer(b"".join(tokens), dtype=np.uint8),
            np.cumsum([0, *map(len, tokens)]).astype(np.int64))


def _bits(ctype: Prim) -> int:
    """read_value's width of a scalar: its bits, 0 for a boolean."""
    return 0 if ctype.wire == "bool" else 8 * ctype.size


@dataclass(frozen=True)
class Tables:
    """The scanner's field tables: the op's and TensorMeta's (a meta row starts as `defaults`;
    member k is written from column first[k])."""

    op_names: np.ndarray
    op_offsets: np.ndarray
    op_kinds: np.ndarray
    op_bits: np.ndarray
    op_signed: np.ndarray
    meta_names: np.ndarray
    meta_offsets: np.ndarray
    meta_counts: np.ndarray
    meta_bits: np.ndarray
    meta_signed: np.ndarray
    meta_first: np.ndarray
    meta_defaults: np.ndarray
    meta_columns: dict[str, tuple[int, int]]

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The tables as the scanner takes them."""
        return (self.op_names, self.op_offsets, self.op_kinds, self.op_bits, self.op_signed,
                self.meta_names, self.meta_offsets, self.meta_counts, self.meta_bits,
                self.meta_signed, self.meta_first, self.meta_defaults)


@cache
def tables() -> Tables:
    members, defaults = TENSOR_META.wire_members
    elements = {n: p.member.ctype.elem if isinstance(p.member.ctype, ArrayOf) else
                p.member.ctype for n, p in members.items()}
    counts = [p.member.ctype.count if isinstance(p.member.ctype, ArrayOf) else 0
              for p in members.values()]
    first = first_columns(np.array(counts, dtype=np.int64))
    row = np.zeros(int(np.maximum(counts, 1).sum()), dtype=np.uint64)
    for (name, p), at_ in zip(members.items(), first.tolist(), strict=True):
        value = defaults[name] if name in defaults else default_of(p.member.ctype,
                                                                  p.member.default)
        if not isinstance(value, list):
            row[at_] = int(value) & 0xFFFFFFFFFFFFFFFF
    ops = list(OP_FIELDS.values())
    return Tables(
        *_names(list(OP_FIELDS)),
        np.array([VALUE if isinstance(t, Prim) else t for t in ops], dtype=np.int64),
        np.array([_bits(t) if isinstance(t, Prim) else 64 for t in ops], dtype=np.int64),
        np.array([isinstance(t, Prim) and t.signed for t in ops], dtype=np.bool_),
        *_names(list(members)), np.array(counts, dtype=np.int64),
        np.array([_bits(t) for t in elements.values()], dtype=np.int64),
        np.array([t.signed for t in elements.values()], dtype=np.bool_), first, row,
        {n: (f, max(c, 1)) for n, f, c in zip(members, first.tolist(), counts, strict=True)})


@njit(cache=True)
def _op(buf, i, tables, row, metas, m, scalars, s, seen_op, seen_meta):
    """Read the op at buf[i] into `row` (a value, or a list's length), its metas into metas
    from row m, its scalars into scalars from s: (next index or -1, m, s). `tables` is
    `Tables.arrays()`."""
    (op_names, op_offsets, op_kinds, op_bits, op_signed, meta_names, meta_offsets, meta_counts,
     meta_bits, meta_signed, meta_first, meta_defaults) = tables
    if at(buf, i) != _OPEN_OBJ:
        return -1, m, s
    i += 1
    seen_op[:] = False
    row[:] = 0
    if at(buf, i) == _CLOSE_OBJ:
        return i + 1, m, s
    outputs_seen = False
    while True:
        k = read_field(buf, i, op_names, op_offsets)
        if k < 0 or seen_op[k]:
            return -1, m, s
        seen_op[k] = True
        i += op_offsets[k + 1] - op_offsets[k]
        kind = op_kinds[k]
        if kind == VALUE:
            row[k], i = read_value(buf, i, op_bits[k], op_signed[k])
            if i < 0:
                return -1, m, s
        else:
            if at(buf, i) != _OPEN_ARR or (kind == INPUTS and outputs_seen):
                return -1, m, s
            outputs_seen = outputs_seen or kind == OUTPUTS
            i += 1
            count = 0
            while at(buf, i) != _CLOSE_ARR:
                if count > 0:
                    if at(buf, i) != _COMMA:
                        return -1, m, s
                    i += 1
                if kind == SCALARS:
                    if s >= scalars.size:
                        return -1, m, s
                    scalars[s], i = read_value(buf, i, 64, True)
                    s += 1
                else:
                    if m >= metas.shape[0]:
                        return -1, m, s
                    metas[m, :] = meta_defaults
                    i = read_object(buf, i, meta_names, meta_offsets, meta_counts, False,
                                    meta_bits, meta_signed, meta_first, metas[m], seen_meta)
                    m += 1
                if i < 0:
                    return -1, m, s
                count += 1
            i += 1
            row[k] = count
        c = at(buf, i)
        if c == _CLOSE_OBJ:
            return i + 1, m, s
        if c != _COMMA:
            return -1, m, s
        i += 1


@njit(cache=True)
def _kernels(buf, i, kernels, n):
    """Read the `[[hash, id],...]` at buf[i] into kernels from row n: (next index or -1, n)."""
    if at(buf, i) != _OPEN_ARR:
        return -1, n
    i += 1
    first = n
    while at(buf, i) != _CLOSE_ARR:
        if n > first:
            if at(buf, i) != _COMMA:
                return -1, n
            i += 1
        if n >= kernels.shape[0] or at(buf, i) != _OPEN_ARR:
            return -1, n
        kernels[n, 0], i = read_value(buf, i + 1, 64, False)
        if i < 0 or at(buf, i) != _COMMA:
            return -1, n
        kernels[n, 1], i = read_value(buf, i + 1, 8, False)
        if i < 0 or at(buf, i) != _CLOSE_ARR:
            return -1, n
        n += 1
        i += 1
    return i + 1, n


@njit(cache=True)
def _ops(buf, i, tables, ops, n, metas, m, scalars, s, seen_op, seen_meta):
    """Read the `[<op>,...]` at buf[i]: (next index or -1, n, m, s) as `_op` counts them."""
    if at(buf, i) != _OPEN_ARR:
        return -1, n, m, s
    i += 1
    first = n
    while at(buf, i) != _CLOSE_ARR:
        if n > first:
            if at(buf, i) != _COMMA:
                return -1, n, m, s
            i += 1
        if n >= ops.shape[0]:
            return -1, n, m, s
        i, m, s = _op(buf, i, tables, ops[n], metas, m, scalars, s, seen_op, seen_meta)
        if i < 0:
            return -1, n, m, s
        n += 1
    return i + 1, n, m, s


@njit(cache=True)
def scan_traces(buf, item_names, item_offsets, tables, items, ops, metas, scalars,
                kernels) -> int:
    """Read the comma-separated trace items filling `buf` (step 1): items[t] = the ends of item
    t's ops, metas, scalars and kernels. The number of items, or -1."""
    seen_op = np.zeros(tables[2].size, dtype=np.bool_)
    seen_meta = np.zeros(tables[7].size, dtype=np.bool_)
    t, i, n, m, s, k = 0, 0, 0, 0, 0, 0
    while True:
        if at(buf, i) != _OPEN_OBJ or t >= items.shape[0]:
            return -1
        i += 1
        given = 0
        while given == 0 or at(buf, i) == _COMMA:
            i += 1 if given else 0
            field = read_field(buf, i, item_names, item_offsets)
            if field < 0 or given & (1 << field):
                return -1
            given |= 1 << field
            i += item_offsets[field + 1] - item_offsets[field]
            if field == 0:
                i, n, m, s = _ops(buf, i, tables, ops, n, metas, m, scalars, s, seen_op,
                                  seen_meta)
            else:
                i, k = _kernels(buf, i, kernels, k)
            if i < 0:
                return -1
        if at(buf, i) != _CLOSE_OBJ or not given & 1:
            return -1
        items[t, 0], items[t, 1], items[t, 2], items[t, 3] = n, m, s, k
        t += 1
        i = next_item(buf, i + 1)
        if i < 0 or i == buf.size:
            return t if i == buf.size else -1


@dataclass
class ScannedTrace:
    """One item as read: per op its field words, its metas' rows, its scalars, its CKernel
    registrations in order (hash, id)."""

    ops: np.ndarray
    metas: np.ndarray
    scalars: np.ndarray
    kernels: np.ndarray


_ITEM_FIELDS = _names(["ops", "kernels"])


def scan(items: np.ndarray) -> list[ScannedTrace] | None:
    """The trace items in `items` (the bytes between a batch's brackets), or None where step 1
    or 2 refuses them."""
    tb = tables()  # rows for every '{', ',' and '[' of the line: untouched rows cost no memory
    objects = int(np.count_nonzero(items == _OPEN_OBJ))
    commas = int(np.count_nonzero(items == _COMMA)) + 1
    ends = np.zeros((objects, 4), dtype=np.int64)
    ops = np.empty((objects, tb.op_kinds.size), dtype=np.uint64)
    metas = np.empty((objects, tb.meta_defaults.size), dtype=np.uint64)
    scalars = np.empty(commas, dtype=np.uint64)
    kernels = np.empty((int(np.count_nonzero(items == _OPEN_ARR)), 2), dtype=np.uint64)
    t = scan_traces(items, *_ITEM_FIELDS, tb.arrays(), ends, ops, metas, scalars, kernels)
    if t <= 0:
        return None
    out, start = [], np.zeros(4, dtype=np.int64)
    for end in ends[:t]:
        trace = ScannedTrace(ops[start[0]:end[0]], metas[start[1]:end[1]],
                             scalars[start[2]:end[2]], kernels[start[3]:end[3]])
        ndim = trace.metas[:, tb.meta_columns["ndim"][0]]
        lists = trace.ops[:, tb.op_kinds != VALUE]
        if (lists.size and lists.max() > MAX_TENSORS) or \
                (ndim.size and ndim.max() > MAX_DIMS) or len(trace.kernels) > TABLE_CAP:
            return None
        out.append(trace)
        start = end
    return out


def trace_arrays(trace: ScannedTrace) -> tuple[TraceArrays, np.ndarray]:
    """The build kernel's arrays of a scanned trace, and each meta's layout."""
    tb, names = tables(), list(OP_FIELDS)
    col = {n: trace.ops[:, k] for k, n in enumerate(names)}

    def member(name: str, dtype: type) -> np.ndarray:
        first, width = tb.meta_columns[name]
        block = trace.metas[:, first:first + width]
        return (block if width > 1 else block[:, 0]).astype(dtype)

    arrays = arrays_from(
        schema=np.ascontiguousarray(col["schema_hash"]), flags=col["op_flags"].astype(np.uint8),
        n_in=col["inputs"].astype(np.int64), n_out=col["outputs"].astype(np.int64),
        scalar_counts=col["scalars"].astype(np.int64), scalars=trace.scalars.view(np.int64),
        ptr=member("data_ptr", np.uint64), ndim=member("ndim", np.int64),
        sizes=member("sizes", np.uint64).view(np.int64),
        strides=member("strides", np.uint64).view(np.int64),
        dtype=member("dtype", np.uint8).view(np.int8).astype(np.int64),
        device_type=member("device_type", np.uint8).view(np.int8).astype(np.int64),
        device_idx=member("device_idx", np.uint8).view(np.int8).astype(np.int64))
    return arrays, member("layout", np.uint8).view(np.int8)


def answer_texts(items: np.ndarray, errata: frozenset[str]) -> list[str] | None:
    """Each trace item's result as compact JSON text, or None where `scan` refuses them."""
    scanned = scan(items)
    if scanned is None:
        return None
    out = []
    for trace in scanned:
        a, layout = trace_arrays(trace)
        out.append(graph_text(a, layout, trace.kernels, *built_and_planned(a, errata)))
    return out


def _ragged(values: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> Ragged:
    """values[starts[i]:starts[i] + counts[i]] per row (starts of empty rows are ignored)."""
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    index = np.repeat(starts - offsets[:-1], counts) + np.arange(int(offsets[-1]))
    return Ragged(values[index], offsets)


def _csr(keys: np.ndarray, n: int) -> tuple[np.ndarray, list[int]]:
    """A stable order of edges by key, and the n + 1 group offsets."""
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=offsets[1:])
    return np.argsort(keys, kind="stable"), offsets.tolist()


def _kernel_ids(schema: np.ndarray, kernels: np.ndarray) -> np.ndarray:
    """Each op's kernel_id: its schema's last registration, else 0 (as kernels_from_wire)."""
    table = dict(zip(kernels[:, 0].tolist(), kernels[:, 1].tolist(), strict=True))
    return np.array([table.get(h, 0) for h in schema.tolist()], dtype=np.uint64)


def graph_text(a: TraceArrays, layout: np.ndarray, kernels: np.ndarray, b: Built,
               offsets: np.ndarray, pool: int) -> str:
    """`graph_to_wire`'s dict of the built trace, as the encoder writes it."""
    n = a.schema.size
    flags = unpack_op_flags(a.flags.astype(np.int64))
    starts = np.maximum(a.meta_start, 0)
    ops = dict(zip(("inference_mode", "is_mutable", "training_phase", "torch_function"),
                   (flags[0].astype(np.bool_), flags[1].astype(np.bool_), flags[2],
                    flags[3].astype(np.bool_)), strict=True))
    ops |= {"kernel_id": _kernel_ids(a.schema, kernels), "num_inputs": a.n_in,
            "num_outputs": a.n_out, "num_scalar_args": np.diff(a.scalar_off),
            "input_trace_indices": _ragged(b.meta_trace, starts, a.n_in),
            "input_slot_ids": _ragged(b.meta_slot, starts, a.n_in),
            "output_slot_ids": _ragged(b.meta_slot, starts + a.n_in, a.n_out)}
    fwd, fwd_offsets = _csr(b.edges[:, 0], n)
    _, rev_offsets = _csr(b.edges[:, 1], n)
    edges = dict(zip(EDGE_OUT.fields, b.edges[fwd].T, strict=True))
    slots = b.slots
    ids = np.arange(len(slots), dtype=np.int64)
    raw = np.zeros(len(slots), dtype=TENSOR_SLOT.np_dtype())
    meta = slots[:, 4]
    for name, values in (("offset_bytes", offsets), ("nbytes", slots[:, 0]),
                         ("birth_op", slots[:, 1]), ("death_op", slots[:, 2]),
                         ("dtype", a.dtype[meta]), ("device_type", a.device_type[meta]),
                         ("device_idx", a.device_idx[meta]), ("layout", layout[meta]),
                         ("is_external", slots[:, 3]), ("slot_id", ids)):
        raw[name] = values.astype(raw.dtype[name])
    slot_cols = {"slot_id": ids, "nbytes": slots[:, 0].astype(np.uint64),
                 "birth_op": slots[:, 1], "death_op": slots[:, 2],
                 "is_external": slots[:, 3].astype(np.bool_), "offset_bytes": offsets,
                 "raw_hex": Ragged(raw.view(np.uint8).reshape(-1),
                                   np.arange(len(slots) + 1, dtype=np.int64) * raw.itemsize)}
    texts = {"ops": _records(ENTRY_OUT, ops, n), "edges": _records(EDGE_OUT, edges, len(fwd)),
             "fwd_offsets": _ints(fwd_offsets), "rev_offsets": _ints(rev_offsets),
             "slots": _records(SLOT_OUT, slot_cols, len(slots))}
    values = {"pool_bytes": pool, "num_external": int(slots[:, 3].sum()),
              "content_hash": b.content_hash}
    fields = REGISTRY.ops["trace.build"].result.fields
    return "{" + ",".join(json.dumps(k) + ":" + (texts[k] if k in texts else
                                                 json.dumps(f.type.encode(values[k])))
                          for k, f in fields.items()) + "}"


def _records(rec, columns: dict, n: int) -> str:
    if n == 0:
        return "[]"
    return "[" + ",".join(rows_text(rec, columns, n)) + "]"


def _ints(values: list[int]) -> str:
    return "[" + ",".join(map(str, values)) + "]"
