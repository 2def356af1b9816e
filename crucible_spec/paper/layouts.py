"""A struct's byte table (offset, size, type, field, meaning, default, padding), one row per
member and per gap of implicit padding, read from the layout declaration itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..spec.core.layout import ArrayOf, Pad, Prim, Struct, default_of
from .links import layout_id, to_layout
from .markdown import as_json, heading, table, typeset

PADDING = "(padding)"


@dataclass(frozen=True)
class ByteRow:
    """One row of a byte table: a member, or implicit padding (field `(padding)`)."""

    offset: int
    size: int
    ctype: str
    field: str
    meaning: str
    default: str
    padding: bool


def _default(ctype: Any, declared: Any) -> str:
    value = default_of(ctype, declared)
    if isinstance(ctype, Pad):
        return "zero"
    if isinstance(ctype, Struct):
        return "(its members' defaults)"
    if isinstance(ctype, ArrayOf) and len({as_json(v) for v in value}) == 1:
        return f"{_scalar(ctype.elem, value[0])} each"
    if isinstance(ctype, Prim):
        return _scalar(ctype, value)
    return as_json(value)


def _scalar(ctype: Any, value: Any) -> str:
    if isinstance(ctype, Prim) and ctype.wire == "hex":
        return f"0x{value:0{2 * ctype.size}x}"
    if isinstance(ctype, Prim) and ctype.enum is not None and isinstance(value, int):
        try:
            return f"{value} ({ctype.enum(value).name})"
        except ValueError:
            return str(value)
    return as_json(value)


def byte_rows(s: Struct) -> list[ByteRow]:
    """The struct's members (its base's first) and implicit padding, in offset order."""
    rows = [ByteRow(p.offset, p.member.ctype.size, p.member.ctype.name, p.name,
                    p.member.doc, _default(p.member.ctype, p.member.default),
                    isinstance(p.member.ctype, Pad)) for p in s.all_placed()]
    rows += [ByteRow(a, b - a, f"u8[{b - a}]", PADDING, "implicit padding: never a field",
                     "zero", True) for a, b in s.padding()]
    return sorted(rows, key=lambda r: (r.offset, r.padding))


def _struct_cell(ctype: Any, here: str) -> str:
    inner = ctype.elem if isinstance(ctype, ArrayOf) else ctype
    if isinstance(inner, Struct):
        return f"{ctype.name} ({to_layout(inner.name, here)})"
    return ctype.name


def layout_section(s: Struct, here: str, figure: str) -> str:
    """The struct's heading, what it is, sizeof/alignof, its byte map and its byte table."""
    placed = {p.name: p for p in s.all_placed()}
    rows = []
    for r in byte_rows(s):
        ctype = placed[r.field].member.ctype if r.field in placed else None
        shown = _struct_cell(ctype, here) if ctype is not None else r.ctype
        rows.append((r.offset, r.size, shown, f"`{r.field}`" if r.field != PADDING else r.field,
                     typeset(r.meaning), r.default, "yes" if r.padding else ""))
    parts = [heading(3, f"`{s.name}`", layout_id(s.name)), typeset(s.doc),
             f"sizeof **{s.size}**, alignof **{s.align}**"
             + (f"; derived from {to_layout(s.base.name, here)}, whose members come first"
                if s.base else "")
             + (f"; also called {', '.join(f'`{a}`' for a in s.aliases)}" if s.aliases else "")
             + ".",
             f"![Byte map of {s.name}]({figure})",
             table(("offset", "size", "type", "field", "meaning", "default", "padding"), rows)]
    return "\n\n".join(p for p in parts if p)
