"""Chapters 1 and 2 pinned by known answers: trunc keeps the low bits of an int and of a z3
bit-vector; the C layout rule places arrays, padding and alignas(0) as C++ does; the leaves of
every declared struct and its implicit padding tile its bytes exactly once; scalar defaults are
zero, and False only for bools; and a struct declaration records what it was given."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import z3

from ...spec.core import bits
from ...spec.core import layout as L
from ...spec.core.layout import Member, Pad, Prim, array, pad, place, u8, u32
from ...spec.core.registry import REGISTRY, Mutant
from .obligation import Property, property_obligation

TRUNC_CASES = ((0, 8), (0x1FF, 8), (2**64 - 1, 32), (0x1234_5678_9ABC_DEF0, 16),
               (0x8000_0000, 31), (5, 64))


def _trunc(case: tuple[int, int]) -> None:
    x, width = case
    assert bits.trunc(x, width) == x % 2**width
    got = bits.trunc(z3.BitVecVal(x, 64), width)
    assert got.size() == width, f"a z3 trunc to {width} bits is {got.size()} bits wide"
    assert z3.simplify(got).as_long() == x % 2**width
    low = x % 2**width
    assert bits.zext(low, 64) == low
    wide = bits.zext(z3.BitVecVal(low, width), 64)
    assert wide.size() == 64 and z3.simplify(wide).as_long() == low, wide


@property_obligation(
    "PO1.120",
    "trunc(x, w) keeps the low w bits: x mod 2^w for an int, and a w-bit vector of that value "
    "for a z3 bit-vector; zext widens a value to 64 bits without changing it.",
    covers=("bits.trunc", "bits.zext"),
    subject=bits.trunc,
    mutants=(Mutant.edit("trunc ors the mask", "trunc sets the low bits instead of keeping "
                         "them", bits.trunc, "return x & mask(width)", "return x | mask(width)"),
             Mutant.edit("trunc masks symbolic values", "the int/z3 test is inverted: a z3 "
                         "value is masked at its own width", bits.trunc,
                         "if not is_symbolic(x):", "if is_symbolic(x):"),
             Mutant.edit("zext by the sum", "zext adds the width to the value's size",
                         bits.zext, "ZeroExt(width - x.size(), x)",
                         "ZeroExt(width + x.size(), x)")),
)
def trunc_keeps_low_bits(_subject):
    return [Property("values and widths", _trunc, cases=lambda: TRUNC_CASES)]


def _members(*types) -> list[Member]:
    return [Member(f"m{k}", t) for k, t in enumerate(types)]


PLACEMENTS = (
    # (members, alignas, offsets, sizeof, alignof): C++ answers of the layout rule
    (_members(u8, array(u32, 3)), 1, (0, 4), 16, 4),
    (_members(u8, pad(3), u8), 1, (0, 1, 4), 5, 1),
    (_members(u8, array(pad(2), 3), u32), 1, (0, 1, 8), 12, 4),
    (_members(array(u8, 0), u8), 1, (0, 0), 1, 1),
    ([], 0, (), 0, 1),
    ([], 8, (), 0, 8),
    (_members(u8), 0, (0,), 1, 1),
)


def _placement(case) -> None:
    members, alignas, offsets, size, align = case
    laid = place(members, None, alignas)
    assert tuple(p.offset for p in laid.placed) == offsets, laid
    assert (laid.size, laid.align) == (size, align), laid


def _pad_is_u8_array(n: int) -> None:
    p, a = pad(n), array(u8, n)
    assert isinstance(p, Pad)
    assert (p.size, p.align) == (a.size, a.align) == (n, 1)
    words = array(u32, n)
    assert (words.size, words.align, words.elem, words.count) == (4 * n, 4, u32, n)


@property_obligation(
    "PO2.120",
    "The layout rule on arrays and padding: T[n] has sizeof n*sizeof(T) and T's alignment, "
    "a padding member is u8[n] (alignment 1), and alignas(0) has no effect.",
    covers=("layout.place", "layout.array", "layout.pad"),
    subject=place,
    mutants=(Mutant.edit("array fields swapped", "array passes the element as the alignment "
                         "and the alignment as the element", array,
                         "elem.align, elem, count", "elem, elem.align, count"),
             Mutant.edit("padding aligned to 2", "pad(n) has alignment 2", pad,
                         'count, 1)', 'count, 2)'),
             Mutant.edit("padding aligned to 0", "pad(n) has alignment 0", pad,
                         'count, 1)', 'count, 0)'),
             Mutant.edit("no floor on alignof", "without a base the alignment starts at 0, "
                         "so alignas(0) on an empty struct divides by zero", place,
                         "base.align if base else 1)", "base.align if base else 0)")),
)
def arrays_and_padding(_subject):
    return [Property("C++ placements", _placement, cases=lambda: PLACEMENTS),
            Property("pad(n) against u8[n]", _pad_is_u8_array, cases=lambda: range(6))]


def declared_structs() -> list[L.Struct]:
    """Every declared struct once (aliases share an entry)."""
    return list({id(s): s for s in REGISTRY.layouts.values()}.values())


SCALAR_SIZES = (1, 2, 4, 8)
TILED_MAX = 1 << 16
"""Structs up to this size are tiled byte range by byte range (the rings hold megabytes)."""


def _tiling(s: L.Struct) -> None:
    spans = []
    for leaf in L.leaves(s):
        assert leaf.size in SCALAR_SIZES and (leaf.wire != "pad" or leaf.size == 1), leaf
        spans.append((leaf.offset, leaf.offset + leaf.size))
    gaps = s.padding()
    for k, (start, end) in enumerate(gaps):
        assert start < end, f"{s.name}: empty padding range {(start, end)}"
        assert k + 1 == len(gaps) or end < gaps[k + 1][0], f"{s.name}: ranges not maximal"
    cursor = 0
    for start, end in sorted(spans + gaps):
        assert start == cursor, f"{s.name}: bytes from {min(start, cursor)} not covered once"
        cursor = end
    assert cursor == s.size, f"{s.name}: covered up to {cursor} of {s.size} bytes"


def _located(s: L.Struct) -> None:
    for leaf in L.leaves(s):
        last = leaf.offset + leaf.size - 1
        where = L.field_at(s, last)
        assert where.endswith(f" (byte {leaf.size - 1} of {leaf.size})"), (where, leaf)
    for start, _end in s.padding():
        assert L.field_at(s, start) == f"{s.name} implicit padding"
    assert L.field_at(s, s.size) == f"past {s.name}'s end"


@property_obligation(
    "PO2.121",
    "For every declared struct (up to 64 KiB), its leaves (scalars, one per padding byte) "
    "and its implicit padding ranges (non-empty, maximal) cover each of its sizeof bytes "
    "exactly once; field_at names the leaf of each byte, or implicit padding, or the end.",
    covers=("layout.leaves", "layout.Struct.padding", "layout.field_at"),
    subject=L.leaves,
    mutants=(Mutant.edit("leaves start at 1", "the flattening starts at offset 1", L.leaves,
                         "_flatten(s, (), 0, out)", "_flatten(s, (), 1, out)"),
             Mutant.edit("leaf size and sign swapped", "a scalar leaf takes the signedness "
                         "as its size", L._flatten, "ctype.size, ctype.signed, ctype.wire",
                         "ctype.signed, ctype.size, ctype.wire"),
             Mutant.edit("padding leaves 2 bytes", "each padding byte gives a 2-byte leaf",
                         L._flatten, 'off + i, 1, False, "pad"', 'off + i, 2, False, "pad"'),
             Mutant.edit("field_at looks below the leaf", "a byte is looked up in "
                         "[offset, offset - size)", L.field_at,
                         "offset < leaf.offset + leaf.size", "offset < leaf.offset - leaf.size"),
             Mutant.edit("empty padding ranges", "a member that starts at the cursor leaves an "
                         "empty range", L.Struct.padding, "if p.offset > cursor:",
                         "if p.offset >= cursor:")),
)
def leaves_tile_the_record(_subject):
    return [Property("declared structs", _tiling, cases=tiled_structs),
            Property("field_at on declared structs", _located, cases=tiled_structs)]


def tiled_structs() -> list[L.Struct]:
    return [s for s in declared_structs() if s.size <= TILED_MAX]


def _defaults(s: L.Struct) -> None:
    for p in s.all_placed():
        t = p.member.ctype
        if isinstance(t, L.Struct):
            assert L.default_of(t, None) == t.default_values(), (s.name, p.name)
            first = t.all_placed()[0].name
            got = L.default_of(t, {first: 7})
            assert got == {**t.default_values(), first: 7}, (s.name, p.name, got)
        if isinstance(t, Prim) and p.member.default is None:
            value = L.default_of(t, None)
            assert type(value) is (bool if t.wire == "bool" else int), (s.name, p.name, value)
            assert value == 0


@property_obligation(
    "PO2.122",
    "A scalar member without a declared default defaults to zero of its type: the int 0, "
    "or False for a bool (never a bool for an integer member); a struct member takes its "
    "members' defaults, overridden by the declared ones.",
    covers=("layout.default_of",),
    subject=L.default_of,
    mutants=(Mutant.edit("bool test inverted", "every non-bool scalar defaults to False",
                         L.default_of, 'ctype.wire == "bool"', 'ctype.wire != "bool"'),
             Mutant.edit("declared struct default dropped", "a struct member's declared "
                         "values are replaced by nothing", L.default_of,
                         "values.update(declared or {})", "values.update(declared and {})")),
)
def scalar_defaults(_subject):
    return [Property("declared structs", _defaults, cases=declared_structs)]


@contextlib.contextmanager
def scratch_layouts() -> Iterator[None]:
    """Declare structs into an empty layout table, then put the spec's table back."""
    saved = REGISTRY.layouts
    REGISTRY.layouts = {}
    try:
        yield
    finally:
        REGISTRY.layouts = saved


def _declaration(_case: None) -> None:
    with scratch_layouts():
        base = L.struct("ScratchBase", [Member("a", u32)], size=4, align=4, chapter=2,
                        doc="base")
        members = [Member("b", u8)]
        d = L.struct("ScratchDerived", members, size=8, align=4, chapter=3, doc="derived",
                     base=base, alignas=2, aliases=("Derived",))
        assert REGISTRY.layouts == {"ScratchBase": base, "ScratchDerived": d, "Derived": d}
        try:
            L.struct("ScratchWrong", [Member("c", u8)], size=2, align=1, chapter=2, doc="")
        except AssertionError:
            pass
        else:
            raise AssertionError("a wrong static assert was accepted")
    assert (d.name, d.size, d.align, d.members, d.base) == ("ScratchDerived", 8, 4,
                                                           tuple(members), base)
    assert (d.chapter, d.doc, d.aliases, d.alignas) == (3, "derived", ("Derived",), 2)
    assert [(p.name, p.offset) for p in d.placed] == [("b", 4)]


@property_obligation(
    "PO2.123",
    "struct() lays members out after the base under alignas, checks the declared sizeof and "
    "alignof like a static_assert, and records base, chapter, doc, aliases, placement and "
    "alignas as given.",
    covers=("layout.struct",),
    subject=L.struct,
    mutants=(Mutant.edit("base and alignas swapped", "place gets alignas as the base",
                         L.struct, "place(members, base, alignas)",
                         "place(members, alignas, base)"),
             Mutant.edit("static assert inverted", "a matching declaration is rejected",
                         L.struct, "if (laid.size, laid.align) != (size, align):",
                         "if (laid.size, laid.align) == (size, align):"),
             Mutant.edit("base and chapter swapped", "the struct records the chapter as its "
                         "base", L.struct, "base, chapter, doc", "chapter, base, doc"),
             Mutant.edit("chapter and doc swapped", "the struct records the doc as its "
                         "chapter", L.struct, "base, chapter, doc", "base, doc, chapter"),
             Mutant.edit("sizeof and alignof swapped", "the struct records alignof as its "
                         "sizeof", L.struct, "Struct(name, laid.size, laid.align,",
                         "Struct(name, laid.align, laid.size,"),
             Mutant.edit("placement and alignas swapped", "the struct records alignas as its "
                         "placement", L.struct, "laid.placed, alignas, seed)",
                         "alignas, laid.placed, seed)")),
)
def struct_declaration(_subject):
    return [Property("a base and a derived struct", _declaration, cases=lambda: (None,))]
