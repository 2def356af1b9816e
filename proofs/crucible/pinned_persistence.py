"""Chapters 17 and 18 pinned at their edges: bool bytes and zero fields of a CDAG file, the
u16 op counts, the field names a file's offsets map to, the Cipher's HEAD and hash 0, the
.crtrace name table and record size fallback, the 16-bit tensor count of E18.2, the
transaction log's previous(), and Philox's float conversions and modular inverse. Each case
has an answer worked out from the format, not from the function checked."""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible import transaction as tx
from ...spec.crucible.cdag import (
    GUARD,
    TENSOR_META,
    TENSOR_SLOT,
    CdagBranch,
    CdagPlan,
    CdagRegion,
    Reader,
    branch_size,
    check_op,
    decode_region,
    encode_branch,
    encode_region,
    read_meta,
    read_plan,
    write_header,
)
from ...spec.crucible.cdag_ops import name_at
from ...spec.crucible.cipher import Cipher, object_path
from ...spec.crucible.crtrace import (
    TRACE_OP_RECORD,
    header,
    meta_record_size,
    name_table_end,
    parse_crtrace,
)
from ...spec.crucible.crtrace import _name_entries as name_entries
from ...spec.crucible.philox import (
    _scale,
    _u32_to_float,
    mul_inverse,
    to_uniform_f64,
    to_uniform_seed,
)
from ...spec.crucible.trace_entry import TraceOp
from ...spec.crucible.types import NONE32
from ..core.obligation import Property, property_obligation

LENIENT = frozenset({"E18.6"})
"""The erratum under which the seed reads any non-zero bool byte as true."""


def rejects(fn: Callable[[], object]) -> None:
    """`fn()` raises InvalidInput naming an offset."""
    try:
        fn()
    except InvalidInput as e:
        assert e.message.startswith("offset "), e.message
        return
    raise AssertionError("accepted")


def differing_byte(a: bytes, b: bytes) -> int:
    """The one offset where two encodings of the same length differ."""
    diff = [k for k in range(len(a)) if a[k] != b[k]]
    assert len(a) == len(b) and len(diff) == 1, diff
    return diff[0]


# --- CDAG bool bytes and zero fields (chapter 18) -------------------------------------------


def _flag(v: int) -> None:
    assert Reader(bytes([v])).flag("f", True) is (v != 0)
    if v <= 1:
        assert Reader(bytes([v])).flag("f", False) is (v == 1)
    else:
        rejects(lambda: Reader(bytes([v])).flag("f", False))


def _op_flag(k: int) -> None:
    ops = [TraceOp(), TraceOp(), TraceOp()]
    plain = encode_region(CdagRegion(ops))
    ops[k].grad_enabled = True
    data = encode_region(CdagRegion(ops))
    bad = bytearray(data)
    bad[differing_byte(plain, data)] = 2
    rejects(lambda: decode_region(bytes(bad)))
    assert decode_region(bytes(bad), LENIENT) == decode_region(data)


def _data_ptr(j: int) -> None:
    clean = TENSOR_META.pack(TENSOR_META.default_values())
    bad = bytearray(clean)
    bad[TENSOR_META.offsets["data_ptr"] + j] = 0x5A
    rejects(lambda: read_meta(Reader(bytes(bad)), "m", False))
    assert read_meta(Reader(bytes(bad)), "m", True) == read_meta(Reader(clean), "m", False)


def _requires_grad(v: int) -> None:
    at = TENSOR_META.offsets["requires_grad"]
    values = dict(TENSOR_META.default_values(), requires_grad=True)
    good = TENSOR_META.pack(values)
    bad = bytearray(good)
    bad[at] = v
    rejects(lambda: read_meta(Reader(bytes(bad)), "m", False))
    assert read_meta(Reader(bytes(bad)), "m", True) == read_meta(Reader(good), "m", False)


def _plan_with(is_external: bool) -> bytes:
    slots = [dict(TENSOR_SLOT.default_values()) for _ in range(2)]
    slots[1]["is_external"] = is_external
    return encode_region(CdagRegion([], plan=CdagPlan(slots=slots)))


def _is_external(v: int) -> None:
    plain, data = _plan_with(False), _plan_with(True)
    bad = bytearray(data)
    bad[differing_byte(plain, data)] = v
    rejects(lambda: decode_region(bytes(bad)))
    assert decode_region(bytes(bad), LENIENT) == decode_region(data)
    head = 32 + 21
    lenient = read_plan(Reader(bytes(bad[head:])), True)
    assert lenient.slots[1]["is_external"] == 1


@property_obligation(
    "PO18.150",
    "A bool byte (has_plan, grad_enabled of every op, requires_grad of every meta, is_external "
    "of every slot) reads 0 or 1 "
    "and any other byte is rejected, or read as true under E18.6; a TensorMeta whose 8 "
    "data_ptr bytes are not all 0 is rejected, or read with data_ptr 0 under E18.6.",
    covers=("cdag.decode",),
    subject=decode_region,
    mutants=(
        Mutant.edit("flag check inverted", "the strict reader accepts any bool byte and the "
                    "lenient one rejects", Reader.flag, "if v > 1 and not lenient:",
                    "if v > 1 and lenient:"),
        Mutant.edit("op index as lenient", "decode_region passes the op index where the "
                    "lenient flag goes, so every op after the first is read leniently",
                    decode_region, "read_op(r, k, lenient)", "read_op(r, lenient, k)"),
        Mutant.edit("data_ptr 7 bytes", "only the low 7 bytes of data_ptr are checked",
                    read_meta, "image[DATA_PTR:DATA_PTR + 8]) and",
                    "image[DATA_PTR:DATA_PTR + 7]) and"),
        Mutant.edit("requires_grad 2 accepted", "the meta check lets the byte 2 through",
                    read_meta, "if image[REQUIRES_GRAD] > 1:", "if image[REQUIRES_GRAD] > 2:"),
        Mutant.edit("lenient requires_grad false", "E18.6 reads a bad requires_grad as false",
                    read_meta, "image[REQUIRES_GRAD] = 1", "image[REQUIRES_GRAD] = 0"),
        Mutant.edit("is_external 2 accepted", "the slot check lets the byte 2 through",
                    read_plan, "if image[IS_EXTERNAL] > 1:", "if image[IS_EXTERNAL] > 2:"),
        Mutant.edit("lenient is_external false", "E18.6 reads a bad is_external as false",
                    read_plan, "image[IS_EXTERNAL] = 1", "image[IS_EXTERNAL] = 0"),
    ),
)
def cdag_bool_bytes(_subject):
    return [Property("every byte value", _flag, cases=lambda: range(256)),
            Property("grad_enabled of op k", _op_flag, cases=lambda: range(3)),
            Property("data_ptr byte j", _data_ptr, cases=lambda: range(8)),
            Property("requires_grad byte", _requires_grad, cases=lambda: (2, 3, 0xFF)),
            Property("is_external byte", _is_external, cases=lambda: (2, 3, 0x80, 0xFF))]


# --- CDAG sizes, u16 counts and field names (chapter 18) ------------------------------------


def _op_counts(case: tuple[str, int]) -> None:
    side, n = case
    op = TraceOp(**{side: [{}] * n})
    if n <= 0xFFFF:
        check_op(op, "op")
    else:
        try:
            check_op(op, "op")
        except InvalidInput:
            return
        raise AssertionError(f"{n} {side} accepted")


def _phase_and_scalars(case: tuple[int, int, int]) -> None:
    phase, given, declared = case
    op = TraceOp(training_phase=phase, scalar_args=[7] * given, num_scalar_args=declared)
    if 0 <= phase <= 3 and given >= declared:
        check_op(op, "op")
    else:
        try:
            check_op(op, "op")
        except InvalidInput:
            return
        raise AssertionError(f"phase {phase}, {given} scalars for {declared} accepted")


def _branch_size(arms: int) -> None:
    b = CdagBranch(GUARD.default_values(), [(k, 2 * k) for k in range(arms)])
    assert branch_size(b) == 48 + 16 * arms == len(encode_branch(b))


def _field_names(_case: None) -> None:
    spans: list = []
    encode_region(CdagRegion([]), spans)
    assert name_at(spans, 24) == "header.content_hash (byte 0 of 8)"
    assert name_at(spans, 16) == "header.merkle_hash (byte 0 of 8)"
    spans = []
    encode_branch(CdagBranch(GUARD.default_values(), []), spans)
    assert name_at(spans, 31) == "header.next_merkle (byte 7 of 8)"


@property_obligation(
    "PO18.151",
    "An op may have up to 65535 inputs and 65535 outputs, not one more, a phase in 0..3 and "
    "at least num_scalar_args scalars; a branch file is 48 "
    "bytes plus 16 per arm; bytes 24-31 of a region header are its content hash and of a "
    "branch header its continuation's Merkle hash.",
    covers=("cdag.encode", "cdag.encode_branch"),
    subject=check_op,
    mutants=(
        Mutant.edit("65535 inputs rejected", "the input count bound is >=", check_op,
                    "len(op.inputs) > 0xFFFF", "len(op.inputs) >= 0xFFFF"),
        Mutant.edit("bound 65534", "the input count bound is one low", check_op,
                    "len(op.inputs) > 0xFFFF", "len(op.inputs) > 0xFFFE"),
        Mutant.edit("bound 65536", "the input count bound is one high", check_op,
                    "len(op.inputs) > 0xFFFF", "len(op.inputs) > 0x10000"),
        Mutant.edit("phase 3 rejected", "the phase bound is 2", check_op,
                    "0 <= op.training_phase <= 3", "0 <= op.training_phase <= 2"),
        Mutant.edit("missing scalars accepted", "one scalar short passes", check_op,
                    "len(op.scalar_args) < op.num_scalar_args",
                    "len(op.scalar_args) < op.num_scalar_args - 1"),
        Mutant.edit("arms subtracted", "branch_size subtracts the arms", branch_size,
                    "+ 4 + ARM_SIZE", "+ 4 - ARM_SIZE"),
        Mutant.edit("guard subtracted", "branch_size subtracts the guard", branch_size,
                    "HEADER_SIZE + GUARD_SIZE", "HEADER_SIZE - GUARD_SIZE"),
        Mutant.edit("second hash names swapped", "a region's bytes 24-31 are named "
                    "next_merkle", write_header, "if kind == TraceNodeKind.REGION",
                    "if kind != TraceNodeKind.REGION"),
    ),
)
def cdag_edges(_subject):
    counts = [(side, n) for side in ("inputs", "outputs") for n in (0xFFFE, 0xFFFF, 0x10000)]
    return [Property("a count of inputs or outputs", _op_counts, cases=lambda: counts),
            Property("a phase, scalars given and declared", _phase_and_scalars,
                     cases=lambda: ((0, 0, 0), (3, 2, 2), (4, 0, 0), (-1, 0, 0), (2, 1, 2),
                                    (1, 3, 2))),
            Property("a branch of n arms", _branch_size, cases=lambda: (0, 1, 2, 7)),
            Property("the second header hash", _field_names, cases=lambda: (None,))]


# --- Cipher (chapter 18) ----------------------------------------------------------------------


def _open(case: tuple[dict, int]) -> None:
    files, head = case
    assert Cipher.open(files).head == head


OPEN_CASES = (
    ({}, 0),
    ({"log": b"1,aa,5\n2,bb,6\n3,cc,7\n"}, 0xCC),
    ({"log": b"1,aa,5\n2,bb,6\n3,cc,7\n", "HEAD": b"1f\nee\n"}, 0x1F),
    ({"log": b"1,aa,5\n2,bb,6\n", "HEAD": b"\nee\n"}, 0),
    ({"HEAD": b""}, 0),
)


def _store(h: int) -> None:
    c = Cipher.open({})
    region = CdagRegion([TraceOp()], content_hash=h)
    got = c.store(region)
    if h == 0:
        assert got == 0 and c.files == {}
    else:
        assert got == h and c.files == {object_path(h): encode_region(region)}


@property_obligation(
    "PO18.152",
    "Opening a store: HEAD's first line in hex is the head (an empty line gives 0), else the "
    "last log entry's hash, else 0. Storing a region of content hash 0 writes nothing and "
    "returns 0; any other hash writes its file and returns the hash.",
    covers=("cipher.simulate",),
    subject=Cipher.store,
    mutants=(
        Mutant.edit("first log entry", "the head is the first log entry's hash",
                    Cipher.open, "c.head = c.log[-1].hash", "c.head = c.log[0].hash"),
        Mutant.edit("second last entry", "the head is the second last entry's hash",
                    Cipher.open, "c.head = c.log[-1].hash", "c.head = c.log[-2].hash"),
        Mutant.edit("empty HEAD is 1", "an empty HEAD line gives head 1", Cipher.open,
                    "if first else 0", "if first else 1"),
        Mutant.edit("hash 1 skipped", "the store skips hash 1, not 0", Cipher.store,
                    "if h == 0:", "if h == 1:"),
        Mutant.edit("hash 0 returns 1", "storing hash 0 returns 1", Cipher.store,
                    "return 0", "return 1"),
    ),
)
def cipher_edges(_subject):
    return [Property("files and the head they give", _open, cases=lambda: OPEN_CASES),
            Property("a content hash", _store, cases=lambda: (0, 1, 2, 2**64 - 1))]


# --- .crtrace name table, record size, E18.2 (chapter 18) -----------------------------------


def table(lengths: list[int], count: int | None = None) -> bytes:
    """A name table written by hand: u32 count, then per name u64 hash, u16 length, bytes."""
    out = struct.pack("<I", len(lengths) if count is None else count)
    for k, n in enumerate(lengths):
        out += struct.pack("<QH", 0x1000 + k, n) + bytes([0x61 + k % 26]) * n
    return out


def _table(lengths: list[int]) -> None:
    data = table(lengths)
    assert name_table_end(data, 0) == len(data)
    assert name_table_end(b"\xEE" * 3 + data + b"\xFF" * 5, 3) == 3 + len(data)
    assert [n for _, _, n in name_entries(data, 0)] == lengths
    for cut in range(len(data)):
        assert name_table_end(data[:cut], 0) is None, cut


def _not_table(data: bytes) -> None:
    assert name_table_end(data, 0) is None


def _table_cap(count: int) -> None:
    data = table([1] * count)
    assert name_table_end(data, 0) == (len(data) if count <= 512 else None)


@property_obligation(
    "PO18.153",
    "A name table of at most 512 complete entries ends where its last entry does; any "
    "truncation of it, a name of length 0 or 257, or a count of 513, is not a well-formed "
    "table.",
    covers=("crtrace.decode",),
    subject=name_table_end,
    mutants=(
        Mutant.edit("short name read past the end", "an entry whose name is cut short is "
                    "read", name_entries, "pos + 10 + length > len(data)",
                    "pos + 10 - length > len(data)"),
        Mutant.edit("short name, header subtracted", "the entry end is pos - 10 + length",
                    name_entries, "pos + 10 + length > len(data)",
                    "pos - 10 + length > len(data)"),
        Mutant.edit("empty name read", "a name of length 0 is an entry", name_entries,
                    "not 1 <= length <= NAME_MAX", "not 0 <= length <= NAME_MAX"),
        Mutant.edit("512 names rejected", "the cap check is >=", name_table_end,
                    "if count > NAME_TABLE_CAP:", "if count >= NAME_TABLE_CAP:"),
    ),
)
def crtrace_name_table(_subject):
    tables = ([1], [5], [256, 3], [1, 2, 3, 4, 200])
    bad = (table([0]), table([257]), table([2, 0, 1]))
    return [Property("a table of names of these lengths", _table, cases=lambda: tables),
            Property("a table with a name of length 0 or 257", _not_table, cases=lambda: bad),
            Property("a table of n one-byte names", _table_cap, cases=lambda: (511, 512, 513))]


def _record_size(errata: frozenset[str]) -> None:
    data = b"\xFF" * 165
    assert meta_record_size(data, 0, 1, errata) == 160
    assert meta_record_size(data, 10, 1, errata) == 144
    assert meta_record_size(data, 30, 1, errata) == 168
    assert meta_record_size(data, 0, 2, errata) == 168
    assert meta_record_size(data, 0, 0, errata) == 168 == meta_record_size(b"", 0, 0, errata)


def _wrapped_count(case: tuple[int, int]) -> None:
    nin, nout = case
    rec = dict(TRACE_OP_RECORD.default_values(), num_inputs=nin, num_outputs=nout)
    last = dict(TRACE_OP_RECORD.default_values(), num_inputs=1)
    data = header(2, 0) + TRACE_OP_RECORD.pack(rec) + TRACE_OP_RECORD.pack(last)
    for errata, n in ((frozenset({"E18.2", "E18.4"}), (nin + nout) % 65536),
                      (frozenset({"E18.4"}), nin + nout)):
        assert parse_crtrace(data, errata).meta_starts == [NONE32 if n == 0 else 0, n]


@property_obligation(
    "PO18.154",
    "When no record size both fits and frames the file, the size is the largest that fits, "
    "or 168 when none does or there are no metas; under E18.2 an op's tensor count is its "
    "16-bit sum (65536 counts as none).",
    covers=("crtrace.decode",),
    subject=meta_record_size,
    mutants=(
        Mutant.edit("fit by subtraction", "a size fits when start - size * n <= len",
                    meta_record_size, "if start + s * num_metas <= len(data)",
                    "if start - s * num_metas <= len(data)"),
        Mutant.edit("none fits: 167", "the fallback when nothing fits is 167",
                    meta_record_size, "return fits[0] if fits else 168",
                    "return fits[0] if fits else 167"),
        Mutant.edit("no metas: 169", "a file without metas gets 169-byte records",
                    meta_record_size, "        return 168\n", "        return 169\n"),
        Mutant.edit("E18.2 mask 0xFFFE", "the 16-bit sum drops its low bit",
                    parse_crtrace, "n & 0xFFFF if E18_2", "n & 0xFFFE if E18_2"),
        Mutant.edit("E18.2 unmasked", "under E18.2 the tensor count is not cut to 16 bits",
                    parse_crtrace, "n & 0xFFFF if E18_2", "n if E18_2"),
    ),
)
def crtrace_record_size(_subject):
    return [Property("with and without E18.1", _record_size,
                     cases=lambda: (frozenset(), frozenset({"E18.1"}))),
            Property("an op's inputs and outputs", _wrapped_count,
                     cases=lambda: ((0, 0), (65535, 1), (1, 65535), (65535, 65535), (3, 2)))]


# --- transactions (chapter 18) ----------------------------------------------------------------


def _previous(case: tuple[str, int | None]) -> None:
    name, want = case
    log = tx.TransactionLog(4)
    slots = []
    for step in range(3 if name == "three" else 2):
        slots.append(tx.begin_tx(log, step))
        tx.commit(log, slots[-1], step, step + 1, step + 1)
    if name == "newest superseded":  # activate b, then a: b is superseded
        tx.activate(log, slots[1])
        tx.activate(log, slots[0])
    elif name == "oldest superseded":  # activate a, then b
        tx.activate(log, slots[0])
        tx.activate(log, slots[1])
    elif name == "three":  # a, c, b: a then c superseded; c is the newer
        for k in (0, 2, 1):
            tx.activate(log, slots[k])
    assert tx.previous(log) == want


@property_obligation(
    "PO18.155",
    "previous() is the most recently begun SUPERSEDED transaction, the newest one included.",
    covers=("txlog.simulate",),
    subject=tx.previous,
    mutants=(Mutant.edit("scan starts one back", "the scan skips the newest transaction",
                         tx.previous, "(log.head - 1 - i)", "(log.head - 2 - i)"),),
)
def txlog_previous(_subject):
    cases = (("none", None), ("newest superseded", 1), ("oldest superseded", 0),
             ("three", 2))
    return [Property("an activation history", _previous, cases=lambda: cases)]


# --- Philox conversions and inverse (chapter 17) ----------------------------------------------

WORDS = (0, 1, 2**24 - 1, 2**24 + 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFF7F, 0xFFFFFF80,
         0xFFFFFFFE, 0xFFFFFFFF, 0x12345679)


def f32_round(x: int) -> float:
    """x rounded to the nearest float32 (ties to even), by the struct module."""
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def _uniform(x: int) -> None:
    u = to_uniform_seed(x)
    assert type(u) is np.float32 and float(u) == f32_round(x) / 2**32, (type(u), u)
    d = to_uniform_f64(x)
    assert type(d) is np.float64 and float(d) == x / 2**32, (type(d), d)


@property_obligation(
    "PO17.150",
    "The seed's to_uniform of a word is a float32 equal to float32(x) / 2^32 (so 1.0 from "
    "0xFFFFFF80 up); to_uniform_d is a float64 equal to x / 2^32.",
    covers=("philox.to_uniform",),
    subject=to_uniform_seed,
    mutants=(
        Mutant.edit("no float32 rounding", "the word converts to float64", _u32_to_float,
                    "np.float32(x) if bits == 32", "np.float32(x) if bits == 33"),
        Mutant.edit("float64 scale", "the float32 value is scaled by a float64 2^-32",
                    _scale, "np.float32(TWO_POW_M32) if bits == 32",
                    "np.float32(TWO_POW_M32) if bits == 33"),
        Mutant.edit("scaled as 31 bits", "to_uniform_seed scales in the wrong format",
                    to_uniform_seed, "_u32_to_float(x, 32), 32)", "_u32_to_float(x, 32), 31)"),
    ),
)
def uniform_values(_subject):
    return [Property("a word", _uniform, cases=lambda: WORDS)]


def _inverse(case: tuple[int, int]) -> None:
    m, width = case
    inv = mul_inverse(m, width)
    assert 0 <= inv < 2**width and m * inv % 2**width == 1, (m, width, inv)


@property_obligation(
    "PO17.151",
    "mul_inverse(m, w) is the inverse of an odd m modulo 2^w, for every width up to 128.",
    covers=("philox.block",),
    subject=mul_inverse,
    mutants=(Mutant.edit("five Newton steps", "one Newton step fewer (96 bits)", mul_inverse,
                         "range(6)", "range(5)"),),
)
def inverse_widths(_subject):
    ms = (1, 3, 0xD2511F53, 0xCD9E8D57, 2**64 - 1, 0x9E3779B97F4A7C15F39CC0605CEDC835)
    cases = [(m % 2**w | 1, w) for m in ms for w in (8, 16, 32, 64, 96, 128)]
    return [Property("an odd m and a width", _inverse, cases=lambda: cases)]
