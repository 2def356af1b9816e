"""The effect system (facts sheet §11) through `serve`: the friend table of every context and
token, and the client errors."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.crucible.effects import Context, violations

load_all()


def _ask(args: dict) -> dict:
    return answer(json.dumps({"id": 1, "op": "fx.may_create", "args": args}),
                  Implementation("reference"), "crucible")


@pytest.mark.parametrize("context,token,allowed,held,pure,why", [
    ("pure", "alloc", False, False, True, "pure_context"),
    ("pure", "io", False, False, True, "pure_context"),
    ("pure", "block", False, False, True, "pure_context"),
    ("init", "alloc", True, True, False, "friend"),
    ("init", "io", True, True, False, "friend"),
    ("init", "block", False, False, False, "not_a_friend"),
    ("bg", "alloc", True, True, False, "friend"),
    ("bg", "io", True, True, False, "friend"),
    ("bg", "block", True, True, False, "friend"),
    ("test", "alloc", True, True, False, "friend"),
    ("test", "io", True, True, False, "friend"),
    ("test", "block", True, True, False, "friend"),
])
def test_friend_table(context, token, allowed, held, pure, why):
    result = _ask({"context": context, "token": token})["result"]
    assert result == {"allowed": allowed, "held": held, "pure": pure, "why": why}


@pytest.mark.parametrize("args,field", [
    ({"context": "fg", "token": "alloc"}, "context"),
    ({"context": "bg", "token": "gpu"}, "token"),
    ({"context": 2, "token": "io"}, "context"),
    ({"token": "io"}, "context"),
])
def test_invalid(args, field):
    error = _ask(args)["error"]
    assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]


def test_planted_print_in_pure_module_is_caught():
    found = violations("def f(x):\n    print(x)\n    return x", Context.PURE)
    assert [(e.function, e.line, e.call) for e in found] == [("f", 2, "print")]
    assert violations("def f(x):\n    print(x)", Context.INIT) == []
