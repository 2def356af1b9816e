"""reflect_hash and reflect_print (facts sheet §10) through `serve`: the sheet's
formula-derived vectors, hand-written texts, and the client errors."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation

load_all()

POINT = {"x": 10, "y": 20, "z": "0x4048f5c3"}
GUARD = {"kind": 0, "op_index": 42, "arg_index": 1, "dim_index": 3}


def _ask(op: str, args: dict) -> dict:
    return answer(json.dumps({"id": 1, "op": op, "args": args}), Implementation("reference"),
                  "crucible")


@pytest.mark.parametrize("struct,fields,want", [
    ("Point", POINT, "0x05782033c41734b7"),
    ("Point", {**POINT, "y": 21}, "0x4d3119061a25f4ea"),
    ("Dims", {"values": [1, 2, 3, 4], "count": 4}, "0x75c5e38ba90b892c"),
    ("Guard", GUARD, "0x5faa470e6a4aabdd"),
])
def test_facts_vectors(struct, fields, want):
    assert _ask("reflect.hash", {"struct": struct, "fields": fields})["result"]["hash"] == want


def test_guard_reflect_hash_is_not_guard_hash():
    """Guard::hash() of test_reflect's guard is 0x64ce55c9654ce970 (facts §10)."""
    h = _ask("reflect.hash", {"struct": "Guard", "fields": GUARD})["result"]["hash"]
    assert h != "0x64ce55c9654ce970"
    h4 = _ask("reflect.hash", {"struct": "Guard", "fields": {**GUARD, "dim_index": 4}})
    assert h4["result"]["hash"] != h


def test_fields_default_like_layout_encode():
    empty = _ask("reflect.hash", {"struct": "TensorMeta", "fields": {}})["result"]
    explicit = _ask("reflect.hash", {"struct": "TensorMeta",
                                     "fields": {"dtype": -1, "device_idx": -1}})["result"]
    assert empty == explicit


@pytest.mark.parametrize("struct,fields,want", [
    ("Point", {"x": 10, "y": -20, "z": "0x4048f5c3"}, "Point { x = 10, y = -20, z = 3.14 }"),
    ("Guard", GUARD, "Guard { kind = 0, pad = [0, 0, 0], op_index = OpIndex { v = 42 }, "
                     "arg_index = 1, dim_index = 3 }"),
    ("Edge", {"src": 1, "dst": 2}, "Edge { src = OpIndex { v = 1 }, dst = OpIndex { v = 2 }, "
                                   "src_port = 0, dst_port = 0, kind = 0, pad = 0 }"),
    ("Dims", {"values": [1, 2, 3, 4], "count": 4}, "Dims { values = [1, 2, 3, 4], count = 4 }"),
])
def test_print(struct, fields, want):
    assert _ask("reflect.print", {"struct": struct, "fields": fields})["result"]["text"] == want


@pytest.mark.parametrize("args,field", [
    ({"struct": "NoSuchStruct", "fields": {}}, "struct"),
    ({"struct": "HlcState", "fields": {}}, "struct"),
    ({"struct": "Point", "fields": {"w": 1}}, "fields"),
    ({"struct": "Guard", "fields": {"arg_index": 65536}}, "arg_index"),
    ({"struct": "Guard", "fields": [1]}, "fields"),
    ({"struct": 7, "fields": {}}, "struct"),
])
@pytest.mark.parametrize("op", ["reflect.hash", "reflect.print"])
def test_invalid(op, args, field):
    error = _ask(op, args)["error"]
    assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]
