"""Chapter 11 and 18 obligations: the replay modes, explored exhaustively at small bounds —
CrucibleContext, Vigil's foreground (dispatch, alignment, divergence, alternates, rollback), the
TransactionLog and the RegionCache. Each obligation's subject is the spec machine it explores;
every mutant is a bug planted in the spec code the machine steps (the engine, the context,
Vigil, the log, the cache)."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.crucible import context, region_cache, replay_engine, transaction, vigil
from ...spec.crucible.replay_machines import (
    alignment_machine,
    cache_machine,
    chain,
    context_machine,
    txlog_machine,
    vigil_machine,
)
from ...spec.crucible.replay_region import Guard
from ..core.obligation import model_obligation

G = {f"g{i}": Guard(0x100 + i, 0x200 + i) for i in range(4)}
ALPHABET = G | {"h2": Guard(0x102, 0x302), "x": Guard(0xBAD, 0x200),
                "s1": Guard(0x101, 0x201, 0x9)}
"""The ops of the region variants, a variant's op 2, a foreign op and op 1 from another scope."""

# --- bugs planted in the spec's replay code ---------------------------------------------------

MOVING_ADVANCE = Mutant.edit(
    "moving advance", "advance moves the cursor before it checks the guard, so a mismatch "
    "moves it too", replay_engine.advance,
    "    if guard_key(got, errata) != guard_key(e.expected, errata):  # 1. a guard fails: no "
    "move\n        return ReplayStatus.DIVERGED\n    e.current = e.cursor  # 2. matched\n"
    "    e.cursor += 1\n",
    "    e.current = e.cursor\n    e.cursor += 1\n"
    "    if guard_key(got, errata) != guard_key(e.expected, errata):\n"
    "        return ReplayStatus.DIVERGED\n")
COMPLETE_EARLY = Mutant.edit("complete one op early", "the pass completes when the cursor "
                             "reaches the last op, not the end", replay_engine.advance,
                             "if e.cursor == len(e.ops):", "if e.cursor == len(e.ops) - 1:")
NO_RESET = Mutant.edit("no reset", "a COMPLETE pass does not reset the engine",
                       context.advance, "engine_.reset(c.engine)", "pass")
DIVERGENCE_AS_ITERATION = Mutant.edit(
    "divergence counted as an iteration", "a DIVERGED advance bumps compiled_iterations",
    context.advance, "c.diverged_count += 1", "c.compiled_iterations += 1")
RECORDS_DIVERGENT_OP = Mutant.edit(
    "records divergent op", "the fallback records the op that diverged", vigil.handle_divergence,
    "    ctx_.deactivate(v.ctx)  # 5. fall back to recording; g is not recorded\n",
    "    ctx_.deactivate(v.ctx)\n    record_op(v, g)\n")
FALLBACK_STAYS_COMPILED = Mutant.edit(
    "fallback stays compiled", "the fallback does not deactivate the context",
    vigil.handle_divergence, "ctx_.deactivate(v.ctx)  # 5.", "pass  # 5.")
ALIGNING_OP_RECORDED = Mutant.edit(
    "aligning op recorded", "an op used to align with a published region is recorded too",
    vigil.dispatch_transition, "        try_align(v, g, errata)\n",
    "        record_op(v, g)\n        try_align(v, g, errata)\n")
THRESHOLD_K_MINUS_1 = Mutant.edit("threshold K - 1", "alignment compiles after K - 1 ops",
                                  vigil.try_align, "min(r.num_ops, ALIGNMENT_K)",
                                  "min(r.num_ops, ALIGNMENT_K - 1)")
THRESHOLD_ONE_LATE = Mutant.edit("threshold one late", "the threshold test is <= instead of <",
                                 vigil.try_align, "if v.alignment_pos < min(",
                                 "if v.alignment_pos <= min(")
SHORTEST_SUFFIX = Mutant.edit("shortest suffix", "alignment keeps the shortest suffix of the "
                              "stream that starts the region, not the longest",
                              vigil.alignment_step, "for n in range(len(seq), 0, -1):",
                              "for n in range(1, len(seq) + 1):")
NO_RESTART_AT_OP_0 = Mutant.edit("no restart at op 0", "a mismatch that is the region's op 0 "
                                 "is not kept as a new start", vigil.alignment_step,
                                 "for n in range(len(seq), 0, -1):",
                                 "for n in range(len(seq), 1, -1):")
BEGIN_UNMASKED = Mutant.edit("begin compares the unmasked head", "begin_tx compares the active "
                             "slot with the raw head, so once the log wraps it overwrites the "
                             "active transaction", transaction.begin_tx,
                             "log.active == log.head & mask", "log.active == log.head")
ROLLBACK_KEEPS_ACTIVE = Mutant.edit(
    "rollback keeps active", "rollback does not mark the active one ROLLED_BACK",
    transaction.rollback, "    if log.active is not None:\n"
    "        log.entries[log.active].status = TxStatus.ROLLED_BACK\n", "")
ACTIVATE_KEEPS_OLD = Mutant.edit("activate keeps the old one", "activate does not supersede "
                                 "the active transaction", transaction.activate,
                                 "log.entries[old].status = TxStatus.SUPERSEDED", "pass")
ROLLBACK_KEEPS_ALIGNING = Mutant.edit(
    "rollback keeps aligning", "rollback drops a pending region but keeps the one aligning "
    "(E11.6 in part)", vigil.rollback, "v.pending_region = v.pending_activation = None",
    "v.pending_region = None")
ROLLBACK_LOG_ONLY = Mutant.edit(
    "rollback log only", "rollback does not re-activate the context on the restored region",
    vigil.rollback, "        if ctx_.activate(v.ctx, r):  # 4\n"
    "            register_externals_from_region(v, r)\n", "")
DEDUP_NEWEST_ONLY = Mutant.edit("dedup newest only", "find looks at the newest entry only",
                                region_cache.find, "for idx in mru(c):",
                                "for idx in mru(c)[:1]:")
COUNT_UNCAPPED = Mutant.edit("count uncapped", "count grows past the capacity",
                             region_cache.insert, "c.count = min(c.count + 1, c.capacity)",
                             "c.count = c.count + 1")


@model_obligation(
    "PO11.1",
    "CrucibleContext over a 3-op and a 2-op region (activate either, deactivate, advance any "
    "of 6 ops): no step fails its precondition; DIVERGED leaves "
    "the cursor and counts one divergence; MATCH moves the cursor by one; COMPLETE counts one "
    "pass and leaves cursor 0 with the last op current; the counters never decrease.",
    covers=("replay.engine", "context.simulate", "vigil.dispatch", "CrucibleContext"),
    subject=context_machine,
    mutants=(MOVING_ADVANCE, COMPLETE_EARLY, NO_RESET, DIVERGENCE_AS_ITERATION),
)
def context_modes(machine):
    alphabet = {k: ALPHABET[k] for k in ("g0", "g1", "g2", "g3", "x", "s1")}
    return [machine([chain(0, [G["g0"], G["g1"], G["g2"]]), chain(1, [G["g0"], G["g3"]])],
                    alphabet)]


def _regions():
    return [chain(0, [G[f"g{i}"] for i in range(4)]),
            chain(1, [G["g0"], G["g1"], ALPHABET["h2"], G["g3"]]),
            chain(2, [G["g0"], G["g1"]], planned=False)]


@model_obligation(
    "PO11.2",
    "Vigil's foreground, every interleaving of dispatches (7 ops) and up to 3 publications of "
    "3 regions (two variants sharing a prefix, one without a plan): no dispatch fails a "
    "precondition (no stuck state); a COMPILED decision never names an op whose guard differs "
    "from the dispatched one; a DIVERGED decision is RECORD with the context in RECORD and the "
    "op not recorded; replayed and aligning ops are never recorded; the context is compiled "
    "exactly when a region is active.",
    covers=("vigil.dispatch", "Vigil"),
    subject=vigil_machine,
    mutants=(RECORDS_DIVERGENT_OP, FALLBACK_STAYS_COMPILED, ALIGNING_OP_RECORDED),
    timeout_s=300.0,
)
def vigil_modes(machine):
    return [machine(_regions(), ALPHABET, 3)]


_A, _B, _C, _X = Guard(1, 0), Guard(2, 0), Guard(3, 0), Guard(9, 0)


@model_obligation(
    "PO11.3",
    "Alignment: after a region is published, the context compiles exactly at the first op "
    "that ends a run of min(K, n) ops equal to the region's first ones (K = 5; a 6-op region "
    "a b a b c a with overlapping starts, and a 3-op one), never earlier, and the engine is "
    "then at min(K, n) mod n.",
    covers=("vigil.dispatch",),
    subject=alignment_machine,
    mutants=(THRESHOLD_K_MINUS_1, THRESHOLD_ONE_LATE, SHORTEST_SUFFIX, NO_RESTART_AT_OP_0),
)
def alignment_threshold(machine):
    alphabet = {"a": _A, "b": _B, "c": _C, "x": _X}
    return [machine(chain(0, [_A, _B, _A, _B, _C, _A]), alphabet),
            machine(chain(0, [_A, _A, _B]), alphabet)]


@model_obligation(
    "PO11.4",
    "TransactionLog<2> and <4>, every sequence of begin, commit, activate and rollback: at most "
    "one transaction is ACTIVE, and active() names it.",
    covers=("txlog.simulate", "TransactionLog"),
    subject=txlog_machine,
    mutants=(BEGIN_UNMASKED, ROLLBACK_KEEPS_ACTIVE, ACTIVATE_KEEPS_OLD),
)
def txlog_one_active(machine):
    return [machine(c) for c in (2, 4)]


@model_obligation(
    "PO11.6",
    "Vigil's foreground with its TransactionLog, every interleaving of dispatches (7 ops), up "
    "to 2 publications of 3 regions and a rollback: no step is stuck; the invariants of PO11.2 "
    "hold; after a rollback the context replays the restored transaction's region when that "
    "has a plan (RECORD otherwise); at most one transaction is ACTIVE and active() names it.",
    covers=("vigil.dispatch", "Vigil", "TransactionLog"),
    subject=vigil_machine,
    mutants=(ROLLBACK_KEEPS_ALIGNING, ROLLBACK_LOG_ONLY, ROLLBACK_KEEPS_ACTIVE),
    timeout_s=300.0,
)
def vigil_rollback(machine):
    return [machine(_regions(), ALPHABET, 2, rollbacks=1)]


@model_obligation(
    "PO11.5",
    "RegionCache at capacities 2 and 4, every sequence of inserts of regions whose content "
    "hashes repeat: no two entries share a content hash, and at most capacity are held.",
    covers=("region_cache.simulate", "RegionCache"),
    subject=cache_machine,
    mutants=(DEDUP_NEWEST_ONLY, COUNT_UNCAPPED),
)
def cache_unique(machine):
    return [machine(2, [1, 2, 3, 1]), machine(4, [1, 2, 3, 1, 4, 5])]
