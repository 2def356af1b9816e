"""One policy for every output file: a FIFO, socket or directory is never replaced (not even with
--force); a report is kept unless --force, as a trace is; the file gets the mode the umask gives;
a write that cannot fit is refused first; a killed write leaves nothing behind; '-' is stdout
where the format allows."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

import pytest

from crucible_spec.cli import main
from crucible_spec.commands import common, synth
from crucible_spec.spec.crucible.crtrace import write_crtrace
from crucible_spec.synthetic import synthetic_trace

OUT = "{OUT}"

WRITERS = {
    "synth": ["synth", "--ops", "60", "-o", OUT],
    "record": ["record", "examples/mlp.py", "-o", OUT],
    "render": ["render", "missing.crtrace", "-o", OUT],
    "bench --json": ["bench", "--ops", "hash.fmix64", "--sizes", "10", "--json", OUT],
    "bench --plot": ["bench", "--ops", "hash.fmix64", "--sizes", "10", "--plot", OUT],
    "conform --report": ["conform", "--impl", "true", "--ops", "hash.fmix64", "--report", OUT],
    "conform --junit": ["conform", "--impl", "true", "--ops", "hash.fmix64", "--junit", OUT],
    "fuzz --report": ["fuzz", "--reader", "crtrace", "--seconds", "0.1", "--report", OUT],
    "prove --report": ["prove", "PO8.60", "--report", OUT],
    "mutate --report": ["mutate", "--functions", "no_such_function*", "--report", OUT],
    "torch-diff --json": ["torch-diff", "--ops", "kernel.add", "--json", OUT],
}
"""A command line of each command that writes a file, with the file to write."""


def _run(capsys, argv: list[str], target: Path) -> tuple[int, str]:
    code = main([str(target) if a == OUT else a for a in argv])
    return code, capsys.readouterr().err


def _one_line(err: str, *words: str) -> None:
    assert err.startswith("crucible-spec: ") and err.count("\n") == 1, err
    assert all(w in err for w in words), err


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_fifo_is_never_replaced_even_with_force(capsys, fifo, command):
    code, err = _run(capsys, [*WRITERS[command], "--force"], fifo)
    assert code == 2
    _one_line(err, str(fifo), "is a FIFO")
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_socket_and_a_directory_are_never_replaced(tmp_path, capsys):
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        code, err = _run(capsys, [*WRITERS["synth"], "--force"], path)
        assert code == 2
        _one_line(err, "is a socket")
        assert stat.S_ISSOCK(path.stat().st_mode)
    code, err = _run(capsys, [*WRITERS["conform --report"], "--force"], tmp_path)
    assert code == 2
    _one_line(err, "is a directory")


@pytest.mark.parametrize("command", sorted(set(WRITERS) - {"synth", "record", "render"}))
def test_a_report_is_kept_unless_force(tmp_path, capsys, command):
    """Reports follow the traces' rule: an existing file stays, one line says --force."""
    old = tmp_path / "old.json"
    old.write_text("precious")
    code, err = _run(capsys, WRITERS[command], old)
    assert code == 2
    _one_line(err, "exists", "--force")
    assert old.read_text() == "precious"


@pytest.mark.parametrize("command", ["conform --report", "bench --json", "fuzz --report"])
def test_a_report_to_stdout_is_refused_in_one_line(capsys, command):
    code, err = _run(capsys, WRITERS[command], Path("-"))
    assert code == 2
    _one_line(err, "standard output")


@pytest.mark.parametrize("mask,mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_the_file_mode_is_what_the_umask_gives(tmp_path, capsys, mask, mode):
    old = os.umask(mask)
    try:
        code, _ = _run(capsys, WRITERS["synth"], tmp_path / "t.crtrace")
        common.write_output(tmp_path / "r.json", b"{}", force=False)
    finally:
        os.umask(old)
    assert code == 0
    assert stat.S_IMODE((tmp_path / "t.crtrace").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == mode


def test_a_write_that_cannot_fit_is_refused_before_it_starts(tmp_path, capsys, monkeypatch):
    """60 ops of mlp are 30,329 bytes (the file's own size, below): 30,000 free is too few."""
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(common.shutil, "disk_usage", lambda path: usage(10**6, 970_000, 30_000))
    code, err = _run(capsys, WRITERS["synth"], tmp_path / "t.crtrace")
    assert code == 2
    _one_line(err, "needs 30329 bytes", "30000 free")
    assert list(tmp_path.iterdir()) == []
    assert len(write_crtrace(synthetic_trace(60, "mlp", 0))) == 30_329


def test_synth_writes_to_stdout_with_dash(capsysbinary):
    assert main(["synth", "--ops", "60", "-o", "-"]) == 0
    out, err = capsysbinary.readouterr()
    assert out == write_crtrace(synthetic_trace(60, "mlp", 0))
    assert err.startswith(b"synthesized mlp") and err.endswith(b"-> -\n")


def test_synth_shows_progress_while_it_writes_a_big_trace(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(synth, "PROGRESS_BYTES", 1)
    code, err = _run(capsys, WRITERS["synth"], tmp_path / "t.crtrace")
    assert code == 0
    assert "writing: 0% of 30329 bytes" in err and "writing: 100% of 30329 bytes" in err


def _interruptible() -> None:
    """The child takes SIGINT as a terminal's ^C, even where this run was started in the
    background, whose jobs inherit SIGINT ignored (and Python then keeps ignoring it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _killed_mid_write(tmp_path: Path, signum: int) -> int:
    """The exit status of a big synth sent `signum` once its temporary file holds bytes."""
    cmd = [sys.executable, "-m", "crucible_spec", "synth", "--ops", "3e6", "-o",
           str(tmp_path / "big.crtrace"), "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=_interruptible)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        tmp = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        if tmp and tmp[0].stat().st_size > 0:
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the write ended before it could be killed"
    proc.send_signal(signum)
    code = proc.wait(timeout=60)
    assert b"Traceback" not in proc.stderr.read()
    proc.stderr.close()
    return code


@pytest.mark.slow
@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 128 + 15), (signal.SIGINT, 130)])
def test_a_killed_write_leaves_no_file_behind(tmp_path, signum, code):
    assert _killed_mid_write(tmp_path, signum) == code
    assert list(tmp_path.iterdir()) == []
