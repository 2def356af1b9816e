"""Each command imports only what it needs: `--version` loads no registry, and `serve` and
`analyze` load the ops, their references and the chosen backend only (no proof obligations, no
other backend, no z3, no hypothesis).
Checked in a fresh interpreter, through `sys.modules` once the command has run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

MLP_TRACE = str(Path(__file__).resolve().parents[2] / "examples" / "traces" / "mlp.crtrace")
HELLO = '{"id": 0, "op": "hello", "args": {}}\n'

SCRIPT = """
import json, sys
from crucible_spec.cli import main
try:
    rc = main(sys.argv[1:])
except SystemExit as e:
    rc = e.code
print(json.dumps({"rc": rc, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _run(argv: list[str], stdin: str = "") -> tuple[str, dict]:
    p = subprocess.run([sys.executable, "-c", SCRIPT, *argv], input=stdin, capture_output=True,
                       text=True, check=False, timeout=300)
    report = json.loads(p.stderr.strip().splitlines()[-1])
    assert report["rc"] == 0, p.stderr
    return p.stdout, report


def _loaded(modules: list[str], prefix: str) -> list[str]:
    return [m for m in modules if m == prefix or m.startswith(prefix + ".")]


def test_version_imports_no_registry_and_no_heavy_library():
    out, report = _run(["--version"])
    assert out.startswith("crucible-spec ")
    for name in ("z3", "hypothesis", "numba", "crucible_spec.spec", "crucible_spec.proofs"):
        assert _loaded(report["modules"], name) == [], name


def test_serve_reference_hello_loads_neither_kernels_nor_proofs():
    out, report = _run(["serve", "--impl", "reference"], HELLO)
    hello = json.loads(out)
    assert hello["ok"] and hello["result"]["impl"] == "reference"
    assert "hash.fmix64" in hello["result"]["ops"]
    for name in ("numba", "crucible_spec.fast", "crucible_spec.proofs"):
        assert _loaded(report["modules"], name) == [], name


def test_serve_numba_hello_loads_no_proofs_and_no_cupy_kernels():
    out, report = _run(["serve", "--impl", "numba"], HELLO)
    hello = json.loads(out)
    assert hello["ok"] and hello["result"]["impl"] == "numba"
    for name in ("crucible_spec.proofs", "crucible_spec.fast.cupy"):
        assert _loaded(report["modules"], name) == [], name


def test_serve_hellos_import_neither_z3_nor_hypothesis():
    for impl in ("reference", "numba"):
        _, report = _run(["serve", "--impl", impl], HELLO)
        for name in ("z3", "hypothesis"):
            assert _loaded(report["modules"], name) == [], (impl, name)


def test_op_domains_are_still_real_hypothesis_strategies():
    from hypothesis.strategies import SearchStrategy

    from crucible_spec import load_all
    from crucible_spec.spec.core.registry import REGISTRY

    load_all(("spec",))
    strategies = {name: op.strategy() for name, op in REGISTRY.ops.items()}
    assert len(strategies) > 100
    assert [n for n, s in strategies.items() if not isinstance(s, SearchStrategy)] == []


def test_analyze_loads_no_proofs_and_imports_neither_z3_nor_hypothesis():
    out, report = _run(["analyze", "--impl", "reference", "-q", MLP_TRACE])
    assert out.strip()
    for name in ("z3", "hypothesis", "numba", "crucible_spec.proofs"):
        assert _loaded(report["modules"], name) == [], name
