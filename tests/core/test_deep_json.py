"""The cut of a too-deep value out of a request: its path, and the text left behind."""

from __future__ import annotations

import json

import pytest

from crucible_spec.conformance.deep_json import BoundedDecoder, cut_too_deep, max_depth
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation


def test_the_first_value_at_the_limit_becomes_null_and_is_named():
    text = '{"id": 1, "args": {"a": [1, 2, [[3]]], "b": [[[4]]]}}'
    assert cut_too_deep(text, 3) == (
        '{"id": 1, "args": {"a": [1, 2, null], "b": [[[4]]]}}', "args.a[2]")
    cut, _ = cut_too_deep(text, 3)
    assert cut_too_deep(cut, 3) == ('{"id": 1, "args": {"a": [1, 2, null], "b": [null]}}',
                                    "args.b[0]")


def test_brackets_and_quotes_inside_strings_are_text():
    text = '{"k\\\\": {"[\\"{": ["]", {"x": [1]}]}}'
    assert json.loads(text)
    assert cut_too_deep(text, 3) == ('{"k\\\\": {"[\\"{": ["]", null]}}', 'k\\.["{[1]')


def test_shallow_or_broken_text_gives_none():
    assert cut_too_deep('{"a": [[1]]}', 3) is None
    assert cut_too_deep('{"a": [[[1', 3) is None
    assert cut_too_deep('{"a": "[[[', 1) is None


def test_a_long_path_is_elided_after_eight_segments():
    text = '{"args": {"e": ' + "[" * 20 + "]" * 20 + "}}"
    assert cut_too_deep(text, 12)[1] == "args.e[0][0][0][0][0][0]..."


def _nested(depth: int, open_: str = "[", close: str = "]") -> str:
    """A request whose deepest value sits `depth` arrays or objects down, counting the request."""
    inner = depth - 2
    value = open_ * inner + close * inner if open_ == "[" else \
        '{"k": ' * inner + "1" + "}" * inner
    return '{"id": 1, "op": "hash.fmix64", "args": {"x": ' + value + "}}"


@pytest.mark.parametrize("depth", [510, 512, 513, 514, 700, 983, 984, 985, 986, 987, 1200, 5000])
@pytest.mark.parametrize("kind", ["[", "{"])
def test_anything_nested_past_512_is_invalid_input_naming_its_path(depth, kind):
    """Exactly past 512 levels, wherever serve is called from (984-987 levels were once
    `internal`, and 513-983 `bad_request`)."""
    impl = Implementation("reference")
    r = answer(_nested(depth, kind, "]" if kind == "[" else "}"), impl, "crucible")
    code = r["error"]["code"]
    assert r["id"] == 1
    if depth <= 512:
        assert code == "bad_request", r
    else:
        assert code == "invalid_input" and "nested deeper than 512 levels" in \
            r["error"]["message"] and r["error"]["message"].startswith("args.x"), r


def test_deep_values_are_bounded_from_any_call_depth():
    def down(n: int) -> dict:
        return down(n - 1) if n else answer(_nested(513), Implementation("reference"),
                                            "crucible")

    for frames in (0, 50, 300):
        assert down(frames)["error"]["code"] == "invalid_input"


@pytest.mark.parametrize("depth", [1, 511, 512, 513, 700, 5000])
def test_the_measured_depth_bounds_exactly_where_calibration_cannot(depth):
    """Python 3.12 on: the C decoder's nesting is not counted against the recursion limit, so
    no headroom can be calibrated and the depth is measured before decoding, bounding at
    exactly 512 as well; brackets inside strings, escaped quotes included, are text."""
    decoder = BoundedDecoder(json.JSONDecoder())
    decoder.headroom = None
    noise = '"[[\\"{{[", '
    text = "[" * (depth - 1) + "[" + noise * 300 + "1]" + "]" * (depth - 1)
    if depth <= 512:
        assert decoder.decode(text) is not None
    else:
        with pytest.raises(RecursionError):
            decoder.decode(text)


def test_max_depth_reads_strings_as_text():
    assert max_depth('{"a": "]]]]", "b": [[{"c": "\\"[["}]]}') == 4
    assert max_depth('"é[" [[]]') == 2
    assert max_depth("plain") == 0
