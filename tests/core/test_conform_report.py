"""The conformance report an implementer acts on: case ids and request lines, re-running one
case, "N more failures", numeric chapter order, unsupported ops folded, fallbacks, JUnit XML
that validates against the schema CI tools read."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import xmlschema

from crucible_spec.cli import main

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "conformance" / "examples" / "c" / "crucible_impl.c"
JUNIT_XSD = Path(__file__).parent / "data" / "junit.xsd"
SERVE_NUMBA = f"{sys.executable} -m crucible_spec serve --impl numba"


STATUSES = {"pass", "fallback", "fail", "xfail", "unsupported", "incomplete"}


def _rows(out: str) -> list[list[str]]:
    """The table's (chapter, op, status) rows."""
    return [line.split()[:3] for line in out.splitlines()
            if len(line.split()) > 3 and line.split()[0].isdigit()
            and "." in line.split()[1] and line.split()[2] in STATUSES]


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the example")
    out = tmp_path_factory.mktemp("c")
    for name, extra in (("impl", []), ("planted", ["-DPLANTED_BUG"])):
        subprocess.run([cc, "-std=c11", "-O2", *extra, "-o", str(out / name), str(SOURCE)],
                       check=True)
    return out


def test_the_c_example_shows_8_supported_ops_and_47_folded(binaries, tmp_path, capsys):
    junit = tmp_path / "junit.xml"
    assert main(["conform", "-q", "--impl", str(binaries / "impl"), "--junit", str(junit)]) == 0
    out = capsys.readouterr().out
    assert "ops fully supported: 8 of 151" in out
    folded = [line for line in out.splitlines() if line.startswith("143 ops unsupported")]
    assert len(folded) == 1 and "layout.decode" in folded[0]
    rows = _rows(out)
    assert [int(ch) for ch, _, _ in rows] == sorted(int(ch) for ch, _, _ in rows)
    assert rows[0] == ["2", "types.element_size", "pass"] and len(rows) == 8
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(junit))


def test_a_failure_names_its_case_and_request_and_reruns_alone(binaries, tmp_path, capsys):
    planted = str(binaries / "planted")
    junit = tmp_path / "junit.xml"
    assert main(["conform", "-q", "--impl", planted, "--ops", "hash.fnv1a",
                 "--junit", str(junit)]) == 1
    out = capsys.readouterr().out.splitlines()
    first = next(k for k, line in enumerate(out) if line.startswith("FAIL "))
    assert "[crucible/8/hash.fnv1a.jsonl:2]" in out[first]
    request = out[first + 1].removeprefix("     request: ")
    assert json.loads(request) == {"id": 1, "op": "hash.fnv1a",
                                   "args": {"data": "6174656e3a3a6d6d"}}
    assert any(line.strip().startswith("... 38 more failures of hash.fnv1a") for line in out)
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(junit))
    assert junit.read_text().count("<failure") == 43
    answer = subprocess.run([planted], input=request + "\n", capture_output=True, text=True,
                            timeout=30).stdout
    assert json.loads(answer)["result"]["out"] != "0x983b9200d566222d"
    assert main(["conform", "-q", "--impl", planted, "--case",
                 "crucible/8/hash.fnv1a.jsonl:2"]) == 1
    out = capsys.readouterr().out
    assert "cases: 0 passed, 1 failed" in out and "[crucible/8/hash.fnv1a.jsonl:2]" in out


@pytest.mark.parametrize("case", ["crucible/8/hash.fnv1a.jsonl:999", "hash.fnv1a:2",
                                  "crucible/9/hash.fnv1a.jsonl:2", "other/8/hash.fnv1a.jsonl:1"])
def test_an_unknown_case_id_is_a_usage_error(capsys, case):
    assert main(["conform", "--impl", "true", "--case", case]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crucible-spec: --case") and err.count("\n") == 1


def test_ops_the_reference_answers_are_fallback_not_pass(capsys):
    assert main(["conform", "-q", "--impl", SERVE_NUMBA, "--ops", "layout.info",
                 "hash.fmix64"]) == 0
    out = capsys.readouterr().out
    statuses = {op: status for _, op, status in _rows(out)}
    assert statuses == {"layout.info": "fallback", "hash.fmix64": "pass"}
    assert "ops fully supported: 1 of 2 (1 more answered by the reference fallback)" in out


@pytest.mark.parametrize("flag", [["--fuzz", "-5"], ["--timeout", "0"], ["--timeout", "-1"],
                                  ["--workers", "0"], ["--max-hangs", "0"]])
def test_nonsense_numbers_are_refused_at_parse_time(flag):
    with pytest.raises(SystemExit) as exit_:
        main(["conform", "--impl", "true", *flag])
    assert exit_.value.code == 2


def test_a_report_into_a_missing_directory_is_refused(tmp_path, capsys):
    missing = tmp_path / "nope" / "card.json"
    assert main(["conform", "--impl", "true", "--report", str(missing)]) == 2
    assert not missing.parent.exists()
    assert "does not exist" in capsys.readouterr().err
