"""numba kernels for the CDAG region ops: the ops of a region as arrays <-> its file bytes.

The header, fixed fields and plan (a few dozen bytes) go through the spec; the per-op part of
a region (41-byte fixed records, TensorMetas, scalars, index arrays) is written and read by
the kernels below, one op per iteration, into preallocated buffers. A file the scan rejects is
read again by the spec, so the error names the same byte offset.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from ....spec.core.errata import NO_ERRATA
from ....spec.core.errors import InvalidInput
from ....spec.core.layout import leaves
from ....spec.core.registry import kernel
from ....spec.core.schema import BYTES
from ....spec.crucible.cdag import (
    DATA_PTR,
    E18_6,
    HEADER_SIZE,
    META_SIZE,
    OP_FIXED,
    REQUIRES_GRAD,
    RESERVED_OP_FLAGS,
    CdagRegion,
    Reader,
    check_op,
    decode_region,
    encode_region,
    op_body_size,
    read_region_head,
)
from ....spec.crucible.cdag_ops import region_from_wire, region_to_wire
from ....spec.crucible.content_hash import E8_3, E8_4, scalars_hashed
from ....spec.crucible.tensor_meta import MAX_DIMS, TENSOR_META
from ....spec.crucible.trace_entry import TraceOp, trace_op_from_wire
from ....spec.crucible.types import NONE32, unpack_op_flags
from ...core.content_batch import offsets
from ...core.layout_batch import leaf_table
from ...core.layout_columns import decode_columns, encode_columns
from ..core.layout import gather, scatter
from .content_hash import DIMMIX, content_into

OP_DTYPE = np.dtype({
    "names": ["schema_hash", "shape_hash", "scope_hash", "callsite_hash", "num_inputs",
              "num_outputs", "num_scalar_args", "grad_enabled", "op_flags", "kernel_id"],
    "formats": ["<u8", "<u8", "<u8", "<u8", "<u2", "<u2", "<u2", "u1", "u1", "u1"],
    "offsets": [0, 8, 16, 24, 32, 34, 36, 38, 39, 40], "itemsize": OP_FIXED})
"""The 41-byte fixed record of one op."""
GRAD, FLAGS = 38, 39
_LEAF = {leaf.path[0]: k for k, leaf in enumerate(leaves(TENSOR_META)) if len(leaf.path) == 1}
NDIM, DTYPE = _LEAF["ndim"], _LEAF["dtype"]
"""Leaf columns of a TensorMeta: sizes 0-7, strides 8-15, then ... ndim, dtype, device_type,
device_idx side by side."""
_TENSORS = ("inputs", "outputs", "input_trace_indices", "input_slot_ids", "output_slot_ids")
body_size = njit(cache=True)(op_body_size)
"""The spec's op_body_size, compiled for the scan."""


@njit(cache=True)
def encode_ops(fixed, metas, scalars, ids, out, pos):
    """Write each op's fixed record, metas (data_ptr 0), scalars and ids from `pos` on."""
    m = s = k = 0
    for i in range(fixed.shape[0]):
        f = fixed[i]
        out[pos:pos + OP_FIXED] = f
        pos += OP_FIXED
        nin = np.int64(f[32]) | np.int64(f[33]) << 8
        nout = np.int64(f[34]) | np.int64(f[35]) << 8
        nsa = np.int64(f[36]) | np.int64(f[37]) << 8
        for _ in range(nin + nout):
            out[pos:pos + META_SIZE] = metas[m]
            out[pos + DATA_PTR:pos + DATA_PTR + 8] = 0
            pos += META_SIZE
            m += 1
        out[pos:pos + 8 * nsa] = scalars[8 * s:8 * (s + nsa)]
        pos += 8 * nsa
        s += nsa
        nids = 2 * nin + nout
        out[pos:pos + 4 * nids] = ids[4 * k:4 * (k + nids)]
        pos += 4 * nids
        k += nids
    return pos


@njit(cache=True)
def scan_ops(buf, pos, num_ops, starts, totals, lenient):
    """Check every op's bytes (bounds; unless lenient, as the seed reads them (E18.6): bool
    bytes, reserved flag bits, data_ptr 0) and record where each begins; totals = metas,
    scalars, ids. Returns the end, or -1 if anything is wrong."""
    n = buf.size
    for i in range(num_ops):
        starts[i] = pos
        if pos + OP_FIXED > n:
            return -1
        if not lenient and (buf[pos + GRAD] > 1 or buf[pos + FLAGS] & RESERVED_OP_FLAGS):
            return -1
        nin = np.int64(buf[pos + 32]) | np.int64(buf[pos + 33]) << 8
        nout = np.int64(buf[pos + 34]) | np.int64(buf[pos + 35]) << 8
        nsa = np.int64(buf[pos + 36]) | np.int64(buf[pos + 37]) << 8
        pos += OP_FIXED
        if pos + body_size(nin, nout, nsa) > n:
            return -1
        for _ in range(nin + nout):
            if not lenient and buf[pos + REQUIRES_GRAD] > 1:
                return -1
            for b in range(8):
                if not lenient and buf[pos + DATA_PTR + b]:
                    return -1
            pos += META_SIZE
        pos += 8 * nsa + 4 * (2 * nin + nout)
        totals[0] += nin + nout
        totals[1] += nsa
        totals[2] += 2 * nin + nout
    starts[num_ops] = pos
    return pos


@njit(cache=True)
def decode_ops(buf, starts, fixed, metas, scalars, ids):
    """Copy each op's fixed record, metas, scalar bytes and id bytes out of the file; a bool
    byte reads as 0 or 1 and data_ptr as 0 (only a lenient scan lets other values through)."""
    m = s = k = 0
    for i in range(starts.size - 1):
        pos = starts[i]
        fixed[i] = buf[pos:pos + OP_FIXED]
        fixed[i, GRAD] = 1 if fixed[i, GRAD] else 0
        nin = np.int64(buf[pos + 32]) | np.int64(buf[pos + 33]) << 8
        nout = np.int64(buf[pos + 34]) | np.int64(buf[pos + 35]) << 8
        nsa = np.int64(buf[pos + 36]) | np.int64(buf[pos + 37]) << 8
        pos += OP_FIXED
        for _ in range(nin + nout):
            metas[m] = buf[pos:pos + META_SIZE]
            metas[m, DATA_PTR:DATA_PTR + 8] = 0
            metas[m, REQUIRES_GRAD] = 1 if metas[m, REQUIRES_GRAD] else 0
            pos += META_SIZE
            m += 1
        scalars[8 * s:8 * (s + nsa)] = buf[pos:pos + 8 * nsa]
        pos += 8 * nsa
        s += nsa
        nids = 2 * nin + nout
        ids[4 * k:4 * (k + nids)] = buf[pos:pos + 4 * nids]
        k += nids


@dataclass
class OpArrays:
    """A region's ops as arrays: fixed records (n x 41), metas (m x 168), scalar and id bytes."""

    fixed: np.ndarray
    metas: np.ndarray
    scalars: np.ndarray
    ids: np.ndarray


def meta_images(metas: list[dict]) -> np.ndarray:
    """TensorMeta images (m x 168) of field values, wire or Python, column at a time."""
    if not metas:
        return np.zeros((0, META_SIZE), dtype=np.uint8)
    table = leaf_table(TENSOR_META)
    return scatter(encode_columns(TENSOR_META, metas), table.offsets, table.sizes, META_SIZE)


def arrays_of(ops: list[TraceOp], images: np.ndarray) -> OpArrays:
    """The ops of a checked region (their metas already as images) as the kernels' arrays."""
    n = len(ops)
    fixed = np.zeros(n, dtype=OP_DTYPE)
    for name in ("schema_hash", "shape_hash", "scope_hash", "callsite_hash"):
        fixed[name] = [getattr(op, name) for op in ops]
    fixed["num_inputs"] = [len(op.inputs) for op in ops]
    fixed["num_outputs"] = [len(op.outputs) for op in ops]
    fixed["num_scalar_args"] = [op.num_scalar_args for op in ops]
    fixed["grad_enabled"] = [op.grad_enabled for op in ops]
    fixed["op_flags"] = [op.op_flags for op in ops]
    fixed["kernel_id"] = [op.kernel_id for op in ops]
    scalars = [v for op in ops for v in
               (op.scalar_args or [0] * op.num_scalar_args)[:op.num_scalar_args]]
    ids = [x for op in ops for name, n_ in (("input_trace_indices", len(op.inputs)),
                                            ("input_slot_ids", len(op.inputs)),
                                            ("output_slot_ids", len(op.outputs)))
           for x in (getattr(op, name) or [NONE32] * n_)]
    return OpArrays(fixed.view(np.uint8).reshape(n, OP_FIXED), images,
                    np.array(scalars, dtype="<i8").view(np.uint8),
                    np.array(ids, dtype="<u4").view(np.uint8))


def _ids_ok(ids, n: int) -> bool:
    """None, or n plain integers that fit a u32."""
    if ids is None:
        return True
    if not isinstance(ids, list) or len(ids) != n or not all(type(x) is int for x in ids):
        return False
    return not ids or (min(ids) >= 0 and max(ids) <= NONE32)


def fast_ops(wire_ops: list, errata: frozenset[str], need_hash: bool = True
             ) -> tuple[list[TraceOp], np.ndarray, int | None] | None:
    """The ops of a region's wire form with their metas parsed column at a time, and the
    content hash (by the numba chain, unless an erratum of it is on): None wherever the input
    is anything but plain, valid JSON, so that the spec's reader answers it instead."""
    ops, metas, nins = [], [], []
    for o in wire_ops:
        if not isinstance(o, dict) or not all(isinstance(o.get(k, []), list)
                                              for k in ("inputs", "outputs")):
            return None
        nin, nout = len(o.get("inputs", [])), len(o.get("outputs", []))
        if not all(_ids_ok(o.get(k), n) for k, n in (("input_trace_indices", nin),
                                                    ("input_slot_ids", nin),
                                                    ("output_slot_ids", nout))):
            return None
        op = trace_op_from_wire({k: v for k, v in o.items() if k not in _TENSORS}, "op")
        op.inputs, op.outputs = [None] * nin, [None] * nout
        for k in _TENSORS[2:]:
            setattr(op, k, o.get(k))
        check_op(op, "op")
        nins.append(nin)
        metas += [*o.get("inputs", []), *o.get("outputs", [])]
        ops.append(op)
    table = leaf_table(TENSOR_META)
    grid = encode_columns(TENSOR_META, metas) if metas else \
        np.zeros((0, len(table.offsets)), dtype=np.uint64)
    images = scatter(grid, table.offsets, table.sizes, META_SIZE)
    if not need_hash or {E8_3, E8_4} & errata:
        return ops, images, None
    starts = offsets([len(op.inputs) + len(op.outputs) for op in ops])[:-1]
    rows = np.array([a + j for a, n in zip(starts.tolist(), nins, strict=True)
                     for j in range(n)], dtype=np.int64)
    picked = grid[rows]
    if len(rows) and int(picked[:, NDIM].max()) > MAX_DIMS:
        return None
    return ops, images, chain_hash(ops, nins, picked)


def chain_hash(ops: list[TraceOp], nins: list[int], grid: np.ndarray) -> int:
    """The content hash of ops whose input metas are given as leaf rows (the numba chain)."""
    scalars = [scalars_hashed(op) for op in ops]
    byte = np.uint64(0xFF)
    packed = (grid[:, DTYPE] & byte) | (grid[:, DTYPE + 1] & byte) << np.uint64(8) | \
        (grid[:, DTYPE + 2] & byte) << np.uint64(16)
    out = np.empty(1, dtype=np.uint64)
    content_into(np.array([0, len(ops)], dtype=np.int64),
                 np.array([op.schema_hash for op in ops], dtype=np.uint64), offsets(nins),
                 offsets([len(s) for s in scalars]), grid[:, NDIM].astype(np.int64),
                 np.ascontiguousarray(grid[:, 0:8]), np.ascontiguousarray(grid[:, 8:16]),
                 packed, np.array([v for s in scalars for v in s], dtype=np.int64).view(
                     np.uint64), DIMMIX, out)
    return int(out[0])


def prepare_one(wire, errata: frozenset[str]) -> tuple[bytes, OpArrays]:
    """A region's header, fixed fields and plan (spec), and its ops as arrays: parsed column
    at a time when plain, else by the spec's reader."""
    fast = None
    if isinstance(wire, dict) and isinstance(wire.get("ops"), list):
        try:
            fast = fast_ops(wire["ops"], errata, "content_hash" not in wire)
        except InvalidInput:  # the spec's reader names the field
            fast = None
    if fast is None or (fast[2] is None and "content_hash" not in wire):
        r = region_from_wire(wire, errata)
        ops = r.ops
        images = meta_images([m for op in ops for m in (*op.inputs, *op.outputs)])
    else:
        ops, images, content = fast
        given = {"content_hash": wire.get("content_hash", content), "ops": []}
        if "first_op_schema" not in wire:
            given["first_op_schema"] = ops[0].schema_hash if ops else 0
        r = region_from_wire(wire | given, errata)
    head = bytearray(encode_region(replace(r, ops=[])))
    head[HEADER_SIZE:HEADER_SIZE + 4] = len(ops).to_bytes(4, "little")
    return bytes(head), arrays_of(ops, images)


def prepare_encode(region, errata=NO_ERRATA) -> list[tuple[bytes, OpArrays]]:
    """Per region: its header, fixed fields and plan, and its ops as arrays."""
    return [prepare_one(wire, errata) for wire in region]


def encode_core(prepared: list[tuple[bytes, OpArrays]]) -> list[bytes]:
    out = []
    for head, a in prepared:
        buf = np.empty(len(head) + a.fixed.size + a.metas.size + a.scalars.size + a.ids.size,
                       dtype=np.uint8)
        buf[:len(head)] = np.frombuffer(head, dtype=np.uint8)
        end = encode_ops(a.fixed, a.metas, a.scalars, a.ids, buf, len(head))
        out.append(buf[:end].tobytes())
    return out


def encode_batch(region, errata=NO_ERRATA) -> dict:
    return {"hex": BYTES.to_column(encode_core(prepare_encode(region, errata)))}


encode_batch.prepare, encode_batch.core = prepare_encode, encode_core


def decode_arrays(data: bytes, errata: frozenset[str] = NO_ERRATA
                  ) -> tuple[CdagRegion, OpArrays]:
    """Header, fixed fields and plan by the spec's reader (the region, less its ops); the ops
    as arrays by the kernels."""
    lenient = E18_6 in errata
    r = Reader(data)
    head, num_ops = read_region_head(r, lenient)  # num_ops is checked before it sizes anything
    buf = np.frombuffer(data, dtype=np.uint8)
    starts = np.empty(num_ops + 1, dtype=np.int64)
    totals = np.zeros(3, dtype=np.int64)
    end = scan_ops(buf, r.pos, num_ops, starts, totals, lenient)
    if end < 0 or (end != len(data) and not lenient):
        decode_region(data, errata)  # raises the spec's error, naming the offset
        raise AssertionError("the scan rejected a file the spec accepts")
    a = OpArrays(np.empty((num_ops, OP_FIXED), dtype=np.uint8),
                 np.empty((totals[0], META_SIZE), dtype=np.uint8),
                 np.empty(8 * totals[1], dtype=np.uint8), np.empty(4 * totals[2], dtype=np.uint8))
    decode_ops(buf, starts, a.fixed, a.metas, a.scalars, a.ids)
    return head, a


def decode_one(data: bytes, errata: frozenset[str] = NO_ERRATA) -> dict:
    head, a = decode_arrays(data, errata)
    return region_to_wire(head) | {"ops": ops_wire(a)}


def ops_wire(a: OpArrays) -> list[dict]:
    """The trace ops' wire form (as trace_op_to_wire gives it) from the decoded arrays."""
    f = a.fixed.reshape(-1).view(OP_DTYPE)
    table = leaf_table(TENSOR_META)
    metas = decode_columns(TENSOR_META, gather(a.metas, table.offsets, table.sizes)) \
        if len(a.metas) else []
    scalars, ids = a.scalars.view("<i8").tolist(), a.ids.view("<u4").tolist()
    cols = {name: f[name].tolist() for name in OP_DTYPE.names}
    out, m, s, k = [], 0, 0, 0
    for i in range(len(f)):
        nin, nout, nsa = (cols[c][i] for c in ("num_inputs", "num_outputs", "num_scalar_args"))
        inference, mutable, phase, torch_function = unpack_op_flags(cols["op_flags"][i])
        out.append({
            **{h: f"0x{cols[h][i]:016x}" for h in ("schema_hash", "shape_hash", "scope_hash",
                                                   "callsite_hash")},
            "inputs": metas[m:m + nin], "outputs": metas[m + nin:m + nin + nout],
            "scalar_args": scalars[s:s + nsa] if nsa else None, "num_scalar_args": nsa,
            "grad_enabled": cols["grad_enabled"][i] == 1, "inference_mode": bool(inference),
            "is_mutable": bool(mutable), "torch_function": bool(torch_function),
            "kernel_id": cols["kernel_id"][i], "training_phase": phase,
            "input_trace_indices": ids[k:k + nin] if nin else None,
            "input_slot_ids": ids[k + nin:k + 2 * nin] if nin else None,
            "output_slot_ids": ids[k + 2 * nin:k + 2 * nin + nout] if nout else None})
        m, s, k = m + nin + nout, s + nsa, k + 2 * nin + nout
    return out


def decode_batch(hex, errata=NO_ERRATA) -> dict:
    return {"region": [decode_one(b, errata) for b in BYTES.from_column(hex)]}


def prepare_decode(hex, errata=NO_ERRATA) -> tuple[list[bytes], frozenset[str]]:
    return BYTES.from_column(hex), errata


def decode_core(prepared) -> list[tuple[CdagRegion, OpArrays]]:
    files, errata = prepared
    return [decode_arrays(b, errata) for b in files]


decode_batch.prepare, decode_batch.core = prepare_decode, decode_core

kernel("cdag.encode", "numba", models=(E8_3, E8_4))(encode_batch)
kernel("cdag.decode", "numba", models=(E18_6,))(decode_batch)
