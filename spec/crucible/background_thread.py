"""Chapter 6: the background thread's scratch records for building a trace graph."""

from __future__ import annotations

from ..core.layout import Member, id32, pad, ptr, struct, u8
from .tensor_slot import SLOT_BULK
from .types import NONE32

PTR_SLOT = struct("BackgroundThread::PtrSlot", [
    Member("key", ptr, doc="data pointer"),
    Member("op_index", id32, default=NONE32, doc="last writer, none for an external"),
    Member("slot_id", id32, default=NONE32),
    Member("port", u8),
    Member("gen", u8, doc="generation; a stale gen means empty"),
    Member("pad", pad(6)),
], size=24, align=8, chapter=6, doc="One PtrMap entry: data pointer -> (op, port, slot).")

SLOT_INFO = struct("BackgroundThread::SlotInfo", SLOT_BULK, size=24, align=8, chapter=6,
                   doc="Same bytes as TensorSlot 8..31, copied in one block.")
