"""PyC's run guards (facts sheet §1.7): every contract_reason through `serve`, and the two
errata of the guards (E14.6, E14.7) under each profile."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata

load_all()

MODULE = {"ops": [{"kind": "input", "name": "x", "dtype": 1, "shape": [4, 4], "inputs": []},
                  {"kind": "relu", "name": "", "dtype": 1, "shape": [4, 4], "inputs": [0]},
                  {"kind": "output", "name": "", "dtype": 1, "shape": [4, 4], "inputs": [1]}]}
SCALAR = {"ops": [{"kind": "input", "name": "s", "dtype": 1, "shape": [], "inputs": []},
                  {"kind": "output", "name": "", "dtype": 1, "shape": [], "inputs": [0]}]}


def _ask(op: str, args: dict, profile: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, profile)


def _fp(module: dict) -> str:
    return _ask("pyc.fingerprint", {"module": module})["result"]["out"]


def _d(dtype=1, shape=(4, 4), size=64, data=0) -> dict:
    return {"dtype": dtype, "shape": list(shape), "size_bytes": size, "data": data}


def _guard(inputs, last=None, module=MODULE, fingerprint=None, enforce=True,
           profile="crucible") -> dict:
    args = {"module": module, "fingerprint": fingerprint or _fp(module), "inputs": inputs,
            "last": last, "enforce": enforce}
    return _ask("pyc.guard", args, profile)["result"]


def _fnv_words(words: list[int]) -> int:
    """FNV-1a 64 over whole words from PyC's basis, written here from the facts sheet."""
    h = 1469598103934665603
    for w in words:
        h = ((h ^ w) * 1099511628211) % 2**64
    return h


@pytest.mark.parametrize("inputs,reason", [
    ([_d()], "ok"),
    (None, "input_unavailable"),
    ([], "input_count_mismatch"),
    ([_d(), _d()], "input_count_mismatch"),
    ([_d(dtype=4)], "input_dtype_mismatch"),
    ([_d(dtype=4, shape=(2,))], "input_dtype_mismatch"),
    ([_d(shape=(16,))], "input_shape_mismatch"),
    ([_d(shape=(4, 5), size=80)], "input_shape_mismatch"),
    ([_d(size=63)], "input_size_mismatch"),
    ([_d(size=1 << 40)], "ok"),
])
def test_each_reason_of_the_input_guard(inputs, reason):
    out = _guard(inputs)
    assert (out["reason"], out["input_guard"]) == (reason, "ran")
    assert (out["guard_miss"], out["contract_ok"]) == ((0, True) if reason == "ok" else (1, False))


def test_a_changed_module_fails_the_fingerprint_guard_only_when_enforced():
    other = hex(int(_fp(MODULE), 16) ^ 1)
    out = _guard([_d(size=1)], fingerprint=other)
    assert (out["reason"], out["input_guard"], out["guard_miss"]) == \
        ("fingerprint_mismatch", "not_reached", 1)
    assert _guard([_d(size=1)], fingerprint=other, enforce=False)["reason"] == \
        "input_size_mismatch"


def test_the_last_runs_descriptors_skip_the_input_guard():
    assert _guard([_d()], last=[_d()])["input_guard"] == "skipped"
    assert _guard([_d(data=8)], last=[_d()])["input_guard"] == "ran"


@pytest.mark.parametrize("profile,reason,stage", [
    ("crucible", "input_dtype_mismatch", "ran"), ("pyc@fdf1563", "ok", "skipped")])
def test_a_shape_hash_collision_skips_the_guard_only_in_the_seed(profile, reason, stage):
    size = 0x30000000195
    assert _fnv_words([2, size, 2, 4, 4]) == _fnv_words([1, 64, 2, 4, 4])
    out = _guard([_d(dtype=2, size=size)], last=[_d()], profile=profile)
    assert (out["reason"], out["input_guard"]) == (reason, stage)


@pytest.mark.parametrize("profile,size,reason", [
    ("crucible", 4, "ok"), ("crucible", 3, "input_size_mismatch"),
    ("pyc@fdf1563", 4, "input_size_mismatch"), ("pyc@fdf1563", 1 << 30, "input_size_mismatch")])
def test_a_scalar_input_runs_only_in_the_spec(profile, size, reason):
    assert _guard([_d(shape=(), size=size)], module=SCALAR, profile=profile)["reason"] == reason


@pytest.mark.parametrize("inputs,field", [
    ([_d(shape=[1] * 9)], "args.inputs[0].shape"),
    ([_d(dtype=9)], "args.inputs[0].dtype"),
    ([_d(size=-1)], "args.inputs[0].size_bytes"),
    ([_d(size="64")], "args.inputs[0].size_bytes"),
])
def test_bad_descriptors_are_refused_naming_the_field(inputs, field):
    args = {"module": MODULE, "fingerprint": _fp(MODULE), "inputs": inputs}
    error = _ask("pyc.guard", args)["error"]
    assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]
