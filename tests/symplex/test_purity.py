"""SympleX's purity check (facts §2.8): the docstring's rules through `serve`, the exact message
symplex 1.0.0 raises, and each erratum of symplex@1.0.0 on its witness. Expected verdicts come
from the checker's documented rules; expected messages from running the sdist's checker."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY

load_all()
SEED = "symplex@1.0.0"


def _ask(source, profile: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": "symplex.purity", "args": {"source": source}}),
                  impl, profile)


def _pure(source: str, profile: str = "crucible") -> bool:
    return _ask(source, profile)["result"]["pure"]


def _fn(*lines: str, head: str = "x") -> str:
    return f"def f({head}):\n" + "".join(f"    {line}\n" for line in lines)


@pytest.mark.parametrize("body", [
    ["return x + 2 * x"], ["y = x.at[0].set(1.0)", "return y"], ["assert x is not None"],
    ["raise ValueError('no')"], ["import numpy as np", "return np.exp(x)"],
    ["z = np.zeros(3)", "z[0] = 1.0", "return z"], ["return [v * 2 for v in x]"],
    ["a, b = np.zeros(2), np.ones(2)", "a[0] = 1.0", "return a"],
    ["for k, v in x:", "    k[0] = v"], ["g = random.Random(0)", "return g"]])
def test_allowed_constructs_are_pure(body):
    assert _pure(_fn(*body))


@pytest.mark.parametrize("body", [
    ["print(x)"], ["x[0] = 1.0"], ["x.a = 1"], ["x[0] += 1"], ["del x"], ["global G"],
    ["yield x"], ["return np.random.rand(3)"], ["np.save('f', x)"], ["x.append(1)"],
    ["with open('f') as fh:", "    return fh"], ["return eval('x')"], ["G[0] = x"],
    ["try:", "    return 1 / x", "except ZeroDivisionError:", "    return 0"],
    ["import random as rnd", "return rnd.random()"], ["from random import randint",
                                                       "return randint(0, 3)"],
    ["x.update(a=1)"], ["x.setdefault('a', 1)"], ["sys.stdout.write('hi')"],
    ["random.seed(0)"], ["from numpy import random as npr", "return npr.rand(2)"]])
def test_forbidden_constructs_are_impure(body):
    out = _ask(_fn(*body))["result"]
    assert out["pure"] is False and out["message"].startswith("Function 'f' is not pure.")


def test_try_finally_without_except_is_pure():
    assert _pure(_fn("try:", "    y = x", "finally:", "    y = 0", "return y"))


def test_whole_message_as_symplex_raises_it():
    """symplex 1.0.0's check_purity on this source raised exactly this text."""
    out = _ask("def f(x):\n    print(x)\n    x[0]=1\n    return x\n", SEED)["result"]
    assert out == {"pure": False, "message": (
        "Function 'f' is not pure. SympleX only compiles pure functions (like JAX).\n\n"
        "Impurity violations:\n"
        "  1. Line 2, Col 4: Call to impure builtin 'print' is not allowed in pure functions.\n"
        "  2. Line 3, Col 4: In-place mutation of function parameter 'x'. Use functional "
        "update: x = x.at[idx].set(val)\n\n"
        "To fix these, ensure your function:\n"
        "  - Has no side effects (no print, IO, global mutation)\n"
        "  - Does not mutate arrays in-place (use x = x.at[idx].set(val))\n"
        "  - Uses only pure operations (arithmetic, numpy, symplex APIs)\n")}


def test_unparsable_text_and_no_function_are_unchecked():
    assert _ask("def f(:\n    pass")["result"] == {"pure": True, "message": ""}
    assert _ask("x = print(1)")["result"] == {"pure": True, "message": ""}


def test_async_def_and_lambda_forms():
    assert _ask("async def f(x):\n    return x")["result"]["message"] == (
        "Async function 'f' is impure. SympleX only compiles synchronous pure functions.")
    assert not _pure("lambda x: print(x)")
    assert _pure('"key": lambda x: x * 2,')


def test_first_definition_breadth_first():
    """A top-level def is found before a method of an earlier class."""
    assert _pure("class A:\n    def m(self):\n        print(1)\ndef g(x):\n    return x")


@pytest.mark.parametrize("eid", ["E14.410", "E14.411", "E14.412", "E14.413", "E14.414",
                                 "E14.415", "E14.416"])
def test_each_erratum_alone_explains_its_witness(eid):
    w = REGISTRY.errata[eid].witness
    source = w["args"]["source"]
    assert _ask(source)["result"] == w["spec"]
    assert _ask(source, SEED)["result"] == w["seed"]
    rest = profile_errata(SEED) - {eid}
    impl = Implementation("reference", rest)
    off = answer(json.dumps({"id": 1, "op": "symplex.purity", "args": {"source": source}}),
                 impl, SEED)["result"]
    assert off == w["spec"]


def test_a_non_string_source_is_a_bad_request():
    assert _ask(7)["error"]["code"] == "bad_request"
