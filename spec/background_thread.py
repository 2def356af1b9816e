"""Chapter 6: the background thread's scratch records for building a trace graph."""

from __future__ import annotations

from .layout import Member, bool_, enum_of, i8, id32, pad, ptr, struct, u8, u64
from .types import NONE32, DeviceType, Layout, ScalarType

PTR_SLOT = struct("BackgroundThread::PtrSlot", [
    Member("key", ptr, doc="data pointer"),
    Member("op_index", id32, default=NONE32, doc="last writer, none for an external"),
    Member("slot_id", id32, default=NONE32),
    Member("port", u8),
    Member("gen", u8, doc="generation; a stale gen means empty"),
    Member("pad", pad(6)),
], size=24, align=8, chapter=6, doc="One PtrMap entry: data pointer -> (op, port, slot).")

SLOT_INFO = struct("BackgroundThread::SlotInfo", [
    Member("nbytes", u64),
    Member("birth_op", id32, default=NONE32),
    Member("death_op", id32, default=NONE32),
    Member("dtype", enum_of(ScalarType, i8), default=ScalarType.Undefined),
    Member("device_type", enum_of(DeviceType, i8), default=DeviceType.CPU),
    Member("device_idx", i8, default=-1),
    Member("layout", enum_of(Layout, i8), default=Layout.Strided),
    Member("is_external", bool_),
    Member("pad", pad(3)),
], size=24, align=8, chapter=6, doc="Same bytes as TensorSlot 8..31, copied in one block.")
