"""Chapters 11 and 18 pinned by hand-worked cases: the regions replay reads off a pipeline run
(their ids and slots), find_alternate at the end of a cached region, the data pointer of an
external slot whose first reader recorded none, erratum E11.3's stated answers against the
live op, and the transaction log's default capacity (TransactionLog<16>). Every expected value
below is worked out from the spec's text or the facts."""

from __future__ import annotations

from ...engine import Implementation
from ...spec.core.errata import profile_errata
from ...spec.core.registry import REGISTRY, Mutant
from ...spec.crucible import context as ctx_
from ...spec.crucible import region_cache as cache_
from ...spec.crucible import replay_region as rr
from ...spec.crucible import transaction as tx
from ...spec.crucible import vigil as vg
from ...spec.crucible.iteration_detector import K
from ...spec.crucible.pipeline import run_pipeline
from ...spec.crucible.pool_allocator import Handle
from ...spec.crucible.replay_region import Guard, ReplayOp, ReplayPlan, ReplayRegion, ReplaySlot
from ...spec.crucible.trace_build_ops import recorded_ops
from ...spec.crucible.vigil_ops import chain_recording
from ...witness import answer, matches
from ..core.obligation import Property, property_obligation

# --- regions_of_run ---------------------------------------------------------------------------

SHAPES = [0x200 + i for i in range(8)]


def _run():
    """Five iterations of the 8-op chain (op i reads op i - 1's output), then K ops: each
    output is 1024 float32 elements, 4096 bytes."""
    rec = chain_recording(range(5), SHAPES, [1024] * 8, tail=K)
    return run_pipeline(recorded_ops(rec), None)


def _check_regions(case: int) -> None:
    """Region k of the run is named first_rid + k; its plan has the run's pool size and, per
    slot, the run's offset and the graph slot's size. By hand: op i's output lives from op i to
    op i + 1, so two 4096-byte buffers alternate: slot i at 4096 (i mod 2), pool 8192."""
    first_rid = case
    run = _run()
    regions = rr.regions_of_run(run) if first_rid == 0 else rr.regions_of_run(run, first_rid)
    assert len(run.regions) >= 2 and len(regions) == len(run.regions)
    assert [r.rid for r in regions] == list(range(first_rid, first_rid + len(regions)))
    for r in regions:
        assert r.num_ops == 8
        assert r.plan == ReplayPlan(8192, [ReplaySlot(4096 * (i % 2), 4096) for i in range(8)])


# --- find_alternate ---------------------------------------------------------------------------

def _two_op(rid: int, second: int) -> ReplayRegion:
    """Op 0 has guard (1, 0), op 1 guard (second, 0); planned, so the cache sees both ops."""
    return ReplayRegion(rid, [ReplayOp(Guard(1, 0), [], [0]), ReplayOp(Guard(second, 0), [0], [1])],
                        ReplayPlan(512, [ReplaySlot(0, 256), ReplaySlot(256, 256)]), rid + 1)


def _check_alternate(case: tuple) -> None:
    """a (rid 0: guards 1, 2) then b (rid 1: guards 1, 3) are cached; b is the most recent."""
    pos, schema, exclude, want = case
    c = cache_.RegionCache()
    a, b = _two_op(0, 2), _two_op(1, 3)
    assert cache_.insert(c, a) and cache_.insert(c, b)
    ex = {None: None, 0: a, 1: b}[exclude]
    got = cache_.find_alternate(c, pos, Guard(schema, 0), ex)
    assert (None if got is None else got.rid) == want, (case, got)


ALTERNATE_CASES = (
    (2, 1, None, None),  # pos 2 is past both regions' 2 ops: no entry has an op there
    (3, 1, None, None),
    (1, 2, None, 0),  # b's op 1 is (3, 0); a's is (2, 0)
    (1, 3, 1, None),  # only b has (3, 0) at op 1, and b is excluded
    (0, 1, None, 1),  # both have (1, 0) at op 0: the most recent, b
    (0, 1, 1, 0),
)

# --- register_externals_from_region -----------------------------------------------------------


def _check_externals(case: str) -> None:
    """Slot 1 is external. Op 0 reads it with no recorded pointer (its input_ptrs is empty),
    so the scan goes on; op 1 reads it at input 0 with pointer 0x30. Op 2 reads slots 0 and 1
    with one pointer (0x40, for slot 0): slot 1 has none there. Slot 1 takes 0x30."""
    slots = [ReplaySlot(0, 256), ReplaySlot(0, 8, True)]
    ops = [ReplayOp(Guard(5, 0), [1], [0], []),
           ReplayOp(Guard(6, 0), [1], [0], [0x30]),
           ReplayOp(Guard(7, 0), [0, 1], [0], [0x40])]
    r = ReplayRegion(0, ops if case == "first reader without a pointer" else ops[2:],
                     ReplayPlan(256, slots), 9)
    v = vg.Vigil()
    assert ctx_.activate(v.ctx, r)
    vg.register_externals_from_region(v, r)
    want = Handle("external", 0x30) if case == "first reader without a pointer" else None
    assert v.ctx.pool.table == [Handle("pool", 0), want], v.ctx.pool.table


@property_obligation(
    "PO11.180",
    "The regions replay reads off a pipeline run are named first_rid + k in run order and take "
    "each slot's offset from the run's plan and its size from the graph; find_alternate skips "
    "an entry whose visible ops end at or before the divergence position; an external slot "
    "whose reading op recorded no pointer at that input is left for a later reader",
    covers=("vigil.dispatch", "region_cache.simulate"), subject=rr.regions_of_run,
    mutants=(
        Mutant.edit("rid-minus", "region k is named first_rid - k", rr.regions_of_run,
                    "first_rid + k", "first_rid - k"),
        Mutant.edit("slot-fields-swapped", "a slot's offset and size are swapped",
                    rr.replay_region_of, "ReplaySlot(plan.offsets[s], slot.nbytes,",
                    "ReplaySlot(slot.nbytes, plan.offsets[s],"),
        Mutant.edit("alternate-at-end", "find_alternate reads op pos when pos == num_ops",
                    cache_.find_alternate, "pos >= c.num_ops[idx]", "pos > c.num_ops[idx]"),
        Mutant.edit("externals-bound", "an input past the recorded pointers is read",
                    vg.register_externals_from_region, "if j < len(op.input_ptrs)",
                    "if j <= len(op.input_ptrs)"),
    ))
def region_reads_pinned(subject) -> list[Property]:
    return [Property("regions of a run", _check_regions, cases=lambda: (0, 5)),
            Property("find_alternate", _check_alternate, cases=lambda: ALTERNATE_CASES),
            Property("externals", _check_externals, cases=lambda: (
                "first reader without a pointer", "only a reader past its pointers"))]


# --- E11.3's witness answers ------------------------------------------------------------------


def _check_witness(case: str) -> None:
    """E11.3's witness: activate region 0, advance op 0 (schema 0x1: a MATCH, status 0, whose
    output is slot 0 at pool offset 0 and which has no inputs), switch to region 1 at pos 1:
    op 0's slot 0 moves to slot 0, 2048 bytes into 256 under the seed, min = 256 under the
    spec. _witness_results(n) must be what context.simulate answers, with nbytes n."""
    e = REGISTRY.errata[ctx_.E11_3]
    errata, nbytes = {"spec": (frozenset(), 256), "seed": (profile_errata(e.seed), 2048)}[case]
    stated = ctx_._witness_results(nbytes)
    assert stated[1] == {"status": 0, "outputs": [{"slot": 0, "offset": 0}], "inputs": []}
    assert stated[2]["migrations"] == [{"op": 0, "old_slot": 0, "new_slot": 0,
                                        "nbytes": nbytes}]
    got = answer(Implementation("reference", errata), "context.simulate", e.witness["args"])
    assert matches(got, {"results": stated}), (got, stated)


# --- TransactionLog<16> -----------------------------------------------------------------------


def _check_txlog(case: str) -> None:
    """A log made without a capacity (and Vigil's) holds 16 transactions (TransactionLog<N =
    16>); on a fresh one the 17th begin wraps to slot 0 and the count stays 16."""
    log = tx.TransactionLog() if case == "default" else vg.Vigil().tx_log
    assert log.capacity == 16 and len(log.entries) == 16
    slots = [tx.begin_tx(log, step) for step in range(17)]
    assert slots == [*range(16), 0] and log.count == 16


@property_obligation(
    "PO11.181",
    "Erratum E11.3's stated answers are what context.simulate answers on its witness under "
    "each profile (a MATCH on op 0, slot 0 at offset 0, then a migration of op 0's slot 0 to "
    "slot 0 of 256 bytes, 2048 under the seed); a transaction log made without a capacity, "
    "Vigil's included, holds 16 transactions",
    covers=("context.simulate", "vigil.dispatch", "txlog.simulate"),
    subject=ctx_._witness_results,
    mutants=(
        Mutant.edit("status-1", "the stated advance status is 1", ctx_._witness_results,
                    '{"status": 0,', '{"status": 1,'),
        Mutant.edit("out-slot-1", "the stated output slot is 1", ctx_._witness_results,
                    '[{"slot": 0,', '[{"slot": 1,'),
        Mutant.edit("op-1", "the stated migration is op 1's", ctx_._witness_results,
                    '[{"op": 0,', '[{"op": 1,'),
        Mutant.edit("capacity-15", "the default capacity is 15", tx.default_txlog_capacity,
                    "return TXLOG_CAPACITY", "return TXLOG_CAPACITY - 1"),
        Mutant.edit("capacity-17", "the default capacity is 17", tx.default_txlog_capacity,
                    "return TXLOG_CAPACITY", "return TXLOG_CAPACITY + 1"),
        Mutant.edit("capacity-32", "the default capacity is 32", tx.default_txlog_capacity,
                    "return TXLOG_CAPACITY", "return TXLOG_CAPACITY * 2"),
    ))
def stated_answers_pinned(subject) -> list[Property]:
    return [Property("E11.3 witness", _check_witness, cases=lambda: ("spec", "seed")),
            Property("txlog capacity", _check_txlog, cases=lambda: ("default", "vigil"))]
