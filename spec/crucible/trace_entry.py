"""Chapter 6: TraceEntry, the DAG's per-op record built from a ring entry and its metas."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core import shapes as js
from ..core.errors import InvalidInput
from ..core.layout import Member, Prim, bool_, enum_of, hash64, i64, id32, ptr, struct, u8, u16
from ..core.layout_ops import from_wire, scalar_from_wire, to_wire, wire_schema
from ..core.schema import HASH64
from .ckernel import CKernelId
from .tensor_meta import TENSOR_META
from .types import TrainingPhase, pack_op_flags, unpack_op_flags

TRACE_ENTRY = struct("TraceEntry", [
    Member("schema_hash", hash64),
    Member("shape_hash", hash64),
    Member("scope_hash", hash64),
    Member("callsite_hash", hash64),
    Member("input_metas", ptr, doc="TensorMeta[num_inputs]"),
    Member("output_metas", ptr, doc="TensorMeta[num_outputs]"),
    Member("num_inputs", u16),
    Member("num_outputs", u16),
    Member("scalar_args", ptr, doc="int64[num_scalar_args], null when there are none"),
    Member("num_scalar_args", u16),
    Member("grad_enabled", bool_),
    Member("inference_mode", bool_),
    Member("kernel_id", enum_of(CKernelId, u8), default=CKernelId.OPAQUE),
    Member("is_mutable", bool_),
    Member("training_phase", enum_of(TrainingPhase, u8), default=TrainingPhase.FORWARD),
    Member("torch_function", bool_),
    Member("input_trace_indices", ptr, doc="OpIndex[num_inputs]: producer of each input"),
    Member("input_slot_ids", ptr, doc="SlotId[num_inputs]"),
    Member("output_slot_ids", ptr, doc="SlotId[num_outputs]"),
], size=96, align=8, chapter=6, doc="Bytes 52..55 are implicit padding.")


@dataclass
class TraceOp:
    """One op of a region (a TraceEntry with its arrays): what content hashing, the trace
    graph and serialization read. Array fields are None where the entry's pointer is null."""

    schema_hash: int = 0
    shape_hash: int = 0
    scope_hash: int = 0
    callsite_hash: int = 0
    inputs: list[dict] = field(default_factory=list)
    outputs: list[dict] = field(default_factory=list)
    scalar_args: list[int] | None = None
    num_scalar_args: int = 0
    grad_enabled: bool = False
    inference_mode: bool = False
    kernel_id: int = 0
    is_mutable: bool = False
    training_phase: int = 0
    torch_function: bool = False
    input_trace_indices: list[int] | None = None
    input_slot_ids: list[int] | None = None
    output_slot_ids: list[int] | None = None

    @property
    def op_flags(self) -> int:
        """The four flags packed as the ring entry's op_flags byte."""
        return pack_op_flags(self.inference_mode, self.is_mutable, self.training_phase,
                             self.torch_function)

    @op_flags.setter
    def op_flags(self, flags: int) -> None:
        inference, mutable, self.training_phase, torch_function = unpack_op_flags(flags)
        self.inference_mode, self.is_mutable = bool(inference), bool(mutable)
        self.torch_function = bool(torch_function)


_HASHES = ("schema_hash", "shape_hash", "scope_hash", "callsite_hash")
_FLAGS = ("grad_enabled", "inference_mode", "is_mutable", "torch_function")
_ID_LISTS = ("input_trace_indices", "input_slot_ids", "output_slot_ids")
_OP_FIELDS = set(_HASHES) | set(_FLAGS) | set(_ID_LISTS) | {
    "inputs", "outputs", "scalar_args", "num_scalar_args", "kernel_id", "training_phase"}


def trace_op_from_wire(obj: Any, path: str) -> TraceOp:
    """A trace op from the vectors' JSON shape; a missing field takes its default, a missing
    id array is null, and num_scalar_args defaults to the number of scalar_args given."""
    if not isinstance(obj, dict):
        raise InvalidInput(f"{path}: expected an object")
    unknown = sorted(set(obj) - _OP_FIELDS)
    if unknown:
        raise InvalidInput(f"{path}: a trace op has no field {unknown[0]!r}")
    op = TraceOp()
    for name in _HASHES:
        setattr(op, name, _scalar(hash64, obj, name, 0, path))
    for name in _FLAGS:
        setattr(op, name, _scalar(bool_, obj, name, False, path))
    op.kernel_id = _scalar(u8, obj, "kernel_id", 0, path)
    op.training_phase = _scalar(u8, obj, "training_phase", 0, path)
    for side in ("inputs", "outputs"):
        metas = obj.get(side, [])
        if not isinstance(metas, list):
            raise InvalidInput(f"{path}.{side}: expected a list of TensorMeta fields")
        setattr(op, side, [from_wire(TENSOR_META, m, f"{path}.{side}[{j}]")
                           for j, m in enumerate(metas)])
    scalars = obj.get("scalar_args")
    if scalars is not None:
        if not isinstance(scalars, list):
            raise InvalidInput(f"{path}.scalar_args: expected a list of int64")
        op.scalar_args = [scalar_from_wire(i64, s, f"{path}.scalar_args[{k}]")
                          for k, s in enumerate(scalars)]
    op.num_scalar_args = _scalar(u16, obj, "num_scalar_args", len(scalars or []), path)
    for name, n in zip(_ID_LISTS, (len(op.inputs), len(op.inputs), len(op.outputs)),
                       strict=True):
        ids = obj.get(name)
        if ids is not None:
            if not isinstance(ids, list) or len(ids) != n:
                raise InvalidInput(f"{path}.{name}: expected {n} ids")
            setattr(op, name, [scalar_from_wire(id32, x, f"{path}.{name}[{k}]")
                               for k, x in enumerate(ids)])
    return op


def trace_op_schema(result: bool = False) -> dict:
    """The JSON Schema of what `trace_op_from_wire` accepts, or of what `trace_op_to_wire`
    writes (every field present)."""
    ids = js.or_null(js.array(wire_schema(id32, result)))
    members = {name: wire_schema(hash64, result) for name in _HASHES}
    members |= {"inputs": js.array(wire_schema(TENSOR_META, result)),
                "outputs": js.array(wire_schema(TENSOR_META, result)),
                "scalar_args": js.or_null(js.array(wire_schema(i64, result))),
                "num_scalar_args": wire_schema(u16, result)}
    members |= {name: wire_schema(bool_, result) for name in _FLAGS}
    members |= {"kernel_id": wire_schema(u8, result), "training_phase": wire_schema(u8, result)}
    members |= {name: ids for name in _ID_LISTS}
    return js.obj(members) if result else js.obj(optional=members)


def _scalar(ctype: Prim, obj: dict, name: str, default: Any, path: str) -> Any:
    return scalar_from_wire(ctype, obj[name], f"{path}.{name}") if name in obj else default


def trace_op_to_wire(op: TraceOp) -> dict:
    """The vectors' JSON shape of a trace op (every field present)."""
    out: dict[str, Any] = {name: HASH64.encode(getattr(op, name)) for name in _HASHES}
    out |= {"inputs": [to_wire(TENSOR_META, m) for m in op.inputs],
            "outputs": [to_wire(TENSOR_META, m) for m in op.outputs],
            "scalar_args": op.scalar_args, "num_scalar_args": op.num_scalar_args}
    out |= {name: getattr(op, name) for name in _FLAGS}
    out |= {"kernel_id": op.kernel_id, "training_phase": op.training_phase}
    out |= {name: getattr(op, name) for name in _ID_LISTS}
    return out
