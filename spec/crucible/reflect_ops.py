"""Chapter 16: `reflect.hash` and `reflect.print` on the wire.

1. The struct is named: a Crucible layout declaration (C++ name or alias) or one of
   test_reflect.cpp's own structs (Point, Dims). Another seed's struct is refused: Reflect.h
   is Crucible's.
2. The fields are given as `layout.encode` takes them (missing ones take the spec default).
3. The answer is reflect_hash, or reflect_print's text, of that value.
"""

from __future__ import annotations

from typing import Any

from ..core import shapes as js
from ..core.errata import SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.layout import Struct
from ..core.layout_ops import (
    RANDOM_DOMAIN_MAX_SIZE,
    find_struct,
    from_wire,
    to_wire,
    values_strategy,
)
from ..core.registry import REGISTRY, InvalidCase, declare
from ..core.schema import HASH64, Field, Json, Utf8, record
from ..core.strategies import st
from .reflect import TEST_STRUCTS, reflect_hash, reflect_print

EFFECTS = "pure"


def reflected_struct(name: str) -> Struct:
    """Step 1."""
    if name in TEST_STRUCTS:
        return TEST_STRUCTS[name]
    s = find_struct(name)
    if s.seed != "crucible":
        raise InvalidInput(f"args.struct: {s.name} is declared by {s.seed}; reflect_hash and "
                           "reflect_print are Crucible's")
    return s


def struct_values(struct: str, fields: Any) -> tuple[Struct, dict]:
    """Steps 1-2."""
    s = reflected_struct(struct)
    return s, from_wire(s, fields, "args.fields")


def reflect_hash_op(struct: str, fields: Any) -> dict:
    return {"hash": reflect_hash(*struct_values(struct, fields))}


def reflect_print_op(struct: str, fields: Any) -> dict:
    return {"text": reflect_print(*struct_values(struct, fields))}


def reflected_names() -> list[str]:
    """Every struct the ops accept whose values a test may draw (small ones)."""
    crucible = {s.name for s in REGISTRY.layouts.values()
                if s.seed == "crucible" and s.size <= RANDOM_DOMAIN_MAX_SIZE}
    return sorted(crucible | set(TEST_STRUCTS))


def reflect_domain() -> st.SearchStrategy:
    def fields(name: str) -> st.SearchStrategy:
        s = reflected_struct(name)
        return values_strategy(s).map(lambda v: {"struct": name, "fields": to_wire(s, v)})
    return st.sampled_from(reflected_names()).flatmap(fields)


POINT_10_20 = {"x": 10, "y": 20, "z": "0x4048f5c3"}
"""test_reflect's Point{10, 20, 3.14f} (3.14f is 0x4048f5c3)."""
GUARD_42 = {"kind": 0, "op_index": 42, "arg_index": 1, "dim_index": 3}
"""test_reflect's Guard: SHAPE_DIM, op 42, arg 1, dim 3."""


def reflect_edges() -> list[dict]:
    """The facts sheet's vectors, then every small struct's default value."""
    vectors = [{"struct": "Point", "fields": POINT_10_20},
               {"struct": "Point", "fields": {**POINT_10_20, "y": 21}},
               {"struct": "Dims", "fields": {"values": [1, 2, 3, 4], "count": 4}},
               {"struct": "Guard", "fields": GUARD_42},
               {"struct": "Guard", "fields": {**GUARD_42, "dim_index": 4}}]
    return vectors + [{"struct": n, "fields": {}} for n in reflected_names()]


_ARGS = record(struct=Field(Utf8(), "a Crucible struct ('Guard', 'TraceRing::Entry', ...) or "
                                    "test_reflect's Point or Dims"),
               fields=Field(Json("{member: value}", js.obj(extra=True)),
                            "field values as layout.encode takes them", default={}))
_INVALID = (
    InvalidCase("an unknown struct", lambda: st.just({"struct": "NoSuchStruct", "fields": {}})),
    InvalidCase("another seed's struct", lambda: st.just({"struct": "HlcState", "fields": {}})),
    InvalidCase("an unknown field", lambda: st.just({"struct": "Point", "fields": {"w": 1}})),
    InvalidCase("a value too wide for its field",
                lambda: st.just({"struct": "Guard", "fields": {"arg_index": 65536}})),
    InvalidCase("fields that are not an object",
                lambda: st.just({"struct": "Guard", "fields": [1, 2]})),
)
_NA = {"numba": "a fold over one struct's members: no batch of numbers to compile",
       "cupy": "one short serial fold per struct: nothing to spread over a device"}

declare(
    "reflect.hash", chapter=16,
    summary="reflect_hash of a struct value: fmix64 of a golden-ratio fold of its direct "
            "members' field hashes.",
    args=_ARGS, result=record(hash=Field(HASH64, "reflect_hash(obj)")),
    spec=(reflect_hash_op,), domain=reflect_domain, edges=reflect_edges,
    check=lambda a: reflected_struct(a["struct"]), invalid=_INVALID, not_applicable=_NA,
)
declare(
    "reflect.print", chapter=16,
    summary="reflect_print's text of a struct value: 'Name { member = value, ... }'.",
    args=_ARGS, result=record(text=Field(Utf8(), "what reflect_print writes")),
    spec=(reflect_print_op,), domain=reflect_domain, edges=reflect_edges,
    check=lambda a: reflected_struct(a["struct"]), invalid=_INVALID, not_applicable=_NA,
)

_LOC = "include/crucible/Reflect.h"
erratum(
    "E16.1", "Reflect.h says reflect_print ends its line; it writes no newline",
    seed=SEEDS["crucible"], location=f"{_LOC}, reflect_print's comment and print_impl",
    ops=("reflect.print",),
    witness={"code": "Point { x = 10, y = 20, z = 3.14 }",
             "documents": "Point { x = 10, y = 20, z = 3.14 }\\n"},
    flag="doc",
    detail="print_impl closes with \" }\" and nothing more; test_reflect writes the newline "
           "itself. The spec's text has no newline.",
)
erratum(
    "E16.2", "The whitepaper's per-field structural checks in Reflect.h do not exist",
    seed=SEEDS["crucible"], location=f"{_LOC} against the whitepaper's reflection section",
    ops=("reflect.hash", "reflect.print"),
    witness={"code": "reflect_hash and reflect_print only, as index_sequence folds",
             "documents": "four per-field checks (default initializers, offsets, type_of, "
                          "sizeof) and cross-checks against hand-written hashes, via "
                          "expansion statements"},
    flag="doc",
    detail="No check compares reflect_hash with a hand-written hash, and they differ: the "
           "Guard of test_reflect reflect-hashes to 0x5faa470e6a4aabdd while Guard::hash() "
           "gives 0x64ce55c9654ce970 (PO16.1).",
)
