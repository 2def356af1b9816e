"""Chapter 18 decoders pinned at their edges: a file of exactly the header, a count the bytes
cannot hold (the message names the count read and the bytes it needs), equal branch arm
values, the reserved op_flags bits under the strict and the lenient reader, and the 256-byte
limit of a .crtrace name. The bytes are laid out by hand from the format (a 32-byte header,
21 region bytes, 36 plan bytes, 41 op bytes, a 12-byte Guard, 16 bytes per arm)."""

from __future__ import annotations

import struct
from collections.abc import Callable

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible.cdag import (
    decode_branch,
    decode_region,
    read_header,
    read_op,
    read_plan,
    read_region_head,
)
from ...spec.crucible.crtrace import check_names, meta_problem
from ..core.obligation import Property, property_obligation

STRICT, LENIENT_REGION, LENIENT_BRANCH = frozenset(), frozenset({"E18.6"}), frozenset({"E18.7"})


def _header(kind: int, merkle: int = 0, second: int = 0, pad: bytes = bytes(7)) -> bytes:
    """Magic "GADC", version 7, kind, 7 pad bytes (written zero), two u64 hashes: 32 bytes."""
    return b"GADC" + struct.pack("<IB", 7, kind) + pad + struct.pack("<QQ", merkle, second)


def _region(num_ops: int, plan: bytes = b"", body: bytes = b"", head: bytes = b"") -> bytes:
    """Header (kind 0), num_ops, first_op_schema 0x51, measured_ms 0x52, variant_id 0x53,
    has_plan."""
    fixed = struct.pack("<IQIIB", num_ops, 0x51, 0x52, 0x53, 1 if plan else 0)
    return (head or _header(0, 0xAA, 0xBB)) + fixed + plan + body


def _plan(num_slots: int, slots_held: int) -> bytes:
    """36 fixed plan bytes (device_idx -1, rank -1) and `slots_held` zero slots of 40 bytes."""
    return struct.pack("<QIIbb2xQii", 0, num_slots, 0, 0, -1, 0, -1, 0) + bytes(40 * slots_held)


def _op(flags: int, nin: int = 0, nout: int = 0, nsa: int = 0, body: int = 0) -> bytes:
    """An op of nin inputs, nout outputs and nsa scalars: 4 hashes, 3 u16 counts,
    grad_enabled, op_flags, kernel_id (41 bytes), then `body` zero bytes."""
    return struct.pack("<QQQQHHHBBB", 1, 2, 3, 4, nin, nout, nsa, 0, flags, 0) + bytes(body)


def _branch(values: list[int], num_arms: int | None = None) -> bytes:
    """Header (kind 1), a Guard of kind 0 and op_index 0xFFFFFFFF, num_arms, the arms
    (value, target merkle = 100 + k)."""
    guard = struct.pack("<B3xIHH", 0, 0xFFFFFFFF, 0, 0)
    count = len(values) if num_arms is None else num_arms
    arms = b"".join(struct.pack("<qQ", v, 100 + k) for k, v in enumerate(values))
    return _header(1, 0xAA, 0xBB) + guard + struct.pack("<I", count) + arms


def _message(fn: Callable[[], object]) -> str:
    try:
        fn()
    except InvalidInput as e:
        return e.message
    raise AssertionError("accepted")


REJECTIONS = (
    ("a region of the header alone", lambda: decode_region(_header(0)),
     "offset 32 (region.num_ops): needs 4 bytes, 0 remain (truncated)"),
    ("a branch of the header alone", lambda: decode_branch(_header(1)),
     "offset 32 (guard): needs 12 bytes, 0 remain (truncated)"),
    ("31 bytes", lambda: decode_region(_header(0)[:31]),
     "offset 0 (header): 31 bytes; the header alone is 32"),
    ("2 ops, none there", lambda: decode_region(_region(2)),
     "offset 32 (region.num_ops): 2 items need at least 82 bytes, 0 remain"),
    ("3 slots, 1 there", lambda: decode_region(_region(0, _plan(3, 1))),
     "offset 61 (plan.num_slots): 3 items need at least 120 bytes, 40 remain"),
    ("3 arms, 1 there", lambda: decode_branch(_branch([5], num_arms=3)),
     "offset 44 (num_arms): 3 items need at least 48 bytes, 16 remain"),
    ("equal arm values", lambda: decode_branch(_branch([-4, 7, 7])),
     "offset 80 (arms[2].value): 7 does not exceed the previous arm's 7 (arms are sorted)"),
    ("reserved op flag 0x20", lambda: decode_region(_region(1, body=_op(0x20))),
     "offset 92 (ops[0].op_flags): 0x20 sets reserved bits 5-7"),
    ("reserved op flag 0x80", lambda: decode_region(_region(1, body=_op(0x9F))),
     "offset 92 (ops[0].op_flags): 0x9f sets reserved bits 5-7"),
    ("pad byte 3 set", lambda: decode_region(_region(0, head=_header(0, pad=bytes(3) + b"\1"
                                                                      + bytes(3)))),
     "offset 12 (header.pad): the 7 bytes after kind are written as zero"),
    ("pad byte 0 set", lambda: decode_branch(_branch([])[:9] + b"\x80" + _branch([])[10:]),
     "offset 9 (header.pad): the 7 bytes after kind are written as zero"),
    ("1 input: 168 + 8 bytes", lambda: decode_region(_region(1, body=_op(0, 1, 0, 0, 174))),
     "offset 85 (ops[0].num_inputs/num_outputs/num_scalar_args): 1 + 0 metas, 0 scalars and "
     "their ids need 176 bytes, 174 remain (truncated)"),
    ("1 output: 168 + 4 bytes", lambda: decode_region(_region(1, body=_op(0, 0, 1, 0, 170))),
     "offset 85 (ops[0].num_inputs/num_outputs/num_scalar_args): 0 + 1 metas, 0 scalars and "
     "their ids need 172 bytes, 170 remain (truncated)"),
    ("2 scalars: 16 bytes", lambda: decode_region(_region(1, body=_op(0, 0, 0, 2, 15))),
     "offset 85 (ops[0].num_inputs/num_outputs/num_scalar_args): 0 + 0 metas, 2 scalars and "
     "their ids need 16 bytes, 15 remain (truncated)"),
)
"""(what, the decode, its exact message): offsets and counts worked out from the layout."""


def _rejection(case: tuple[str, Callable[[], object], str]) -> None:
    what, fn, want = case
    got = _message(fn)
    assert got == want, (what, got, want)


def _accepted(_case: None) -> None:
    # Equal arm values are read as given under E18.7; strictly ascending ones always.
    b = decode_branch(_branch([-4, 7, 7]), LENIENT_BRANCH)
    assert b.arms == [(-4, 100), (7, 101), (7, 102)], b.arms
    assert (b.merkle_hash, b.next_merkle) == (0xAA, 0xBB), b
    b = decode_branch(_branch([-4, 7, 8]))
    assert b.arms == [(-4, 100), (7, 101), (8, 102)], b.arms
    # Reserved op_flags bits are read past under E18.6 (an op keeps bits 0-4 only); bits 0-4
    # are accepted by both readers.
    for flags, errata in ((0x20, LENIENT_REGION), (0xFF, LENIENT_REGION), (0x1F, STRICT),
                          (0x1F, LENIENT_REGION)):
        region = decode_region(_region(1, body=_op(flags)), errata)
        assert [op.op_flags for op in region.ops] == [flags & 0x1F], (flags, errata, region.ops)
        assert region.ops[0].schema_hash == 1 and region.ops[0].callsite_hash == 4
    # The header's hashes and the fixed fields land in their own fields; a set pad byte is
    # read past under E18.6 and E18.7.
    r = decode_region(_region(0))
    assert (r.merkle_hash, r.content_hash) == (0xAA, 0xBB), r
    assert (r.first_op_schema, r.measured_ms_bits, r.variant_id) == (0x51, 0x52, 0x53), r
    padded = _header(0, 0xAA, 0xBB, bytes(6) + b"\xff")
    assert decode_region(_region(0, head=padded), LENIENT_REGION) == r
    b = _branch([1])
    assert decode_branch(b[:10] + b"\1" + b[11:], LENIENT_BRANCH) == decode_branch(b)
    # A count the bytes hold exactly is accepted.
    assert len(decode_region(_region(0, _plan(2, 2))).plan.slots) == 2
    assert len(decode_region(_region(2, body=_op(0) + _op(1))).ops) == 2
    assert len(decode_branch(_branch([1, 2, 3])).arms) == 3
    op = decode_region(_region(1, body=_op(0, 1, 1, 2, 2 * 168 + 16 + 12))).ops[0]
    assert (len(op.inputs), len(op.outputs), op.scalar_args) == (1, 1, [0, 0]), op


@property_obligation(
    "PO18.160",
    "The CDAG decoders read a file of exactly the 32-byte header past the header (the next "
    "field is the short one, at offset 32) and refuse anything shorter at offset 0; a count "
    "the bytes cannot hold (ops, plan slots, arms) is refused at the count's offset naming the "
    "count read and count x item size; branch arm values must rise strictly (equal ones are "
    "read as given only under E18.7); op_flags bits 5-7 are refused, and read past under E18.6.",
    covers=("cdag.decode", "cdag.decode_branch"),
    subject=decode_region,
    mutants=(Mutant.edit("header of 32 refused", "a file of exactly the header is too short",
                         read_header, "if r.left < HEADER_SIZE", "if r.left <= HEADER_SIZE"),
             Mutant.edit("equal arms pass", "equal arm values are accepted", decode_branch,
                         "arms[k][0] <= arms[k - 1][0]", "arms[k][0] < arms[k - 1][0]"),
             Mutant.edit("arm count swapped", "need() is given the arm size as the count",
                         decode_branch, "r.need(num_arms, ARM_SIZE,", "r.need(ARM_SIZE, num_arms,"),
             Mutant.edit("slot count swapped", "need() is given the slot size as the count",
                         read_plan, "r.need(num_slots, SLOT_SIZE,", "r.need(SLOT_SIZE, num_slots,"),
             Mutant.edit("op count swapped", "need() is given the op size as the count",
                         read_region_head, "r.need(num_ops, OP_FIXED,",
                         "r.need(OP_FIXED, num_ops,"),
             Mutant.edit("reserved flags lenient only", "reserved bits are refused only under "
                         "E18.6", read_op, "flags & RESERVED_OP_FLAGS and not lenient",
                         "flags & RESERVED_OP_FLAGS and lenient"),
             Mutant.edit("pad checked when lenient", "a set pad byte is refused only under "
                         "the erratum", read_header, "if any(pad) and not lenient",
                         "if any(pad) and lenient"),
             Mutant.edit("hashes swapped", "the region's merkle and content hashes are "
                         "exchanged", read_region_head, "CdagRegion([], content, merkle,",
                         "CdagRegion([], merkle, content,"),
             Mutant.edit("body sizes swapped", "the op body is sized with outputs as inputs",
                         read_op, "op_body_size(nin, nout,", "op_body_size(nout, nin,")),
)
def cdag_decode_edges(_subject):
    return [Property("(what, decode, message)", _rejection, cases=lambda: REJECTIONS),
            Property("accepted files", _accepted, cases=lambda: (None,))]


NAMES = (
    ({1: "a" * 256}, True),
    ({1: "a" * 257}, False),
    ({1: "\u00e9" * 128}, True),
    ({1: "\u00e9" * 128 + "a"}, False),
    ({1: "", 2: "b" * 255}, True),
    ({1: "a\0"}, False),
    ({h: "n" for h in range(512)}, True),
    ({h: "n" for h in range(513)}, False),
)
"""(names, accepted): at most 512 names, each at most 256 UTF-8 bytes (U+00E9 is 2 bytes),
with no NUL."""


def _names(case: tuple[dict[int, str], bool]) -> None:
    names, ok = case
    try:
        check_names(names)
    except InvalidInput:
        assert not ok, names
        return
    assert ok, names


@property_obligation(
    "PO18.161",
    "A .crtrace name table may hold exactly 512 names and a name be exactly 256 UTF-8 bytes "
    "long; 513 names, 257 bytes or a NUL is refused.",
    covers=("crtrace.decode",),
    subject=check_names,
    mutants=(Mutant.edit("256 refused", "a name of 256 bytes is refused", check_names,
                         "len(raw) > NAME_MAX", "len(raw) >= NAME_MAX"),
             Mutant.edit("512 refused", "a table of 512 names is refused", check_names,
                         "len(names) > NAME_TABLE_CAP", "len(names) >= NAME_TABLE_CAP")),
)
def crtrace_name_length(_subject):
    return [Property("(names, accepted)", _names, cases=lambda: NAMES)]


def _meta(ndim: int, sizes: list[int], strides: list[int], dtype: int = 0) -> dict:
    pad = [0] * (8 - len(sizes))
    return {"ndim": ndim, "sizes": sizes + pad, "strides": strides + pad, "dtype": dtype}


I64_SPAN_METAS = [
    (_meta(8, [1] * 8, [1] * 8), True),
    (_meta(9, [1] * 8, [1] * 8), False),
    (_meta(1, [2**63 - 1], [1]), True),
    (_meta(1, [2**62], [2]), True),
    (_meta(1, [2**62], [2], dtype=2), False),
    (_meta(1, [4], [1], dtype=99), False),
]
"""(meta, loadable), worked by hand: 8 dims are allowed, 9 are not; a span of exactly
2^63 - 1 bytes (2^63 - 1 bytes, or 2^62 elements 2 apart) fits int64; the same elements of a
2-byte dtype span 2^64 - 2 bytes, which fits u64 but not int64; 99 is no ScalarType."""


def _meta_loadable(case: tuple[dict, bool]) -> None:
    meta, loadable = case
    assert (meta_problem(meta) is None) == loadable, (meta, meta_problem(meta))


@property_obligation(
    "PO18.162",
    "A loaded TensorMeta may have 8 dimensions but not 9, and a storage span of at most "
    "2^63 - 1 bytes: one that fits u64 but not int64 is refused, one of exactly 2^63 - 1 is "
    "not.",
    covers=("crtrace.decode",),
    subject=meta_problem,
    mutants=(Mutant.edit("span 2^63-1 refused", "a span of exactly 2^63 - 1 bytes is refused",
                         meta_problem, "compute_storage_nbytes(**view) > I64_MAX",
                         "compute_storage_nbytes(**view) >= I64_MAX"),
             Mutant.edit("int64 span unchecked", "a span past int64 but within u64 loads",
                         meta_problem, "compute_storage_nbytes(**view) > I64_MAX",
                         "compute_storage_nbytes(**view) > 2**64"),
             Mutant.edit("8 dims refused", "a meta of 8 dimensions is refused", meta_problem,
                         "if ndim > MAX_DIMS:", "if ndim >= MAX_DIMS:")),
)
def crtrace_meta_span(_subject):
    return [Property("(meta, loadable)", _meta_loadable, cases=lambda: I64_SPAN_METAS)]
