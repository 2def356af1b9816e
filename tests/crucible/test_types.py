"""Chapter 2: enums and element sizes against the real Crucible's values."""

from __future__ import annotations

import pytest

from crucible_spec.conformance.golden import golden
from crucible_spec.spec.core.errors import InvalidInput
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.ckernel import CKernelId
from crucible_spec.spec.crucible.expr.node import Op
from crucible_spec.spec.crucible.graph import MicroOp
from crucible_spec.spec.crucible.types import (
    ELEMENT_SIZE,
    NONE32,
    OP_FLAG_PHASE_SHIFT,
    DeviceType,
    Layout,
    MetaFlag,
    OpFlag,
    ScalarType,
    element_size,
    pack_op_flags,
)

TYPES = golden()["types"]


def test_scalar_type_element_sizes():
    for c in TYPES["scalar_type_element_size"]:
        assert ScalarType[c["name"]] == c["ordinal"]
        assert element_size(c["ordinal"]) == c["element_size"]
    assert len(ScalarType) == 18 and element_size(-1) == 0


@pytest.mark.parametrize("ordinal", [12, 13, 14, 16, 22, 27, 127, -2])
def test_element_size_rejects_ordinals_outside_scalar_type(ordinal):
    with pytest.raises(InvalidInput):
        element_size(ordinal)


def test_enums_match_the_real_code():
    assert {d.name: d.value for d in DeviceType} == TYPES["device_type"]
    shared = {"Strided": 0, "Sparse": 1, "SparseCsr": 2}
    e2_3 = REGISTRY.errata["E2.3"].witness
    assert TYPES["layout_enum"] == shared | e2_3["code"]
    assert {x.name: x.value for x in Layout} == shared | e2_3["c10"]
    flags = TYPES["op_flag"]
    assert flags["PHASE_SHIFT"] == OP_FLAG_PHASE_SHIFT
    assert {k: v for k, v in flags.items() if k != "PHASE_SHIFT"} == \
        {name: f.value for name, f in OpFlag.__members__.items()}
    assert {f.name: f.value for f in MetaFlag} == TYPES["meta_flags"]
    assert TYPES["CKernelId::NUM_KERNELS"] == CKernelId.NUM_KERNELS
    table = TYPES["ckernel_table (id, ckernel_name, classify_node_kind)"]
    assert [(k.value, k.name) for k in CKernelId if k != CKernelId.NUM_KERNELS] == \
        [(i, name) for i, name, _ in table]
    assert MicroOp.INDEX_EXPR == TYPES["MicroOp::INDEX_EXPR (last)"] == len(MicroOp) - 1
    assert TYPES["Op::BITWISE_XOR"] == Op.BITWISE_XOR and Op.NUM_OPS == 60


def test_op_flags_packing_matches_the_ring_entry_image():
    # the golden TraceRing::Entry image: IS_MUTABLE | BACKWARD << 2 | TORCH_FUNCTION = 0x16
    assert pack_op_flags(False, True, 1, True) == 0x16
    assert pack_op_flags(True, False, 2, False) == 0x09  # TraceOpRecord image: INFERENCE|OPT<<2
    assert pack_op_flags(True, True, 7, True) == 0x1F  # phase is masked to two bits


def test_strong_id_and_hash_sentinels():
    strong = golden()["layout"]["strong_types"]
    assert int(strong["OpIndex{}.raw()"], 16) == NONE32
    assert int(strong["SchemaHash::sentinel().raw()"], 16) == 2**64 - 1
    assert set(ELEMENT_SIZE) == set(ScalarType)
