"""The cut of a too-deep value out of a request: its path, and the text left behind."""

from __future__ import annotations

import json

from crucible_spec.conformance.deep_json import cut_too_deep


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
