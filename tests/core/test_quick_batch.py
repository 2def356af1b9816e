"""Serve's quick path for batch lines of integers (conformance/quick_batch.py) answers every
line it takes exactly as the usual path does (json module, per-field decoding, the kernel's
answer written by rows_text), byte for byte, and leaves every other line to it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.conformance import vectors
from crucible_spec.conformance.quick_batch import answer_quick, item_layout
from crucible_spec.conformance.serve import _ENCODER, Encoded, answer_batch, read_request
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.registry import REGISTRY

SUITE = vectors.load(vectors.VECTORS_DIR, "crucible")
NUMBA = Implementation("numba")
TAKEN = ("dag.guard_hash", "dag.loopterm_hash", "hash.fmix64", "hash.kdimmix", "hash.wymix",
         "philox.block", "philox.box_muller", "philox.offset", "philox.op_key",
         "philox.to_uniform")
"""The ops whose args and results the quick path reads and writes (every integer op)."""


def usual(line: str) -> str:
    """The answer line the usual path writes for `line`."""
    req = read_request(line)
    got = answer_batch(req, NUMBA, "crucible") if not isinstance(req, dict) else req
    return got.text if isinstance(got, Encoded) else _ENCODER.encode(got)


def compact(rid: int, op: str, items: list) -> str:
    return json.dumps({"id": rid, "op": op, "batch": items}, separators=(",", ":"))


def test_the_quick_path_takes_exactly_the_integer_ops():
    taken = {name for name, op in REGISTRY.ops.items()
             if NUMBA.route(op).how == "kernel" and item_layout(name) is not None
             and answer_quick(compact(1, name, [c.args for c in SUITE[name] if not c.error
                                                and len(c.args) == len(op.args.fields)][:3])
                              , NUMBA) is not None}
    assert taken == set(TAKEN)


@pytest.mark.parametrize("op", TAKEN)
def test_every_vector_is_answered_as_the_usual_path_answers_it(op):
    valid = [c.args for c in SUITE[op] if not c.error]
    whole = [a for a in valid if set(a) == set(REGISTRY.ops[op].args.fields)]
    line = compact(-12, op, whole)
    quick = answer_quick(line, NUMBA)
    assert quick is not None and quick == usual(line)
    line = compact(2, op, valid)  # an optional field left out: taken or not, answered alike
    quick = answer_quick(line, NUMBA)
    assert quick is None or quick == usual(line)
    for case in (c for c in SUITE[op] if c.error):
        line = compact(3, op, [*valid[:2], case.args])
        quick = answer_quick(line, NUMBA)
        assert quick is None or quick == usual(line), case.args


HEX = st.builds(lambda p, d, z: p + "0" * z + d, st.sampled_from(["0x", "0X"]),
                st.sampled_from(["1", "ff", "FFFFFFFF", "ffffffffffffffff", "1ffffffffffffffff",
                                 "deadBEEF", "7fffffff", "80000000", ""]),
                st.integers(0, 70))
DECIMAL = st.sampled_from(["0", "-0", "00", "01", "-1", "1", "15", "16", "255", "256", "65535",
                           "4294967295", "4294967296", "18446744073709551615",
                           "18446744073709551616", "99999999999999999999999", "1.0", "1e2",
                           "true", "null"])
JUNK = st.one_of(HEX.map(json.dumps), DECIMAL, st.just('"\\u0030x1"'), st.just('" 0x1"'))


def valid_value(t) -> st.SearchStrategy[str]:
    """A value of integer type `t`, as a JSON integer or a hex string of any case and zeros."""
    as_hex = st.builds(lambda v, z, up: json.dumps(("0X" if up else "0x") + "0" * z
                                                   + (f"{v:X}" if up else f"{v:x}")),
                       st.integers(0, (1 << t.bits) - 1), st.integers(0, 3), st.booleans())
    return st.one_of(as_hex, st.integers(t.lo, t.hi).map(str))


def value(draw, t) -> str:
    return draw(JUNK) if draw(st.integers(0, 40)) == 0 else draw(valid_value(t))
SPACE = st.sampled_from([""] * 30 + [" "])


def item_text(draw, op: str) -> str:
    """An item of the op's fields in any order, now and then with a junk value, a space, a
    field left out, doubled or unknown, or an array one too long."""
    fields = draw(st.permutations(list(REGISTRY.ops[op].args.fields.items())))
    parts = []
    for name, f in fields[:len(fields) - (draw(st.integers(0, 30)) == 0)]:
        n = getattr(f.type, "n", 0)
        item = f.type.item if n else f.type
        values = [value(draw, item) for _ in range(max(n, 1) + (draw(st.integers(0, 30)) == 0))]
        text = ("[" + ",".join(values) + "]") if n else values[0]
        parts.append(json.dumps(name) + ":" + draw(SPACE) + text)
    if parts and draw(st.integers(0, 30)) == 0:
        parts.append(parts[0])
    if draw(st.integers(0, 30)) == 0:
        parts.append('"extra":1')
    return "{" + ",".join(parts) + "}"


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from(TAKEN))
def test_near_valid_lines_are_answered_as_the_usual_path_answers_them(data, op):
    items = [item_text(data.draw, op) for _ in range(data.draw(st.integers(1, 5)))]
    line = '{"id":' + str(data.draw(st.integers(-10, 10))) + ',"op":"' + op + '","batch":[' \
        + ",".join(items) + "]}"
    quick = answer_quick(line, NUMBA)
    if quick is not None:
        assert quick == usual(line)


def test_lines_it_does_not_take_are_left_to_the_usual_path():
    ok = compact(5, "hash.fmix64", [{"x": "0x1"}])
    assert answer_quick(ok, NUMBA) is not None
    for line in (ok.replace(",", ", ", 1), ok.replace('"0x1"', '"0x1" '),
                 '{"op":"hash.fmix64","id":5,"batch":[{"x":"0x1"}]}',
                 compact(5, "hash.fmix64", []), compact(5, "rng.mt19937", [{"seed": 1,
                                                                             "count": 2}]),
                 compact(5, "hash.kdimmix", [{"index": 16}]), ok + " ", ok[:-1],
                 compact(5, "hash.nope", [{"x": "0x1"}]), ok.replace('"id":5', '"id":-0'),
                 ok.replace('"id":5', '"id":05'), ok.replace('"id":5', '"id":"5"')):
        assert answer_quick(line, NUMBA) is None, line
