"""`crucible-spec warm`: compiles the chosen ops' numba kernels into the cache directory it is
given, reports every op it ran, and refuses an op pattern that matches nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from crucible_spec.cli import main
from crucible_spec.commands import warm

ROOT = Path(__file__).resolve().parents[2]
OPS = ["hash.fmix64", "kernel.add"]


def _warm(cache: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "crucible_spec", "warm", *argv], env=env,
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_warm_fills_the_cache_dir_and_reports_each_op(tmp_path):
    cache = tmp_path / "numba-cache"
    done = _warm(cache, "--ops", *OPS, "--jobs", "1")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    reported = {r[0]: r for r in rows if r and r[0] in OPS}
    assert set(reported) == set(OPS)
    assert all(r[2] == "ok" and float(r[1]) >= 0 for r in reported.values())
    assert "2 ops warmed" in done.stdout and str(cache) in done.stdout
    for name in OPS:
        assert f"] {name} " in done.stderr
    assert list(cache.rglob("*.nbi")) and list(cache.rglob("*.nbc"))


def test_jobs_in_workers_warm_the_same_ops(tmp_path):
    done = _warm(tmp_path / "cache", "--ops", *OPS, "--jobs", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert all(any(line.startswith(f"{n} ") for line in done.stdout.splitlines()) for n in OPS)


def test_an_unknown_op_pattern_is_a_usage_error(capsys):
    assert main(["warm", "--ops", "no.such.op*"]) == 2
    err = capsys.readouterr().err
    assert err == "crucible-spec: no op matches no.such.op* (see 'crucible-spec ops')\n"


def test_an_op_without_a_numba_kernel_is_not_selected(capsys):
    from crucible_spec import load_all
    from crucible_spec.spec.core.registry import REGISTRY

    load_all()
    without = sorted(set(REGISTRY.ops) - set(REGISTRY.kernels["numba"]))
    if not without:
        pytest.skip("every op has a numba kernel")
    assert main(["warm", "--ops", without[0]]) == 2


def test_a_failing_kernel_is_named_and_exits_1(monkeypatch, capsys):
    monkeypatch.setattr(warm, "warm_op", lambda name: (name, 0.0, "RuntimeError: planted"))
    assert main(["warm", "--ops", "hash.fmix64", "--jobs", "1"]) == 1
    captured = capsys.readouterr()
    assert "crucible-spec: warm: hash.fmix64 failed: RuntimeError: planted" in captured.err
    assert "failed" in captured.out

TOUCHED = ["trace.build", "plan.compute", "dag.content_hash", "layout.decode", "crtrace.decode",
           "cdag.decode"]
"""Ops whose kernels had arguments typed two ways (strided or read-only arrays, literals)."""


@pytest.mark.parametrize("name", OPS + TOUCHED)
def test_warm_batches_are_answered_by_the_kernel_as_by_the_reference(name):
    from crucible_spec import load_all
    from crucible_spec.engine import Implementation
    from crucible_spec.spec.core.errors import SpecError
    from crucible_spec.spec.core.registry import REGISTRY

    load_all()
    op = REGISTRY.ops[name]
    batches = warm.warm_batches(op)
    assert batches and all(batches)
    for items in batches:
        try:
            want = Implementation("reference").run_batch(op, items)
        except SpecError:
            continue
        got = Implementation("numba").run_batch(op, items)
        assert [op.result.encode(r) for r in got] == [op.result.encode(r) for r in want]


def test_each_kernel_entry_has_one_signature_after_every_path():
    """In a fresh interpreter (other tests may call these kernels with other array types), run
    every touched op on its bench and edge inputs, then the dag and pipeline ops that reach the
    same kernels: each entry point was compiled (or loaded) for one type only."""
    script = (
        "from crucible_spec import load_all; load_all()\n"
        "from crucible_spec.commands import warm\n"
        "from crucible_spec.fast.numba.core import layout\n"
        "from crucible_spec.fast.numba.crucible import build_trace, content_hash\n"
        f"for name in {[*TOUCHED, 'pipeline.run', 'cdag.encode', 'crtrace.encode']!r}:\n"
        "    assert warm.warm_op(name)[2] == '', name\n"
        "for fn in (build_trace.build_into, content_hash.content_into, layout.gather_into):\n"
        "    print(fn.__name__, len(fn.signatures))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600, check=True).stdout
    assert out.split() == ["build_into", "1", "content_into", "1", "gather_into", "1"], out
