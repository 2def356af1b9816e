"""Layouts: declarations reproduce the real sizes and offsets (the compiler's measurements, else
the facts sheets); their obligations check them; the codec round-trips; implicit padding is
zero; the numpy dtype reads the same values as the codec."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crucible_spec import conformance
from crucible_spec.conformance.golden import golden
from crucible_spec.proofs.core import runner
from crucible_spec.spec.core.errors import InvalidInput
from crucible_spec.spec.core.layout import Struct, leaves, place
from crucible_spec.spec.core.layout_ops import from_wire, to_wire, values_strategy
from crucible_spec.spec.core.registry import REGISTRY

STRUCTS = sorted({s.name: s for s in REGISTRY.layouts.values()}.values(), key=lambda s: s.name)
SMALL = [s for s in STRUCTS if s.size <= 4096]
GOLDEN_DIR = Path(conformance.__file__).parent / "golden"
COMPILER = json.loads((GOLDEN_DIR / "crucible-8d2680a2-layouts.json").read_text())
FACTS = json.loads((GOLDEN_DIR / "layouts-facts.json").read_text())["structs"]
NO_FACTS: tuple[str, ...] = ()
"""Declared structs of which neither the compiler measurement nor a facts sheet says anything."""


def layout_obligation(s: Struct):
    found = [po for po in REGISTRY.obligations.values() if po.subject is s]
    assert len(found) == 1, s.name
    return found[0]


@pytest.mark.parametrize("entry", COMPILER + FACTS, ids=lambda e: e["struct"])
def test_every_measured_struct_is_declared_with_its_layout(entry):
    s = REGISTRY.layout(entry["struct"])
    assert s is not None, f"{entry['struct']} is not declared"
    assert (s.size, s.align, s.offsets) == (entry["sizeof"], entry["alignof"], entry["offsets"])


def test_the_compiler_measured_46_entries_and_facts_name_their_source():
    assert len(COMPILER) == 46
    assert REGISTRY.layout("CrucibleMeta (vessel_api.h C struct)").name == "CrucibleMeta"
    assert all(e["source"] for e in FACTS)


def test_every_declared_struct_is_checked_against_facts_or_listed_as_having_none():
    measured = {REGISTRY.layout(e["struct"]).name for e in COMPILER + FACTS}
    declared = {s.name for s in STRUCTS}
    assert declared - measured == set(NO_FACTS)
    assert not set(NO_FACTS) & measured


@pytest.mark.parametrize("s", STRUCTS, ids=lambda s: s.name)
def test_each_struct_has_one_layout_obligation_that_holds(s: Struct, tmp_path):
    po = layout_obligation(s)
    assert po.id.startswith(f"PO{s.chapter}.1") and len(po.id.split(".")[1]) == 3
    assert ("no compiler facts" in po.statement) == (s.name in NO_FACTS)
    settings = runner.Settings(cache_root=tmp_path, use_cache=False)
    assert runner.check_obligation(po, None, settings).status == runner.PROVED


def test_kernel_cache_with_capacity_and_size_swapped_is_refuted(tmp_path):
    s = REGISTRY.layout("KernelCache")
    table, capacity, size = s.members
    assert (capacity.name, size.name) == ("capacity_", "size_")
    members = (table, size, capacity)
    laid = place(members)
    bug = replace(s, members=members, placed=laid.placed, size=laid.size, align=laid.align)
    po = layout_obligation(s)
    settings = runner.Settings(cache_root=tmp_path, use_cache=False)
    out = runner.check_obligation(replace(po, subject=bug), None, settings)
    assert out.status == runner.REFUTED
    assert "capacity_: the spec gives 12" in out.queries[0].model


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
