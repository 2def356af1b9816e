"""PyC's IR: verify's codes, the canonical text, the fingerprint and the cache key, with the
values measured by running PyC at fdf1563 (facts sheet §1.2, §1.6)."""

from __future__ import annotations

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.errata import profile_errata
from crucible_spec.spec.pyc_fingerprint import GOLDEN_SOURCE
from crucible_spec.spec.pyc_ir import module_to_wire

load_all()

SOURCE = module_to_wire(GOLDEN_SOURCE)
AFTER = ("0:input:lhs:dtype=1:shape=2x3:inputs=\n1:input:rhs:dtype=1:shape=3x4:inputs=\n"
         "2:matmul:fused_op_2_op_3:dtype=1:shape=2x4:inputs=0,1\n"
         "3:output:op_4:dtype=1:shape=2x4:inputs=2\n")


def _op(kind, name="", shape=(2, 4), inputs=(), dtype=1):
    return {"kind": kind, "name": name, "dtype": dtype, "shape": list(shape),
            "inputs": list(inputs)}


def _ask(op: str, args: dict, profile: str = "crucible") -> dict:
    import json

    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, profile)


def _after_module() -> dict:
    return {"ops": [_op("input", "lhs", (2, 3)), _op("input", "rhs", (3, 4)),
                    _op("matmul", "fused_op_2_op_3", inputs=(0, 1)),
                    _op("output", "op_4", inputs=(2,))]}


@pytest.mark.parametrize("profile", ["crucible", "pyc@fdf1563"])
def test_golden_text_and_fingerprints(profile):
    assert _ask("pyc.serialize", {"module": _after_module()}, profile)["result"]["text"] == AFTER
    fp = _ask("pyc.fingerprint", {"module": SOURCE}, profile)["result"]["out"]
    assert int(fp, 16) == 7367339300434097518
    fp = _ask("pyc.fingerprint", {"module": _after_module()}, profile)["result"]["out"]
    assert int(fp, 16) == 10484150177586984269
    no_fusion = {"ops": [*SOURCE["ops"][:2], _op("matmul", "op_2", inputs=(0, 1)),
                         _op("relu", "op_3", inputs=(2,)), _op("output", "op_4", inputs=(3,))]}
    fp = _ask("pyc.fingerprint", {"module": no_fusion}, profile)["result"]["out"]
    assert int(fp, 16) == 8971991241683528107


def test_fnv_of_the_empty_string_uses_pycs_basis():
    from crucible_spec.spec.pyc_fingerprint import fnv1a64

    assert fnv1a64(b"") == 1469598103934665603


@pytest.mark.parametrize("fusion,key", [(False, 10346072359797451416),
                                        (True, 17405130821193028594)])
def test_cache_key_with_default_options(fusion, key):
    got = _ask("pyc.cache_key", {"module": SOURCE, "options": {"enable_fusion": fusion}})
    assert int(got["result"]["out"], 16) == key


def test_swapped_strings_collide_only_in_the_seed():
    a = {"module": SOURCE, "options": {"autotune_db_path": "a.db", "dist_config_json": "{}"}}
    b = {"module": SOURCE, "options": {"autotune_db_path": "{}", "dist_config_json": "a.db"}}
    seed = [_ask("pyc.cache_key", x, "pyc@fdf1563")["result"]["out"] for x in (a, b)]
    spec = [_ask("pyc.cache_key", x)["result"]["out"] for x in (a, b)]
    assert seed[0] == seed[1] and spec[0] != spec[1]


@pytest.mark.parametrize("ops,code", [
    ([], 2),
    ([_op("input", shape=(2,)), _op("add", shape=(2,), inputs=(0,) * 9)], 3),
    ([_op("input", shape=(1,) * 9)], 4),
    ([_op("input", shape=(2, 0))], 4),
    ([_op("input", shape=())], 0),
    ([_op("input", shape=(2,)), _op("relu", shape=(2,), inputs=(1,))], 5),
    ([_op("matmul", shape=(2,), inputs=())], 0),
    ([_op("input", shape=(2, 0)), _op("add", shape=(2,), inputs=(0,) * 9)], 4),
])
def test_verify_codes_in_pycs_order(ops, code):
    assert _ask("pyc.verify", {"module": {"ops": ops}})["result"]["code"] == code


def test_names_that_fake_lines_collide_only_in_the_seed():
    one = {"ops": [_op("input", "a:dtype=1:shape=1:inputs=\n1:input:b", (1,))]}
    two = {"ops": [_op("input", "a", (1,)), _op("input", "b", (1,))]}
    seed = [_ask("pyc.fingerprint", {"module": m}, "pyc@fdf1563")["result"]["out"]
            for m in (one, two)]
    spec = [_ask("pyc.fingerprint", {"module": m})["result"]["out"] for m in (one, two)]
    assert seed[0] == seed[1] and spec[0] != spec[1]


@pytest.mark.parametrize("module,field", [
    ({"ops": [_op("input", "x", (1,))] * 2000}, "args.module.ops"),
    ({"ops": [_op("input", "x", (2**63,))]}, "args.module.ops[0].shape[0]"),
    ({"ops": [_op("input", "x", ("2",))]}, "args.module.ops[0].shape[0]"),
    ({"ops": [_op("conv", "x", (1,))]}, "args.module.ops[0].kind"),
    ({"ops": [_op("input", "n" * 64, (1,))]}, "args.module.ops[0].name"),
    ({"ops": [_op("input", "x", (1,), (), 9)]}, "args.module.ops[0].dtype"),
])
def test_bad_modules_are_refused_naming_the_field(module, field):
    for op in ("pyc.verify", "pyc.fingerprint"):
        error = _ask(op, {"module": module})["error"]
        assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]


def test_a_cycle_is_verify_code_5_and_has_no_fingerprint():
    cyc = {"ops": [_op("input", shape=(2,)), _op("add", shape=(2,), inputs=(2,)),
                   _op("relu", shape=(2,), inputs=(1,))]}
    assert _ask("pyc.verify", {"module": cyc})["result"]["code"] == 5
    assert _ask("pyc.fingerprint", {"module": cyc})["error"]["code"] == "invalid_input"
