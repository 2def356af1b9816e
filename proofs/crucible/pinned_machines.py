"""Chapter 11's protocol machines, step by step: a stuck state is the precondition's breach
and nothing else, and has no successor; each invariant judges its own fact; the step budgets
(publications, rollbacks) are carried and spent as the machine says; a state's key lays out
the engine as (cursor, current); the CrucibleContext machine judges every step on a hand-walked
path, also from states the exploration merges away (the counters are not in the key); the
Vigil machine treats a region of one op as one to align with; the TransactionLog machine
begins at step 0. Expected values are worked out by hand from the machines' docstrings."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.crucible import context as ctx_
from ...spec.crucible import region_cache as rc
from ...spec.crucible import replay_engine
from ...spec.crucible import replay_machines as rm
from ...spec.crucible import transaction as tx
from ...spec.crucible import vigil as vg
from ...spec.crucible.replay_region import Guard
from ..core.model import explore
from ..core.obligation import Property, property_obligation
from ..core.patch import edited
from .replay import (
    ALIGNING_OP_RECORDED,
    ALPHABET,
    THRESHOLD_K_MINUS_1,
    THRESHOLD_ONE_LATE,
    G,
    _regions,
)

PRECONDITION = "no dispatch fails a precondition"
QUIET = "replayed and aligning ops are never recorded"
FACT_RULES = {
    "handle_names_op": "a COMPILED decision names a region op with the dispatched guard",
    "divergence_clean": "a DIVERGED decision falls back to RECORD and records nothing",
    "not_recorded_when_compiled": QUIET,
    "rollback_restores": "a rollback replays the restored transaction's region (when it has "
                         "a plan)",
}
RECORD_FAILS = Mutant.edit("record fails", "record_op fails an assertion", vg.record_op,
                           "v.recorded.append(g)", "assert False, 'planted'")


def _mutant(fn, old: str, new: str, name: str) -> Mutant:
    return Mutant.edit(name, f"the machine reads {new!r}", fn, old, new)


def _walk(m, labels: tuple[str, ...]) -> list:
    """The states along a path of step labels from the initial state (no merging by key)."""
    s, out = m.initial, []
    for label in labels:
        s = dict(m.steps(s))[label]
        out.append(s)
    return out


# --- CrucibleContext: every step of a path judged -------------------------------------------

def _context_path(case: tuple[str, ...]) -> None:
    """Every step of the path keeps the advance rule: after the divergence the context has
    counted 1 divergence and 0 passes, and the steps that follow (deactivate, activate, a
    match, a completed pass) move the counters only as their status says."""
    alphabet = {k: ALPHABET[k] for k in ("g0", "g1", "g2", "g3", "x")}
    m = rm.context_machine([rm.chain(0, [G["g0"], G["g1"], G["g2"]]),
                            rm.chain(1, [G["g0"], G["g3"]])], alphabet)
    states = _walk(m, case)
    for label, s in zip(case, states, strict=True):
        assert s.key[0] != rm.STUCK and s.key[-1] is True, (label, s.key)
    last = states[-1].obj
    assert (last.compiled_iterations, last.diverged_count) == (case.count("advance g3"),
                                                               case.count("advance x"))


MATCH_PAST_END = Mutant.edit("match past the end", "the last op's match is a MATCH that "
                             "leaves the cursor at the end", replay_engine.advance,
                             "if e.cursor == len(e.ops):", "if e.cursor == len(e.ops) + 1:")
ACTIVATE_FORGETS = Mutant.edit("activate forgets divergences", "activate resets the divergence "
                               "count", ctx_.activate,
                               "c.active_region, c.mode = r, ContextMode.COMPILED  # 5",
                               "c.active_region, c.mode = r, ContextMode.COMPILED  # 5\n"
                               "    c.diverged_count = 0")
ACTIVATE_FAILS = Mutant.edit("activate fails", "activate fails an assertion", ctx_.activate,
                             "pool_.init(c.pool, r.plan)  # 3", "assert False, 'planted'  # 3")


def _context_machine():
    alphabet = {k: ALPHABET[k] for k in ("g0", "g1", "g2", "g3", "x")}
    return rm.context_machine([rm.chain(0, [G["g0"], G["g1"], G["g2"]]),
                               rm.chain(1, [G["g0"], G["g3"]])], alphabet)


def _context_bug(case: tuple) -> None:
    """With the bug planted, the last step of the path breaks the advance rule, the steps
    before it keep it."""
    bug, path = case
    with edited(bug.target, bug.old, bug.new):
        facts = [s.key[-1] for s in _walk(_context_machine(), path)]
    assert facts == [True] * (len(path) - 1) + [False], (bug.name, facts)


def _context_key(case: int) -> None:
    """After `case` matches on region 0 (3 ops) key fields 2 and 3 are cursor = case and
    current = case - 1 (None before any match)."""
    path = ("activate 0", *(f"advance g{i}" for i in range(case)))
    s = _walk(_context_machine(), path)[-1]
    assert s.key[:4] == (int(ctx_.ContextMode.COMPILED), 0, case, case - 1 if case else None)


@property_obligation(
    "PO11.160",
    "The CrucibleContext machine judges every step on its own: on the path activate 0, "
    "advance x (DIVERGED: 1 divergence, 0 passes), deactivate, activate 1, advance g0 "
    "(MATCH), advance x, advance g3 (COMPLETE) every step keeps the advance rule, though "
    "the divergence count then exceeds the pass count; after two passes of the 2-op region a "
    "MATCH keeps the rule; with a MATCH that leaves the cursor at the end, or an activate "
    "that resets the divergence count, that step breaks it; the key holds cursor then current",
    covers=("context.simulate",), subject=rm.context_machine,
    mutants=(_mutant(rm.context_machine, "after[2] >= before[2]", "after[1] >= before[2]",
                     "divergences-compared-with-passes"),
             _mutant(rm.context_machine, "before[1] and after[2]", "before[1] or after[2]",
                     "counters-or"),
             _mutant(rm.context_machine, "and after[0] < n", "and after[0] <= n", "match-at-end"),
             _mutant(rm.context_machine, "and after[0] < n", "and after[1] < n",
                     "match-reads-passes"),
             _mutant(rm.context_machine, "e.cursor, e.current, facts", "e.current, e.cursor, facts",
                     "key-cursor-current-swapped")))
def context_steps(subject) -> list[Property]:
    return [Property("paths", _context_path, cases=lambda: (
        ("activate 0", "advance x", "deactivate", "activate 1", "advance g0", "advance x",
         "advance g3"),
        ("activate 0", "advance x", "advance x", "activate 0"),
        ("activate 1", "advance g0", "advance g3", "advance g0", "advance g3", "advance g0"),
    )),
            Property("planted bugs", _context_bug, cases=lambda: (
        (MATCH_PAST_END, ("activate 1", "advance g0", "advance g3")),
        (ACTIVATE_FORGETS, ("activate 0", "advance x", "activate 1")))),
            Property("key", _context_key, cases=lambda: (0, 1, 2))]


# --- stuck states ------------------------------------------------------------------------------

def _stuck_shape(case: str) -> None:
    label, snap = rm._stuck(case, AssertionError("boom"))
    assert label == f"{case} fails: AssertionError boom", label
    assert snap == rm.Snap((rm.STUCK, case)) and not rm.not_stuck(snap), snap


def _stuck_machines(case: str) -> None:
    """A stuck state has no successor, and of the Vigil machine's invariants only the
    precondition's judges it broken."""
    stuck = rm.Snap((rm.STUCK, case))
    a, b = Guard(1, 0), Guard(2, 0)
    alignment = rm.alignment_machine(rm.chain(0, [a, b]), {"a": a, "b": b})
    vigil = rm.vigil_machine(_regions(), ALPHABET, 1, rollbacks=1)
    context = rm.context_machine([rm.chain(0, [a, b])], {"a": a})
    for m in (alignment, vigil, context):
        assert list(m.steps(stuck)) == [], m.name
    for name, holds in vigil.invariants:
        assert holds(stuck) == (name != PRECONDITION), name


def _planted_stuck(case: str) -> None:
    """With record_op failing an assertion, a dispatch from the fresh Vigil is stuck under
    its own label (and so is the explored machine's first violation)."""
    m = rm.vigil_machine(_regions(), ALPHABET, 1)
    with edited(RECORD_FAILS.target, RECORD_FAILS.old, RECORD_FAILS.new):
        steps = list(m.steps(m.initial))
        found = explore(m).violation
    label, snap = next((label, s) for label, s in steps if label.startswith(case))
    assert label == f"{case} fails: AssertionError planted", label
    assert snap.key == (rm.STUCK, case), snap.key
    assert found == PRECONDITION, found


def _context_stuck(case: str) -> None:
    """With activate failing an assertion, the context machine's activate is stuck under its
    own label."""
    m = _context_machine()
    with edited(ACTIVATE_FAILS.target, ACTIVATE_FAILS.old, ACTIVATE_FAILS.new):
        steps = dict(m.steps(m.initial))
    label = f"{case} fails: AssertionError planted"
    assert steps.get(label) == rm.Snap((rm.STUCK, case)), list(steps)


@property_obligation(
    "PO11.161",
    "A step that fails a precondition leads to the state (stuck, label), reported as "
    "'label fails: <exception type> <message>'; a stuck state has no successor in the "
    "alignment, Vigil and CrucibleContext machines, and only the precondition invariant "
    "judges it broken",
    covers=("vigil.dispatch", "context.simulate"), subject=rm._stuck,
    mutants=(
        _mutant(rm._stuck, "Snap((STUCK, label))", "Snap((label, STUCK))", "stuck-key-swapped"),
        _mutant(rm.vigil_machine, "if s.key[0] == STUCK:\n", "if s.key[1] == STUCK:\n",
                "vigil-expands-stuck"),
        _mutant(rm.alignment_machine, "if s.key[0] == STUCK or", "if s.key[1] == STUCK or",
                "alignment-expands-stuck"),
        _mutant(rm.vigil_machine, "yield _stuck(label, e)", "yield _stuck(e, label)",
                "stuck-args-swapped"),
        _mutant(rm.vigil_machine, "s.key[0] == STUCK or s.key[-1].divergence_clean",
                "s.key[1] == STUCK or s.key[-1].divergence_clean", "clean-reads-stuck-facts"),
        _mutant(rm.vigil_machine, "s.key[0] == STUCK or s.key[-1].rollback_restores",
                "s.key[0] != STUCK or s.key[-1].rollback_restores", "restores-unchecked"),
        _mutant(rm.context_machine, "yield _stuck(label, e)", "yield _stuck(e, label)",
                "context-stuck-args-swapped"),
    ))
def stuck_states(subject) -> list[Property]:
    return [Property("shape", _stuck_shape, cases=lambda: ("dispatch g0", "rollback")),
            Property("no successor", _stuck_machines, cases=lambda: ("dispatch g0", "rollback")),
            Property("planted", _planted_stuck, cases=lambda: ("dispatch g0", "dispatch x")),
            Property("planted context", _context_stuck, cases=lambda: ("activate 0", "activate 1"))]


# --- Vigil: facts, budgets, key ----------------------------------------------------------------

def _facts(case: str) -> None:
    """A live state whose facts deny `case` breaks exactly the invariant for that fact."""
    m = rm.vigil_machine(_regions(), ALPHABET, 1, rollbacks=1)
    s0 = m.initial
    bad = rm.Snap((*s0.key[:-1], rm.Facts(**{case: False})), s0.obj)
    broken = [name for name, holds in m.invariants if not holds(bad)]
    assert broken == [FACT_RULES[case]], broken
    assert all(holds(s0) for _, holds in m.invariants)


def _budgets(case: tuple) -> None:
    """A dispatch spends no budget; a publish spends one publication, a rollback one rollback;
    a state offers a publish (rollback) exactly while publications (rollbacks) remain."""
    publishes, rollbacks, path, want = case
    m = rm.vigil_machine(_regions(), ALPHABET, publishes, rollbacks=rollbacks)
    s = _walk(m, path)[-1]
    assert s.key[10:12] == want, (path, s.key[10:12])
    labels = [label for label, _ in m.steps(s)]
    assert ("rollback" in labels) == (want[1] > 0), labels
    assert ("publish 0" in labels) == (want[0] > 0), labels


def _untracked_log(case: int) -> None:
    """A machine without rollbacks leaves the log out of its key, even after a publish."""
    m = rm.vigil_machine(_regions(), ALPHABET, case)
    s = _walk(m, ("publish 0", "dispatch g0"))[-1]
    assert s.obj.tx_log.count == 1
    assert s.key[12] == () and s.key[13] is None, s.key[12:14]


def _key_layout(case: int) -> None:
    """After `case` matches on a 3-op region the engine's cursor is case and its current op
    case - 1 (None before any match): key fields 2 and 3 are (cursor, current)."""
    v = vg.Vigil()
    assert ctx_.activate(v.ctx, rm.chain(0, [G["g0"], G["g1"], G["g2"]]))
    for i in range(case):
        replay_engine.advance(v.ctx.engine, G[f"g{i}"])
    key = rm.vigil_key(v, 0, 0, rm.Facts())
    assert key[1] == 0 and key[2:4] == (case, case - 1 if case else None), key[:4]


@property_obligation(
    "PO11.162",
    "The Vigil machine: each fact-based invariant breaks exactly when its own fact is false; "
    "a dispatch keeps both step budgets, a publish spends a publication and a rollback a "
    "rollback, and a state offers publishes and rollbacks exactly while they remain; without "
    "rollbacks the key leaves the log out; vigil_key holds the engine's cursor then current",
    covers=("vigil.dispatch", "Vigil"), subject=rm.vigil_machine,
    mutants=(
        _mutant(rm.vigil_machine, "vigil_key(v, left, back, facts, log)",
                "vigil_key(v, back, left, facts, log)", "dispatch-swaps-budgets"),
        _mutant(rm.vigil_machine, "back - 1, facts", "back - 0, facts", "rollback-free"),
        _mutant(rm.vigil_machine, "log = rollbacks > 0", "log = rollbacks >= 0",
                "log-always-tracked"),
        _mutant(rm.vigil_machine, "s.key[0] == STUCK or s.key[-1].rollback_restores",
                "s.key[0] != STUCK or s.key[-1].rollback_restores", "restores-unchecked"),
        _mutant(rm.vigil_key, "e.cursor, e.current,", "e.current, e.cursor,",
                "cursor-current-swapped"),
    ))
def vigil_steps(subject) -> list[Property]:
    return [
        Property("facts", _facts, cases=lambda: tuple(FACT_RULES)),
        Property("budgets", _budgets, cases=lambda: (
            (1, 0, ("dispatch g0",), (1, 0)),
            (0, 1, ("dispatch g0",), (0, 1)),
            (2, 1, ("dispatch x", "publish 0"), (1, 1)),
            (1, 1, ("rollback",), (1, 0)),
            (1, 2, ("publish 1", "rollback", "dispatch g0"), (0, 1)),
        )),
        Property("log untracked", _untracked_log, cases=lambda: (1, 2)),
        Property("key layout", _key_layout, cases=lambda: (0, 1, 2)),
    ]


# --- Vigil: aligning ops -----------------------------------------------------------------------

def _aligning(case: int) -> None:
    """With aligning ops recorded, a machine that publishes one region of `case` ops reports
    it as a recorded aligning op (a 1-op region is aligned with too)."""
    r = rm.chain(0, [G[f"g{i}"] for i in range(case)])
    alphabet = {k: ALPHABET[k] for k in ("g0", "g1", "x")}
    m = rm.vigil_machine([r], alphabet, 1)
    assert explore(m).violation is None
    with edited(ALIGNING_OP_RECORDED.target, ALIGNING_OP_RECORDED.old,
                ALIGNING_OP_RECORDED.new):
        found = explore(m).violation
    assert found == QUIET, found


@property_obligation(
    "PO11.163",
    "The Vigil machine counts an op dispatched in RECORD while a published region of one or "
    "more ops waits as aligning: recording it is reported as a recorded aligning op, for "
    "regions of 1 and 2 ops",
    covers=("vigil.dispatch",), subject=rm.vigil_machine,
    mutants=(
        _mutant(rm.vigil_machine, "aligning = v.ctx.mode == ContextMode.RECORD",
                "aligning = v.ctx.mode != ContextMode.RECORD", "aligning-when-compiled"),
        _mutant(rm.vigil_machine, "pending.num_ops > 0", "pending.num_ops > 1",
                "one-op-not-aligning"),
    ))
def vigil_aligning(subject) -> list[Property]:
    return [Property("aligning recorded", _aligning, cases=lambda: (1, 2))]


# --- TransactionLog ----------------------------------------------------------------------------

def _txlog_begin(case: int) -> None:
    """begin opens a fresh RECORDING transaction at step 0 in the head slot."""
    m = rm.txlog_machine(case)
    s = dict(m.steps(m.initial))["begin"]
    assert s.obj.entries[0] == tx.Tx(step_id=0, status=tx.TxStatus.RECORDING), s.obj.entries[0]
    assert (s.obj.head, s.obj.count) == (1, 1)
    c = dict(m.steps(s))["commit 0"]
    assert c.obj.entries[0] == tx.Tx(0, 0, 0, None, tx.TxStatus.COMMITTED), c.obj.entries[0]


@property_obligation(
    "PO11.164",
    "The TransactionLog machine's begin opens a fresh RECORDING transaction at step 0 in the "
    "head slot, and its commit k commits slot k with no region, content hash 0 and Merkle root 0",
    covers=("txlog.simulate",), subject=rm.txlog_machine,
    mutants=(_mutant(rm.txlog_machine, "tx.begin_tx(lg, 0, errata)", "tx.begin_tx(lg, 1, errata)",
                     "begin-step-1"),
             _mutant(rm.txlog_machine, "k, None, 0, 0)", "k, None, 1, 0)", "commit-hash-1"),
             _mutant(rm.txlog_machine, "k, None, 0, 0)", "k, None, 0, 1)", "commit-merkle-1")))
def txlog_begin(subject) -> list[Property]:
    return [Property("begin", _txlog_begin, cases=lambda: (2, 4))]


# --- alignment and cache ---------------------------------------------------------------------

_A, _B, _C = Guard(1, 0), Guard(2, 0), Guard(3, 0)
ALIGN_RULE = "compiles exactly when the last min(K, n) ops are the region's first"


def _alignment_bug(case: tuple) -> None:
    """A threshold one early or one late is reported as a breach of the alignment rule (ops
    a, b, c; PO11.3 explores the unplanted machine)."""
    bug, guards = case
    m = rm.alignment_machine(rm.chain(0, list(guards)), {"a": _A, "b": _B, "c": _C})
    with edited(bug.target, bug.old, bug.new):
        found = explore(m).violation
    assert found == ALIGN_RULE, (bug.name, found)


@property_obligation(
    "PO11.165",
    "The alignment machine reports a threshold of K - 1 and a threshold test one late as "
    "breaches of its rule (over regions a b a b c a and a a b)",
    covers=("vigil.dispatch",), subject=rm.alignment_machine,
    mutants=(
        _mutant(rm.alignment_machine, "s.key[0] == STUCK or s.key[-1])",
                "s.key[0] != STUCK or s.key[-1])", "rule-unchecked"),
        _mutant(rm.alignment_machine, "compiled == should and (", "compiled == should or (",
                "should-or-cursor"),
    ))
def alignment_catches(subject) -> list[Property]:
    return [Property("planted bugs", _alignment_bug, cases=lambda: (
        (THRESHOLD_K_MINUS_1, (_A, _B, _A, _B, _C, _A)), (THRESHOLD_ONE_LATE, (_A, _A, _B))))]


def _cache_fixture(case: int) -> None:
    """Region k of the cache machine is one op with guard (k, 0) and the k-th content hash."""
    hashes = [5, 6, 5][:case]
    m = rm.cache_machine(2, hashes)
    for k, h in enumerate(hashes):
        c = dict(m.steps(m.initial))[f"insert {k}"].obj
        r = c.regions[rc.mru(c)[0]]
        assert (r.rid, r.content_hash, [op.guard for op in r.ops]) == (k, h, [Guard(k, 0)])


@property_obligation(
    "PO11.166",
    "The RegionCache machine inserts, as region k, one op with guard (k, 0) and the k-th "
    "content hash",
    covers=("region_cache.simulate",), subject=rm.cache_machine,
    mutants=(_mutant(rm.cache_machine, "[Guard(k, 0)]", "[Guard(k, 1)]", "guard-shape-1"),))
def cache_fixture(subject) -> list[Property]:
    return [Property("regions", _cache_fixture, cases=lambda: (1, 3))]
