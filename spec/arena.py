"""Chapter 3: the arena, a bump allocator over 1 MiB blocks."""

from __future__ import annotations

from .layout import Member, array, ptr, struct, u64

BLOCK_SIZE = 1 << 20
DEFAULT_ALIGN = 16
"""alignof(max_align_t) on x86-64."""

ARENA = struct("Arena", [
    Member("cur_block_", ptr),
    Member("cur_base_", u64, doc="uintptr of the current block"),
    Member("offset_", u64),
    Member("end_offset_", u64),
    Member("block_size_", u64, default=BLOCK_SIZE),
    Member("blocks_", array(ptr, 3), doc="std::vector<char*>: begin, end, capacity"),
], size=64, align=8, chapter=3, doc="Arena object (64 bytes, asserted <= 64).")
