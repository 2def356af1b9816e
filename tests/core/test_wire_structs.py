"""The field-at-a-time decoding of trace ops and metas (fast/core/wire_structs.py) against the
spec's one-value-at-a-time decoder: on ops as clients send them, mutated anywhere to values of
the wrong type, out of range, hex, missing or unknown, it either declines or returns exactly
what `recorded_ops` returns, and it declines whatever `recorded_ops` refuses."""

from __future__ import annotations

import copy
from dataclasses import astuple

from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.fast.core.wire_structs import recorded_ops_from_wire, structs_from_wire
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.layout_ops import from_wire
from crucible_spec.spec.crucible.tensor_meta import TENSOR_META
from crucible_spec.spec.crucible.trace_build_ops import recorded_ops, traces

ODD = st.one_of(st.integers(-(2**64), 2**64), st.sampled_from(
    [True, False, None, 1.5, 9, 255, -129, "0x", "0x1f", "0XFF", "0x" + "f" * 17, "12", [],
     [1, 2], {}, list(range(9)), [0] * 8, [True], ["0x1"]]))
KEYS = ("schema_hash", "shape_hash", "scope_hash", "callsite_hash", "op_flags", "grad_enabled",
        "inputs", "outputs", "scalars", "bogus")
META_KEYS = (*(p.name for p in TENSOR_META.all_placed()), "bogus")


@st.composite
def sent_ops(draw) -> list:
    """trace.build ops with a few fields of ops or metas replaced or removed."""
    ops = copy.deepcopy(draw(traces(max_ops=6))["ops"])
    for _ in range(draw(st.integers(0, 2))):
        if not ops:
            break
        op = ops[draw(st.integers(0, len(ops) - 1))]
        metas = [m for side in ("inputs", "outputs") if isinstance(op.get(side), list)
                 for m in op[side] if isinstance(m, dict)]
        target, keys = (metas[draw(st.integers(0, len(metas) - 1))], META_KEYS) \
            if metas and draw(st.booleans()) else (op, KEYS)
        key = draw(st.sampled_from(keys))
        if draw(st.booleans()):
            target.pop(key, None)
        else:
            target[key] = draw(ODD)
    return ops


@settings(max_examples=500, deadline=None)
@given(sent_ops())
def test_field_at_a_time_decoding_is_the_specs_or_declines(ops):
    fast = recorded_ops_from_wire(ops)
    try:
        spec = recorded_ops(ops)
    except SpecError:
        assert fast is None
        return
    if fast is not None:
        assert [astuple(r) for r in fast] == [astuple(r) for r in spec]


def test_plain_ops_take_the_field_at_a_time_path():
    ops = [{"schema_hash": "0x2a", "inputs": [{"ndim": 1, "sizes": [4], "strides": [1],
                                               "dtype": 6, "data_ptr": "0x10"}],
            "scalars": [-1, 2**63 - 1], "grad_enabled": True},
           {"schema_hash": "0x2b", "op_flags": 3}]
    fast = recorded_ops_from_wire(ops)
    assert fast is not None
    assert [astuple(r) for r in fast] == [astuple(r) for r in recorded_ops(ops)]
    assert fast[0].metas[0]["sizes"] == [4, 0, 0, 0, 0, 0, 0, 0]
    assert fast[1].metas is None and fast[1].op_flags == 3


def test_metas_decode_as_from_wire_with_fresh_default_lists():
    metas = structs_from_wire(TENSOR_META, [{"ndim": 0}, {"data_ptr": "0x1"}])
    assert metas == [from_wire(TENSOR_META, m, "m") for m in ({"ndim": 0}, {"data_ptr": "0x1"})]
    metas[0]["sizes"][0] = 7
    assert metas[1]["sizes"][0] == 0


def test_what_the_spec_refuses_past_the_struct_is_declined():
    """Values the struct's types allow but the op does not: ndim 9, 65,536 metas."""
    meta = {"ndim": 9, "data_ptr": "0x1"}
    assert recorded_ops_from_wire([{"schema_hash": "0x1", "inputs": [meta]}]) is None
    many = [{"schema_hash": "0x1", "outputs": [{}] * 65536}]
    assert recorded_ops_from_wire(many) is None
    assert recorded_ops_from_wire([{"schema_hash": "0x1", "scalars": [0] * 65536}]) is None
