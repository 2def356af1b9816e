"""Output files are never lost: `record -o` and `synth -o` keep an existing file unless
--force and write through a temporary file renamed into place; `vectors generate --out DIR`
deletes stale files only from a directory it created or one holding its manifest."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from crucible_spec.cli import main
from crucible_spec.commands import common
from crucible_spec.conformance import vectors
from crucible_spec.spec.crucible.crtrace import write_crtrace
from crucible_spec.synthetic import synthetic_trace

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SYNTH = ["synth", "--ops", "60", "-o"]


def _one_line_error(capsys, command: str, *words: str) -> None:
    err = capsys.readouterr().err
    assert err.startswith("crucible-spec: ") and err.count("\n") == 1, (command, err)
    assert all(w in err for w in words), err


def test_record_refuses_to_replace_its_own_script(tmp_path, capsys):
    """The issue's case, on a copy: `record mlp.py -o mlp.py` leaves the script as it was."""
    script = tmp_path / "mlp.py"
    shutil.copy(EXAMPLES / "mlp.py", script)
    before = script.read_bytes()
    assert main(["record", str(script), "-o", str(script)]) == 2
    _one_line_error(capsys, "record", str(script), "--force")
    assert script.read_bytes() == before


def test_synth_refuses_an_existing_file_and_replaces_it_with_force(tmp_path, capsys):
    out = tmp_path / "t.crtrace"
    out.write_bytes(b"precious")
    assert main([*SYNTH, str(out)]) == 2
    _one_line_error(capsys, "synth", "exists", "--force")
    assert out.read_bytes() == b"precious"
    assert main([*SYNTH, str(out), "--force"]) == 0
    assert out.read_bytes() == write_crtrace(synthetic_trace(60, "mlp", 0))
    assert [p.name for p in tmp_path.iterdir()] == ["t.crtrace"]


def test_synth_refuses_a_directory(tmp_path, capsys):
    assert main([*SYNTH, str(tmp_path), "--force"]) == 2
    _one_line_error(capsys, "synth", "is a directory")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    """The bytes go to a temporary file renamed over the target: if the rename fails, the
    old file is intact and the temporary is gone."""
    out = tmp_path / "t.crtrace"
    out.write_bytes(b"old")

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(common.UsageError, match=r"cannot write .*No space left"):
        common.write_output(out, b"new", force=True)
    assert out.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.crtrace"]


def test_the_new_file_appears_whole_by_rename(tmp_path, monkeypatch):
    """write_output renames a complete temporary file in the same directory onto the target."""
    out = tmp_path / "t.bin"
    renames = []
    real_replace = os.replace

    def spy(src, dst):
        renames.append((Path(src).parent, Path(src).read_bytes(), Path(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    common.write_output(out, b"whole", force=False)
    assert renames == [(tmp_path, b"whole", out)]
    assert out.read_bytes() == b"whole"


@pytest.mark.slow(seconds=25)
def test_vectors_generate_keeps_files_it_does_not_own(tmp_path, capsys):
    """--out into a directory that holds someone's .jsonl files and no manifest: they stay."""
    theirs = tmp_path / "crucible" / "8" / "notes.jsonl"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("mine\n")
    assert main(["vectors", "generate", "--out", str(tmp_path), "--profile", "crucible",
                 "--count", "1"]) == 0
    assert theirs.read_text() == "mine\n"
    assert f"kept {theirs}" in capsys.readouterr().err


@pytest.mark.slow(seconds=50)
def test_vectors_generate_still_cleans_its_own_suite(tmp_path):
    """A directory holding the manifest is a suite of ours: a stale op file goes."""
    vectors.generate(tmp_path, "crucible", per_op=1)
    stale = tmp_path / "crucible" / "8" / "hash.retired.jsonl"
    stale.write_text("{}\n")
    vectors.generate(tmp_path, "crucible", per_op=1)
    assert not stale.exists()
