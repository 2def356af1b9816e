"""Layouts: declarations reproduce the real sizes and offsets; the codec round-trips; implicit
padding is zero; the numpy dtype reads the same values as the codec."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crucible_spec.conformance.golden import golden
from crucible_spec.spec.errors import InvalidInput
from crucible_spec.spec.layout import Struct, leaves
from crucible_spec.spec.layout_ops import from_wire, to_wire, values_strategy
from crucible_spec.spec.registry import REGISTRY

STRUCTS = sorted({s.name: s for s in REGISTRY.layouts.values()}.values(), key=lambda s: s.name)
SMALL = [s for s in STRUCTS if s.size <= 4096]


@pytest.mark.parametrize("name", [n for n in golden()["layout"] if n != "strong_types"])
def test_declaration_matches_the_real_layout(name):
    info = golden()["layout"][name]
    s = REGISTRY.layout(name)
    assert (s.size, s.align, s.offsets) == (info["sizeof"], info["alignof"], info["offsets"])


def test_strong_types_and_other_objects():
    strong = golden()["layout"]["strong_types"]
    for key, value in strong.items():
        if key.startswith("sizeof(") and key != "sizeof(fx::Test)":
            assert REGISTRY.layout(key[7:-1]).size == value, key


def test_catalog_knows_every_vector_struct_and_some_more():
    assert len(STRUCTS) >= 30
    assert REGISTRY.layout("TraceOpRecord (.crtrace)").name == "TraceOpRecord"


@pytest.mark.parametrize("s", SMALL, ids=lambda s: s.name)
@given(data=st.data())
def test_pack_unpack_round_trip_and_zero_padding(s: Struct, data):
    values = data.draw(values_strategy(s))
    image = s.pack(values)
    assert len(image) == s.size
    assert s.unpack(image) == values
    for start, end in s.padding():
        assert image[start:end] == bytes(end - start)
    assert from_wire(s, to_wire(s, values), "fields") == values


@pytest.mark.parametrize("s", SMALL, ids=lambda s: s.name)
def test_numpy_dtype_reads_the_same_values(s: Struct):
    values = s.default_values()
    image = s.pack(values)
    record = np.frombuffer(image, dtype=s.np_dtype())[0]
    assert s.np_dtype().itemsize == s.size
    for leaf in leaves(s):
        cell = record[leaf.path[0]]
        for part in leaf.path[1:]:
            cell = cell[part]
        raw = int.from_bytes(image[leaf.offset:leaf.offset + leaf.size], "little",
                             signed=leaf.signed)
        assert int(cell) == raw, leaf.path


def test_defaults_are_the_cpp_member_initialisers():
    meta = REGISTRY.layout("TensorMeta").pack(REGISTRY.layout("TensorMeta").default_values())
    assert meta == bytes(136) + bytes.fromhex("00ff00ff00000000") + bytes(24)
    slot = REGISTRY.layout("TensorSlot").default_values()
    assert (slot["birth_op"], slot["slot_id"], slot["device_idx"]) == (2**32 - 1, 2**32 - 1, -1)
    assert REGISTRY.layout("GraphNode").default_values()["num_outputs"] == 1


def test_unpack_rejects_a_non_boolean_bool_byte_naming_field_and_offset():
    with pytest.raises(InvalidInput, match=r"is_external at byte 28"):
        REGISTRY.layout("TensorSlot").unpack(bytes(28) + b"\x02" + bytes(11))


def test_short_arrays_take_defaults_on_encode():
    s = REGISTRY.layout("TensorMeta")
    values = from_wire(s, {"sizes": [4, 8], "ndim": 2}, "fields")
    assert values["sizes"] == [4, 8, 0, 0, 0, 0, 0, 0] and values["dtype"] == -1
