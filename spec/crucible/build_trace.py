"""Chapter 6: building the trace graph of one iteration (BackgroundThread::build_trace).

Ops are visited in order. Data pointers are identities: a pointer first seen as an output is a
new internal slot; an input reading it gets a DATA_FLOW edge from the last op that wrote it; a
later op writing the same pointer reuses the slot, extends its life, and gets an ALIAS edge
from the previous writer. A pointer first seen as an input is an external tensor (a parameter,
an input batch): it gets an external slot born at op 0. The content hash is streamed along.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from .content_hash import fold_op
from .hashing import PHI, fmix64
from .tensor_meta import compute_storage_nbytes
from .trace_entry import TraceOp
from .trace_graph import EdgeKind
from .trace_ring import MAX_SCALARS
from .types import NONE32

E6_1, E6_2, E6_3, E6_4, E6_5 = "E6.1", "E6.2", "E6.3", "E6.4", "E6.5"
MIN_SCRATCH_SLOT_CAP = 8192
"""The least slot capacity the scratch buffers grow to. Real code: `BackgroundThread.h`,
`MIN_SCRATCH_SLOT_CAP`."""


@dataclass
class RecordedOp:
    """One drained op: its ring entry fields, its metas (inputs then outputs; None when it has
    no MetaLog entry), and its scope and callsite hashes."""

    schema_hash: int
    shape_hash: int = 0
    num_inputs: int = 0
    num_outputs: int = 0
    scalars: list[int] = field(default_factory=list)
    grad_enabled: bool = False
    op_flags: int = 0
    metas: list[dict] | None = None
    scope_hash: int = 0
    callsite_hash: int = 0


@dataclass
class Slot:
    """A TensorSlot under construction (bytes 8..31 are the SlotInfo)."""

    nbytes: int
    birth_op: int
    death_op: int
    is_external: bool
    meta: dict

    def values(self, slot_id: int, offset: int = 0) -> dict:
        """The TensorSlot field values."""
        return {"offset_bytes": offset, "nbytes": self.nbytes, "birth_op": self.birth_op,
                "death_op": self.death_op, "dtype": self.meta["dtype"],
                "device_type": self.meta["device_type"], "device_idx": self.meta["device_idx"],
                "layout": self.meta["layout"], "is_external": self.is_external,
                "pad": bytes(3), "slot_id": slot_id, "pad2": bytes(4)}


@dataclass
class Edge:
    src: int
    dst: int
    src_port: int
    dst_port: int
    kind: int


@dataclass
class TraceGraph:
    """One iteration: its ops, edges (in creation order), slots and content hash."""

    ops: list[TraceOp]
    edges: list[Edge]
    slots: list[Slot]
    content_hash: int

    def csr(self, by: str) -> tuple[list[Edge], list[int]]:
        """Edges grouped by 'src' (forward) or 'dst' (reverse), creation order kept within a
        group (a stable counting sort), with the n + 1 group offsets."""
        n = len(self.ops)
        offsets = [0] * (n + 1)
        for e in self.edges:
            offsets[getattr(e, by) + 1] += 1
        for i in range(n):
            offsets[i + 1] += offsets[i]
        return sorted(self.edges, key=lambda e: getattr(e, by)), offsets


@dataclass
class _PtrEntry:
    op: int
    port: int
    slot: int


def slot_caps(inputs: int, outputs: int, previous: int = 0) -> tuple[int, int]:
    """(slot cap, scratch slot buffer) for ops with these input and output counts: the buffer
    only grows, to max(8192, outputs + 1024); the cap is min(buffer, max(256, inputs +
    outputs))."""
    grown = max(previous, MIN_SCRATCH_SLOT_CAP, outputs + 1024)
    return min(grown, max(256, inputs + outputs)), grown


def slot_cap_max(ops: list[RecordedOp], previous: int = 0) -> int:
    """The scratch slot buffer after sizing for `ops`; `previous` is its size from the
    background thread's earlier builds."""
    return slot_caps(0, sum(op.num_outputs for op in ops), previous)[1]


def slot_cap(ops: list[RecordedOp], previous: int = 0) -> int:
    """How many slots the code's scratch buffers allow (erratum E6.5)."""
    return slot_caps(sum(op.num_inputs for op in ops), sum(op.num_outputs for op in ops),
                     previous)[0]


def trace_op_of(r: RecordedOp, kernels: dict[int, int], errata: frozenset[str]) -> TraceOp:
    """The TraceEntry of one drained op, before slots and edges: the ring entry's fields,
    kernel_id from the registrations, the op_flags unpacked, metas split into inputs and
    outputs, at most 5 scalars (none stored for a tensorless op under E6.1)."""
    n = min(len(r.scalars), MAX_SCALARS)
    op = TraceOp(r.schema_hash, r.shape_hash, r.scope_hash, r.callsite_hash,
                 num_scalar_args=n, grad_enabled=r.grad_enabled,
                 kernel_id=kernels.get(r.schema_hash, 0))
    op.op_flags = r.op_flags
    if r.metas is None:
        op.input_trace_indices, op.input_slot_ids, op.output_slot_ids = [], [], []
        if E6_1 not in errata:
            op.scalar_args = r.scalars[:n] if n else None
        return op
    op.inputs, op.outputs = r.metas[: r.num_inputs], r.metas[r.num_inputs:]
    op.scalar_args = r.scalars[:n] if n else None
    return op


def build_trace(recorded: list[RecordedOp], kernels: dict[int, int] | None = None,
                errata: frozenset[str] = NO_ERRATA, scratch_slots: int = 0) -> TraceGraph:
    """The trace graph of `recorded`, as BackgroundThread::build_trace makes it
    (`scratch_slots`: the slot buffer's size from earlier builds, for E6.5)."""
    cap = slot_cap(recorded, scratch_slots) if E6_5 in errata else None
    ptrs: dict[int, _PtrEntry] = {}
    slots: list[Slot] = []
    edges: list[Edge] = []
    ops: list[TraceOp] = []
    h = PHI

    def new_slot(nbytes: int, birth: int, death: int, external: bool, meta: dict) -> int:
        if cap is not None and len(slots) >= cap:
            return NONE32
        slots.append(Slot(nbytes, birth, death, external, meta))
        return len(slots) - 1

    def extend(sid: int, i: int, meta: dict | None = None) -> None:
        if sid < len(slots):
            slots[sid].death_op = max(slots[sid].death_op, i)
            if meta is not None:
                slots[sid].nbytes = max(slots[sid].nbytes, _nbytes(meta))

    for i, r in enumerate(recorded):
        op = trace_op_of(r, kernels or {}, errata)  # 1. entry fields, metas, scalars
        ops.append(op)
        h = fold_op(h, op, errata)  # 2. the streaming content hash
        if r.metas is None:
            continue
        op.input_trace_indices = [NONE32] * len(op.inputs)
        op.input_slot_ids = [NONE32] * len(op.inputs)
        op.output_slot_ids = [NONE32] * len(op.outputs)
        for j, m in enumerate(op.inputs):  # 3. inputs
            p = m["data_ptr"]
            e = ptrs.get(p) if p else None
            if e is not None and e.op != NONE32:  # written earlier in this iteration
                op.input_trace_indices[j], op.input_slot_ids[j] = e.op, e.slot
                edges.append(Edge(e.op, i, e.port, j & 0xFF, EdgeKind.DATA_FLOW))
                extend(e.slot, i)
            elif e is not None and E6_4 not in errata:  # an external seen before
                op.input_slot_ids[j] = e.slot
                extend(e.slot, i, m)
            elif p:  # a new external (the code makes one per use: E6.4)
                sid = new_slot(_nbytes(m), 0, i, True, m)
                if sid != NONE32:
                    op.input_slot_ids[j] = sid
                    if e is None:
                        ptrs[p] = _PtrEntry(NONE32, 0, sid)
                    else:
                        e.op, e.port = NONE32, 0
        for j, m in enumerate(op.outputs):  # 4. outputs
            p = m["data_ptr"]
            if not p:
                continue
            e = ptrs.get(p)
            if e is None:
                e = ptrs[p] = _PtrEntry(i, j & 0xFF, 0)
                alias, old = False, None
            else:
                alias, old = e.op != i, (e.op, e.port, e.slot)
                e.op, e.port = i, j & 0xFF
            if alias:
                op.output_slot_ids[j] = old[2]
                extend(old[2], i, m)
                if old[0] != NONE32:
                    edges.append(Edge(old[0], i, old[1], j & 0xFF, EdgeKind.ALIAS))
            else:
                sid = new_slot(_nbytes(m), i, i, False, m)
                op.output_slot_ids[j] = sid
                if sid != NONE32:
                    e.slot = sid
    return TraceGraph(ops, edges, slots, fmix64(h))  # 5. fmix64 finishes the hash


def _nbytes(meta: dict) -> int:
    return compute_storage_nbytes(meta["sizes"][: meta["ndim"]], meta["strides"][: meta["ndim"]],
                                  meta["dtype"])



_SEED = "crucible@8d2680a2"
_WHERE = "include/crucible/BackgroundThread.h build_trace"

erratum(
    E6_1, "An op without tensors keeps its scalar count but loses its scalars",
    seed=_SEED, location=_WHERE, ops=("trace.build",),
    witness={"args": {"ops": [{"schema_hash": "0x12345", "scalars": [7]}]},
             "spec": {"content_hash": "0x468fd58eeadff402"},
             "seed": {"content_hash": "0xc3d8f0e3861e5a5d"}},
    flag="result",
    detail="When an op has no MetaLog entry, scalar_args stays null while num_scalar_args keeps "
           "the count: the scalars are neither stored nor hashed, and after a CDAG round trip "
           "they read back as zeros, so the recomputed content hash differs from the stored "
           "one (0x7310d04b715a1bf8 vs 0x37e1e8457a9df8f6 in the seed's own loop test). The "
           "spec stores and hashes them like any op's.",
)

erratum(
    E6_2, "Per-op int64 scalar arrays can be only 4-byte aligned",
    seed=_SEED, location=_WHERE, ops=("trace.build",),
    witness={"note": "UBSan reports misaligned int64 loads at the scalar reads"},
    flag="ub",
    detail="The scalars are packed in one arena block after u32 arrays, so an odd count of "
           "u32s leaves them 4-byte aligned: undefined behaviour in C++, harmless on x86-64. "
           "The spec has no such block.",
)

erratum(
    E6_3, "build_trace(0) calls memcpy with a null pointer",
    seed=_SEED, location=_WHERE, ops=("trace.build",),
    witness={"args": {"ops": []}},
    flag="ub",
    detail="memcpy(dst, nullptr, 0) is undefined behaviour; the result is the empty graph, "
           "which the spec returns.",
)

_E6_4_OPS = {"ops": [
    {"schema_hash": "0x1", "inputs": [{"ndim": 1, "sizes": [4], "strides": [1], "dtype": 6,
                                       "data_ptr": "0x10"}]},
    {"schema_hash": "0x2", "inputs": [{"ndim": 1, "sizes": [4], "strides": [1], "dtype": 6,
                                       "data_ptr": "0x10"}]}]}
"""Two ops reading the same external tensor: E6.4's witness."""

erratum(
    E6_4, "Every input use of an external tensor gets a new slot",
    seed=_SEED, location=_WHERE, ops=("trace.build",),
    witness={"args": _E6_4_OPS,
             "spec": {"num_external": 1}, "seed": {"num_external": 2}},
    also=({"op": "ir.lower", "args": _E6_4_OPS,
           "spec": {"num_input_nodes": 1}, "seed": {"num_input_nodes": 2}},),
    flag="result",
    detail="The pointer map keeps op = none for an external and a lookup that finds op = none "
           "is treated as a miss, so each read makes another external slot born at op 0 and "
           "dying at that read; the first slot's life is never extended (the MLP's 5 "
           "parameters make 8 external slots). A slot is meant to be one storage: the spec "
           "gives an external one slot for all its uses.",
)

erratum(
    E6_5, "Past a scratch capacity new slots are dropped and later readers extend slot 0",
    seed=_SEED, location=_WHERE, ops=("trace.build",),
    witness={"cap": "min(max(8192, outputs + 1024), max(256, inputs + outputs))",
             "effect": "slot ids none; a dropped output's map entry keeps slot 0"},
    flag="result",
    detail="slot_cap bounds the slots a build may create; beyond it an output gets no slot and "
           "its map entry keeps slot 0, so readers of that pointer extend slot 0's lifetime: "
           "wrong lifetimes, so a wrong memory plan. It binds only past 8192 tensor uses. The "
           "spec creates every slot. (A witness needs thousands of tensors.)",
)
