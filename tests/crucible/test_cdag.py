"""CDAG v7 (chapter 18): the golden regions both ways, the 80-byte branch, the facts §27 sizes
and FNV-1a values of the pipeline's regions, rejection with byte offsets, the numba kernels
against the reference, and `oracle cdag`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.cli import main
from crucible_spec.conformance.golden import golden
from crucible_spec.conformance.golden_cdag import BRANCH_80, BRANCH_80_ARGS, encode_args
from crucible_spec.conformance.oracle_cdag import cdag_diff
from crucible_spec.conformance.seed_runs import e2e_stream, mlp_stream
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.crucible.build_trace import RecordedOp, build_trace
from crucible_spec.spec.crucible.cdag import (
    CdagPlan,
    CdagRegion,
    branch_size,
    decode_branch,
    decode_region,
    encode_region,
)
from crucible_spec.spec.crucible.cdag_ops import cdag_bench, region_values
from crucible_spec.spec.crucible.hashing import fnv1a
from crucible_spec.spec.crucible.pipeline import run_pipeline
from crucible_spec.spec.crucible.trace_build_ops import plan_of, recorded_ops

SEED = profile_errata("crucible@8d2680a2")
CDAG = golden()["cdag"]
REGIONS = {r["name"]: r for r in CDAG["regions"]}
IMPLS = ("reference", "numba")


def call(impl: str, op: str, args: dict, errata: frozenset[str] = frozenset()):
    try:
        return Implementation(impl, errata).call(op, args)
    except SpecError as e:
        return {"error": e.code, "message": e.message}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name", sorted(REGIONS))
def test_golden_regions_encode_decode_and_round_trip(impl, name):
    r = REGIONS[name]
    for errata in (SEED, frozenset()):
        assert call(impl, "cdag.encode", encode_args(r), errata) == {"hex": r["hex"]}
        region = call(impl, "cdag.decode", {"hex": r["hex"]}, errata)["region"]
        assert (region["content_hash"], region["merkle_hash"]) == (r["content_hash"],
                                                                   r["merkle_hash"])
        assert len(region["ops"]) == len(r["ops"]) and len(r["hex"]) // 2 == r["len"]
        assert call(impl, "cdag.encode", {"region": region}, errata) == {"hex": r["hex"]}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("name", sorted(REGIONS))
def test_golden_rejections_name_the_offset(impl, name):
    data = bytes.fromhex(REGIONS[name]["hex"])
    assert CDAG["bad_magic_returns_null"] and CDAG["version6_returns_null"]
    cases = {"offset 0 (header.magic)": b"CDAG" + data[4:],
             "offset 4 (header.version)": data[:4] + (6).to_bytes(4, "little") + data[8:],
             "offset 8 (header.kind)": data[:8] + b"\x01" + data[9:],
             "offset 9 (header.pad)": data[:9] + b"\x01" + data[10:],
             "(truncated)": data[:-1],
             f"offset {len(data)} (end)": data + b"\0"}
    for where, bad in cases.items():
        got = call(impl, "cdag.decode", {"hex": bad.hex()})
        assert got["error"] == "invalid_input" and where in got["message"], (where, got)
    for k in range(0, len(data), 7):
        assert call(impl, "cdag.decode", {"hex": data[:k].hex()})["error"] == "invalid_input"


@pytest.mark.parametrize("impl", IMPLS)
def test_bad_region_fields_name_their_path(impl):
    op = {"schema_hash": "0x1", "inputs": [{"ndim": 9}]}
    cases = {"args.region.content_hash": {"ops": [], "content_hash": "0xzz"},
             "args.region.ops[0].inputs[0].ndim": {"ops": [op]}}
    for where, region in cases.items():
        got = call(impl, "cdag.encode", {"region": region})
        assert got["error"] == "invalid_input" and where in got["message"], (where, got)


def test_the_seed_reader_ignores_trailing_bytes_pad_and_reserved_bits():
    data = bytearray.fromhex(REGIONS["A_no_plan"]["hex"])
    flags_at = 32 + 21 + 39  # op 0's op_flags
    data[flags_at] |= 0x80
    data[12] = 0x55
    got = call("reference", "cdag.decode", {"hex": (bytes(data) + b"xyz").hex()}, SEED)
    assert got == call("reference", "cdag.decode", {"hex": REGIONS["A_no_plan"]["hex"]})
    assert call("reference", "cdag.decode", {"hex": bytes(data).hex()})["error"] == \
        "invalid_input"


def test_counts_the_bytes_cannot_hold_are_rejected_before_reading():
    data = bytearray.fromhex(REGIONS["C_no_plan_ms"]["hex"])
    data[32:36] = (0xFFFFFFFF).to_bytes(4, "little")
    got = call("reference", "cdag.decode", {"hex": bytes(data).hex()})
    assert "offset 32 (region.num_ops)" in got["message"]


@pytest.mark.parametrize("impl", ("reference",))
def test_the_80_byte_branch(impl):
    got = call(impl, "cdag.encode_branch", BRANCH_80_ARGS)["hex"]
    assert got == BRANCH_80 and len(got) == 2 * 80 == 2 * (48 + 16 * 2)
    assert branch_size(decode_branch(bytes.fromhex(BRANCH_80))) == 80
    back = call(impl, "cdag.decode_branch", {"hex": BRANCH_80})
    assert back["merkle_hash"] == "0xe1b5865551ca3b0e" and back["next_merkle"] == "0x" + "0" * 16
    assert back["arms"] == BRANCH_80_ARGS["arms"]
    swapped = BRANCH_80_ARGS | {"arms": BRANCH_80_ARGS["arms"][::-1]}
    assert call(impl, "cdag.encode_branch", swapped)["error"] == "invalid_input"
    assert "hex" in call(impl, "cdag.encode_branch", swapped, SEED)
    assert call(impl, "cdag.decode_branch", {"hex": BRANCH_80 + "00"})["error"] == \
        "invalid_input"


def _region(graph, plan, merkle: int) -> CdagRegion:
    """A pipeline region as the background thread hands it to the serializer: its ops, a plan
    (CPU, index -1, rank -1) of its slots at the planned offsets, merkle = content."""
    slots = [s.values(k, plan.offsets[k]) for k, s in enumerate(graph.slots)]
    p = CdagPlan(pool_bytes=plan.pool_bytes, slots=slots,
                 num_external=sum(s.is_external for s in graph.slots))
    return CdagRegion(graph.ops, graph.content_hash, merkle, graph.ops[0].schema_hash, 0, 0, p)


def _alias_ops() -> list[RecordedOp]:
    """The alias example of facts §27 (schemas 0x10..0x15, 64 floats on cpu:0)."""
    def meta(ptr: int) -> dict:
        return {"sizes": [64] + [0] * 7, "strides": [1] + [0] * 7, "data_ptr": ptr, "ndim": 1,
                "dtype": 6, "device_type": 0, "device_idx": 0, "layout": 0,
                "requires_grad": False, "flags": 0, "output_nr": 0, "storage_offset": 0,
                "version": 0, "storage_nbytes": 0, "grad_fn_hash": 0}

    p, a, b = 0x1000, 0x2000, 0x3000
    tensors = [(p, a), (a, a), (a, b), (b, p), None, (p, a)]
    return [RecordedOp(0x10 + i, 0, 0, 0, [7], False, 0, None) if t is None else
            RecordedOp(0x10 + i, 0, 1, 1, [], False, 2 if i == 1 else 0, [meta(t[0]),
                                                                           meta(t[1])])
            for i, t in enumerate(tensors)]


def test_the_section_27_region_sizes_and_fnv():
    for stream, size, fnv in ((e2e_stream, 3345, 0xF2147CFC5E1E9DCA),
                              (mlp_stream, 6107, 0x6E6396B7F4C69B3E)):
        region = run_pipeline(recorded_ops(stream()), None, SEED).regions[0]
        data = encode_region(_region(region.graph, region.plan, region.merkle_hash))
        assert (len(data), fnv1a(data)) == (size, fnv)
        assert encode_region(decode_region(data)) == data
    graph = build_trace(_alias_ops(), None, SEED)
    assert graph.content_hash == 0x14C30BEF79FC1011
    data = encode_region(_region(graph, plan_of(graph), graph.content_hash))
    assert (len(data), fnv1a(data)) == (2203, 0x01DB30F21A9FF8FB)


def test_the_566_byte_example_layout():
    meta = {"sizes": [2, 3], "strides": [3, 1], "ndim": 2, "dtype": 6, "device_type": 0,
            "device_idx": 0}
    args = {"region": {"ops": [{"schema_hash": "0x1111", "inputs": [meta], "outputs": [meta],
                                "scalar_args": [5], "grad_enabled": True, "is_mutable": True,
                                "training_phase": 2, "torch_function": True}],
                       "has_plan": True, "measured_ms_bits": "0x3fc00000", "variant_id": 3,
                       "plan": {"pool_bytes": 512, "num_slots": 2, "slots": [{}, {}]}}}
    data = bytes.fromhex(call("reference", "cdag.encode", args)["hex"])
    assert len(data) == 566 == 32 + 21 + 36 + 2 * 40 + 41 + 2 * 168 + 8 + 12
    assert data[32:53] == bytes.fromhex("01000000" "1111000000000000" "0000c03f" "03000000" "01")
    fixed = 53 + 36 + 80
    assert data[fixed + 32:fixed + 41] == bytes.fromhex("0100" "0100" "0100" "01" "1a" "00")
    assert data[fixed + 41 + 128:fixed + 41 + 136] == bytes(8)


@settings(max_examples=25)
@given(st.lists(region_values(), min_size=1, max_size=4))
def test_numba_matches_the_reference_both_ways(regions):
    files = [encode_region(r).hex() for r in regions]
    for h in files:
        ref = call("reference", "cdag.decode", {"hex": h})
        assert call("numba", "cdag.decode", {"hex": h}) == ref
        assert call("numba", "cdag.encode", {"region": ref["region"]}) == {"hex": h}


@pytest.mark.slow
def test_numba_on_a_big_region_matches_the_reference():
    args = cdag_bench(1500, np.random.default_rng(7))[0]
    data = call("reference", "cdag.encode", args)
    assert call("numba", "cdag.encode", args) == data
    assert call("numba", "cdag.decode", data) == call("reference", "cdag.decode", data)


def test_oracle_names_op_field_and_offset(tmp_path, capsys):
    r = REGIONS["A_no_plan"]
    data = bytearray.fromhex(r["hex"])
    at = 32 + 21 + 41 + 8  # op 0, input 0, sizes[1]
    data[at] ^= 1
    d = cdag_diff(bytes.fromhex(r["hex"]), bytes(data))
    assert (d.byte, d.op, d.node) == (at, 0, "region")
    assert d.field == "ops[0].inputs[0]: TensorMeta.sizes[1] (byte 0 of 8)"
    assert d.path == "ops[0].inputs[0].sizes[1]"
    (tmp_path / "e.json").write_text(json.dumps(encode_args(r)))
    (tmp_path / "g.cdag").write_bytes(bytes(data))
    (tmp_path / "same.hex").write_text(r["hex"])
    (tmp_path / "short.hex").write_text(r["hex"][:-2])
    base = ["oracle", "cdag", str(tmp_path / "e.json")]
    assert main([*base, str(tmp_path / "same.hex")]) == 0
    capsys.readouterr()
    assert main([*base, str(tmp_path / "g.cdag"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert (out["byte"], out["op"], out["path"]) == (at, 0, "ops[0].inputs[0].sizes[1]")
    assert main([*base, str(tmp_path / "short.hex")]) == 2
    assert "truncated" in capsys.readouterr().err
    assert main(["oracle", "cdag", str(tmp_path / "short.hex"), str(tmp_path / "e.json")]) == 2
    assert main(["oracle", "cdag", str(tmp_path / "nope"), str(tmp_path / "e.json")]) == 2
    branch = cdag_diff(bytes.fromhex(BRANCH_80), bytes.fromhex(BRANCH_80[:-2] + "82"))
    assert branch.field == "arms[1].target_merkle (byte 7 of 8)"
