"""Chapter 16: reflect_hash and reflect_print (Reflect.h), over the layout declarations.

reflect_hash(obj) of a struct T:
1. Its members are T's direct non-static data members in declaration order (a base class
   is no member, so a derived struct's base members are not hashed); padding is never read.
2. h = PHI; for each member m, h = h * PHI XOR hash_field(m) (mod 2^64).
3. The hash is fmix64(h) (an empty struct: fmix64(PHI)).

hash_field(v):
a. an enum, integral or bool: fmix64 of the value as 64 bits, sign-extended when signed;
b. a float: fmix64 of its 32 bits zero-extended; a double: fmix64 of its 64 bits;
c. a pointer: fmix64 of the address;
d. a C array: h = 0; h = h * 0x100000001b3 XOR hash_field(e) per element; fmix64(h);
e. a class (a nested struct, or a strong ID or hash such as OpIndex): its reflect_hash.

reflect_print(obj) writes "Name { m = v, m = v }" with no newline: Name is the type's own
identifier (`Entry` for TraceRing::Entry); enums print as their underlying value converted to
unsigned long long; bools true/false; signed integers as signed and unsigned as unsigned
decimals; floats with %g; pointers with glibc's %p ("(nil)" for null); arrays "[a, b]";
classes recursively.

The declarations record member types as the layout needs them, so this module adds what
reflection also sees: which 4- and 8-byte members are strong types (`strong_type`), and that
a one-byte padding member is a plain uint8_t while a longer one is a uint8_t array. Members
that are library classes in C++ (std::atomic, ...) are hashed as their declared scalars; the
real hash would walk the library's own members. The reflect_hash vectors of the facts sheet
were derived from the formula, not measured: Crucible compiles Reflect.h only under GCC 16
with -freflection.
"""

from __future__ import annotations

import math
import struct as pystruct
from typing import Any

from ..core.layout import ArrayOf, CType, Member, Pad, Prim, Struct, f32, i32, i64, place, u8
from .hashing import FNV_PRIME, PHI, fmix64

EFFECTS = "pure"
M64 = (1 << 64) - 1
STRONG_TYPES = ("OpIndex", "SlotId", "NodeId", "SymbolId", "MetaIndex", "SchemaHash",
                "ShapeHash", "ScopeHash", "CallsiteHash", "ContentHash", "MerkleHash")
"""Types.h's strong IDs and hashes: one-member classes (member `v`)."""


def strong_type(struct: str, member: str) -> str | None:
    """The strong type of a declared member that C++ declares as one (Types.h), else None."""
    ids = {("TensorSlot", "birth_op"): "OpIndex", ("TensorSlot", "death_op"): "OpIndex",
           ("TensorSlot", "slot_id"): "SlotId",
           ("BackgroundThread::PtrSlot", "op_index"): "OpIndex",
           ("BackgroundThread::PtrSlot", "slot_id"): "SlotId",
           ("BackgroundThread::SlotInfo", "birth_op"): "OpIndex",
           ("BackgroundThread::SlotInfo", "death_op"): "OpIndex",
           ("TraceRing", "meta_starts"): "MetaIndex", ("Edge", "src"): "OpIndex",
           ("Edge", "dst"): "OpIndex", ("Guard", "op_index"): "OpIndex",
           ("Expr", "symbol_id"): "SymbolId", ("GraphNode", "id"): "NodeId"}
    hashes = {("CKernelEntry", "schema_hash"): "SchemaHash",
              ("TraceRing::Entry", "schema_hash"): "SchemaHash",
              ("TraceRing::Entry", "shape_hash"): "ShapeHash",
              ("TraceEntry", "schema_hash"): "SchemaHash",
              ("TraceEntry", "shape_hash"): "ShapeHash",
              ("TraceEntry", "scope_hash"): "ScopeHash",
              ("TraceEntry", "callsite_hash"): "CallsiteHash",
              ("TraceGraph", "content_hash"): "ContentHash",
              ("TraceNode", "merkle_hash"): "MerkleHash",
              ("RegionNode", "content_hash"): "ContentHash",
              ("RegionNode", "first_op_schema"): "SchemaHash",
              ("LoopNode", "body_content_hash"): "ContentHash",
              ("IterationDetector", "expected_hash_"): "SchemaHash",
              ("Transaction", "content_hash"): "ContentHash",
              ("Transaction", "merkle_root"): "MerkleHash",
              ("SchemaEntry", "hash"): "SchemaHash"}
    return ids.get((struct, member)) or hashes.get((struct, member))


def is_array(ctype: CType) -> bool:
    """A C array: a declared array, or a padding member of more than one byte."""
    return isinstance(ctype, ArrayOf) or (isinstance(ctype, Pad) and ctype.size > 1)


def elements(ctype: CType, value: Any) -> list[tuple[CType, Any]]:
    """An array's elements with their type (a padding member's are uint8_t)."""
    if isinstance(ctype, Pad):
        return [(u8, b) for b in bytes(value)]
    return [(ctype.elem, v) for v in value]


def scalar_word(ctype: CType, value: Any) -> int:
    """Rule a-c: the scalar as 64 bits (signed values sign-extend, float bits zero-extend)."""
    if isinstance(ctype, Pad):
        return bytes(value)[0]
    return int(value) & M64


def hash_field(ctype: CType, value: Any, strong: str | None = None) -> int:
    """Rules a-e for one member."""
    if strong is not None:
        return fold_members([fmix64(int(value) & M64)])  # e
    if isinstance(ctype, Struct):
        return reflect_hash(ctype, value)  # e
    if is_array(ctype):
        h = 0
        for elem, v in elements(ctype, value):  # d
            h = (h * FNV_PRIME ^ hash_field(elem, v)) & M64
        return fmix64(h)
    return fmix64(scalar_word(ctype, value))  # a-c


def fold_members(field_hashes: list[int]) -> int:
    """Steps 2-3 over the members' field hashes."""
    h = PHI
    for fh in field_hashes:
        h = (h * PHI ^ fh) & M64
    return fmix64(h)


def reflect_hash(s: Struct, values: dict) -> int:
    """Steps 1-3: the struct's own members in declaration order."""
    return fold_members([hash_field(p.member.ctype, values[p.name], strong_type(s.name, p.name))
                         for p in s.placed])


def identifier(s: Struct) -> str:
    """identifier_of(^^T): the type's own name, without its enclosing class."""
    return s.name.rsplit("::", 1)[-1]


def print_float(ctype: Prim, bits: int) -> str:
    """%g of the value (as a double), with glibc's inf and nan spellings."""
    fmt = "<f" if ctype.size == 4 else "<d"
    x = pystruct.unpack(fmt, (bits & ((1 << (8 * ctype.size)) - 1)).to_bytes(
        ctype.size, "little"))[0]
    if math.isnan(x):
        return "-nan" if bits >> (8 * ctype.size - 1) & 1 else "nan"
    return f"{x:g}"


def print_field(ctype: CType, value: Any, strong: str | None = None) -> str:
    """One member's text."""
    if strong is not None:
        return f"{strong} {{ v = {int(value) & M64} }}"
    if isinstance(ctype, Struct):
        return reflect_print(ctype, value)
    if is_array(ctype):
        return "[" + ", ".join(print_field(e, v) for e, v in elements(ctype, value)) + "]"
    if isinstance(ctype, Pad):
        return str(scalar_word(ctype, value))
    if ctype.enum is not None:
        return str(int(value) & M64)
    if ctype.wire == "bool":
        return "true" if value else "false"
    if ctype.name == "ptr":
        return f"0x{value:x}" if value else "(nil)"
    if ctype.name in ("f32", "f64"):
        return print_float(ctype, int(value))
    return str(int(value))


def reflect_print(s: Struct, values: dict) -> str:
    """'Name { m = v, ... }' over the struct's own members, no trailing newline."""
    parts = [f"{p.name} = "
             f"{print_field(p.member.ctype, values[p.name], strong_type(s.name, p.name))}"
             for p in s.placed]
    return f"{identifier(s)} {{ " + ", ".join(parts) + " }"


def test_struct(name: str, members: list[Member]) -> Struct:
    """A struct of test_reflect.cpp (not a Crucible layout, so not registered)."""
    laid = place(members)
    return Struct(name, laid.size, laid.align, tuple(members), None, 16,
                  "a struct test_reflect.cpp declares", (), laid.placed)


POINT = test_struct("Point", [Member("x", i32), Member("y", i32), Member("z", f32)])
DIMS = test_struct("Dims", [Member("values", ArrayOf("i64[4]", 32, 8, i64, 4)),
                            Member("count", u8)])
TEST_STRUCTS = {"Point": POINT, "Dims": DIMS}
