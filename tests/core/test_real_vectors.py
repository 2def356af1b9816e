"""The real-code vectors: every faithful profile answers what the seed's real code answered,
on every backend; the default profile departs from it only where an erratum says so; and the
fill plumbing stores exactly what an adapter answers."""

from __future__ import annotations

import json
import lzma
import sys
import textwrap

import pytest

from crucible_spec.cli import main
from crucible_spec.conformance import real_vectors
from crucible_spec.spec.core.errata import profile_errata

PROFILES = real_vectors.real_profiles()


def test_every_seed_has_real_vectors():
    assert {p.split("@")[0] for p in PROFILES} >= {"crucible", "pyc", "ringkernel", "vyre"}


@pytest.mark.slow
@pytest.mark.parametrize("backend", real_vectors.BACKENDS)
@pytest.mark.parametrize("profile", PROFILES)
def test_the_faithful_profile_answers_what_the_real_code_answered(profile, backend):
    cases = real_vectors.load(profile)
    assert len(cases) >= 300
    found = real_vectors.check(profile, backend)
    assert not found, "\n".join(m.describe() for m in found[:20])


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
def test_the_default_profile_departs_only_where_an_erratum_says(profile):
    _, unexplained = real_vectors.explain(profile)
    assert not unexplained, "\n".join(m.describe() for m in unexplained[:20])


@pytest.mark.slow(seconds=100)
def test_turning_off_a_faithful_rule_fails_the_check():
    """A planted change to a faithful rule: the errata that explain a divergence of the
    default profile from the real code, turned off, make the check fail (in every seed whose
    real code departs from the default profile somewhere)."""
    departing = set()
    for profile in PROFILES:
        explained, _ = real_vectors.explain(profile)
        ops: dict[tuple[str, ...], set[str]] = {}
        for m in explained:
            op = m.id.rsplit(":", 1)[0].rsplit("/", 1)[1].removesuffix(".jsonl")
            ops.setdefault(m.explained_by, set()).add(op)
        for errata, names in sorted(ops.items()):
            departing.add(profile.split("@")[0])
            found = real_vectors.check(profile, errata=profile_errata(profile) - set(errata),
                                       ops=names)
            assert found, f"{profile} without {', '.join(errata)} still agrees with the real code"
    assert departing >= {"crucible", "pyc", "ringkernel", "vyre", "symplex"}


FAKE = textwrap.dedent('''
    import json, sys
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "hello":
            res = {"ok": True, "result": {"impl": "fake", "profile": "crucible@8d2680a2",
                   "ops": ["hello", "hash.fmix64"], "build": "none"}}
        elif req["args"]["x"] == "0x0":
            res = {"ok": False, "error": {"code": "unsupported", "message": "zero"}}
        elif req["args"]["x"] == "0xffffffffffffffff":
            res = {"ok": False, "error": {"code": "resource_limit", "message": "too big"}}
        elif req["args"]["x"] == "0x1":
            res = {"ok": False, "error": {"code": "invalid_input", "message": "one"}}
        else:
            res = {"ok": True, "result": {"out": "0x2a"}}
        print(json.dumps({"id": req["id"], **res}), flush=True)
''')


def test_fill_stores_what_the_adapter_answered(tmp_path, capsys):
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)
    out = tmp_path / "rv"
    out.mkdir()
    assert main(["real", "fill", "-q", "--profile", "crucible@8d2680a2", "--impl",
                 f"{sys.executable} {fake}", "--count", "5", "--out", str(out)]) == 0
    base = out / "crucible@8d2680a2"
    manifest = json.loads((base / "manifest.json").read_text())
    info = manifest["files"]["8/hash.fmix64.jsonl"]
    assert info["unsupported"] == {"zero": 1, "resource_limit: too big": 1}
    assert manifest["seed"] == {"impl": "fake", "build": "none"}
    assert "--impl ADAPTER" in info["command"] and info["generated_per_op"] == 5
    assert not (base / "8/hash.fmix64.jsonl").exists()
    data = lzma.decompress((base / "8/hash.fmix64.jsonl.xz").read_bytes())
    lines = [json.loads(x) for x in data.decode().splitlines()]
    assert len(lines) == info["count"] > 0
    assert all(x["args"]["x"] not in ("0x0", "0xffffffffffffffff") for x in lines)
    for x in lines:
        one = x["args"]["x"] == "0x1"
        want = {"error": "invalid_input"} if one else {"result": {"out": "0x2a"}}
        assert {k: x[k] for k in ("error", "result") if k in x} == want
    capsys.readouterr()
    assert main(["real", "check", "--dir", str(out)]) == 1
    report = capsys.readouterr().out
    assert "crucible@8d2680a2/8/hash.fmix64.jsonl:1: result.out: real '0x2a'" in report


def test_fill_refuses_an_adapter_of_another_profile(tmp_path, capsys):
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)
    assert main(["real", "fill", "--profile", "pyc@fdf1563", "--impl",
                 f"{sys.executable} {fake}", "--out", str(tmp_path)]) == 2
    assert "not 'pyc@fdf1563'" in capsys.readouterr().err
