"""Columnar wire decoding and encoding (spec.wire_columns) against the per-item way: the same
columns for valid batches, the same error (code and message) for the first bad item, the same
JSON for results; and `run_batch_wire` of a kernel against the reference."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.core.schema import (
    BOOL,
    HASH64,
    I8,
    I64,
    U8,
    U32,
    Array,
    Bool,
    Bytes,
    Int,
    List,
    Optional,
    Ragged,
    Type,
    record,
)
from crucible_spec.spec.core.wire_columns import (
    decode_column,
    decode_columns,
    encode_column,
    encode_rows,
    fast_column,
    rows_text,
)

BITS32 = Int(32, hex=True)
TYPES: list[Type] = [U8, I8, U32, I64, HASH64, BITS32, Int(16, signed=True, hex=True), BOOL,
                     Array(BITS32, 4), Array(I8, 2), List(U32, max_len=3), Bytes(),
                     Bytes(max_len=4), Optional(HASH64, 0), Optional(Bool(), False)]

ODD_VALUES = [None, True, False, 1.0, [], {}, "", "0x", "0X", "1", "12", "0x-1", "0x_1", " 0x1",
              "0x1 ", "0x1\x00", "0xg", "0x\u0661", "\uff10x1", "0x\ud800", "00", "0x00 11",
              "zz", "abc", "0xAB", 2, -1, 256, -129, 2**64, 2**64 - 1, -(2**63) - 1,
              [1, 2], ["0x1", "0x2", "0x3", "0x4"], ["0x1", "0x2", "0x3"], [True, 0],
              ["0x100000000", 0, 0, 0], [1, 2, 3, 4], "0x" + "0" * 70 + "1"]
"""Wire values that some types refuse (and some accept): each strategy mixes them in."""


def hex_text(value: int, bits: int) -> st.SearchStrategy[str]:
    """`value` as the wire may spell it: either case of prefix and digits, leading zeros."""
    digits = f"{value & ((1 << bits) - 1):x}"
    return st.tuples(st.sampled_from(["0x", "0X"]), st.integers(0, 20), st.booleans()).map(
        lambda p: p[0] + "0" * p[1] + (digits.upper() if p[2] else digits))


def wire_value(t: Type) -> st.SearchStrategy:
    """A valid wire value of `t` in any of its accepted spellings."""
    if isinstance(t, Int):
        return st.integers(t.lo, t.hi).flatmap(
            lambda v: st.just(v) | hex_text(v, t.bits) if v >= 0 or t.signed else st.just(v))
    if isinstance(t, Bool):
        return st.sampled_from([True, False, 0, 1])
    if isinstance(t, Array):
        return st.lists(wire_value(t.item), min_size=t.n, max_size=t.n)
    if isinstance(t, List):
        return st.lists(wire_value(t.item), max_size=t.max_len)
    if isinstance(t, Bytes):
        return st.tuples(st.binary(max_size=t.max_len or 8), st.sampled_from(["", "0x", "0X"]),
                         st.booleans()).map(
            lambda p: p[1] + (p[0].hex().upper() if p[2] else p[0].hex()))
    if isinstance(t, Optional):
        return st.none() | wire_value(t.inner)
    raise AssertionError(t)


def batch(t: Type) -> st.SearchStrategy[list]:
    """Mostly valid items, with a few odd values (valid or not) anywhere."""
    return st.lists(wire_value(t) | st.sampled_from(ODD_VALUES), max_size=12) | st.lists(
        wire_value(t), max_size=12)


def shape(column: Any) -> Any:
    """A column as plain data, dtype included, for equality."""
    if isinstance(column, np.ndarray):
        return column.dtype.str, column.shape, column.tolist()
    if isinstance(column, Ragged):
        return "ragged", shape(column.values), np.asarray(column.offsets).tolist()
    if isinstance(column, tuple):
        return tuple(shape(c) for c in column)
    if isinstance(column, dict):
        return {k: shape(v) for k, v in column.items()}
    return column


def outcome(fn: Any) -> Any:
    try:
        return "ok", shape(fn())
    except SpecError as e:
        return "error", e.code, e.message


def per_item_column(t: Type, values: list, path: str) -> Any:
    return t.to_column([t.decode(v, f"{path}[{i}]") for i, v in enumerate(values)])


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.describe())
@settings(max_examples=100)
@given(data=st.data())
def test_decode_column_is_per_item_decoding(t, data):
    values = data.draw(batch(t))
    assert outcome(lambda: decode_column(t, values, lambda i: f"p[{i}]")) == outcome(
        lambda: per_item_column(t, values, "p"))


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.describe())
@settings(max_examples=60)
@given(data=st.data())
def test_decode_column_is_vectorised_for_valid_batches(t, data):
    values = data.draw(st.lists(wire_value(t), min_size=1, max_size=12))
    assert fast_column(t, values) is not None


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.describe())
@settings(max_examples=60)
@given(data=st.data())
def test_encode_column_is_per_item_encoding(t, data):
    values = [t.decode(v, "p") for v in data.draw(st.lists(wire_value(t), max_size=12))]
    assert encode_column(t, t.to_column(values)) == [t.encode(v) for v in values]


def test_hex_results_from_signed_or_list_columns():
    assert encode_column(HASH64, np.array([-1, 1], dtype=np.int64)) == [
        "0xffffffffffffffff", "0x0000000000000001"]
    assert encode_column(BITS32, [0xDEADBEEF]) == ["0xdeadbeef"]
    assert encode_column(Array(BITS32, 2), np.array([[1, 2], [3, 0xFFFFFFFF]], dtype=np.uint32)) \
        == [["0x00000001", "0x00000002"], ["0x00000003", "0xffffffff"]]


def test_hex_decoding_reads_every_spelling():
    got = decode_column(HASH64, ["0x0", "0XFFFFFFFFFFFFFFFF", "0x" + "0" * 40 + "aB", 7], str)
    assert got.dtype == np.uint64 and got.tolist() == [0, 2**64 - 1, 0xAB, 7]
    signed = decode_column(Int(16, signed=True, hex=True), ["0xffff", "0x8000", -5], str)
    assert signed.tolist() == [-1, -(2**15), -5]


REC = record(a=HASH64, b=Array(U8, 2), c=Bool())
ITEM_ODDITIES = [None, [], {}, {"a": "0x1", "b": [1, 2]}, {"a": "0x1", "b": [1, 2], "c": 1, "d": 0},
                 {"a": "0x1", "b": [1, 2], "d": 0}, {"a": "0x1", "b": [1, 256], "c": True}]


@settings(max_examples=200)
@given(items=st.lists(st.fixed_dictionaries({n: wire_value(f.type) for n, f in REC.fields.items()})
                      | st.sampled_from(ITEM_ODDITIES), max_size=10))
def test_decode_columns_is_per_item_decoding(items):
    want = outcome(lambda: REC.columns([REC.decode(it, f"args[{i}]") for i, it in
                                        enumerate(items)]))
    have = outcome(lambda: decode_columns(REC, items, "args"))
    assert have == want


def test_encode_rows_is_per_item_encoding():
    rows = [{"a": 2**64 - 1, "b": [1, 255], "c": True}, {"a": 0, "b": [0, 0], "c": False}]
    assert encode_rows(REC, REC.columns(rows), 2) == [REC.encode(r) for r in rows]


LISTS = record(a=Array(BITS32, 4), b=List(U32, max_len=3), c=BOOL, d=HASH64)
U32S = st.integers(0, 2**32 - 1)


@settings(max_examples=60)
@given(rows=st.lists(st.fixed_dictionaries({
    "a": st.lists(U32S, min_size=4, max_size=4), "b": st.lists(U32S, max_size=3),
    "c": st.booleans(), "d": st.integers(0, 2**64 - 1)}), min_size=1, max_size=6))
def test_rows_text_of_list_fields_is_what_the_encoder_writes(rows):
    want = [json.dumps(LISTS.encode(r), separators=(",", ":")) for r in rows]
    assert rows_text(LISTS, LISTS.columns(rows), len(rows)) == want


def test_rows_text_writes_equal_length_and_empty_lists():
    rec = record(b=List(U32, max_len=3))
    for rows in ([{"b": []}, {"b": []}], [{"b": [1, 2]}, {"b": [3, 4]}]):
        want = [json.dumps(rec.encode(r), separators=(",", ":")) for r in rows]
        assert rows_text(rec, rec.columns(rows), len(rows)) == want


WIRE_OPS = ["hash.fmix64", "hash.wymix", "philox.block"]


@pytest.mark.parametrize("name", WIRE_OPS)
@settings(max_examples=40)
@given(data=st.data())
def test_run_batch_wire_matches_the_reference(name, data):
    op = REGISTRY.ops[name]
    items = data.draw(st.lists(st.fixed_dictionaries(
        {n: wire_value(f.type) for n, f in op.args.fields.items()}), min_size=1, max_size=8))
    if data.draw(st.booleans()):
        bad = dict(items[0], **{next(iter(op.args.fields)): data.draw(st.sampled_from(ODD_VALUES))})
        items.insert(data.draw(st.integers(0, len(items))), bad)
    want = outcome(lambda: Implementation("reference").run_batch_wire(op, items))
    assert outcome(lambda: Implementation("numba").run_batch_wire(op, items)) == want
    if want[0] == "ok":
        assert want[1] == [Implementation("reference").call(name, a) for a in items]


@pytest.mark.parametrize("items", [
    [{"index": 0}, {"index": 200}, {"index": 256}],
    [{"index": 256}, {"index": 200}],
    [{"index": 1}, {"index": "0x2"}, {"index": True}, {"index": 200}],
    [{"index": 0}, {"index": 1}],
])
def test_a_checked_op_reports_its_first_bad_item_as_the_reference_does(items):
    op = REGISTRY.ops["hash.kdimmix"]
    want = outcome(lambda: Implementation("reference").run_batch_wire(op, items))
    assert outcome(lambda: Implementation("numba").run_batch_wire(op, items)) == want
