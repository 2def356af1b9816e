"""Chapter 6: TraceEntry, the DAG's per-op record built from a ring entry and its metas."""

from __future__ import annotations

from .ckernel import CKernelId
from .layout import Member, bool_, enum_of, hash64, ptr, struct, u8, u16
from .types import TrainingPhase

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
