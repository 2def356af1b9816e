"""Every golden value of the real Crucible (conformance/golden) through the Python API of every
implementation. Golden values come from the real code, so they must hold under the profile
`crucible@8d2680a2`; under the default profile only an erratum may make a case differ."""

from __future__ import annotations

import pytest

from crucible_spec.conformance import golden
from crucible_spec.conformance.diff import within_envelope
from crucible_spec.engine import IMPLS, Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.witness import check

CASES = golden.cases()


def test_every_golden_group_maps_to_cases():
    ops = {c.op for c in CASES}
    assert {"layout.info", "hash.fmix64", "hash.wymix", "hash.kdimmix", "hash.schema",
            "hash.fnv1a", "hash.shape", "types.element_size"} <= ops
    assert len([c for c in CASES if c.op == "layout.info"]) == 30


@pytest.mark.parametrize("impl", IMPLS)
def test_golden_cases_under_the_seed_profile(impl):
    runner = Implementation(impl, profile_errata(golden.PROFILE))
    for case in CASES:
        got = runner.call(case.op, case.args)
        assert got == case.result or within_envelope(REGISTRY.ops[case.op], case.result, got), \
            (case.op, case.args)


@pytest.mark.parametrize("impl", IMPLS)
def test_golden_cases_under_the_default_profile_differ_only_by_errata(impl):
    runner = Implementation(impl)
    for case in CASES:
        if runner.call(case.op, case.args) != case.result:
            flags = {REGISTRY.errata[e].flag for e in REGISTRY.errata_for(case.op)}
            assert "result" in flags, (case.op, case.args)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("struct,hex,desc", golden.raw_images())
def test_raw_images_round_trip(impl, struct, hex, desc):
    runner = Implementation(impl)
    fields = runner.call("layout.decode", {"struct": struct, "hex": hex})["fields"]
    assert runner.call("layout.encode", {"struct": struct, "fields": fields}) == {"hex": hex}


def test_decoded_images_say_what_the_golden_descriptions_say():
    ref = Implementation("reference")
    images = {s: h for s, h, _ in golden.raw_images()}

    def decode(struct):
        return ref.call("layout.decode", {"struct": struct, "hex": images[struct]})["fields"]

    meta = decode("TensorMeta")
    assert meta["sizes"][:4] == [2, 3, 5, 7] and meta["strides"][:4] == [105, 35, 7, 1]
    assert (meta["ndim"], meta["dtype"], meta["device_type"], meta["device_idx"]) == (4, 15, 1, 3)
    assert meta["data_ptr"] == "0x00007f00deadbe00" and meta["requires_grad"] is True
    assert (meta["flags"], meta["output_nr"], meta["storage_offset"]) == (3, 2, 17)
    assert (meta["version"], meta["storage_nbytes"]) == (9, 420)
    entry = decode("TraceRing::Entry")
    assert entry["schema_hash"] == "0x1122334455667788"
    assert (entry["num_inputs"], entry["num_outputs"], entry["num_scalar_args"]) == (3, 1, 2)
    assert entry["op_flags"] == 0x02 | 1 << 2 | 0x10 and entry["scalar_values"][0] == -1
    slot = decode("TensorSlot")
    assert (slot["offset_bytes"], slot["nbytes"]) == (0x1234500, 0x10203)
    assert (slot["birth_op"], slot["death_op"], slot["slot_id"]) == (4, 11, 77)
    assert slot["is_external"] is True and slot["dtype"] == 5
    edge = decode("Edge")
    assert (edge["src"], edge["dst"], edge["src_port"], edge["dst_port"], edge["kind"]) == \
        (7, 300, 1, 2, 1)
    record = decode("TraceOpRecord")
    assert record["scalar_values"] == [5, 0, 0, 0, -6] and record["inference_mode"] == 0x09
    node = decode("GraphNode")
    assert (node["id"], node["kind"], node["group_hash"]) == (42, 3, "0xcafef00d")


@pytest.mark.parametrize("eid", sorted(e.id for e in REGISTRY.errata.values()
                                       if e.flag == "result" and "args" in e.witness))
def test_every_result_erratum_witness_reproduces(eid):
    assert check(REGISTRY.errata[eid]) == "reproduced"
