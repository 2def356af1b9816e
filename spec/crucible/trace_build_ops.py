"""Op `trace.build`: ring entries and metas in, the trace graph and its memory plan out.

Args: ops, each {schema_hash, shape_hash, inputs, outputs, scalars, op_flags, grad_enabled,
scope_hash, callsite_hash} (the vectors' build_trace.ops_in), and optionally kernels, the
CKernel registrations [[schema_hash, kernel_id], ...] (none by default, as in the standalone
library). Result: per op its TraceEntry fields, the forward CSR edges and both offset arrays,
the slots with their planned offsets, the pool size, the external count, the content hash.
"""

from __future__ import annotations

from typing import Any

from ...synthetic_bench import build_bench
from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.layout import bool_, hash64, i64, u8
from ..core.layout_ops import from_wire, scalar_from_wire, wire_schema
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, BYTES, HASH64, U8, U16, U32, U64, Field, Json, List, record
from ..core.strategies import st
from .build_trace import RecordedOp, TraceGraph, build_trace
from .ckernel import TABLE_CAP
from .memory_plan import Plan, compute_memory_plan
from .pipeline import plan_slots_of
from .tensor_meta import MAX_DIMS, TENSOR_META
from .tensor_slot import TENSOR_SLOT

OP_KEYS = {"schema_hash", "shape_hash", "inputs", "outputs", "scalars", "op_flags",
            "grad_enabled", "scope_hash", "callsite_hash"}
MAX_TENSORS = 0xFFFF
"""The spec's own bound on a `trace.build` request's inputs plus outputs per op (a u16 count in
the ring entry)."""


def recorded_from_wire(obj: Any, path: str) -> RecordedOp:
    if not isinstance(obj, dict) or set(obj) - OP_KEYS:
        extra = sorted(set(obj) - OP_KEYS) if isinstance(obj, dict) else []
        raise InvalidInput(f"{path}: " + (f"no field {extra[0]!r}" if extra else
                                          "expected an op object"))

    def get(name: str, ctype: Any, default: Any) -> Any:
        return scalar_from_wire(ctype, obj[name], f"{path}.{name}") if name in obj else default

    sides = {}
    for side in ("inputs", "outputs"):
        metas = obj.get(side, [])
        if not isinstance(metas, list) or len(metas) > MAX_TENSORS:
            raise InvalidInput(f"{path}.{side}: expected a list of at most 65535 metas")
        sides[side] = [from_wire(TENSOR_META, m, f"{path}.{side}[{k}]")
                       for k, m in enumerate(metas)]
        for k, m in enumerate(sides[side]):
            if m["ndim"] > MAX_DIMS:
                raise InvalidInput(f"{path}.{side}[{k}].ndim: {m['ndim']} > {MAX_DIMS}")
    scalars = obj.get("scalars", [])
    if not isinstance(scalars, list) or len(scalars) > MAX_TENSORS:
        raise InvalidInput(f"{path}.scalars: expected a list of int64")
    metas = sides["inputs"] + sides["outputs"]
    return RecordedOp(
        get("schema_hash", hash64, 0), get("shape_hash", hash64, 0), len(sides["inputs"]),
        len(sides["outputs"]),
        [scalar_from_wire(i64, s, f"{path}.scalars[{k}]") for k, s in enumerate(scalars)],
        get("grad_enabled", bool_, False), get("op_flags", u8, 0), metas or None,
        get("scope_hash", hash64, 0), get("callsite_hash", hash64, 0))


def kernels_from_wire(kernels: Any) -> dict[int, int]:
    """The CKernel registrations; a later one for the same hash wins (as register_op)."""
    if not isinstance(kernels, list) or len(kernels) > TABLE_CAP:
        raise InvalidInput(f"args.kernels: a list of at most {TABLE_CAP} [hash, id] pairs")
    table = {}
    for k, pair in enumerate(kernels):
        if not isinstance(pair, list) or len(pair) != 2:
            raise InvalidInput(f"args.kernels[{k}]: expected [schema_hash, kernel_id]")
        table[scalar_from_wire(hash64, pair[0], f"args.kernels[{k}]")] = \
            scalar_from_wire(u8, pair[1], f"args.kernels[{k}]")
    return table


def plan_of(g: TraceGraph, errata: frozenset[str] = NO_ERRATA) -> Plan:
    return compute_memory_plan(plan_slots_of(g), errata)


def graph_to_wire(g: TraceGraph, plan: Plan | None = None,
                  errata: frozenset[str] = NO_ERRATA) -> dict:
    """The wire result; the plan is computed (under `errata`) unless given."""
    plan = plan or plan_of(g, errata)
    fwd, fwd_offsets = g.csr("src")
    _, rev_offsets = g.csr("dst")
    slots = []
    for k, s in enumerate(g.slots):
        values = s.values(k, plan.offsets[k])
        slots.append({"slot_id": k, "nbytes": s.nbytes, "birth_op": s.birth_op,
                      "death_op": s.death_op, "is_external": s.is_external,
                      "offset_bytes": plan.offsets[k], "raw_hex": TENSOR_SLOT.pack(values).hex()})
    return {
        "ops": [{"kernel_id": op.kernel_id, "num_inputs": len(op.inputs),
                 "num_outputs": len(op.outputs), "num_scalar_args": op.num_scalar_args,
                 "inference_mode": op.inference_mode, "is_mutable": op.is_mutable,
                 "training_phase": op.training_phase, "torch_function": op.torch_function,
                 "input_trace_indices": op.input_trace_indices,
                 "input_slot_ids": op.input_slot_ids, "output_slot_ids": op.output_slot_ids}
                for op in g.ops],
        "edges": [{"src": e.src, "dst": e.dst, "src_port": e.src_port, "dst_port": e.dst_port,
                   "kind": int(e.kind)} for e in fwd],
        "fwd_offsets": fwd_offsets, "rev_offsets": rev_offsets, "slots": slots,
        "pool_bytes": plan.pool_bytes, "num_external": plan.num_external,
        "content_hash": g.content_hash,
    }


def recorded_ops(ops: Any) -> list[RecordedOp]:
    if not isinstance(ops, list):
        raise InvalidInput("args.ops: expected a list of ops")
    return [recorded_from_wire(o, f"args.ops[{i}]") for i, o in enumerate(ops)]


def trace_build(ops: Any, kernels: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    return graph_to_wire(build_trace(recorded_ops(ops), kernels_from_wire(kernels), errata),
                         errata=errata)


@st.composite
def traces(draw, max_ops: int = 12) -> dict:
    """Ops over a small pool of data pointers (so tensors are read, rewritten and aliased),
    with some null pointers, tensorless ops and scalars."""
    pointers = [0, *draw(st.lists(st.integers(1, 2**48), min_size=1, max_size=6, unique=True))]

    def meta() -> dict:
        ndim = draw(st.integers(0, 3))
        return {"ndim": ndim, "sizes": draw(st.lists(st.integers(0, 9), min_size=ndim,
                                                     max_size=ndim)),
                "strides": draw(st.lists(st.integers(-4, 9), min_size=ndim, max_size=ndim)),
                "dtype": draw(st.sampled_from([6, 5, 4, 11, -1])),
                "device_type": draw(st.sampled_from([0, 1])),
                "device_idx": draw(st.sampled_from([-1, 0])),
                "data_ptr": hex(draw(st.sampled_from(pointers)))}

    ops = []
    for _ in range(draw(st.integers(0, max_ops))):
        ops.append({"schema_hash": hex(draw(st.integers(0, 6))),
                    "inputs": [meta() for _ in range(draw(st.integers(0, 3)))],
                    "outputs": [meta() for _ in range(draw(st.integers(0, 2)))],
                    "scalars": draw(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=7)),
                    "op_flags": draw(st.integers(0, 31)), "grad_enabled": draw(st.booleans())})
    kernels = [[hex(h), draw(st.integers(0, 146))] for h in
               draw(st.lists(st.integers(0, 6), max_size=3))]
    return {"ops": ops, "kernels": kernels}


RECORDED_OPS = js.array(js.obj(optional={
    **dict.fromkeys(("schema_hash", "shape_hash", "scope_hash", "callsite_hash"),
                    wire_schema(hash64)),
    "inputs": js.array(wire_schema(TENSOR_META), MAX_TENSORS),
    "outputs": js.array(wire_schema(TENSOR_META), MAX_TENSORS),
    "scalars": js.array(wire_schema(i64), MAX_TENSORS), "op_flags": wire_schema(u8),
    "grad_enabled": wire_schema(bool_)}))
"""What `recorded_ops` accepts (the ndim bound is its own)."""
KERNELS = js.array(js.pair(wire_schema(hash64), wire_schema(u8)), TABLE_CAP)
"""What `kernels_from_wire` accepts."""
OPS_FIELD = Field(Json("[op]", RECORDED_OPS), "ring entries with their metas, in order")
KERNELS_FIELD = Field(Json("[[schema_hash, kernel_id]]", KERNELS), "CKernel registrations",
                      default=[])
ENTRY_OUT = record(kernel_id=U8, num_inputs=U16, num_outputs=U16, num_scalar_args=U16,
                   inference_mode=BOOL, is_mutable=BOOL, training_phase=U8, torch_function=BOOL,
                   input_trace_indices=List(U32), input_slot_ids=List(U32),
                   output_slot_ids=List(U32))
EDGE_OUT = record(src=U32, dst=U32, src_port=U16, dst_port=U16, kind=U8)
SLOT_OUT = record(slot_id=U32, nbytes=U64, birth_op=U32, death_op=U32, is_external=BOOL,
                  offset_bytes=U64, raw_hex=BYTES)

declare(
    "trace.build", chapter=6,
    summary="Build one iteration's trace graph: TraceEntries, DATA_FLOW/ALIAS edges (CSR), "
            "slots with their plan, content hash.",
    args=record(ops=OPS_FIELD, kernels=KERNELS_FIELD),
    result=record(ops=Json("[TraceEntry fields]", List(ENTRY_OUT)),
                  edges=Json("[edge]", List(EDGE_OUT)), fwd_offsets=Json("[u32]", List(U32)),
                  rev_offsets=Json("[u32]", List(U32)), slots=Json("[slot]", List(SLOT_OUT)),
                  pool_bytes=U64, num_external=U32, content_hash=HASH64),
    spec=(build_trace,), domain=traces, bench=build_bench,
    errata=("E6.1", "E6.4", "E6.5", "E8.3", "E8.4", "E10.1"),
    not_applicable={"cupy": "the pointer map is read and written op by op, in order"},
    invalid=(InvalidCase("a meta of 9 dimensions", lambda: st.just(
        {"ops": [{"schema_hash": "0x1", "inputs": [{"ndim": 9}]}]})),
             InvalidCase("an unknown op field", lambda: st.just(
                 {"ops": [{"schema_hash": "0x1", "flags": 1}]}))),
    edges=lambda: [{"ops": []}, {"ops": [{"schema_hash": "0x1", "scalars": [7]}]}],
)

