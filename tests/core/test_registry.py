"""The registry is consistent: every op is whole, every reference resolves, ids are unique."""

from __future__ import annotations

import re

from crucible_spec.cli import main
from crucible_spec.spec.core.errata import FLAGS, SEEDS, profiles
from crucible_spec.spec.core.registry import BACKENDS, REGISTRY


def test_every_op_has_a_reference_and_known_kernels():
    for name in REGISTRY.ops:
        assert name in REGISTRY.references, name
    for b in BACKENDS:
        assert set(REGISTRY.kernels[b]) <= set(REGISTRY.ops)
    assert set(REGISTRY.references) <= set(REGISTRY.ops)


def test_obligations_and_errata_named_by_ops_exist():
    for name, op in REGISTRY.ops.items():
        assert set(op.obligations) <= set(REGISTRY.obligations), name
        assert set(op.errata) <= set(REGISTRY.errata), name
    for e in REGISTRY.errata.values():
        assert set(e.ops) <= set(REGISTRY.ops) and e.flag in FLAGS
        assert re.fullmatch(r"E\d+\.\d+", e.id)
    covered = {c for po in REGISTRY.obligations.values() for c in po.covers}
    assert {"hash.fmix64", "hash.fnv1a", "hash.wymix", "layout.info"} <= covered


def test_profiles():
    p = profiles()
    assert p["crucible"] == frozenset()
    assert "E8.1" in p["crucible@8d2680a2"]


def test_ops_table_has_no_implementation_holes(capsys):
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    for name in REGISTRY.ops:
        assert name in out
    table = out.split("\n\n")[0]
    assert "MISSING" not in table


def test_only_result_errata_make_a_fast_backend_fall_back():
    from crucible_spec.engine import Implementation
    from crucible_spec.spec.core.errata import profile_errata

    numba = Implementation("numba", profile_errata("crucible@8d2680a2"))
    not_applicable = {name for name, op in REGISTRY.ops.items() if "numba" in op.not_applicable}
    assert {"layout.info", "dag.merkle", "cipher.simulate", "txlog.simulate"} <= not_applicable
    unmodelled = {"hash.shape", "crtrace.decode", "metalog.simulate", "dag.content_hash",
                  "layout.decode", "layout.encode"}
    assert set(numba.fallbacks()) == not_applicable | unmodelled
    assert "E8.1" in numba.fallbacks()["hash.shape"]
    assert "E1.1" in numba.fallbacks()["layout.decode"]


def test_a_seed_profile_without_errata_is_not_offered(capsys, monkeypatch):
    offered = profiles()
    assert {"crucible", "crucible@8d2680a2", "pyc@fdf1563", "ringkernel@1.1.0"} <= set(offered)
    assert all(name in SEEDS.values() or name == "crucible" for name in offered)
    monkeypatch.setitem(SEEDS, "later", "later@2.0")
    assert main(["errata", "--profile", "later@2.0"]) == 2
    assert capsys.readouterr().err == (
        "crucible-spec: profile 'later@2.0' is not offered yet: its seed's chapters hold no "
        f"erratum; known: {', '.join(sorted(offered))}\n")
    assert main(["errata", "--profile", "nonsense"]) == 2
    assert "unknown profile 'nonsense'" in capsys.readouterr().err
