"""Byte layouts: one declaration of a C struct gives its offsets, size, alignment, the
bytes <-> field-values codec (padding zeroed), the numpy structured dtype and its proof
obligations. Layout rules are the x86-64 C++ ABI: natural alignment, `alignas` raises it,
a derived struct places its members after its base, size is rounded up to the alignment.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .bits import to_signed, to_unsigned
from .errors import InvalidInput
from .registry import REGISTRY


@dataclass(frozen=True)
class CType:
    """A C type: its size and alignment in bytes."""

    name: str
    size: int
    align: int


@dataclass(frozen=True)
class Prim(CType):
    """A scalar: wire form 'int', 'hex' (hashes, pointers, bit patterns) or 'bool'."""

    signed: bool = False
    wire: str = "int"
    enum: type[enum.IntEnum] | None = None


@dataclass(frozen=True)
class ArrayOf(CType):
    """A fixed-length C array."""

    elem: CType
    count: int


@dataclass(frozen=True)
class Pad(CType):
    """Explicit padding bytes (a named `padN[k]` member); wire form: lowercase hex."""


def array(elem: CType, count: int) -> ArrayOf:
    return ArrayOf(f"{elem.name}[{count}]", elem.size * count, elem.align, elem, count)


def pad(count: int) -> Pad:
    return Pad(f"u8[{count}]", count, 1)


def enum_of(e: type[enum.IntEnum], base: Prim) -> Prim:
    return Prim(e.__name__, base.size, base.align, base.signed, "int", e)


u8 = Prim("u8", 1, 1)
u16 = Prim("u16", 2, 2)
u32 = Prim("u32", 4, 4)
u64 = Prim("u64", 8, 8)
i8 = Prim("i8", 1, 1, signed=True)
i16 = Prim("i16", 2, 2, signed=True)
i32 = Prim("i32", 4, 4, signed=True)
i64 = Prim("i64", 8, 8, signed=True)
bool_ = Prim("bool", 1, 1, wire="bool")
hash64 = Prim("hash64", 8, 8, wire="hex")
hash32 = Prim("hash32", 4, 4, wire="hex")
ptr = Prim("ptr", 8, 8, wire="hex")
f32 = Prim("f32", 4, 4, wire="hex")
f64 = Prim("f64", 8, 8, wire="hex")
id32 = Prim("id32", 4, 4)
"""A strong ID (OpIndex, SlotId, ...): u32 on the wire as an integer, none = 4294967295."""


@dataclass(frozen=True)
class Member:
    """One declared member: name, C type, spec default (None = zero), alignas, one-line doc."""

    name: str
    ctype: CType
    default: Any = None
    alignas: int = 1
    doc: str = ""


@dataclass(frozen=True)
class Placed:
    """A member with its computed offset."""

    member: Member
    offset: int

    @property
    def name(self) -> str:
        return self.member.name

    @property
    def end(self) -> int:
        return self.offset + self.member.ctype.size

    @property
    def align(self) -> int:
        return max(self.member.ctype.align, self.member.alignas)


@dataclass(frozen=True, eq=False)
class Struct(CType):
    """A declared struct. `expect_size`/`expect_align` are its static_asserts."""

    members: tuple[Member, ...] = ()
    base: Struct | None = None
    chapter: int = 0
    doc: str = ""
    aliases: tuple[str, ...] = ()
    placed: tuple[Placed, ...] = field(default=(), repr=False)
    alignas: int = 1
    seed: str = "crucible"
    """The system that defines it: Crucible, or another seed's profile name."""

    @property
    def offsets(self) -> dict[str, int]:
        """Offsets of the struct's own members (base members are reported by the base)."""
        return {p.name: p.offset for p in self.placed}

    def all_placed(self) -> tuple[Placed, ...]:
        """Base members first, then own members."""
        return (self.base.all_placed() if self.base else ()) + self.placed

    @cached_property
    def wire_members(self) -> tuple[dict[str, Placed], dict[str, Any]]:
        """All placed members by name, and the defaults of the scalar and padding members."""
        placed = self.all_placed()
        return ({p.name: p for p in placed},
                {p.name: default_of(p.member.ctype, p.member.default) for p in placed
                 if isinstance(p.member.ctype, (Prim, Pad))})

    def padding(self) -> list[tuple[int, int]]:
        """Implicit padding as [start, end) byte ranges: never a field, always zero."""
        gaps, cursor = [], 0
        for p in sorted(self.all_placed(), key=lambda q: q.offset):
            if p.offset > cursor:
                gaps.append((cursor, p.offset))
            cursor = max(cursor, p.end)
        if cursor < self.size:
            gaps.append((cursor, self.size))
        return gaps

    def default_values(self) -> dict[str, Any]:
        return {p.name: default_of(p.member.ctype, p.member.default) for p in self.all_placed()}

    def unpack(self, data: bytes) -> dict[str, Any]:
        """Field values of one record (Python ints, bools, bytes, lists, dicts)."""
        if len(data) != self.size:
            raise InvalidInput(f"{self.name}: expected {self.size} bytes, got {len(data)}")
        return _unpack_struct(self, memoryview(data), 0, self.name)

    def pack(self, values: dict[str, Any]) -> bytes:
        """The record's bytes; implicit padding is zero."""
        buf = bytearray(self.size)
        _pack_struct(self, values, buf, 0)
        return bytes(buf)

    def np_dtype(self) -> np.dtype:
        """numpy structured dtype reading real record bytes (bools and enums as raw integers)."""
        return np.dtype({
            "names": [p.name for p in self.all_placed()],
            "formats": [_np_format(p.member.ctype) for p in self.all_placed()],
            "offsets": [p.offset for p in self.all_placed()],
            "itemsize": self.size,
        })


@dataclass(frozen=True)
class Placement:
    """Where the layout rule puts each member, and the resulting sizeof and alignof."""

    placed: tuple[Placed, ...]
    size: int
    align: int


def place(members: tuple[Member, ...] | list[Member], base: Struct | None = None,
          alignas: int = 1) -> Placement:
    """Each member at the next multiple of its alignment (after the base, if any); alignof is
    the largest alignment (at least `alignas`); sizeof is the end rounded up to alignof."""
    cursor = base.size if base else 0
    max_align = max(alignas, base.align if base else 1)
    placed = []
    for m in members:
        a = max(m.ctype.align, m.alignas)
        cursor = (cursor + a - 1) // a * a
        placed.append(Placed(m, cursor))
        cursor += m.ctype.size
        max_align = max(max_align, a)
    total = (cursor + max_align - 1) // max_align * max_align
    return Placement(tuple(placed), total, max_align)


def struct(name: str, members: list[Member], *, size: int, align: int, chapter: int,
           doc: str, base: Struct | None = None, alignas: int = 1,
           aliases: tuple[str, ...] = (), seed: str = "crucible") -> Struct:
    """Declare a struct; its size and alignment are asserted like a C++ static_assert."""
    laid = place(members, base, alignas)
    if (laid.size, laid.align) != (size, align):
        raise AssertionError(f"{name}: computed sizeof {laid.size} alignof {laid.align}, "
                             f"declared {size}/{align}")
    declared = Struct(name, laid.size, laid.align, tuple(members), base, chapter, doc, aliases,
                      laid.placed, alignas, seed)
    REGISTRY.add_layout(declared)
    return declared


def default_of(ctype: CType, declared: Any) -> Any:
    """The spec default of a member: the declared one, else zero of its type."""
    if isinstance(ctype, Struct):
        values = ctype.default_values()
        values.update(declared or {})
        return values
    if declared is not None:
        return list(declared) if isinstance(ctype, ArrayOf) else declared
    if isinstance(ctype, ArrayOf):
        return [default_of(ctype.elem, None) for _ in range(ctype.count)]
    if isinstance(ctype, Pad):
        return bytes(ctype.size)
    if isinstance(ctype, Prim) and ctype.wire == "bool":
        return False
    return 0


def _unpack_struct(s: Struct, buf: memoryview, base: int, path: str) -> dict[str, Any]:
    return {p.name: _unpack(p.member.ctype, buf, base + p.offset, f"{path}.{p.name}")
            for p in s.all_placed()}


def _unpack(ctype: CType, buf: memoryview, off: int, path: str) -> Any:
    if isinstance(ctype, Struct):
        return _unpack_struct(ctype, buf, off, path)
    if isinstance(ctype, ArrayOf):
        size = ctype.elem.size
        return [_unpack(ctype.elem, buf, off + i * size, f"{path}[{i}]")
                for i in range(ctype.count)]
    raw = bytes(buf[off : off + ctype.size])
    if isinstance(ctype, Pad):
        return raw
    value = int.from_bytes(raw, "little")
    if isinstance(ctype, Prim) and ctype.wire == "bool":
        if value > 1:
            raise InvalidInput(f"{path} at byte {off}: 0x{value:02x} is not a bool (0 or 1)")
        return bool(value)
    return to_signed(value, 8 * ctype.size) if getattr(ctype, "signed", False) else value


def _pack_struct(s: Struct, values: dict[str, Any], buf: bytearray, base: int) -> None:
    for p in s.all_placed():
        _pack(p.member.ctype, values[p.name], buf, base + p.offset)


def _pack(ctype: CType, value: Any, buf: bytearray, off: int) -> None:
    if isinstance(ctype, Struct):
        _pack_struct(ctype, value, buf, off)
    elif isinstance(ctype, ArrayOf):
        for i, v in enumerate(value):
            _pack(ctype.elem, v, buf, off + i * ctype.elem.size)
    elif isinstance(ctype, Pad):
        buf[off : off + ctype.size] = value
    else:
        buf[off : off + ctype.size] = to_unsigned(int(value), 8 * ctype.size).to_bytes(
            ctype.size, "little")


def _np_format(ctype: CType) -> Any:
    if isinstance(ctype, Struct):
        return ctype.np_dtype()
    if isinstance(ctype, ArrayOf):
        return (_np_format(ctype.elem), (ctype.count,))
    if isinstance(ctype, Pad):
        return ("u1", (ctype.size,))
    kind = "i" if getattr(ctype, "signed", False) else "u"
    return f"<{kind}{ctype.size}"


@dataclass(frozen=True)
class Leaf:
    """One scalar of a flattened struct: its path, byte offset, size, signedness and wire form
    ('int', 'hex', 'bool', or 'pad' for a byte of a padding member)."""

    path: tuple
    offset: int
    size: int
    signed: bool
    wire: str


def leaves(s: Struct) -> tuple[Leaf, ...]:
    """Every scalar of `s` in declaration order (padding members give one leaf per byte)."""
    out: list[Leaf] = []
    _flatten(s, (), 0, out)
    return tuple(out)


def _flatten(ctype: CType, path: tuple, off: int, out: list[Leaf]) -> None:
    if isinstance(ctype, Struct):
        for p in ctype.all_placed():
            _flatten(p.member.ctype, (*path, p.name), off + p.offset, out)
    elif isinstance(ctype, ArrayOf):
        for i in range(ctype.count):
            _flatten(ctype.elem, (*path, i), off + i * ctype.elem.size, out)
    elif isinstance(ctype, Pad):
        out.extend(Leaf((*path, i), off + i, 1, False, "pad") for i in range(ctype.size))
    else:
        out.append(Leaf(path, off, ctype.size, ctype.signed, ctype.wire))


def field_at(s: Struct, offset: int) -> str:
    """The member that byte `offset` of a record belongs to ('sizes[3]', 'padding', ...)."""
    for leaf in leaves(s):
        if leaf.offset <= offset < leaf.offset + leaf.size:
            return f"{s.name}{leaf_name(leaf)} (byte {offset - leaf.offset} of {leaf.size})"
    return f"{s.name} implicit padding" if 0 <= offset < s.size else f"past {s.name}'s end"


def leaf_name(leaf: Leaf) -> str:
    """'.sizes[3]', '.guard.op_index', ... (a path inside the struct)."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in leaf.path)
