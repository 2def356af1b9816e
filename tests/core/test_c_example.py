"""The third-party example in C: it passes its ops and is unsupported elsewhere; the build with
a planted bug fails, naming the op, the case and the first differing byte; fuzzing shrinks the
failure to a minimal input."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from crucible_spec.cli import main

SOURCE = Path(__file__).parents[2] / "conformance" / "examples" / "c" / "crucible_impl.c"
OWN_OPS = {"types.element_size", "hash.fmix64", "hash.wymix", "hash.fnv1a", "hash.kdimmix",
           "hash.schema", "hash.shape", "hash.scope"}


def build(tmp_path: Path, *flags: str) -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler (cc) is needed to build the C example"
    out = tmp_path / ("planted" if flags else "clean")
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror", *flags,
                    "-o", str(out), str(SOURCE)], check=True, capture_output=True, text=True)
    return str(out)


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("c")
    return build(tmp), build(tmp, "-DPLANTED_BUG")


def test_the_c_example_passes_its_ops_and_the_rest_is_unsupported(binaries, tmp_path):
    report = tmp_path / "card.json"
    assert main(["conform", "--impl", binaries[0], "--report", str(report)]) == 0
    ops = json.loads(report.read_text())["ops"]
    assert {op for op, r in ops.items() if r["status"] == "pass"} == OWN_OPS
    assert {op for op, r in ops.items() if r["status"] == "unsupported"} == set(ops) - OWN_OPS


def test_the_planted_bug_is_caught_with_op_case_and_byte(binaries, tmp_path, capsys):
    report = tmp_path / "card.json"
    assert main(["conform", "--impl", binaries[1], "--report", str(report)]) == 1
    ops = json.loads(report.read_text())["ops"]
    failing = {op for op, r in ops.items() if r["failed"]}
    assert failing == {"hash.fnv1a", "hash.schema", "hash.scope", "hash.shape"}
    first = ops["hash.fnv1a"]["failures"][0]
    assert first["kind"] == "mismatch" and first["difference"]["byte"] is not None
    out = capsys.readouterr().out
    assert f"FAIL hash.fnv1a case {first['case']} " in out and "byte" in out


def test_fuzzing_shrinks_the_planted_bug_to_a_minimal_input(binaries, tmp_path):
    report = tmp_path / "card.json"
    assert main(["conform", "--impl", binaries[1], "--ops", "hash.fnv1a", "--fuzz", "40",
                 "--report", str(report)]) == 1
    fuzz = json.loads(report.read_text())["ops"]["hash.fnv1a"]["fuzz"]
    assert fuzz["failure"]["args"] == {"data": "00"}
