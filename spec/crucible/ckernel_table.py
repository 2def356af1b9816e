"""Chapter 12: the CKernel taxonomy's families and names, and the schema-hash registration table.

Families. CKernelId's 146 ops (ids 1..146) fall in 23 header sections, each a contiguous run
of ordinals: 14 in section 1 (ids 1..99, frozen since v3) and 9 in section 2 (ids 100..146).
OPAQUE (0) precedes every section and has the family "Opaque"; NUM_KERNELS (147) is the
sentinel and belongs to none.

Names. `ckernel_name(id)` is exactly the enumerator's spelling for 0..146 (so "COPY_" keeps its
underscore) and "<unknown>" for every byte 148..255. For 147 (the sentinel) the seed reaches
std::unreachable, undefined behaviour: the spec refuses it (invalid_input) rather than invent
a string.

Registration table (at most TABLE_CAP = 256 entries of (schema_hash u64, id), kept sorted):
`register_op(table, h, id)`:
  1. scan entries[0..size) in order; if one has schema_hash == h, set its id to `id` and stop
     (a later registration of a hash wins; the order of hashes is unchanged, so no re-sort);
  2. else, if size >= 256, drop the registration silently;
  3. else append (h, id) and sort the entries ascending by schema_hash as an unsigned 64-bit
     integer (the hashes are distinct, so the order is total).
`classify(table, h)`:
  1. lo = 0, hi = size;
  2. while lo < hi: mid = lo + (hi - lo) / 2 (integer division); if entries[mid] holds h, answer
     its id; if entries[mid]'s hash < h, lo = mid + 1; else hi = mid;
  3. not found: OPAQUE.
The seed registers everything before its background thread starts and only reads afterwards;
the spec's table is per request, built from the registrations in order.
"""

from __future__ import annotations

from ..core.errors import InvalidInput
from .ckernel import TABLE_CAP, CKernelId
from .graph import classify_node_kind

OPAQUE_FAMILY = "Opaque"
"""The family of OPAQUE, which sits before every header section."""

FAMILIES: tuple[tuple[str, int, int], ...] = (
    ("Linear Algebra", 1, 8),
    ("Convolution", 9, 14),
    ("Attention", 15, 18),
    ("Normalization", 19, 24),
    ("Activations", 25, 37),
    ("Elementwise Binary", 38, 46),
    ("Elementwise Unary", 47, 56),
    ("Reductions", 57, 64),
    ("Pooling", 65, 72),
    ("Data Movement / Indexing", 73, 88),
    ("Embedding", 89, 90),
    ("Copy / I/O", 91, 92),
    ("Vision", 93, 95),
    ("Fused high-level", 96, 99),
    ("Linear Algebra Decompositions", 100, 108),
    ("SSM / Recurrence Primitives", 109, 114),
    ("Production Inference Primitives", 115, 120),
    ("3D / Neural Rendering", 121, 124),
    ("Structured Matrix / Graph", 125, 129),
    ("Collective Communication", 130, 139),
    ("I/O", 140, 143),
    ("RNG", 144, 145),
    ("Synchronization", 146, 146),
)
"""The header sections in order: (family, first id, last id), both ends included. The first 14
make section 1 (99 ops), the other 9 section 2 (47 ops)."""

SECTION_1_LAST = 99
"""Ids 1..99 are section 1, frozen since v3; 100..146 are section 2."""
UNKNOWN_NAME = "<unknown>"
"""What ckernel_name answers for a byte past the sentinel (148..255)."""


def family_of(kernel_id: int) -> str:
    """The header section of an op id 0..146: OPAQUE's is "Opaque", every other id's is the
    section whose range holds it. The sentinel and bytes past it have none (invalid_input)."""
    if kernel_id == CKernelId.OPAQUE:
        return OPAQUE_FAMILY
    for name, first, last in FAMILIES:
        if first <= kernel_id <= last:
            return name
    raise InvalidInput(f"{kernel_id} is not a CKernelId op (0..146)")


def ckernel_name(kernel_id: int) -> str:
    """The name of a byte: the enumerator's spelling for 0..146, "<unknown>" for 148..255.
    147 (NUM_KERNELS) is undefined behaviour in the seed: refused (invalid_input)."""
    if kernel_id == CKernelId.NUM_KERNELS:
        raise InvalidInput("147 is NUM_KERNELS, the sentinel: ckernel_name of it is undefined "
                           "behaviour in the seed")
    if kernel_id < CKernelId.NUM_KERNELS:
        return CKernelId(kernel_id).name
    return UNKNOWN_NAME


def table_rows() -> list[dict]:
    """Every op id 0..146 with its name, family and the node kind lowering gives it."""
    return [{"id": CKernelId(k), "name": ckernel_name(k), "family": family_of(k),
             "node_kind": classify_node_kind(k)} for k in range(CKernelId.NUM_KERNELS)]


def register_op(entries: list[list[int]], schema_hash: int, kernel_id: int) -> None:
    """Register schema_hash -> kernel_id in the sorted table `entries` ([hash, id] pairs), in
    place: steps 1-3 of the module docstring."""
    for entry in entries:
        if entry[0] == schema_hash:
            entry[1] = kernel_id
            return
    if len(entries) >= TABLE_CAP:
        return
    entries.append([schema_hash, kernel_id])
    entries.sort(key=lambda e: e[0])


def classify(entries: list[list[int]], schema_hash: int) -> int:
    """The id registered for schema_hash, OPAQUE when none: the binary search of the module
    docstring."""
    lo, hi = 0, len(entries)
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if entries[mid][0] == schema_hash:
            return entries[mid][1]
        if entries[mid][0] < schema_hash:
            lo = mid + 1
        else:
            hi = mid
    return CKernelId.OPAQUE


def build_table(registrations: list[tuple[int, int]]) -> list[list[int]]:
    """The table after registering each (hash, id) in order into an empty one."""
    entries: list[list[int]] = []
    for schema_hash, kernel_id in registrations:
        register_op(entries, schema_hash, kernel_id)
    return entries


def classify_op(registrations: list[dict], queries: list[int]) -> dict:
    """ckernel.classify: the table the registrations build, its size, and each query's id."""
    entries = build_table([(r["schema_hash"], r["id"]) for r in registrations])
    return {"entries": [{"schema_hash": h, "id": CKernelId(k)} for h, k in entries],
            "size": len(entries), "ids": [CKernelId(classify(entries, q)) for q in queries]}
