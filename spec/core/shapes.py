"""JSON Schema builders for the JSON values an op decodes itself (`Json` wire types): each
schema is written next to the decoder it describes, with these few words.

A scalar the decoder reads with `layout_ops.scalar_from_wire` takes `layout_ops.wire_schema`
of its C type (a JSON integer or "0x" hex); `integer` is a plain JSON integer; `obj` an object
with required and optional members and no others; `tagged` an object whose `kind`-like member
picks its shape.
"""

from __future__ import annotations

from typing import Any

from .schema import nullable

HEX64_OUT = {"type": "string", "pattern": "^0x[0-9a-f]{16}$"}
"""A u64 as the spec writes it: '0x' and 16 lowercase digits."""
BOOLEAN = {"type": "boolean"}
STRING = {"type": "string"}
NULL = {"type": "null"}
ANY: dict = {}
"""Any JSON value (a member the decoder allows and ignores)."""


def integer(lo: int | None = None, hi: int | None = None) -> dict:
    """A JSON integer, within [lo, hi] where given."""
    out: dict[str, Any] = {"type": "integer"}
    if lo is not None:
        out["minimum"] = lo
    if hi is not None:
        out["maximum"] = hi
    return out


def uint(bits: int) -> dict:
    """A JSON integer that fits `bits` unsigned bits."""
    return integer(0, (1 << bits) - 1)


def array(item: dict, max_items: int | None = None, min_items: int | None = None) -> dict:
    """A JSON list of `item`s."""
    out: dict[str, Any] = {"type": "array", "items": item}
    if max_items is not None:
        out["maxItems"] = max_items
    if min_items is not None:
        out["minItems"] = min_items
    return out


def pair(first: dict, second: dict | None = None) -> dict:
    """A JSON list of exactly two items."""
    return {"type": "array", "prefixItems": [first, second or first], "items": False,
            "minItems": 2}


def obj(required: dict | None = None, optional: dict | None = None,
        extra: bool | dict = False) -> dict:
    """A JSON object with these members (`extra`: the schema of any other member)."""
    req, opt = required or {}, optional or {}
    return {"type": "object", "properties": {**req, **opt}, "required": list(req),
            "additionalProperties": extra}


def mapping(value: dict, key_pattern: str | None = None) -> dict:
    """A JSON object used as a map from (pattern-matching) keys to `value`s."""
    out: dict[str, Any] = {"type": "object", "additionalProperties": value}
    if key_pattern is not None:
        out["propertyNames"] = {"pattern": key_pattern}
    return out


def or_null(schema: dict) -> dict:
    """`schema` or JSON null."""
    return nullable(schema)


def one_of(*schemas: dict) -> dict:
    """Any one of `schemas` (an untagged union)."""
    return {"anyOf": list(schemas)}


def tagged(tag: str, shapes: dict[str, dict], common: dict | None = None,
           default: str | None = None) -> dict:
    """An object whose member `tag` (a string; `default` when absent) selects one of `shapes`
    (each an `obj`); `common` members are allowed in every shape."""
    base = common or {}
    cases = []
    for name, shape in shapes.items():
        props = {tag: {"const": name}, **base, **shape.get("properties", {})}
        then = dict(shape, properties=props)
        cond: dict[str, Any] = {"properties": {tag: {"const": name}}}
        if name != default:
            cond["required"] = [tag]
        cases.append({"if": cond, "then": then})
    kinds = {"enum": list(shapes)}
    top = {"type": "object", "properties": {tag: kinds}, "allOf": cases}
    if default is None:
        top["required"] = [tag]
    return top
