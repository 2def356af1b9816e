"""numba kernel for build_trace: the pointer map as an open-addressing table, slots, edges
and the streaming content hash, all in flat arrays (and the seed's errata E6.1, E6.4, E6.5,
E8.3 and E8.4 as switches). The size and stride grids are passed C-contiguous (the trace arrays
hold strided views of one grid), so build_into compiles for one signature."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.build_trace import E6_1, E6_4, E6_5, Edge, Slot, TraceGraph, slot_caps
from ....spec.crucible.content_hash import E8_3
from ....spec.crucible.hashing import KDIMMIX
from ....spec.crucible.memory_plan import Plan
from ....spec.crucible.trace_build_ops import graph_to_wire, kernels_from_wire
from ....spec.crucible.trace_entry import TraceOp
from ....spec.crucible.types import NONE32
from ...core import bits
from ...core.trace_arrays import TraceArrays, arrays_of, ops_of
from ...core.wire_structs import decoded_ops
from .memory_plan import plan_arrays

DIMMIX = np.array(KDIMMIX, dtype=np.uint64)
NONE = np.int64(NONE32)


@njit(cache=True)
def _mix(h, x, keep_zero):
    if keep_zero:
        return bits.wymix(h, x)
    return bits.wymix(h if h != 0 else bits.PHI_U64, x if x != 0 else bits.PHI_U64)


@njit("void(int64[:, ::1], int64, int64, int64, int64, int64, int64)", cache=True)
def _row(a, k, v0, v1, v2, v3, v4):
    """a[k] = (v0..v4); an explicit signature, as the constants among the arguments would
    otherwise compile it once per pattern of literals (eight)."""
    a[k, 0], a[k, 1], a[k, 2], a[k, 3], a[k, 4] = v0, v1, v2, v3, v4


@njit(cache=True)
def _find(keys, used, p, mask):
    """The table position of pointer p: where it is, or the empty one it would take."""
    k = ((p * bits.PHI_U64) >> np.uint64(32)) & mask
    while used[k] and keys[k] != p:
        k = (k + np.uint64(1)) & mask
    return k


@njit(cache=True)
def build_into(t_schema, t_flags, t_meta, t_nin, t_nout, t_sc, scalars, ptr, ndim, sizes,
               strides, packed, nbytes, dimmix, e61, e64, cap, e83,
               meta_trace, meta_slot, edges, slots, out):
    """edges[k] = (src, dst, src_port, dst_port, kind); slots[k] = (nbytes, birth, death,
    external, meta); out = [edge count, slot count, content hash]."""
    size = 16
    while size < 2 * ptr.size + 16:
        size *= 2
    mask = np.uint64(size - 1)
    keys = np.zeros(size, dtype=np.uint64)
    used = np.zeros(size, dtype=np.bool_)
    e_op = np.zeros(size, dtype=np.int64)
    e_port = np.zeros(size, dtype=np.int64)
    e_slot = np.zeros(size, dtype=np.int64)
    n_edges = 0
    n_slots = 0
    h = bits.PHI_U64
    for i in range(t_schema.size):
        h = _mix(h, t_schema[i], e83)
        if t_meta[i] < 0 and e61:
            continue
        base = t_meta[i]
        for j in range(t_nin[i]):
            m = base + j
            fold = np.uint64(0)
            for d in range(ndim[m]):
                fold ^= sizes[m, d] * dimmix[d]
                fold ^= strides[m, d] * dimmix[d + 8]
            h = _mix(h ^ fold, packed[m], e83)
        for s in range(t_sc[i], t_sc[i + 1]):
            h = bits.fnv1a_step(h, scalars[s])
        if base < 0:
            continue
        for j in range(t_nin[i]):
            m = base + j
            meta_trace[m] = NONE
            meta_slot[m] = NONE
            p = ptr[m]
            if p == 0:
                continue
            k = _find(keys, used, p, mask)
            if used[k] and e_op[k] != NONE:
                meta_trace[m] = e_op[k]
                meta_slot[m] = e_slot[k]
                _row(edges, n_edges, e_op[k], i, e_port[k], j & 0xFF, 0)
                n_edges += 1
                if e_slot[k] < n_slots:
                    slots[e_slot[k], 2] = max(slots[e_slot[k], 2], i)
            elif used[k] and not e64:
                sid = e_slot[k]
                meta_slot[m] = sid
                slots[sid, 2] = max(slots[sid, 2], i)
                slots[sid, 0] = max(slots[sid, 0], nbytes[m])
            elif cap < 0 or n_slots < cap:
                sid = n_slots
                n_slots += 1
                _row(slots, sid, nbytes[m], 0, i, 1, m)
                meta_slot[m] = sid
                if not used[k]:
                    used[k] = True
                    keys[k] = p
                    e_slot[k] = sid
                e_op[k] = NONE
                e_port[k] = 0
        for j in range(t_nout[i]):
            m = base + t_nin[i] + j
            meta_trace[m] = NONE
            meta_slot[m] = NONE
            p = ptr[m]
            if p == 0:
                continue
            k = _find(keys, used, p, mask)
            alias = False
            old_op = old_port = old_slot = np.int64(0)
            if not used[k]:
                used[k] = True
                keys[k] = p
                e_slot[k] = 0
            else:
                alias = e_op[k] != i
                old_op, old_port, old_slot = e_op[k], e_port[k], e_slot[k]
            e_op[k] = i
            e_port[k] = j & 0xFF
            if alias:
                meta_slot[m] = old_slot
                if old_slot < n_slots:
                    slots[old_slot, 2] = max(slots[old_slot, 2], i)
                    slots[old_slot, 0] = max(slots[old_slot, 0], nbytes[m])
                if old_op != NONE:
                    _row(edges, n_edges, old_op, i, old_port, j & 0xFF, 1)
                    n_edges += 1
            elif cap < 0 or n_slots < cap:
                sid = n_slots
                n_slots += 1
                _row(slots, sid, nbytes[m], i, i, 0, m)
                meta_slot[m] = sid
                e_slot[k] = sid
    out[0] = n_edges
    out[1] = n_slots
    out[2] = bits.fmix64(h)


@dataclass
class Built:
    """What the kernel made, in arrays: per meta its trace index and slot, the edges in
    creation order, the slots, the content hash."""

    meta_trace: np.ndarray
    meta_slot: np.ndarray
    edges: np.ndarray
    slots: np.ndarray
    content_hash: int


def build_arrays(a: TraceArrays, errata: frozenset[str] = frozenset(), cap: int = -1) -> Built:
    m = a.ptr.size
    meta_trace = np.zeros(m, dtype=np.int64)
    meta_slot = np.zeros(m, dtype=np.int64)
    edges = np.zeros((m, 5), dtype=np.int64)
    slots = np.zeros((m, 5), dtype=np.int64)
    out = np.zeros(3, dtype=np.uint64)
    build_into(a.schema, a.flags, a.meta_start, a.n_in, a.n_out, a.scalar_off, a.scalars,
               a.ptr, a.ndim, np.ascontiguousarray(a.sizes), np.ascontiguousarray(a.strides),
               a.packed(errata), a.nbytes.view(np.int64),
               DIMMIX,
               E6_1 in errata, E6_4 in errata, cap, E8_3 in errata, meta_trace, meta_slot,
               edges, slots, out)
    return Built(meta_trace, meta_slot, edges[:int(out[0])], slots[:int(out[1])], int(out[2]))


def graph_of(a: TraceArrays, b: Built, ops: list[TraceOp]) -> TraceGraph:
    """The spec's TraceGraph from the kernel's arrays (for the wire form)."""
    for i, op in enumerate(ops):
        start = a.meta_start[i]
        if start < 0:
            continue
        nin, nout = int(a.n_in[i]), int(a.n_out[i])
        op.input_trace_indices = b.meta_trace[start:start + nin].tolist()
        op.input_slot_ids = b.meta_slot[start:start + nin].tolist()
        op.output_slot_ids = b.meta_slot[start + nin:start + nin + nout].tolist()
    edges = [Edge(*row) for row in b.edges.tolist()]
    metas = [m for op in ops for m in (*op.inputs, *op.outputs)]
    slots = [Slot(nb, birth, death, bool(ext), metas[mi]) for nb, birth, death, ext, mi in
             b.slots.tolist()]
    return TraceGraph(ops, edges, slots, b.content_hash)


def prepare_build(ops, kernels, errata=frozenset()) -> list[tuple]:
    """Per trace, what the core reads and what the wire result needs: its ops decoded and as
    arrays, its CKernel table, the profile."""
    out = []
    for wire_ops, wire_kernels in zip(ops, kernels, strict=True):
        recorded = decoded_ops(wire_ops)
        out.append((recorded, kernels_from_wire(wire_kernels), arrays_of(recorded), errata))
    return out


def build_and_plan(prepared: list[tuple]) -> list[tuple]:
    """Per trace, `built_and_planned` of its arrays."""
    return [built_and_planned(a, errata) for _, _, a, errata in prepared]


def built_and_planned(a: TraceArrays, errata: frozenset[str]) -> tuple[Built, np.ndarray, int]:
    """build_arrays (with E6.5's slot cap where the profile has it), then the planner on its
    slots: (built, offsets, pool bytes)."""
    cap = slot_caps(int(a.n_in.sum()), int(a.n_out.sum()))[0] if E6_5 in errata else -1
    b = build_arrays(a, errata, cap)
    return (b, *plan_arrays(b.slots[:, 0].astype(np.uint64), b.slots[:, 1], b.slots[:, 2],
                            b.slots[:, 3].astype(np.bool_), errata))


@kernel("trace.build", "numba", models=(E6_1, E6_4, E6_5, E8_3, "E8.4", "E10.1"))
def build_batch(ops, kernels, errata):
    prepared = prepare_build(ops, kernels, errata)
    rows = []
    for (recorded, table, a, _), (built, offsets, pool) in zip(
            prepared, build_and_plan(prepared), strict=True):
        graph = graph_of(a, built, ops_of(recorded, table, errata))
        rows.append(graph_to_wire(graph, Plan(offsets.tolist(), pool,
                                              int(built.slots[:, 3].sum()))))
    keys = graph_to_wire(TraceGraph([], [], [], 0), Plan([]))
    return {k: [r[k] for r in rows] for k in keys}


build_batch.prepare, build_batch.core = prepare_build, build_and_plan
