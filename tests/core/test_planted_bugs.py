"""Ten plausible bugs planted in the spec, one at a time: each makes `crucible-spec prove`
fail (one of its obligations is refuted) with no help from vectors or tests. The first five
are the ones a reviewer planted; the rest are typical slips in hashing, Philox, storage spans
and the content-hash fold."""

from __future__ import annotations

import fnmatch
from dataclasses import replace

import pytest

from crucible_spec.proofs.core import mutation, patch, runner
from crucible_spec.spec.core.layout import place
from crucible_spec.spec.core.registry import REGISTRY, po_sort_key
from crucible_spec.spec.crucible import (
    cdag,
    content_hash,
    hashing,
    iteration_detector,
    memory_plan,
    philox,
    tensor_meta,
    trace_ring,
)


def _edit(fn, old: str, new: str):
    return lambda: patch.edited(fn, old, new)


def _constant(name: str, new: int):
    """hashing.NAME = new, in every module that imported it."""
    old = getattr(hashing, name)
    return lambda: mutation.constant_planted(
        f"{hashing.__name__}:{name}@+0:0 const {old}->{new}")


BUGS = {
    "planner without 256-byte alignment": (
        _edit(memory_plan.align256, "(n + ALIGNMENT - 1) & ~(ALIGNMENT - 1)", "n"), "PO10.*"),
    "detector restart bound K-1 -> K-2": (
        _edit(iteration_detector.restart, "K - 1", "K - 2"), "PO7.*"),
    "TraceRing full check >= -> >": (
        _edit(trace_ring.looks_full, ">= capacity", "> capacity"), "PO4.*"),
    "Cipher counts 41 bytes per op": (
        _edit(cdag.serial_estimate, "size += 40 +", "size += 41 +"), "PO18.*"),
    "fmix64 shifts by 32": (_constant("FMIX64_SHIFT", 32), "PO8.*"),
    "FNV prime mistyped": (_constant("FNV_PRIME", 0x100000001B5), "PO8.*"),
    "Philox round xors key[1] into both words": (
        _edit(philox.philox_round, "ctr[1] ^ key[0]", "ctr[1] ^ key[1]"), "PO17.*"),
    "storage span without its last element": (
        _edit(tensor_meta.compute_storage_nbytes, "max_offset - min_offset + 1",
              "max_offset - min_offset"), "PO5.*"),
    "content hash folds the ops in reverse": (
        _edit(content_hash.compute_content_hash, "for op in ops:",
              "for op in reversed(ops):"), "PO9.*"),
}


def _first_refuted(pattern: str, settings: runner.Settings) -> str | None:
    """The first obligation matching `pattern` (in id order) that is refuted, or None."""
    ids = sorted((i for i in REGISTRY.obligations if fnmatch.fnmatch(i, pattern)),
                 key=po_sort_key)
    assert ids, pattern
    for po_id in ids:
        if runner.check_obligation(REGISTRY.obligations[po_id], None, settings).status == \
                runner.REFUTED:
            return po_id
    return None


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return runner.Settings(tmp_path_factory.mktemp("cache"), use_cache=True, jobs=2)


@pytest.mark.parametrize("bug", sorted(BUGS))
@pytest.mark.slow
def test_the_bug_is_killed_by_prove_alone(bug, settings):
    plant, chapter = BUGS[bug]  # without the bug every obligation proves (test_prove.py)
    with plant():
        assert _first_refuted(chapter, replace(settings, variant=bug)) is not None


def test_kernel_cache_capacity_and_size_swapped_is_killed_by_prove_alone(settings):
    s = REGISTRY.layout("KernelCache")
    table, capacity, size = s.members
    members = (table, size, capacity)
    laid = place(members)
    bug = replace(s, members=members, placed=laid.placed, size=laid.size, align=laid.align)
    po = next(po for po in REGISTRY.obligations.values() if po.subject is s)
    out = runner.check_obligation(replace(po, subject=bug), None, settings)
    assert out.status == runner.REFUTED
