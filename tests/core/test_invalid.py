"""Every declared invalid input is rejected with its error code by every implementation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.engine import IMPLS, Implementation
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY

CASES = [(name, i) for name, op in sorted(REGISTRY.ops.items()) for i in range(len(op.invalid))]


def test_ops_declare_invalid_inputs():
    assert {n for n, _ in CASES} >= {"types.element_size", "layout.decode", "layout.encode",
                                      "hash.shape", "hash.kdimmix", "hash.schema"}


@pytest.mark.parametrize("name,index", CASES)
@settings(max_examples=20)
@given(data=st.data())
def test_invalid_input_is_rejected_with_its_code(name, index, data):
    case = REGISTRY.ops[name].invalid[index]
    args = data.draw(case.args())
    for impl in IMPLS:
        with pytest.raises(SpecError) as err:
            Implementation(impl).call(name, args)
        assert err.value.code == case.code, (impl, err.value.message)


@pytest.mark.parametrize("args,code", [
    ({}, "bad_request"),
    ({"x": "0x1", "y": 1}, "bad_request"),
    ({"x": 1.5}, "bad_request"),
    ({"x": True}, "bad_request"),
    ({"x": "0xg"}, "bad_request"),
    ({"x": "12"}, "bad_request"),
    ({"x": -1}, "invalid_input"),
    ({"x": 2**64}, "invalid_input"),
    ({"x": "0x10000000000000000"}, "invalid_input"),
])
def test_schema_errors(args, code):
    with pytest.raises(SpecError) as err:
        Implementation("reference").call("hash.fmix64", args)
    assert err.value.code == code


def test_any_hex_width_is_accepted_on_input():
    ref = Implementation("reference")
    assert ref.call("hash.fmix64", {"x": "0x1"}) == ref.call("hash.fmix64", {"x": 1}) == \
        ref.call("hash.fmix64", {"x": "0x0000000000000001"})
