"""Chapter 10: the memory plan, one pool of 256-byte-aligned slot offsets per iteration."""

from __future__ import annotations

from .layout import Member, enum_of, i8, i32, pad, ptr, struct, u32, u64
from .types import DeviceType

ALIGNMENT = 256
"""Every pool offset and the pool size are multiples of 256 bytes."""

MEMORY_PLAN = struct("MemoryPlan", [
    Member("slots", ptr, doc="TensorSlot array"),
    Member("pool_bytes", u64),
    Member("num_slots", u32),
    Member("num_external", u32),
    Member("device_type", enum_of(DeviceType, i8), default=DeviceType.CPU),
    Member("device_idx", i8, default=-1),
    Member("pad0", pad(2)),
    Member("device_capability", u64, doc="SM version or equivalent"),
    Member("rank", i32, default=-1, doc="-1 = not distributed"),
    Member("world_size", i32),
], size=48, align=8, chapter=10, doc="Bytes 28..31 are implicit padding, never serialized.")
