"""Every proof obligation is about the spec's own code: its subject is a spec object, and it
carries at least one mutant planted in a spec function (tests/core/test_prove.py checks that
every mutant is killed)."""

from __future__ import annotations

import types

import pytest

from crucible_spec.proofs.core import patch
from crucible_spec.spec.core.layout import Struct
from crucible_spec.spec.core.registry import REGISTRY

SPEC = "crucible_spec.spec"

WITNESSES_WITHOUT_EDIT = {
    "PO4.5": "a witness that the seed's 32-bit check wraps; its mutant is the exact check, "
             "which no one-token edit of the wrapping arithmetic expresses on bit-vectors",
}
"""Obligations whose only mutants replace the subject, each with the reason."""


def _spec_objects(subject) -> list:
    return list(subject) if isinstance(subject, tuple) else [subject]


def _is_spec(obj) -> bool:
    if isinstance(obj, types.FunctionType | type):
        return obj.__module__.startswith(SPEC)
    if isinstance(obj, tuple):
        return all(_is_spec(x) or isinstance(x, int | str | float) for x in obj)
    return type(obj).__module__.startswith(SPEC)


@pytest.mark.parametrize("po_id", sorted(REGISTRY.obligations))
def test_the_subject_is_a_spec_object(po_id):
    po = REGISTRY.obligations[po_id]
    assert all(_is_spec(x) for x in _spec_objects(po.subject)), po.subject


@pytest.mark.parametrize("po_id", sorted(REGISTRY.obligations))
def test_a_mutant_is_planted_in_the_spec_itself(po_id):
    po = REGISTRY.obligations[po_id]
    if isinstance(po.subject, Struct):
        # A layout's mutants are the declaration itself with members swapped, placed again
        # by the spec's own placement code.
        assert any(m.name == "swapped members" or m.target is not None for m in po.mutants)
        return
    edits = [m for m in po.mutants if m.target is not None]
    if po_id in WITNESSES_WITHOUT_EDIT:
        assert not edits, f"{po_id} has an edit mutant now: drop its exemption"
        return
    assert edits, f"{po_id}: every mutant replaces the subject; plant one in the spec instead"
    for m in edits:
        fn = patch.unwrap(m.target)
        assert fn.__module__.startswith(SPEC), f"{m.name}: {fn.__module__}"
        assert m.old in patch.source_of(fn).text, f"{m.name}: {m.old!r} is not in {fn}"
