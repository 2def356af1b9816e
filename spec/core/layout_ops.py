"""Layout ops: `layout.info`, `layout.decode`, `layout.encode` over every declared struct.

Wire form of field values (§4): integers, counts, enums and strong IDs are JSON integers;
hashes, pointers and float bit patterns are "0x" hex of the field's width; bools are JSON
booleans; explicit padding members (`pad`, `pad2_`, ...) are lowercase hex bytes; arrays are
lists and nested structs objects. A derived struct's fields include its base's. These ops work
on bytes, so an enum field may hold any value its C type can (decode(encode) is exact), but a
bool byte must be 0 or 1. On encode, a missing field takes its spec default, a short array is
completed with defaults, and implicit padding is zero.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from . import shapes as js
from .bits import to_unsigned
from .errata import NO_ERRATA, SEEDS, erratum
from .errors import InvalidInput, SpecError
from .layout import ArrayOf, CType, Pad, Prim, Struct, default_of, field_at
from .registry import REGISTRY, InvalidCase, declare
from .schema import BOOL, BYTES, Field, Int, Json, Utf8, record
from .strategies import st

RANDOM_DOMAIN_MAX_SIZE = 4096
"""Generated inputs skip structs larger than this (only the 5.5 MB TraceRing object)."""


E1_1 = "E1.1"
CRUCIBLE = "crucible"
"""The `seed` of the structs Crucible itself declares."""


def find_struct(name: str, errata: frozenset[str] = NO_ERRATA) -> Struct:
    """The declared struct named `name` (C++ name, alias, or vectors key with a note); under
    E1.1 only Crucible's own structs."""
    found = REGISTRY.layout(name)
    if found is not None and E1_1 in errata and found.seed != CRUCIBLE:
        raise InvalidInput(f"args.struct: {found.name} is declared by {found.seed}; the real "
                           f"Crucible has no struct of that name")
    if found is None:
        known = ", ".join(sorted(s.name for s in set(REGISTRY.layouts.values())))
        raise InvalidInput(f"args.struct: no struct named {name!r}; known: {known}")
    return found


def to_wire(ctype: CType, value: Any) -> Any:
    """JSON form of a field value."""
    if isinstance(ctype, Struct):
        return {p.name: to_wire(p.member.ctype, value[p.name]) for p in ctype.all_placed()}
    if isinstance(ctype, ArrayOf):
        return [to_wire(ctype.elem, v) for v in value]
    if isinstance(ctype, Pad):
        return bytes(value).hex()
    if ctype.wire == "hex":
        return f"0x{to_unsigned(value, 8 * ctype.size):0{2 * ctype.size}x}"
    return bool(value) if ctype.wire == "bool" else int(value)


def from_wire(ctype: CType, obj: Any, path: str, default: Any = None) -> Any:
    """Field value from its JSON form; anything malformed is invalid_input naming the path."""
    if isinstance(ctype, Struct):
        if not isinstance(obj, dict):
            raise InvalidInput(f"{path}: expected an object of {ctype.name} fields")
        names, defaults = ctype.wire_members
        unknown = sorted(set(obj) - set(names))
        if unknown:
            raise InvalidInput(f"{path}: {ctype.name} has no field {unknown[0]!r}")
        given = default or {}
        return {n: from_wire(p.member.ctype, obj[n], f"{path}.{n}") if n in obj
                else given[n] if n in given
                else defaults[n] if n in defaults else default_of(p.member.ctype, p.member.default)
                for n, p in names.items()}
    if isinstance(ctype, ArrayOf):
        if not isinstance(obj, list) or len(obj) > ctype.count:
            raise InvalidInput(f"{path}: expected a list of at most {ctype.count} items")
        items = [from_wire(ctype.elem, v, f"{path}[{i}]") for i, v in enumerate(obj)]
        if default is not None:
            return items + list(default)[len(items):]
        return items + [default_of(ctype.elem, None) for _ in range(ctype.count - len(items))]
    return scalar_from_wire(ctype, obj, path)


def scalar_from_wire(ctype: Prim | Pad, obj: Any, path: str) -> Any:
    """One scalar (or padding member) from its JSON form."""
    if isinstance(ctype, Pad):
        data = _wire_call(BYTES.decode, obj, path)
        if len(data) != ctype.size:
            raise InvalidInput(f"{path}: expected {ctype.size} bytes, got {len(data)}")
        return data
    if ctype.wire == "bool":
        if isinstance(obj, bool) or (type(obj) is int and obj in (0, 1)):
            return bool(obj)
        raise InvalidInput(f"{path}: expected a boolean")
    return _wire_call(int_type(ctype).decode, obj, path)


def int_type(ctype: Prim) -> Int:
    """The wire integer type an integer scalar is decoded as."""
    return _int_type(8 * ctype.size, ctype.signed and ctype.wire != "hex")


@cache
def _int_type(bits: int, signed: bool) -> Int:
    return Int(bits, signed)


def _wire_call(fn: Any, obj: Any, path: str) -> Any:
    try:
        return fn(obj, path)
    except SpecError as e:
        raise InvalidInput(e.message) from None


def wire_schema(ctype: CType, result: bool = False) -> dict:
    """The JSON Schema of what `from_wire` accepts (every member optional), or of what
    `to_wire` writes (every member present, arrays full, hex at the field's width)."""
    if isinstance(ctype, Struct):
        members = {n: wire_schema(p.member.ctype, result) for n, p in ctype.wire_members[0].items()}
        return js.obj(members) if result else js.obj(optional=members)
    if isinstance(ctype, ArrayOf):
        return js.array(wire_schema(ctype.elem, result), ctype.count,
                        ctype.count if result else None)
    if isinstance(ctype, Pad):
        return BYTES.json_schema(result) | ({"maxLength": 2 * ctype.size} if result else {})
    if ctype.wire == "bool":
        return BOOL.json_schema(result)
    if result and ctype.wire == "hex":
        return Int(8 * ctype.size, hex=True).json_schema(True)
    return _int_type(8 * ctype.size, ctype.signed and ctype.wire != "hex").json_schema(result)


def fields_schema() -> dict:
    """`layout.encode`'s args: `fields` as the struct named by `struct` takes them."""
    cases = [{"if": {"properties": {"struct": {"pattern": f"^{re.escape(name)}( \\(.*)?$"}}},
              "then": {"properties": {"fields": wire_schema(layout)}}}
             for name, layout in sorted(REGISTRY.layouts.items())]
    return {"allOf": cases}


def check_image(args: dict) -> None:
    """A record image has exactly sizeof bytes."""
    s = find_struct(args["struct"])
    if len(args["hex"]) != s.size:
        raise InvalidInput(f"args.hex: {s.name} is {s.size} bytes, got {len(args['hex'])}")


def layout_info(struct: str, errata: frozenset[str] = NO_ERRATA) -> dict:
    """sizeof, alignof and the offsets of the struct's own members."""
    s = find_struct(struct, errata)
    return {"sizeof": s.size, "alignof": s.align, "offsets": s.offsets}


def layout_decode(struct: str, hex: bytes, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Field values of one record image."""
    s = find_struct(struct, errata)
    return {"fields": to_wire(s, s.unpack(hex))}


def layout_encode(struct: str, fields: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Record image from field values; missing fields take spec defaults, padding is zero."""
    s = find_struct(struct, errata)
    return {"hex": s.pack(from_wire(s, fields, "args.fields"))}


def values_strategy(ctype: CType) -> st.SearchStrategy:
    """Field values (Python form) of any valid image of `ctype`."""
    if isinstance(ctype, Struct):
        return st.fixed_dictionaries({p.name: values_strategy(p.member.ctype)
                                      for p in ctype.all_placed()})
    if isinstance(ctype, ArrayOf):
        return st.lists(values_strategy(ctype.elem), min_size=ctype.count, max_size=ctype.count)
    if isinstance(ctype, Pad):
        return st.binary(min_size=ctype.size, max_size=ctype.size)
    if isinstance(ctype, Prim) and ctype.wire == "bool":
        return st.booleans()
    bits = 8 * ctype.size
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if ctype.signed \
        else st.integers(0, (1 << bits) - 1)


def _small_structs() -> list[Struct]:
    unique = {s.name: s for s in REGISTRY.layouts.values()}
    return [unique[n] for n in sorted(unique) if unique[n].size <= RANDOM_DOMAIN_MAX_SIZE]


def _decode_domain() -> st.SearchStrategy:
    return st.sampled_from(_small_structs()).flatmap(
        lambda s: values_strategy(s).map(lambda v: {"struct": s.name, "hex": s.pack(v)}))


def _encode_domain() -> st.SearchStrategy:
    def partial(s: Struct) -> st.SearchStrategy:
        names = [p.name for p in s.all_placed()]
        return st.tuples(values_strategy(s), st.sets(st.sampled_from(names))).map(
            lambda vd: {"struct": s.name,
                        "fields": {k: v for k, v in to_wire(s, vd[0]).items() if k not in vd[1]}})
    return st.sampled_from(_small_structs()).flatmap(partial)


def _bench_images(n: int, rng) -> list[dict]:
    """n TensorMeta images with random sizes and strides (bench inputs)."""
    s = find_struct("TensorMeta")
    out = []
    for dims in rng.integers(0, 9, size=n):
        values = s.default_values()
        values["ndim"] = int(dims)
        values["sizes"][:dims] = [int(x) for x in rng.integers(1, 1024, size=dims)]
        values["strides"][:dims] = [int(x) for x in rng.integers(0, 1 << 20, size=dims)]
        out.append({"struct": "TensorMeta", "hex": s.pack(values)})
    return out


def _struct_names() -> list[str]:
    return sorted(REGISTRY.layouts)


def _decode_edges() -> list[dict]:
    """Every small struct's default image, and its all-0xff image (invalid where a bool is)."""
    out = []
    for s in _small_structs():
        out.append({"struct": s.name, "hex": s.pack(s.default_values()).hex()})
        out.append({"struct": s.name, "hex": "ff" * s.size})
    return out


erratum(
    E1_1, "The faithful profile answers layouts for structs the real Crucible does not have",
    seed=SEEDS["crucible"], location="include/crucible (no such struct)",
    ops=("layout.info", "layout.decode", "layout.encode"),
    witness={"args": {"struct": "HlcState"},
             "spec": {"sizeof": 16, "alignof": 16, "offsets": {"physical": 0, "logical": 8}},
             "seed": {"error": "invalid_input"}},
    flag="result",
    also=({"op": "layout.decode", "args": {"struct": "HlcTimestamp", "hex": "00" * 24},
           "spec": {"fields": {"physical": 0, "logical": 0, "node_id": 0}},
           "seed": {"error": "invalid_input"}},
          {"op": "layout.encode", "args": {"struct": "HlcState", "fields": {}},
           "spec": {"hex": "00" * 16}, "seed": {"error": "invalid_input"}}),
    detail="The registry also declares the structs of the other seeds (RingKernel's HlcState, "
           "HlcTimestamp, ControlBlock, MessageHeader, the K2K structs; the checkpoint's "
           "CheckpointHeader and ChunkHeader). Crucible at 8d2680a2 declares none of them: "
           "sizeof and offsetof on its headers cannot name them, so its layout ops refuse them "
           "as unknown structs. The default profile, which serves every seed's ops, keeps "
           "answering them; the other seeds' profiles are unaffected.",
)

_STRUCT_NAME = Field(Utf8(), "C++ name as in the vectors: 'TensorMeta', 'TraceRing::Entry', ...")
_NOT_BATCHED = "a constant of the declaration: nothing to compute per item"

declare(
    "layout.info", chapter=1, summary="sizeof, alignof and member offsets of a declared struct.",
    args=record(struct=_STRUCT_NAME),
    result=record(sizeof=Int(64), alignof=Int(64), offsets=Json("{member: offset}",
                                                                   js.mapping(js.uint(64)))),
    spec=(layout_info,), check=lambda a: find_struct(a["struct"]), errata=(E1_1,),
    domain=lambda: st.fixed_dictionaries({"struct": st.sampled_from(_struct_names())}),
    edges=lambda: [{"struct": n} for n in [*_struct_names(), "TraceOpRecord (.crtrace)",
                                          "CrucibleMeta (vessel_api.h C struct)"]],
    invalid=(InvalidCase("an unknown struct", lambda: st.just({"struct": "NoSuchStruct"})),),
    not_applicable={"numba": _NOT_BATCHED, "cupy": _NOT_BATCHED},
)

declare(
    "layout.decode", chapter=1, summary="Field values of one record image of a declared struct.",
    args=record(struct=_STRUCT_NAME, hex=Field(BYTES, "the record's bytes")),
    result=record(fields=Json("{member: value}", {
        "type": "object", "description": "the struct's members, in layout.encode's form"})),
    spec=(layout_decode,), domain=_decode_domain, check=check_image, bench=_bench_images,
    errata=(E1_1,),
    edges=_decode_edges,
    invalid=(
        InvalidCase("an image one byte short",
                    lambda: st.just({"struct": "Guard", "hex": "00" * 11})),
        InvalidCase("a bool byte that is neither 0 nor 1",
                    lambda: st.just({"struct": "TensorSlot", "hex": "00" * 28 + "02" + "00" * 11})),
        InvalidCase("an unknown struct", lambda: st.just({"struct": "Nope", "hex": ""})),
    ),
)

declare(
    "layout.encode", chapter=1,
    summary="Record image from field values (missing fields take spec defaults).",
    args=record(struct=_STRUCT_NAME,
                fields=Field(Json("{member: value}", js.obj(extra=True)), "field values",
                             default={})),
    result=record(hex=BYTES),
    spec=(layout_encode,), domain=_encode_domain, check=lambda a: find_struct(a["struct"]),
    errata=(E1_1,),
    arg_rules=fields_schema,
    bench=lambda n, rng: [{"struct": "TensorMeta", "fields": layout_decode(**a)["fields"]}
                          for a in _bench_images(n, rng)],
    edges=lambda: [{"struct": s.name, "fields": {}} for s in _small_structs()],
    locate=lambda a: lambda offset: field_at(find_struct(a["struct"]), offset),
    invalid=(
        InvalidCase("an unknown field",
                    lambda: st.just({"struct": "Guard", "fields": {"bogus": 1}})),
        InvalidCase("a value too wide for its field",
                    lambda: st.just({"struct": "Guard", "fields": {"arg_index": 65536}})),
        InvalidCase("an array longer than declared",
                    lambda: st.just({"struct": "TensorMeta", "fields": {"sizes": [1] * 9}})),
    ),
)
