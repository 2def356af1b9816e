"""Oracle tools (`oracle diff`, `oracle explain`), the errata listing and the pytest plugin."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from crucible_spec.cli import main
from crucible_spec.conformance.oracle import diff_records, explain
from crucible_spec.spec.core.registry import REGISTRY

META = REGISTRY.layout("TensorMeta")


def _meta(**changes) -> bytes:
    values = META.default_values()
    values.update(changes)
    return META.pack(values)


def test_diff_names_record_field_and_byte():
    a = _meta(ndim=2) + _meta(ndim=1)
    b = _meta(ndim=2) + _meta(ndim=1, dtype=6, data_ptr=0x1000)
    diffs, notes = diff_records(META, a, b)
    assert notes == []
    assert [(d.record, d.field, d.offset) for d in diffs] == [
        (1, ".data_ptr", 168 + 128), (1, ".dtype", 168 + 137)]
    assert (diffs[1].a, diffs[1].b) == ("-1", "6")
    assert diffs[0].b == "0x0000000000001000"


def test_diff_reports_lengths_and_padding():
    plan = REGISTRY.layout("MemoryPlan")
    a = plan.pack(plan.default_values())
    b = bytearray(a)
    b[29] = 0xAA
    diffs, notes = diff_records(plan, a + a[:5], bytes(b))
    assert [d.field for d in diffs] == [" implicit padding"]
    assert any("trailing" in n for n in notes) and not any("records" in n and "has" in n
                                                           for n in notes[1:])


def test_oracle_diff_cli(tmp_path, capsys):
    (tmp_path / "a.bin").write_bytes(_meta(ndim=3))
    (tmp_path / "b.bin").write_bytes(_meta(ndim=4))
    assert main(["oracle", "diff", "TensorMeta", str(tmp_path / "a.bin"),
                 str(tmp_path / "b.bin")]) == 1
    assert "record 0 TensorMeta.ndim @ byte 136: 3 != 4" in capsys.readouterr().out
    assert main(["oracle", "diff", "TensorMeta", str(tmp_path / "a.bin"),
                 str(tmp_path / "a.bin")]) == 0
    assert main(["oracle", "diff", "Nope", "x", "y"]) == 2


def test_explain_finds_the_first_difference():
    ex = explain("hash.fmix64", {"x": "0x1"}, {"out": "0xb456bcfc34c2cb2d"}, frozenset())
    assert ex.expected == {"ok": True, "result": {"out": "0xb456bcfc34c2cb2c"}}
    assert ex.difference.path == "result.out" and ex.difference.byte == 0
    ok = explain("hash.fmix64", {"x": "0x1"}, {"ok": True, "result": {"out": "0xb456bcfc34c2cb2c"}},
                 frozenset())
    assert ok.difference is None
    bad = explain("types.element_size", {"dtype": 12}, {"element_size": 0}, frozenset())
    assert bad.expected["error"]["code"] == "invalid_input" and bad.difference.path == "error"


def test_oracle_explain_cli(tmp_path, capsys):
    (tmp_path / "args.json").write_text(json.dumps({"op": "hash.shape",
                                                    "args": {"shapes": [[]]}}))
    (tmp_path / "got.json").write_text(json.dumps({"out": "0xcbf29ce484222325"}))
    args = ["oracle", "explain", "hash.shape", str(tmp_path / "args.json"),
            str(tmp_path / "got.json")]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "shape_hash" in out and "first difference: result.out" in out and "E8.1" in out
    assert main([*args, "--profile", "crucible@8d2680a2"]) == 0


def test_errata_listing(capsys):
    assert main(["errata"]) == 0
    out = capsys.readouterr().out
    assert "E8.1" in out and "reproduced" in out
    assert main(["errata", "--profile", "crucible", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


@pytest.mark.slow
def test_pytest_plugin_runs_the_suite_as_items(tmp_path):
    impl = f"{sys.executable} -m crucible_spec serve --impl numba"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"--crucible-impl={impl}", "--crucible-ops=hash.*,types.*",
                           "--rootdir", str(tmp_path), str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # One item per selected op: hash.{fmix64,fnv1a,kdimmix,schema,scope,shape,wymix} and
    # types.{ckernel_table,element_size}.
    assert "9 passed" in proc.stdout
