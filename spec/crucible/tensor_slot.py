"""Chapter 5: TensorSlot, one storage of an iteration with its lifetime and pool offset."""

from __future__ import annotations

from ..core.layout import Member, bool_, enum_of, i8, id32, pad, struct, u64
from .types import NONE32, DeviceType, Layout, ScalarType

SLOT_BULK = [
    Member("nbytes", u64, doc="storage size in bytes"),
    Member("birth_op", id32, default=NONE32),
    Member("death_op", id32, default=NONE32),
    Member("dtype", enum_of(ScalarType, i8), default=ScalarType.Undefined),
    Member("device_type", enum_of(DeviceType, i8), default=DeviceType.CPU),
    Member("device_idx", i8, default=-1),
    Member("layout", enum_of(Layout, i8), default=Layout.Strided),
    Member("is_external", bool_),
    Member("pad", pad(3)),
]
"""Bytes 8..31 of a TensorSlot: the build copies BackgroundThread::SlotInfo over them whole."""

TENSOR_SLOT = struct("TensorSlot", [
    Member("offset_bytes", u64, doc="offset in the memory pool"),
    *SLOT_BULK,
    Member("slot_id", id32, default=NONE32),
    Member("pad2", pad(4)),
], size=40, align=8, chapter=5,
   doc="Bytes 8..31 are laid out exactly like BackgroundThread::SlotInfo.")
