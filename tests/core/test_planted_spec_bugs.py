"""Bugs planted in the spec's own ring, MetaLog, Cipher and arena code are caught by the proof
obligations alone: each obligation proves on the spec as it stands and is refuted once the
bug is in place."""

from __future__ import annotations

import pytest

from crucible_spec.proofs.core import patch, runner
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible import arena, cdag, meta_log, ring_protocol, trace_ring

PLANTED = [
    ("PO4.3", trace_ring.looks_full, ">=", ">"),
    ("PO4.3", trace_ring.drain_step, "min(r.head - t, d.max_count)", "d.max_count"),
    ("PO4.6", meta_log.fits_exact, "+ n <= capacity", "+ n <= capacity + 1"),
    ("PO4.6", ring_protocol.read_step, "count=meta_log.used(m)", "count=meta_log.used(m) + 1"),
    ("PO18.1", cdag.serial_estimate, "size += 40 +", "size += 41 +"),
    ("PO3.10", arena.arena_alloc, "off + size, new_size", "off, new_size"),
]


@pytest.fixture
def settings(tmp_path):
    return runner.Settings(cache_root=tmp_path / "cache", use_cache=False)


@pytest.mark.parametrize("po", sorted({p[0] for p in PLANTED}))
def test_the_obligation_proves_on_the_spec(po, settings):
    assert runner.check_obligation(REGISTRY.obligations[po], None, settings).status == \
        runner.PROVED


@pytest.mark.parametrize(("po", "fn", "old", "new"), PLANTED,
                         ids=[f"{p[0]}:{p[1].__name__}" for p in PLANTED])
def test_a_planted_bug_is_refuted(po, fn, old, new, settings):
    with patch.edited(fn, old, new):
        out = runner.check_obligation(REGISTRY.obligations[po], None, settings)
    assert out.status == runner.REFUTED, out
