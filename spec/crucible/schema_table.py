"""Chapter 8: the schema table, schema hash -> op name, kept sorted by hash (512 entries)."""

from __future__ import annotations

from ..core.layout import Member, hash64, ptr, struct

CAPACITY = 512
"""Names the table holds. Real code: `SchemaTable.h`, its fixed array of 512 entries."""

SCHEMA_ENTRY = struct("SchemaEntry", [
    Member("hash", hash64),
    Member("name", ptr, doc="owned NUL-terminated copy of the name"),
], size=16, align=8, chapter=8, doc="One registered op name.")
