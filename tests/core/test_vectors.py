"""The conformance vectors: deterministic generation, verification, and every op covered."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from crucible_spec.cli import main
from crucible_spec.conformance import golden, vectors
from crucible_spec.spec.core.registry import REGISTRY

TWO_PROFILES = ("crucible", "crucible@8d2680a2")
"""The default profile and the seed's: generation is one code path for every profile, and the
bundled suite of every profile is verified below."""


@pytest.mark.slow(seconds=150)
def test_two_generations_are_byte_identical_and_verify(tmp_path):
    """One generation in this process, one in a fresh process with another hash seed."""
    a, b = tmp_path / "a", tmp_path / "b"
    for profile in TWO_PROFILES:
        vectors.generate(a, profile, per_op=8)
    code = ("import sys; from pathlib import Path; import crucible_spec; crucible_spec.load_all();"
            "from crucible_spec.conformance import vectors;"
            f"[vectors.generate(Path(sys.argv[1]), p, per_op=8) for p in {TWO_PROFILES!r}]")
    subprocess.run([sys.executable, "-c", code, str(b)], check=True,
                   env={"PYTHONHASHSEED": "2"})
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    for profile in TWO_PROFILES:
        assert vectors.verify(a, profile) == []


@pytest.mark.parametrize("profile", [
    pytest.param(p, marks=pytest.mark.slow(seconds=80 if p == vectors.BASE_PROFILE else 15))
    for p in vectors.vector_profiles()])
def test_the_bundled_suite_verifies_and_covers_every_op(profile):
    """One test per profile, so that the profiles' suites are verified on every worker. The
    default suite's test verifies the files an overlay shares with it."""
    assert vectors.verify(vectors.VECTORS_DIR, profile, base_verified=True) == []
    assert set(vectors.load(vectors.VECTORS_DIR, profile)) == set(REGISTRY.ops)


def test_the_bundled_suites_fit_their_size_bound():
    size = sum(p.stat().st_size for p in vectors.VECTORS_DIR.rglob("*") if p.is_file())
    assert size < 7 * 2**20, size


def test_golden_values_keep_their_provenance():
    suite = vectors.load(vectors.VECTORS_DIR, golden.PROFILE)
    shape = [c for c in suite["hash.shape"] if c.source == golden.PROVENANCE]
    assert len(shape) == len([g for g in golden.cases() if g.op == "hash.shape"])
    witness = [c for c in suite["hash.shape"] if c.args == {"shapes": [[]]}]
    assert witness[0].result == {"out": "0xcbf29ce484222325"}
    default = vectors.load(vectors.VECTORS_DIR, "crucible")["hash.shape"]
    assert next(c for c in default if c.args == {"shapes": [[]]}).result == \
        {"out": "0xaf63bd4c8601b7df"}


@pytest.mark.slow(seconds=80)
def test_verify_catches_tampering(tmp_path):
    vectors.generate(tmp_path, "crucible", per_op=4)
    path = tmp_path / "crucible" / "8" / "hash.fmix64.jsonl"
    lines = path.read_text().splitlines()
    case = json.loads(lines[0])
    case["result"]["out"] = "0x0000000000000001"
    path.write_text("\n".join([json.dumps(case), *lines[1:]]) + "\n")
    problems = vectors.verify(tmp_path, "crucible")
    assert any("sha256" in p for p in problems)
    assert any("the reference now answers" in p for p in problems)
    (tmp_path / "crucible" / "8" / "hash.wymix.jsonl").unlink()
    assert any("missing" in p for p in vectors.verify(tmp_path, "crucible"))


@pytest.mark.slow(seconds=90)
def test_vectors_cli(tmp_path, capsys):
    profile = ["--profile", "crucible@8d2680a2"]
    assert main(["vectors", "generate", "--out", str(tmp_path), "--count", "4", *profile]) == 0
    assert main(["vectors", "verify", "--dir", str(tmp_path), *profile]) == 0
    assert "crucible@8d2680a2: ok" in capsys.readouterr().out
    assert main(["vectors", "verify", "--dir", str(tmp_path / "nothing")]) == 1
