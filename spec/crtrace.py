"""Chapter 18: the .crtrace file: header, 80-byte op records, metas, name table."""

from __future__ import annotations

from .layout import Member, array, hash64, i64, struct, u8, u16

TRACE_OP_RECORD = struct("TraceOpRecord", [
    Member("schema_hash", hash64),
    Member("shape_hash", hash64),
    Member("scope_hash", hash64),
    Member("callsite_hash", hash64),
    Member("scalar_values", array(i64, 5)),
    Member("num_inputs", u16),
    Member("num_outputs", u16),
    Member("num_scalars", u16),
    Member("grad_enabled", u8, doc="read as a bool: non-zero = true"),
    Member("inference_mode", u8, doc="misnamed: holds every op_flags bit"),
], size=80, align=8, chapter=18, doc="One op record of a .crtrace file.")
