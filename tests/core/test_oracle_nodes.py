"""`oracle cdag` and `oracle dag` reach the cause: the changed field before any derived hash,
the op inside a mismatched region, and an error (exit 2) for what is not a node."""

from __future__ import annotations

import copy
import json
import os

import pytest

from crucible_spec.cli import main
from crucible_spec.conformance.golden import golden
from crucible_spec.conformance.golden_cdag import BRANCH_80_ARGS, encode_args

REGION = {r["name"]: r for r in golden()["cdag"]["regions"]}["A_no_plan"]


def _write(tmp_path, name: str, value) -> str:
    path = tmp_path / name
    if isinstance(value, bytes):
        path.write_bytes(value)
    else:
        path.write_text(value if isinstance(value, str) else json.dumps(value))
    return str(path)


def test_a_changed_field_in_json_is_named_before_the_derived_hashes(tmp_path, capsys):
    args = encode_args(REGION)
    changed = copy.deepcopy(args)
    changed["region"]["ops"][0]["inputs"][0]["sizes"][1] += 1
    a, b = _write(tmp_path, "a.json", args), _write(tmp_path, "b.json", changed)
    assert main(["oracle", "cdag", a, b]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("region: ops[0].inputs[0].sizes[1]: expected "), lines
    assert lines[1].startswith("  first differing byte ")
    assert any(line.startswith("  then merkle_hash 0x") for line in lines), lines
    assert any(line.startswith("  then content_hash 0x") for line in lines), lines


def test_a_changed_arm_of_a_branch_is_named(tmp_path, capsys):
    changed = copy.deepcopy(BRANCH_80_ARGS)
    changed["arms"][1]["value"] = 6
    a, b = _write(tmp_path, "a.json", BRANCH_80_ARGS), _write(tmp_path, "b.json", changed)
    assert main(["oracle", "cdag", a, b]) == 1
    assert capsys.readouterr().out.startswith("branch: arms[1].value: expected 5, got 6")


INVALID = {
    "empty": b"",
    "null": "null",
    "an empty object": "{}",
    "a list": "[1, 2]",
    "random bytes": os.urandom(1 << 20),
    "a truncated node": REGION["hex"][:-2],
    "a crtrace header": b"CRTR\x01\0\0\0\0\0\0\0\0\0\0\0",
}


@pytest.mark.parametrize("what", sorted(INVALID))
def test_two_invalid_inputs_exit_2_never_identical(tmp_path, capsys, what):
    a = _write(tmp_path, "a.bin", INVALID[what])
    b = _write(tmp_path, "b.bin", INVALID[what])
    assert main(["oracle", "cdag", a, b]) == 2
    captured = capsys.readouterr()
    assert "identical" not in captured.out
    assert captured.err.startswith("crucible-spec: ") and captured.err.count("\n") == 1


def _dag(schema_of_op1: str, size: int) -> dict:
    meta = {"ndim": 1, "sizes": [size], "strides": [1], "dtype": 6, "device_type": 0,
            "device_idx": 0}
    return {"dag": {"root": 1, "nodes": [
        {"kind": "terminal"},
        {"kind": "region", "next": 0, "ops": [
            {"schema_hash": "0x11", "inputs": [meta]},
            {"schema_hash": schema_of_op1, "inputs": [meta]}]}]}}


def test_oracle_dag_descends_to_the_op_and_field(tmp_path, capsys):
    a = _write(tmp_path, "a.json", _dag("0x22", 4))
    b = _write(tmp_path, "b.json", _dag("0x22", 5))
    assert main(["oracle", "dag", a, b]) == 1
    out = capsys.readouterr().out
    assert "node 1: op 0 differs first: ops[0].inputs[0].sizes[0]: expected 4, got 5" in out
    assert main(["oracle", "dag", a, _write(tmp_path, "c.json", _dag("0x23", 4))]) == 1
    assert "node 1: op 1 differs first: ops[1].schema_hash" in capsys.readouterr().out


def test_oracle_dag_takes_no_region_flag(tmp_path, capsys):
    a = _write(tmp_path, "a.json", _dag("0x22", 4))
    with pytest.raises(SystemExit) as exit_:
        main(["oracle", "dag", a, a, "--region", "1"])
    assert exit_.value.code == 2
