"""Reference for reflect.hash and reflect.print: the record's bytes (the layout codec) read
member by member at their offsets, as Reflect.h reads the object."""

from __future__ import annotations

import struct as pystruct

from ...spec.core.layout import ArrayOf, Pad, Struct
from ...spec.core.registry import reference
from ...spec.crucible.reflect import strong_type
from ...spec.crucible.reflect_ops import struct_values

MASK = 0xFFFFFFFFFFFFFFFF
GOLD = 0x9E3779B97F4A7C15


def mix(k: int) -> int:
    k ^= k >> 33
    k = k * 0xFF51AFD7ED558CCD & MASK
    k ^= k >> 33
    k = k * 0xC4CEB9FE1A85EC53 & MASK
    return k ^ k >> 33


def read(data: bytes, off: int, size: int, signed: bool) -> int:
    return int.from_bytes(data[off:off + size], "little", signed=signed)


def field(ctype, data: bytes, off: int, owner: str, name: str | None) -> tuple[int, str]:
    """(hash_field, printed) of the member of type ctype at byte off."""
    if name is not None and strong_type(owner, name):
        v = read(data, off, ctype.size, False)
        return mix((GOLD * GOLD ^ mix(v)) & MASK), f"{strong_type(owner, name)} {{ v = {v} }}"
    if isinstance(ctype, Struct):
        return record(ctype, data, off)
    if isinstance(ctype, (ArrayOf, Pad)) and (isinstance(ctype, ArrayOf) or ctype.size > 1):
        n = ctype.count if isinstance(ctype, ArrayOf) else ctype.size
        step = ctype.size // n
        h, texts = 0, []
        for i in range(n):
            elem = ctype.elem if isinstance(ctype, ArrayOf) else None
            fh, ft = field(elem, data, off + i * step, owner, None) if elem is not None else \
                (mix(data[off + i]), str(data[off + i]))
            h = (h * 0x100000001B3 ^ fh) & MASK
            texts.append(ft)
        return mix(h), "[" + ", ".join(texts) + "]"
    if isinstance(ctype, Pad):
        return mix(data[off]), str(data[off])
    signed = ctype.signed and ctype.wire != "hex"
    v = read(data, off, ctype.size, signed)
    if ctype.wire == "bool":
        text = "true" if v else "false"
    elif ctype.name == "ptr":
        text = hex(v) if v else "(nil)"
    elif ctype.name in ("f32", "f64"):
        x = pystruct.unpack_from("<f" if ctype.size == 4 else "<d", data, off)[0]
        text = ("-nan" if v >> (8 * ctype.size - 1) else "nan") if x != x else f"{x:g}"
    else:
        text = str(v & MASK if ctype.enum is not None else v)
    return mix(v & MASK), text


def record(s: Struct, data: bytes, base: int) -> tuple[int, str]:
    h, texts = GOLD, []
    for p in s.placed:
        fh, ft = field(p.member.ctype, data, base + p.offset, s.name, p.name)
        h = (h * GOLD ^ fh) & MASK
        texts.append(f"{p.name} = {ft}")
    return mix(h), s.name.split("::")[-1] + " { " + ", ".join(texts) + " }"


@reference("reflect.hash")
def reflect_hash(struct: str, fields) -> dict:
    s, values = struct_values(struct, fields)
    return {"hash": record(s, s.pack(values), 0)[0]}


@reference("reflect.print")
def reflect_print(struct: str, fields) -> dict:
    s, values = struct_values(struct, fields)
    return {"text": record(s, s.pack(values), 0)[1]}
