"""An installation without an optional package (egglog here, hidden from a child process by an
import hook that finds it nowhere, as where it is not installed): the op that needs it answers
`unsupported` naming the package and its extra, `ops` shows it, and `prove` reports exactly
the obligations that need it as skipped, failing only under --require-all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crucible_spec.spec.core.errors import UNSUPPORTED
from crucible_spec.spec.core.optional import MissingPackage, installed, load

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "conformance" / "vectors" / "crucible"
SATURATE = VECTORS / "14" / "egraph.saturate.jsonl"
FMIX64 = VECTORS / "8" / "hash.fmix64.jsonl"
NEEDS = "needs the package egglog, which is not installed (pip install 'crucible-spec[egraph]')"


HIDE = """import sys


class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == {package!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)


sys.meta_path.insert(0, Hide())
"""


def _without(package: str, folder: Path) -> dict:
    """The environment of a child process in which `package` is found nowhere, as where it
    is not installed (a sitecustomize module puts the hook first)."""
    (folder / "sitecustomize.py").write_text(HIDE.format(package=package))
    return os.environ | {"PYTHONPATH": str(folder)}


@pytest.fixture
def without_egglog(tmp_path):
    return _without("egglog", tmp_path)


def _cli(env: dict, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "crucible_spec", *args], input=stdin,
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_stand_in_hides_the_package(without_egglog):
    probe = "import crucible_spec.spec.core.optional as o; print(o.installed('egglog'))"
    hidden = subprocess.run([sys.executable, "-c", f"{probe}; import egglog.bindings"],
                            env=without_egglog, capture_output=True, text=True)
    assert hidden.stdout == "False\n"
    assert "ModuleNotFoundError: No module named 'egglog'" in hidden.stderr
    assert installed("egglog"), "egglog is a dependency: this environment has it"


def test_load_names_the_missing_package_and_its_extra():
    with pytest.raises(MissingPackage) as e:
        load("no_such_package_here.sub")
    assert (e.value.code, e.value.package) == (UNSUPPORTED, "no_such_package_here")
    assert e.value.message.endswith("(pip install no_such_package_here)")
    assert load("json.decoder").__name__ == "json.decoder"


def test_load_does_not_hide_a_missing_module_the_package_itself_imports(tmp_path,
                                                                          monkeypatch):
    (tmp_path / "half_installed").mkdir()
    (tmp_path / "half_installed" / "__init__.py").write_text("import gone_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="gone_dependency"):
        load("half_installed")


@pytest.mark.slow(seconds=15)
def test_serve_answers_unsupported_naming_the_package(without_egglog):
    saturate = json.loads(SATURATE.read_text().splitlines()[0])
    fmix = json.loads(FMIX64.read_text().splitlines()[1])
    assert fmix["source"].startswith("crucible ")  # answered by the real C++
    requests = [{"id": 1, "op": "egraph.saturate", "args": saturate["args"]},
                {"id": 2, "op": "hash.fmix64", "args": fmix["args"]}]
    out = _cli(without_egglog, "serve", stdin="".join(json.dumps(r) + "\n" for r in requests))
    first, second = map(json.loads, out.stdout.splitlines())
    assert first == {"id": 1, "ok": False, "error": {"code": UNSUPPORTED, "message": NEEDS}}
    assert second == {"id": 2, "ok": True, "result": fmix["result"]}


@pytest.mark.slow(seconds=10)
def test_ops_shows_the_package_an_op_needs(without_egglog):
    out = _cli(without_egglog, "ops", "--json")
    rows = {r["op"]: r for r in json.loads(out.stdout)}
    assert {op: r["reference"] for op, r in rows.items() if r["reference"] != "yes"} == \
        {"egraph.saturate": "needs egglog"}
    assert rows["egraph.saturate"]["needs"] == ["egglog"] and rows["egraph.saturate"]["holes"] == []
    assert _cli(without_egglog, "ops", "--check").returncode == 0


@pytest.mark.slow(seconds=40)
def test_prove_skips_exactly_what_needs_the_package(without_egglog, tmp_path):
    report = tmp_path / "r.json"
    args = ["prove", "PO14.402", "PO14.403", "PO14.404", "-j", "1", "--no-cache",
            "--report", str(report)]
    out = _cli(without_egglog, *args)
    assert out.returncode == 0, out.stdout + out.stderr
    results = {r["id"]: r for r in json.loads(report.read_text())["results"]}
    assert {i: (r["status"], r["needs"]) for i, r in results.items()} == {
        "PO14.402": ("skipped", ["egglog"]), "PO14.403": ("skipped", ["egglog"]),
        "PO14.404": ("proved", [])}
    assert "skipped: needs egglog" in out.stdout
    assert "1 proved, 0 refuted, 0 unknown, 0 error, 2 skipped (needs egglog)" in out.stdout
    strict = _cli(without_egglog, *args, "--require-all", "--force")
    assert strict.returncode == 1 and not json.loads(report.read_text())["ok"]
    mutants = _cli(without_egglog, "prove", "PO14.402", "--mutants", "-j", "1", "--no-cache",
                   "--report", str(tmp_path / "m.json"))
    assert mutants.returncode == 0, mutants.stdout + mutants.stderr
    verdicts = {r["verdict"] for r in json.loads((tmp_path / "m.json").read_text())["results"]}
    assert verdicts == {"skipped"}


@pytest.mark.slow(seconds=10)
def test_a_contract_without_crosshair_is_skipped(tmp_path):
    env = _without("crosshair", tmp_path)
    out = _cli(env, "prove", "PO1.80", "PO2.20", "-j", "1", "--no-cache", "--report",
               str(tmp_path / "r.json"))
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    assert [(r["id"], r["status"], r["error"], r["needs"]) for r in results] == [
        ("PO1.80", "skipped", "needs the package crosshair, which is not installed "
                              "(pip install 'crucible-spec[dev]')", ["crosshair"]),
        ("PO2.20", "proved", None, [])]


def test_an_obligation_over_every_op_does_not_count_an_unchecked_op_as_proved(monkeypatch):
    """PO8.64 checks every op's result widths: without egglog, saturation's item raises
    MissingPackage (the obligation is skipped), never an empty list of problems."""
    from crucible_spec import load_all
    from crucible_spec.proofs.core.result_widths import width_problems
    from crucible_spec.spec.core.registry import REGISTRY

    load_all()
    case = json.loads(SATURATE.read_text().splitlines()[0])
    value = REGISTRY.ops["egraph.saturate"].args.decode(case["args"], "args")
    assert width_problems("egraph.saturate", "crucible", value) == []
    monkeypatch.setitem(sys.modules, "egglog", None)
    monkeypatch.setitem(sys.modules, "egglog.bindings", None)
    with pytest.raises(MissingPackage):
        width_problems("egraph.saturate", "crucible", value)


def test_vectors_are_never_generated_from_a_missing_package(monkeypatch):
    """An `unsupported` answer written as a vector's expectation would be wrong for every
    installation that has the package: generation stops instead."""
    from crucible_spec import load_all
    from crucible_spec.conformance.vectors import expected
    from crucible_spec.engine import Implementation
    from crucible_spec.spec.core.registry import REGISTRY

    load_all()
    op, case = REGISTRY.ops["egraph.saturate"], json.loads(SATURATE.read_text().splitlines()[0])
    impl = Implementation("reference", "crucible")
    assert expected(impl, op, case["args"], "s").result == case["result"]
    monkeypatch.setitem(sys.modules, "egglog", None)
    monkeypatch.setitem(sys.modules, "egglog.bindings", None)
    with pytest.raises(MissingPackage):
        expected(impl, op, case["args"], "s")


def test_the_command_line_names_a_missing_package_and_exits_2(monkeypatch, capsys):
    from crucible_spec.cli import main
    from crucible_spec.commands import ops

    def run(_args):
        raise MissingPackage("egglog")

    monkeypatch.setattr(ops, "run", run)
    assert main(["ops"]) == 2
    assert capsys.readouterr().err == f"crucible-spec: {NEEDS}\n"


def test_fuzzing_an_op_whose_reference_needs_a_missing_package_sends_nothing(monkeypatch):
    """conform --fuzz against an implementation that serves egraph.saturate, on a machine
    without egglog: the reference cannot judge any answer, so the op is not fuzzed and the
    note names the package (it was once a failure: the reference's error read as the truth)."""
    from crucible_spec.conformance import runner
    from crucible_spec.spec.core.registry import REGISTRY

    class NoRequests:
        def ask(self, *args):
            raise AssertionError("a request was sent")

    monkeypatch.setattr(runner, "installed", lambda package: package != "egglog")
    got = runner.fuzz_op(NoRequests(), REGISTRY.ops["egraph.saturate"], 20, 0)
    assert got["requests"] == 0 and got["failure"] is None
    assert got["note"] == f"not fuzzed: the reference {NEEDS}"
