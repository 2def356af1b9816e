"""Chapter 11 and 18 obligations: the replay modes, explored exhaustively at small bounds —
CrucibleContext, Vigil's foreground (dispatch, alignment, divergence, alternates, rollback), the
TransactionLog and the RegionCache. Mutants swap one spec function for a plausible bug while
the machine steps."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from unittest import mock

from ..spec import crucible_context, region_cache, replay_engine, transaction, vigil
from ..spec.machine import Machine
from ..spec.registry import Mutant
from ..spec.replay_engine import ReplayStatus
from ..spec.replay_machines import (
    alignment_machine,
    cache_machine,
    chain,
    context_machine,
    txlog_machine,
    vigil_machine,
)
from ..spec.replay_region import Guard
from ..spec.transaction import E18_9, TxStatus
from ..spec.vigil import E11_5, E11_6
from .obligation import model_obligation

G = {f"g{i}": Guard(0x100 + i, 0x200 + i) for i in range(4)}
ALPHABET = G | {"h2": Guard(0x102, 0x302), "x": Guard(0xBAD, 0x200),
                "s1": Guard(0x101, 0x201, 0x9)}
"""The ops of the region variants, a variant's op 2, a foreign op and op 1 from another scope."""


def patched(m: Machine, patches: dict[tuple[object, str], object]) -> Machine:
    """m whose steps run with the given module attributes swapped (a mutant)."""
    if not patches:
        return m

    def steps(s):
        with ExitStack() as stack:
            for (module, name), new in patches.items():
                stack.enter_context(mock.patch.object(module, name, new))
            return list(m.steps(s))

    return replace(m, steps=steps)


def _moving_advance(e, got, errata=frozenset()):
    """The bug: a mismatch still moves the cursor."""
    s = _ADVANCE(e, got, errata)
    if s == ReplayStatus.DIVERGED and e.cursor < len(e.ops) - 1:
        e.current, e.cursor = e.cursor, e.cursor + 1
        replay_engine.prime(e)
    return s


_ADVANCE = replay_engine.advance
_CONTEXT_BUGS = {"moving advance": {(replay_engine, "advance"): _moving_advance},
                 "no reset": {(replay_engine, "reset"): lambda e: None}}


@model_obligation(
    "PO11.1",
    "CrucibleContext over a 3-op and a 2-op region (activate either, deactivate, advance any "
    "of 6 ops): no step fails its precondition; DIVERGED leaves "
    "the cursor and counts one divergence; MATCH moves the cursor by one; COMPLETE counts one "
    "pass and leaves cursor 0 with the last op current; the counters never decrease.",
    covers=("replay.engine", "context.simulate", "vigil.dispatch", "CrucibleContext"),
    subject=None,
    mutants=(Mutant("moving advance", "advance moves the cursor on a mismatch",
                    "moving advance"),
             Mutant("no reset", "a COMPLETE pass does not reset the engine", "no reset")),
)
def context_modes(bug):
    alphabet = {k: ALPHABET[k] for k in ("g0", "g1", "g2", "g3", "x", "s1")}
    m = context_machine([chain(0, [G["g0"], G["g1"], G["g2"]]), chain(1, [G["g0"], G["g3"]])],
                        alphabet)
    return [patched(m, _CONTEXT_BUGS.get(bug, {}))]


def _regions():
    return [chain(0, [G[f"g{i}"] for i in range(4)]),
            chain(1, [G["g0"], G["g1"], ALPHABET["h2"], G["g3"]]),
            chain(2, [G["g0"], G["g1"]], planned=False)]


def _record_divergent(v, g, d) -> None:
    if d.status == ReplayStatus.DIVERGED:
        vigil.record_op(v, g)


_VIGIL_BUGS: dict[str, tuple[dict, Callable | None]] = {
    "records divergent op": ({}, _record_divergent),
    "fallback stays compiled": ({(crucible_context, "deactivate"): lambda c: None}, None),
}


@model_obligation(
    "PO11.2",
    "Vigil's foreground, every interleaving of dispatches (7 ops) and up to 3 publications of "
    "3 regions (two variants sharing a prefix, one without a plan): no dispatch fails a "
    "precondition (no stuck state); a COMPILED decision never names an op whose guard differs "
    "from the dispatched one; a DIVERGED decision is RECORD with the context in RECORD and the "
    "op not recorded; replayed and aligning ops are never recorded; the context is compiled "
    "exactly when a region is active.",
    covers=("vigil.dispatch", "Vigil"),
    subject=None,
    mutants=(Mutant("records divergent op", "the fallback records the op that diverged",
                    "records divergent op"),
             Mutant("fallback stays compiled", "the fallback does not deactivate the context",
                    "fallback stays compiled")),
    timeout_s=300.0,
)
def vigil_modes(bug):
    patches, extra = _VIGIL_BUGS.get(bug, ({}, None))
    return [patched(vigil_machine(_regions(), ALPHABET, 3, extra=extra), patches)]


_A, _B, _C, _X = Guard(1, 0), Guard(2, 0), Guard(3, 0), Guard(9, 0)


@model_obligation(
    "PO11.3",
    "Alignment: after a region is published, the context compiles exactly at the first op "
    "that ends a run of min(K, n) ops equal to the region's first ones (K = 5; a 6-op region "
    "a b a b c a with overlapping starts, and a 3-op one), never earlier, and the engine is "
    "then at min(K, n) mod n.",
    covers=("vigil.dispatch",),
    subject=None,
    mutants=(Mutant("threshold K - 1", "ALIGNMENT_K = 4", "threshold K - 1"),
             Mutant("threshold K + 1", "ALIGNMENT_K = 6", "threshold K + 1"),
             Mutant("naive restart", "the seed's restart from 0 on a mismatch (E11.5)",
                    "naive restart")),
)
def alignment_threshold(bug):
    errata = frozenset({E11_5}) if bug == "naive restart" else frozenset()
    k = {"threshold K - 1": 4, "threshold K + 1": 6}.get(bug)
    alphabet = {"a": _A, "b": _B, "c": _C, "x": _X}
    machines = [alignment_machine(chain(0, [_A, _B, _A, _B, _C, _A]), alphabet, errata),
                alignment_machine(chain(0, [_A, _A, _B]), alphabet, errata)]
    return [patched(m, {(vigil, "ALIGNMENT_K"): k} if k else {}) for m in machines]


def _rollback_keeps_active(log) -> bool:
    p = transaction.previous(log)
    if p is None:
        return False
    log.entries[p].status = TxStatus.ACTIVE
    log.active = p
    return True


@model_obligation(
    "PO11.4",
    "TransactionLog<2> and <4>, every sequence of begin, commit, activate and rollback: at most "
    "one transaction is ACTIVE, and active() names it.",
    covers=("txlog.simulate", "TransactionLog"),
    subject=None,
    mutants=(Mutant("begin overwrites active", "the seed's begin_tx reuses the active slot "
                                               "(E18.9)", "begin overwrites active"),
             Mutant("rollback keeps active", "rollback does not mark the active one "
                                             "ROLLED_BACK", "rollback keeps active")),
)
def txlog_one_active(bug):
    errata = frozenset({E18_9}) if bug == "begin overwrites active" else frozenset()
    patches = {(transaction, "rollback"): _rollback_keeps_active} \
        if bug == "rollback keeps active" else {}
    return [patched(txlog_machine(c, errata), patches) for c in (2, 4)]


def _rollback_log_only(v, errata=frozenset()) -> bool:
    """The bug: only the log rolls back; the context keeps what it had."""
    return transaction.rollback(v.tx_log)


_ROLLBACK_BUGS: dict[str, tuple[dict, frozenset[str]]] = {
    "rollback keeps pending": ({}, frozenset({E11_6})),
    "rollback log only": ({(vigil, "rollback"): _rollback_log_only}, frozenset()),
    "rollback keeps active": ({(transaction, "rollback"): _rollback_keeps_active}, frozenset()),
}


@model_obligation(
    "PO11.6",
    "Vigil's foreground with its TransactionLog, every interleaving of dispatches (7 ops), up "
    "to 2 publications of 3 regions and a rollback: no step is stuck; the invariants of PO11.2 "
    "hold; after a rollback the context replays the restored transaction's region when that "
    "has a plan (RECORD otherwise); at most one transaction is ACTIVE and active() names it.",
    covers=("vigil.dispatch", "Vigil", "TransactionLog"),
    subject=None,
    mutants=(Mutant("rollback keeps pending", "the seed's rollback leaves a region waiting to "
                                              "align (E11.6)", "rollback keeps pending"),
             Mutant("rollback log only", "rollback leaves the context as it was",
                    "rollback log only"),
             Mutant("rollback keeps active", "the log's rollback does not mark the active one "
                                             "ROLLED_BACK", "rollback keeps active")),
    timeout_s=300.0,
)
def vigil_rollback(bug):
    patches, errata = _ROLLBACK_BUGS.get(bug, ({}, frozenset()))
    return [patched(vigil_machine(_regions(), ALPHABET, 2, errata, rollbacks=1), patches)]


def _find_newest(c, content_hash):
    idx = region_cache.mru(c)[:1]
    return c.regions[idx[0]] if idx and c.content_hashes[idx[0]] == content_hash else None


def _uncapped_insert(c, r) -> bool:
    if region_cache.find(c, r.content_hash) is not None:
        return False
    idx = c.head & (c.capacity - 1)
    c.regions[idx], c.content_hashes[idx], c.num_ops[idx] = r, r.content_hash, r.num_ops
    c.head += 1
    c.count += 1
    return True


@model_obligation(
    "PO11.5",
    "RegionCache at capacities 2 and 4, every sequence of inserts of regions whose content "
    "hashes repeat: no two entries share a content hash, and at most capacity are held.",
    covers=("region_cache.simulate", "RegionCache"),
    subject=None,
    mutants=(Mutant("dedup newest only", "insert checks only the newest entry's hash",
                    "dedup newest only"),
             Mutant("count uncapped", "count grows past the capacity", "count uncapped")),
)
def cache_unique(bug):
    patches = {"dedup newest only": {(region_cache, "find"): _find_newest},
               "count uncapped": {(region_cache, "insert"): _uncapped_insert}}.get(bug, {})
    return [patched(cache_machine(2, [1, 2, 3, 1]), patches),
            patched(cache_machine(4, [1, 2, 3, 1, 4, 5]), patches)]
