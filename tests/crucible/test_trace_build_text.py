"""Serve's quick path for trace.build batches (fast/numba/crucible/trace_build_ops.py) answers
every line it takes exactly as the usual path does (json module, the spec's decoders, the
kernel's graph through graph_to_wire and the encoder), byte for byte, under the intended
profile and the seed's, and leaves every other line to it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crucible_spec.conformance import vectors
from crucible_spec.conformance.quick_batch import answer_quick
from crucible_spec.conformance.serve import _ENCODER, Encoded, answer_batch, read_request
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.trace_build_ops import traces

PROFILES = ("crucible", "crucible@8d2680a2")
IMPLS = {p: Implementation("numba", profile_errata(p)) for p in PROFILES}
OP = "trace.build"


def usual(line: str, profile: str) -> str:
    """The answer line the usual path writes for `line`."""
    req = read_request(line)
    got = answer_batch(req, IMPLS[profile], profile) if not isinstance(req, dict) else req
    return got.text if isinstance(got, Encoded) else _ENCODER.encode(got)


def compact(items: list, rid: int = 7) -> str:
    return json.dumps({"id": rid, "op": OP, "batch": items}, separators=(",", ":"))


def taken_alike(line: str, profile: str) -> bool:
    """Whether the quick path took the line, asserting it answers as the usual path."""
    quick = answer_quick(line, IMPLS[profile])
    assert quick is None or quick == usual(line, profile)
    return quick is not None


@pytest.mark.parametrize("profile", PROFILES)
def test_every_vector_is_taken_and_answered_as_the_usual_path_answers_it(profile):
    suite = vectors.load(vectors.VECTORS_DIR, profile.split("@")[0])[OP]
    valid = [c.args for c in suite if not c.error]
    assert len(valid) > 5 and taken_alike(compact(valid), profile)
    for case in (c for c in suite if c.error):
        taken_alike(compact([*valid[:2], case.args]), profile)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_long_synthetic_trace_with_every_meta_member_is_taken_alike(profile):
    items = REGISTRY.ops[OP].bench(3000, np.random.default_rng(5))
    assert taken_alike(compact(items), profile)


@pytest.mark.parametrize("profile", PROFILES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(traces(max_ops=24), min_size=1, max_size=3))
def test_drawn_traces_are_taken_and_answered_alike(profile, items):
    assert taken_alike(compact(items), profile)


MUTATIONS = (
    ('"ndim":', '"ndim": '), ('"inputs":[', '"inputs":[{"ndim":9},'),
    ('"inputs":[', '"inputs":[{"sizes":[1,2,3,4,5,6,7,8,9]},'),
    ('"inputs":[', '"inputs":[{"ndim":"0x9"},'), ('"inputs":[', '"inputs":[{"pad":0},'),
    ('"inputs":[', '"inputs":[{"dtype":128},'), ('"inputs":[', '"inputs":[{"dtype":"0xff"},'),
    ('"inputs":[', '"inputs":[{"requires_grad":1},'),
    ('"inputs":[', '"inputs":[{"data_ptr":-1},'), ('"inputs":[', '"inputs":[{"ndim":1,"ndim":2},'),
    ('"inputs":[', '"inputs":[{"data_ptr":"0x1","device_idx":-128},'),
    ('"scalars":[', '"scalars":[9223372036854775808,'),
    ('"scalars":[', '"scalars":["0xffffffffffffffff",'), ('"scalars":[', '"scalars":[1.5,'),
    ('"op_flags":', '"op_flags":2'), ('"grad_enabled":', '"grad_enabled":0,"x":'),
    ('"schema_hash":', '"schema_hash":"0x1","schema_hash":'),
    ('"inputs":[', '"inputs":[{"data_ptr":"0x5"}],"inputs":['),
    ('"schema_hash":', '"shape_hash":null,"schema_hash":'),
    ('"outputs":[', '"outputs":[],"inputs":['), ('{"ops":[', '{"kernels":[],"ops":['),
    ('"kernels":[', '"kernels":[["0x1",256],'), ('"kernels":[', '"kernels":[["0x1"],'),
    ('"kernels":[', '"kernels":[' + '["0x9",1],' * 300), ('"kernels":[', '"kernels":{'),
    ('"ops":[{', '"ops":[{"inputs":[],"outputs":[]},{'), ('"ops":[{', '"ops":[{},{'),
    (']}]}', ']}, {"ops":[]}]}'), (']}]}', ']},]}'), (']}]}', ']},{"ops":[]}]}'),
    ('"data_ptr":"0x', '"data_ptr":"0X00'),
)


@pytest.mark.parametrize("profile", PROFILES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(max_ops=8), st.sampled_from(MUTATIONS), st.data())
def test_an_edited_line_is_answered_alike_or_left_to_the_usual_path(profile, trace, edit, data):
    line = compact([trace])
    old, new = edit
    spots = [k for k in range(len(line)) if line.startswith(old, k)]
    if spots:
        k = data.draw(st.sampled_from(spots))
        line = line[:k] + new + line[k + len(old):]
    taken_alike(line, profile)


def test_a_bad_meta_is_left_to_the_usual_path_whose_error_is_the_answer():
    line = compact([{"ops": [{"schema_hash": "0x1", "inputs": [{"ndim": 9}]}]}])
    assert answer_quick(line, IMPLS["crucible"]) is None
    assert '"ok":false' in usual(line, "crucible")


@pytest.mark.parametrize("profile", PROFILES)
def test_outputs_given_before_inputs_are_answered_alike(profile):
    meta = {"ndim": 1, "sizes": [3], "strides": [1], "dtype": 6}
    op = {"schema_hash": "0x2", "outputs": [meta | {"data_ptr": "0x20"}],
          "inputs": [meta | {"data_ptr": "0x10"}, meta | {"data_ptr": "0x20"}]}
    taken_alike(compact([{"ops": [{"schema_hash": "0x1", "outputs": [meta | {"data_ptr":
                                                                            "0x10"}]}, op]}]),
                profile)


@pytest.mark.parametrize("tail", [',]}', ',,{"ops":[]}]}', '{"ops":[]}]}', ' ]}'])
def test_items_follow_single_commas_and_nothing_trails(tail):
    line = compact([{"ops": []}])
    assert line.endswith("]}")
    line = line[:-2] + tail
    assert answer_quick(line, IMPLS["crucible"]) is None
    assert ('"ok":false' in usual(line, "crucible")) == (tail != " ]}")  # JSON allows a space
