"""The hash, Merkle, alignment, memory-plan and replay obligations plant their mutants in the
spec's own code: every mutant is an edit of a spec function whose text is in that function,
never a replacement copy, and each obligation's check fails on every one of them."""

from __future__ import annotations

import pytest

from crucible_spec import load_all
from crucible_spec.proofs.core import patch, runner
from crucible_spec.spec.core.registry import REGISTRY

load_all()
IDS = [i for i in REGISTRY.obligations
       if REGISTRY.obligations[i].build.__module__.rsplit(".", 1)[-1]
       in ("hashing", "merkle", "alignment", "memory_plan", "replay")]


def test_the_obligations_are_found():
    assert {"PO1.1", "PO8.60", "PO9.61", "PO10.1", "PO10.61", "PO11.6"} <= set(IDS)


@pytest.mark.parametrize("po_id", IDS)
def test_every_mutant_is_an_edit_of_a_spec_function(po_id):
    for m in REGISTRY.obligations[po_id].mutants:
        assert m.target is not None, (po_id, m.name)
        assert patch.qualified_name(m.target).startswith("crucible_spec.spec."), m.name
        patch.edited_code(patch.unwrap(m.target), m.old, m.new, m.occurrence)


@pytest.mark.parametrize("po_id", ["PO8.60", "PO9.61", "PO10.61"])
def test_pinning_obligations_hold_and_kill_their_mutants(po_id, tmp_path):
    settings = runner.Settings(cache_root=tmp_path, use_cache=False)
    po = REGISTRY.obligations[po_id]
    assert runner.check_obligation(po, None, settings).status == runner.PROVED
    for m in po.mutants:
        assert runner.check_obligation(po, m.name, settings).verdict == runner.KILLED, m.name
