"""Chapter 11's protocol machines checked against themselves: each machine, run on a spec with
a known bug planted, must report that bug under the invariant meant for it (so a weakened
check is caught), a machine's state key must keep what its verdicts depend on, its step
offers must follow its bounds, and the region fixture `chain` must be the layout it states."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.crucible import context as ctx_
from ...spec.crucible import replay_engine
from ...spec.crucible import replay_machines as rm
from ...spec.crucible import vigil as vg
from ...spec.crucible.replay_engine import ReplayStatus
from ...spec.crucible.replay_region import Guard, ReplayPlan, ReplaySlot
from ..core.model import explore
from ..core.obligation import Property, property_obligation
from ..core.patch import edited
from .replay import (
    ACTIVATE_KEEPS_OLD,
    ALPHABET,
    MOVING_ADVANCE,
    NO_RESET,
    RECORDS_DIVERGENT_OP,
    G,
    _regions,
)

ADVANCE_RULE = "advance moves and counts as its status says"
MATCH_MOVES_TWO = Mutant.edit("match moves two", "a MATCH moves the cursor by two",
                              replay_engine.advance, "e.cursor += 1", "e.cursor += 2")
MATCH_STAYS = Mutant.edit("match stays", "a MATCH leaves the cursor where it was",
                          replay_engine.advance, "e.cursor += 1", "e.cursor += 0")


def _context() -> object:
    alphabet = {k: ALPHABET[k] for k in ("g0", "g1", "g2", "g3", "x", "s1")}
    return rm.context_machine([rm.chain(0, [G["g0"], G["g1"], G["g2"]]),
                               rm.chain(1, [G["g0"], G["g3"]])], alphabet)


def _reports(case: tuple) -> None:
    """Plant the bug, explore the machine: the first violation is the expected invariant."""
    build, bug, want = case
    with edited(bug.target, bug.old, bug.new):
        found = explore(build()).violation
    assert found == want, f"{bug.name}: {found!r}, expected {want!r}"


def _one_op(case: int) -> None:
    """Regions of one op complete on every match, so passes follow passes: no violation."""
    regions = [rm.chain(k, [G[f"g{k}"]]) for k in range(case)]
    alphabet = {k: ALPHABET[k] for k in ("g0", "g1", "x")}
    assert explore(rm.context_machine(regions, alphabet)).violation is None


def _mutant(fn, old: str, new: str, name: str) -> Mutant:
    return Mutant.edit(name, f"the machine's check reads {new!r}", fn, old, new)


@property_obligation(
    "PO11.144",
    "The CrucibleContext machine reports a DIVERGED advance that moves the cursor, a MATCH that "
    "moves it by two or not at all and a COMPLETE that does not reset the engine, each as a "
    "breach of the advance rule (not later as a stuck step); one-op regions, whose passes "
    "follow each other, hold every invariant",
    covers=("context.simulate",), subject=rm.context_machine,
    mutants=(
        _mutant(rm.context_machine, "ok &= after == (before[0], before[1], before[2] + 1)",
                "ok |= after == (before[0], before[1], before[2] + 1)", "diverged-or-equals"),
        _mutant(rm.context_machine, "before[2]) and after[0] < n",
                "before[2]) or after[0] < n", "match-or"),
        _mutant(rm.context_machine, "before[2]) and c.engine.current == n - 1",
                "before[2]) or c.engine.current == n - 1", "complete-or"),
        _mutant(rm.context_machine, "(0, before[1] + 1, before[2])",
                "(0, before[2] + 1, before[2])", "complete-counts-from-divergences"),
        _mutant(rm.context_machine, "lambda s: s.key[0] == STUCK or s.key[-1])",
                "lambda s: s.key[0] != STUCK or s.key[-1])", "rule-never-checked"),
    ))
def context_catches(subject) -> list[Property]:
    return [Property("one-op region, every pass counted", _one_op, cases=lambda: (1, 2)),
            Property("planted bugs", _reports, cases=lambda: tuple(
        (_context, bug, ADVANCE_RULE) for bug in (MOVING_ADVANCE, MATCH_MOVES_TWO, MATCH_STAYS,
                                                 NO_RESET)))]


def _vigil_small() -> object:
    return rm.vigil_machine(_regions(), ALPHABET, 1)


def _vigil_rollback() -> object:
    return rm.vigil_machine(_regions(), ALPHABET, 2, rollbacks=1)


def _vigil_empty() -> object:
    return rm.vigil_machine([rm.chain(0, []), rm.chain(1, [G["g0"]])], ALPHABET, 2)


def _check_empty(case: str) -> None:
    assert explore(_vigil_empty()).violation is None


def _offers(case: tuple) -> None:
    """The initial state offers a rollback exactly when rollbacks remain."""
    publishes, rollbacks = case
    m = rm.vigil_machine(_regions(), ALPHABET, publishes, rollbacks=rollbacks)
    labels = [label for label, _ in m.steps(m.initial)]
    assert ("rollback" in labels) == (rollbacks > 0), labels
    assert any(k.startswith("publish") for k in labels) == (publishes > 0), labels


def _keys_log(case: int) -> None:
    """A machine that rolls back keys a state on its log: after a publish the log's one
    committed transaction is in the key."""
    m = rm.vigil_machine(_regions(), ALPHABET, 1, rollbacks=case)
    after = dict(m.steps(m.initial))["publish 0"]
    log = after.obj.tx_log
    assert after.key[12] == tuple((int(t.status), t.region) for t in log.entries[:log.count])
    assert log.count == 1 and after.key[13] == log.active


def _judge(case: tuple) -> None:
    """A COMPILED decision names an op only if the engine's current op has the dispatched
    guard."""
    matched, dispatched, want = case
    v = vg.Vigil()
    r = rm.chain(0, [Guard(1, 0), Guard(2, 0)])
    assert ctx_.activate(v.ctx, r)
    for g in matched:
        replay_engine.advance(v.ctx.engine, g)
    d = vg.DispatchResult(vg.Action.COMPILED, ReplayStatus.MATCH)
    assert rm.judge(v, dispatched, d, False, False, frozenset()).handle_names_op == want


@property_obligation(
    "PO11.145",
    "The Vigil machine reports a fallback that records the divergent op as unclean and two "
    "ACTIVE transactions as such; with an empty region published every invariant holds; it "
    "offers rollbacks and publishes as its bounds say and keys its states on the log when it "
    "rolls back; a COMPILED decision names an op only when the engine's current op has the "
    "dispatched guard",
    covers=("vigil.dispatch", "Vigil"), subject=rm.vigil_machine,
    mutants=(
        _mutant(rm.vigil_machine, "lambda s: s.key[0] == STUCK or s.key[-1].divergence_clean",
                "lambda s: s.key[0] != STUCK or s.key[-1].divergence_clean", "clean-unchecked"),
        _mutant(rm.vigil_machine, "s.key[0] == STUCK or tx.at_most_one_active",
                "s.key[0] != STUCK or tx.at_most_one_active", "one-active-unchecked"),
        _mutant(rm.vigil_machine, "pending.num_ops > 0", "pending.num_ops >= 0",
                "empty-region-aligns"),
        _mutant(rm.vigil_machine, "log = rollbacks > 0", "log = rollbacks > 1", "log-untracked"),
        _mutant(rm.vigil_machine, "s.key[10], s.key[11]", "s.key[10], s.key[10]",
                "rollbacks-from-publishes"),
        _mutant(rm.judge, "names = active is not None and e.current", "names = active is not "
                "None or e.current", "judge-or"),
    ))
def vigil_catches(subject) -> list[Property]:
    return [
        Property("planted bugs", _reports, cases=lambda: (
            (_vigil_small, RECORDS_DIVERGENT_OP,
             "a DIVERGED decision falls back to RECORD and records nothing"),
            (_vigil_rollback, ACTIVATE_KEEPS_OLD,
             "at most one transaction is ACTIVE, and active() names it"))),
        Property("empty region", _check_empty, cases=lambda: ("publish",)),
        Property("step offers", _offers, cases=lambda: ((0, 1), (1, 0), (0, 0), (2, 2))),
        Property("log in key", _keys_log, cases=lambda: (1, 2)),
        Property("judge", _judge, cases=lambda: (
            ((), Guard(1, 0), False), ((Guard(1, 0),), Guard(2, 0), False),
            ((Guard(1, 0),), Guard(1, 0), True))),
    ]


def _check_chain(case: tuple) -> None:
    rid, n, content, planned = case
    guards = [Guard(k + 1, 0) for k in range(n)]
    r = rm.chain(rid, guards, planned, content)
    assert r.rid == rid and [op.guard for op in r.ops] == guards
    assert [op.input_slot_ids for op in r.ops] == [[k - 1] if k else [] for k in range(n)]
    assert [op.output_slot_ids for op in r.ops] == [[k] for k in range(n)]
    want = ReplayPlan(n * 256, [ReplaySlot(k * 256, 256) for k in range(n)])
    assert r.plan == (want if planned else None)
    assert r.content_hash == (content if content else rid + 1)


def _check_txlog_key(case: int) -> None:
    """The machine's key holds the log's head modulo its capacity, after each begin."""
    m = rm.txlog_machine(case)
    s = m.initial
    for _ in range(2 * case + 1):
        s = dict(m.steps(s))["begin"]
        assert s.key[1] == s.obj.head % case and s.key[2] == s.obj.count


@property_obligation(
    "PO11.146",
    "The region fixture chain(rid, guards): op i reads slot i - 1 (op 0 none) and writes slot "
    "i, slot i is 256 bytes at 256 i, the pool is 256 n bytes, the content hash is the given "
    "one or rid + 1; the TransactionLog machine keys the head modulo the capacity",
    covers=("context.simulate", "txlog.simulate"), subject=rm.chain,
    mutants=(
        Mutant.edit("reads-two-back", "op i reads slot i - 2", rm.chain, "[i - 1] if i",
                    "[i - 2] if i"),
        Mutant.edit("pool-257", "the pool is 257 bytes a slot", rm.chain,
                    "ReplayPlan(256 * len(guards)", "ReplayPlan(257 * len(guards)"),
        Mutant.edit("slot-255", "a slot is 255 bytes", rm.chain, "ReplaySlot(256 * i, 256)",
                    "ReplaySlot(256 * i, 255)"),
        Mutant.edit("content-rid-2", "the default content is rid + 2", rm.chain,
                    "content or rid + 1", "content or rid + 2"),
        Mutant.edit("head-mask-plus", "the head is keyed & (capacity + 1)", rm.txlog_machine,
                    "log.head & (capacity - 1)", "log.head & (capacity + 1)"),
        Mutant.edit("head-mask-two", "the head is keyed & (capacity - 2)", rm.txlog_machine,
                    "log.head & (capacity - 1)", "log.head & (capacity - 2)"),
    ))
def fixtures_pinned(subject) -> list[Property]:
    return [Property("chain", _check_chain, cases=lambda: (
                (0, 3, 0, True), (4, 1, 0, True), (2, 2, 77, False), (1, 0, 0, True))),
            Property("txlog key", _check_txlog_key, cases=lambda: (2, 4))]

