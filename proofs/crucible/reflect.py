"""Chapter 16 obligations of reflect_hash and reflect_print: the facts sheet's vectors,
sensitivity to every member a struct declares, what the hash does not see (base members, the
type's name), the printed text, and the strong-type table's agreement with the layouts."""

from __future__ import annotations

import copy

from ...spec.core.layout import Member, Struct, leaves, pad, u8
from ...spec.core.layout_ops import find_struct
from ...spec.core.registry import REGISTRY, Mutant
from ...spec.crucible.merkle_dag import guard_hash
from ...spec.crucible.reflect import (
    DIMS,
    POINT,
    STRONG_TYPES,
    fold_members,
    hash_field,
    identifier,
    is_array,
    print_field,
    print_float,
    reflect_hash,
    reflect_print,
    strong_type,
    test_struct,
)
from ...spec.crucible.reflect_ops import reflected_names, reflected_struct
from ..core.obligation import Property, property_obligation

PI_F32 = 0x4048F5C3
"""3.14f."""


def _guard(dim: int) -> dict:
    s = find_struct("Guard")
    return {**s.default_values(), "kind": 0, "op_index": 42, "arg_index": 1, "dim_index": dim}


VECTORS = [
    (POINT, {"x": 10, "y": 20, "z": PI_F32}, 0x05782033C41734B7),
    (POINT, {"x": 10, "y": 21, "z": PI_F32}, 0x4D3119061A25F4EA),
    (DIMS, {"values": [1, 2, 3, 4], "count": 4}, 0x75C5E38BA90B892C),
    ("Guard", _guard(3), 0x5FAA470E6A4AABDD),
]
"""The facts sheet's vectors (derived there from the formula, not measured in C++)."""


def _vector(case: tuple) -> None:
    s, values, want = case
    s = find_struct(s) if isinstance(s, str) else s
    assert reflect_hash(s, values) == want, (s.name, hex(reflect_hash(s, values)))


def _guard_differs(_: None) -> None:
    """Guard::hash() of the same guard is the facts' other value: a different function."""
    g = _guard(3)
    assert guard_hash(0, 42, 1, 3) == 0x64CE55C9654CE970
    assert reflect_hash(find_struct("Guard"), g) != guard_hash(0, 42, 1, 3)
    assert reflect_hash(find_struct("Guard"), g) != reflect_hash(find_struct("Guard"), _guard(4))


@property_obligation(
    "PO16.1",
    "reflect_hash gives the facts sheet's formula-derived vectors: Point{10, 20, 3.14f} "
    "0x05782033c41734b7, Point{10, 21, 3.14f} 0x4d3119061a25f4ea, Dims{{1, 2, 3, 4}, 4} "
    "0x75c5e38ba90b892c, test_reflect's Guard 0x5faa470e6a4aabdd, which is not its "
    "hand-written Guard::hash() 0x64ce55c9654ce970.",
    covers=("reflect.hash",), subject=reflect_hash,
    mutants=(
        Mutant.edit("zero seed", "the fold starts from 0", fold_members, "h = PHI", "h = 0"),
        Mutant.edit("no final mix", "the fold is returned unmixed", fold_members,
                    "return fmix64(h)", "return h"),
        Mutant.edit("golden array prime", "arrays fold with the golden ratio", hash_field,
                    "h * FNV_PRIME", "h * PHI"),
        Mutant.edit("plain strong id", "a strong ID hashes as its integer", hash_field,
                    "if strong is not None:", "if False:"),
        Mutant.edit("guard id untyped", "Guard.op_index missing from the strong table",
                    strong_type, '("Guard", "op_index"): "OpIndex",', ""),
        Mutant.edit("add not xor", "members combine by addition", fold_members,
                    "h * PHI ^ fh", "h * PHI + fh"),
    ),
)
def vectors(_subject):
    return [Property("the facts' vectors", _vector, cases=lambda: VECTORS),
            Property("Guard::hash differs", _guard_differs, cases=lambda: [None])]


def _get(values, path: tuple):
    for key in path:
        values = values[key]
    return values


def _changed(values: dict, leaf, bit: str) -> dict:
    """The value with one bit of one leaf flipped (the lowest, or the sign/top bit)."""
    out = copy.deepcopy(values)
    width = 8 * leaf.size
    mask = 1 if bit == "low" else 1 << (width - 1)
    if leaf.wire == "pad":
        holder, name, i = _get(out, leaf.path[:-2]), leaf.path[-2], leaf.path[-1]
        data = bytearray(holder[name])
        data[i] ^= mask
        holder[name] = bytes(data)
        return out
    holder, key = _get(out, leaf.path[:-1]), leaf.path[-1]
    v = holder[key]
    if isinstance(v, bool):
        holder[key] = not v
        return out
    u = (int(v) & ((1 << width) - 1)) ^ mask
    signed = leaf.signed and leaf.wire != "hex"
    holder[key] = u - (1 << width) if signed and u >> (width - 1) else u
    return out


def _one_change(name: str) -> None:
    """Every single-bit change of a direct member's leaf changes the hash and the text."""
    s = reflected_struct(name)
    own = {p.name for p in s.placed}
    base = s.default_values()
    h, text = reflect_hash(s, base), reflect_print(s, base)
    for leaf in leaves(s):
        if leaf.path[0] not in own:
            continue
        for bit in ("low", "high"):
            other = _changed(base, leaf, bit)
            assert reflect_hash(s, other) != h, (name, leaf.path, bit)
            if leaf.wire != "hex" or leaf.size != 4 or bit == "low":
                assert reflect_print(s, other) != text, (name, leaf.path, bit)


@property_obligation(
    "PO16.2",
    "For every Crucible struct declaration (and test_reflect's Point and Dims), flipping the "
    "lowest or the top bit of any scalar of a direct member (array elements, padding bytes, "
    "nested and strong-typed members included) changes reflect_hash and reflect_print.",
    covers=("reflect.hash", "reflect.print"), subject=reflect_hash,
    mutants=(
        Mutant.edit("last element dropped", "an array's last element is not folded",
                    hash_field, "for elem, v in elements(ctype, value):",
                    "for elem, v in elements(ctype, value)[:-1]:"),
        Mutant.edit("nested ignored", "a nested struct hashes as 0", hash_field,
                    "return reflect_hash(ctype, value)", "return 0"),
        Mutant.edit("strong id truncated", "a strong hash keeps its low 32 bits", hash_field,
                    "fmix64(int(value) & M64)", "fmix64(int(value) & 0xFFFFFFFF)"),
        Mutant.edit("pad unread", "padding bytes hash as 0", hash_field,
                    "if is_array(ctype):", "if isinstance(ctype, Pad):\n        return 0\n"
                    "    if is_array(ctype):"),
        Mutant.edit("bool as text 1", "a bool prints as true whatever it holds", print_field,
                    '"true" if value else "false"', '"true"'),
    ),
)
def one_change(_subject):
    return [Property("every struct, every leaf", _one_change, cases=reflected_names)]


def _direct_only(_: None) -> None:
    region = find_struct("RegionNode")
    values = region.default_values()
    moved = {**values, "merkle_hash": 7, "kind": 2}
    assert reflect_hash(region, values) == reflect_hash(region, moved)
    assert reflect_print(region, values) == reflect_print(region, moved)
    assert reflect_hash(region, values) != reflect_hash(region, {**values, "content_hash": 7})


def _no_name(_: None) -> None:
    tm, cm = find_struct("TensorMeta"), find_struct("CrucibleMeta")
    assert reflect_hash(tm, tm.default_values()) == reflect_hash(cm, cm.default_values())
    assert reflect_hash(find_struct("OpIndex"), {"v": 7}) == \
        reflect_hash(find_struct("SlotId"), {"v": 7})


def _order_counts(_: None) -> None:
    a = reflect_hash(POINT, {"x": 10, "y": 20, "z": PI_F32})
    assert a != reflect_hash(POINT, {"x": 20, "y": 10, "z": PI_F32})
    d = reflect_hash(DIMS, {"values": [1, 2, 3, 4], "count": 4})
    assert d != reflect_hash(DIMS, {"values": [2, 1, 3, 4], "count": 4})


def _pad_shape(_: None) -> None:
    """A one-byte padding member is a uint8_t, a longer one a uint8_t array."""
    one = test_struct("P", [Member("a", u8), Member("pad", pad(1))])
    scalar = test_struct("P", [Member("a", u8), Member("pad", u8)])
    assert reflect_hash(one, {"a": 3, "pad": b"\x05"}) == reflect_hash(scalar, {"a": 3, "pad": 5})
    assert not is_array(pad(1)) and is_array(pad(2))
    assert reflect_print(one, {"a": 3, "pad": b"\x05"}) == "P { a = 3, pad = 5 }"


@property_obligation(
    "PO16.3",
    "reflect_hash sees only direct members, in order: a derived struct's base members (a "
    "RegionNode's TraceNode kind and merkle_hash) change neither hash nor text; the type's "
    "name is not hashed (TensorMeta and CrucibleMeta agree, so do OpIndex{7} and SlotId{7}); "
    "swapping two members' or two elements' values changes the hash; a one-byte padding "
    "member hashes and prints as a uint8_t.",
    covers=("reflect.hash", "reflect.print"), subject=reflect_hash,
    mutants=(
        Mutant.edit("base hashed", "base members are folded too", reflect_hash,
                    "for p in s.placed", "for p in s.all_placed()"),
        Mutant.edit("order-blind", "members combine without the multiply", fold_members,
                    "h = (h * PHI ^ fh) & M64", "h = (h ^ fh) & M64"),
        Mutant.edit("order-blind arrays", "elements combine by xor alone", hash_field,
                    "h = (h * FNV_PRIME ^ hash_field(elem, v)) & M64",
                    "h = (h ^ hash_field(elem, v)) & M64"),
        Mutant.edit("pad always array", "a one-byte padding member is an array", is_array,
                    "ctype.size > 1", "ctype.size > 0"),
    ),
)
def direct_members(_subject):
    return [Property(label, fn, cases=lambda: [None]) for label, fn in (
        ("base members unseen", _direct_only), ("the name is not hashed", _no_name),
        ("order counts", _order_counts), ("padding's C type", _pad_shape))]


TEXTS = [
    (POINT, {"x": 10, "y": -20, "z": PI_F32}, "Point { x = 10, y = -20, z = 3.14 }"),
    ("Guard", None, "Guard { kind = 0, pad = [0, 0, 0], op_index = OpIndex { v = 42 }, "
                    "arg_index = 1, dim_index = 3 }"),
    ("TraceRing::Entry", {"schema_hash": 5, "grad_enabled": True},
     "Entry { schema_hash = SchemaHash { v = 5 }, shape_hash = ShapeHash { v = 0 }, "
     "num_inputs = 0, num_outputs = 0, num_scalar_args = 0, grad_enabled = true, "
     "op_flags = 0, scalar_values = [0, 0, 0, 0, 0] }"),
    ("TensorMeta", {"data_ptr": 0x7F00}, "TensorMeta { sizes = [0, 0, 0, 0, 0, 0, 0, 0], "
     "strides = [0, 0, 0, 0, 0, 0, 0, 0], data_ptr = 0x7f00, ndim = 0, "
     "dtype = 18446744073709551615, device_type = 0, device_idx = -1, layout = 0, "
     "requires_grad = false, flags = 0, output_nr = 0, storage_offset = 0, version = 0, "
     "storage_nbytes = 0, grad_fn_hash = 0 }"),
    ("TraceNode", {"kind": 3}, "TraceNode { kind = 3, pad = [0, 0, 0, 0, 0, 0, 0], "
     "merkle_hash = MerkleHash { v = 0 }, next = (nil) }"),
]
"""Texts written by hand from Reflect.h's printf formats (glibc's %p and %g)."""
FLOATS = [(0x7FC00000, "nan"), (0xFFC00000, "-nan"), (0x7F800000, "inf"),
          (0xFF800000, "-inf"), (0x3F800000, "1"), (0x49742400, "1e+06"), (0, "0")]


def _text(case: tuple) -> None:
    s, given, want = case
    s = find_struct(s) if isinstance(s, str) else s
    values = _guard(3) if given is None else {**s.default_values(), **given}
    got = reflect_print(s, values)
    assert got == want, got


def _float(case: tuple) -> None:
    bits, want = case
    f32 = POINT.placed[2].member.ctype
    assert print_float(f32, bits) == want, (hex(bits), print_float(f32, bits))


@property_obligation(
    "PO16.4",
    "reflect_print writes 'Name { m = v, ... }' with no newline, Name the type's own "
    "identifier: enums as their value converted to unsigned long long (Undefined -1 prints "
    "18446744073709551615), signed integers signed, bools true/false, strong types as "
    "'OpIndex { v = 42 }', pointers as glibc's %p, floats as %g (nan, -nan, inf).",
    covers=("reflect.print",), subject=reflect_print,
    mutants=(
        Mutant.edit("qualified name", "the enclosing class is printed", identifier,
                    'return s.name.rsplit("::", 1)[-1]', "return s.name"),
        Mutant.edit("signed enum", "an enum prints signed", print_field,
                    "return str(int(value) & M64)", "return str(int(value))"),
        Mutant.edit("null as 0x0", "a null pointer prints 0x0", print_field,
                    'f"0x{value:x}" if value else "(nil)"', 'f"0x{value:x}"'),
        Mutant.edit("unsigned nan", "-nan prints nan", print_float,
                    '"-nan" if bits >> (8 * ctype.size - 1) & 1 else "nan"', '"nan"'),
        Mutant.edit("newline", "the text ends its line", reflect_print,
                    '+ " }"', '+ " }\\n"'),
        Mutant.edit("strong as int", "a strong ID prints as its integer", print_field,
                    'return f"{strong} {{ v = {int(value) & M64} }}"', "return str(value)"),
    ),
)
def texts(_subject):
    return [Property("hand-written texts", _text, cases=lambda: TEXTS),
            Property("float spellings", _float, cases=lambda: FLOATS)]


def _crucible_structs() -> list[Struct]:
    unique = {s.name: s for s in REGISTRY.layouts.values() if s.seed == "crucible"}
    return [unique[n] for n in sorted(unique)]


def _table(s: Struct) -> None:
    for p in s.placed:
        ctype = getattr(p.member.ctype, "elem", p.member.ctype)
        kind = strong_type(s.name, p.name)
        if ctype.name == "id32" and s.name not in STRONG_TYPES:
            assert kind is not None and kind in STRONG_TYPES[:5], (s.name, p.name)
        if kind is not None:
            assert ctype.name in ("id32", "hash64") and kind in STRONG_TYPES, (s.name, p.name)
            assert (ctype.name == "id32") == (kind in STRONG_TYPES[:5]), (s.name, p.name)


@property_obligation(
    "PO16.5",
    "The strong-type table agrees with the layouts: every 32-bit ID member of a Crucible "
    "struct (outside the strong types' own `v`) is a strong ID, every listed member is a "
    "declared 32-bit ID or 64-bit hash, and an ID is never listed as a hash type or back.",
    covers=("reflect.hash", "reflect.print"), subject=strong_type,
    mutants=(
        Mutant.edit("edge untyped", "Edge.dst is left a plain integer", strong_type,
                    '("Edge", "dst"): "OpIndex", ', ""),
        Mutant.edit("id as hash", "GraphNode.id listed as a hash type", strong_type,
                    '("GraphNode", "id"): "NodeId"', '("GraphNode", "id"): "SchemaHash"'),
        Mutant.edit("hash as id", "TraceGraph.content_hash listed as an ID", strong_type,
                    '("TraceGraph", "content_hash"): "ContentHash"',
                    '("TraceGraph", "content_hash"): "OpIndex"'),
    ),
)
def strong_table(_subject):
    return [Property("every Crucible struct", _table, cases=_crucible_structs)]
