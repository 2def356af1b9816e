"""Chapter 11 protocol machines: CrucibleContext, Vigil's foreground and its alignment, the
TransactionLog and the RegionCache as explorable machines (design §6) over small regions and
small op alphabets. A state is its behaviour-relevant key plus the live object; the facts each
step establishes about the decision it made ride along in the key, so invariants can judge
transitions too. A step that fails a precondition of the spec leads to a 'stuck' state."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..core.errata import NO_ERRATA
from ..core.machine import Machine
from . import context as ctx_
from . import region_cache as rc
from . import transaction as tx
from . import vigil as vg
from .context import ContextMode, CrucibleContext
from .iteration_detector import K
from .replay_engine import ReplayStatus
from .replay_region import Guard, ReplayOp, ReplayPlan, ReplayRegion, ReplaySlot, guard_key


@dataclass(frozen=True)
class Snap:
    """A machine state: compared and hashed by key; obj is the live model it stands for."""

    key: tuple
    obj: Any = field(default=None, compare=False, hash=False, repr=False)


STUCK = "stuck"


def chain(rid: int, guards: list[Guard], planned: bool = True, content: int = 0) -> ReplayRegion:
    """Op i writes slot i (256 bytes at 256 * i) and reads slot i - 1."""
    ops = [ReplayOp(g, [i - 1] if i else [], [i]) for i, g in enumerate(guards)]
    plan = ReplayPlan(256 * len(guards), [ReplaySlot(256 * i, 256) for i in range(len(guards))])
    return ReplayRegion(rid, ops, plan if planned else None, content or rid + 1)


def rid(r: ReplayRegion | None) -> int | None:
    return None if r is None else r.rid


def _copy(obj: Any, regions: list[ReplayRegion]) -> Any:
    """A deep copy that shares the regions (they are compared by identity)."""
    return copy.deepcopy(obj, {id(r): r for r in regions})


def _stuck(label: str, e: Exception) -> tuple[str, Snap]:
    return f"{label} fails: {type(e).__name__} {e}", Snap((STUCK, label))


def not_stuck(s: Snap) -> bool:
    return s.key[0] != STUCK


# --- CrucibleContext -------------------------------------------------------------------------

def context_machine(regions: list[ReplayRegion], alphabet: dict[str, Guard],
                    errata: frozenset[str] = NO_ERRATA) -> Machine:
    """activate (any region) / deactivate / advance(g): advance never moves the cursor on
    DIVERGED and counts it, MATCH moves it by one, COMPLETE counts a pass and leaves cursor 0
    with current the last op; the counters never go down."""

    def key(c: CrucibleContext, facts: bool) -> tuple:
        e = c.engine
        return (int(c.mode), rid(c.active_region), e.cursor, e.current, facts)

    def steps(s: Snap) -> Iterator[tuple[str, Snap]]:
        if s.key[0] == STUCK:
            return
        c0: CrucibleContext = s.obj
        moves: list[tuple[str, Callable]] = [
            (f"activate {r.rid}", lambda c, r=r: ctx_.activate(c, r)) for r in regions]
        if c0.mode == ContextMode.COMPILED:
            moves.append(("deactivate", ctx_.deactivate))
            moves += [(f"advance {name}", lambda c, g=g: ctx_.advance(c, g, errata))
                      for name, g in alphabet.items()]
        for label, move in moves:
            c = _copy(c0, regions)
            n = c.active_region.num_ops if c.active_region else 0
            before = (c.engine.cursor, c.compiled_iterations, c.diverged_count)
            try:
                out = move(c)
            except (AssertionError, IndexError) as e:
                yield _stuck(label, e)
                continue
            after = (c.engine.cursor, c.compiled_iterations, c.diverged_count)
            ok = after[1] >= before[1] and after[2] >= before[2]
            status = out if isinstance(out, ReplayStatus) else None
            if status == ReplayStatus.DIVERGED:
                ok &= after == (before[0], before[1], before[2] + 1)
            elif status == ReplayStatus.MATCH:
                ok &= after == (before[0] + 1, before[1], before[2]) and after[0] < n
            elif status == ReplayStatus.COMPLETE:
                ok &= after == (0, before[1] + 1, before[2]) and c.engine.current == n - 1
            yield label, Snap(key(c, ok), c)

    return Machine("CrucibleContext", Snap(key(CrucibleContext(), True), CrucibleContext()),
                   steps, (("no step fails a precondition", not_stuck),
                           ("advance moves and counts as its status says",
                            lambda s: s.key[0] == STUCK or s.key[-1])),
                   done=lambda s: False)


# --- Vigil ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Facts:
    """What a dispatch step decided, judged when it was taken."""

    handle_names_op: bool = True
    divergence_clean: bool = True
    not_recorded_when_compiled: bool = True
    rollback_restores: bool = True


def restored(v: vg.Vigil) -> bool:
    """After a rollback the context replays the restored transaction's region if that has a
    plan, and is in RECORD otherwise."""
    tx_region = v.tx_log.entries[v.tx_log.active].region
    planned = v.regions[tx_region].plan is not None
    return rid(v.ctx.active_region) == (tx_region if planned else None)


def judge(v: vg.Vigil, g: Guard, d: vg.DispatchResult, recorded: bool, aligning: bool,
          errata: frozenset[str]) -> Facts:
    e = v.ctx.engine
    names = True
    if d.action == vg.Action.COMPILED:
        active = v.ctx.active_region
        names = active is not None and e.current is not None and \
            guard_key(active.ops[e.current].guard, errata) == guard_key(g, errata)
    clean = True
    if d.status == ReplayStatus.DIVERGED:
        clean = d.action == vg.Action.RECORD and v.ctx.mode == ContextMode.RECORD \
            and not recorded
    quiet = not recorded if d.action == vg.Action.COMPILED or aligning else True
    return Facts(names, clean, quiet)


def vigil_key(v: vg.Vigil, publishes: int, rollbacks: int, facts: Facts,
              track_log: bool = True) -> tuple:
    """The behaviour-relevant state; the log matters only to a machine that rolls back."""
    c, e = v.ctx, v.ctx.engine
    cache = tuple((rid(v.region_cache.regions[k]), v.region_cache.num_ops[k])
                  for k in rc.mru(v.region_cache))
    log = tuple((int(t.status), t.region) for t in v.tx_log.entries[:v.tx_log.count]) \
        if track_log else ()
    return (int(c.mode), rid(c.active_region), e.cursor, e.current,
            tuple(c.pool.table or ()), rid(v.pending_region), rid(v.pending_activation),
            v.alignment_pos, cache, int(v.mode), publishes, rollbacks, log,
            v.tx_log.active if track_log else None, facts)


def vigil_machine(regions: list[ReplayRegion], alphabet: dict[str, Guard], publishes: int,
                  errata: frozenset[str] = NO_ERRATA, rollbacks: int = 0) -> Machine:
    """Any interleaving of dispatched ops (from the alphabet), up to `publishes` region
    publications and up to `rollbacks` rollbacks."""
    log = rollbacks > 0

    def steps(s: Snap) -> Iterator[tuple[str, Snap]]:
        if s.key[0] == STUCK:
            return
        v0, left, back = s.obj, s.key[10], s.key[11]
        for name, g in alphabet.items():
            v = _copy(v0, regions)
            pending = v.pending_activation or v.pending_region
            aligning = v.ctx.mode == ContextMode.RECORD and pending is not None and \
                pending.num_ops > 0
            label = f"dispatch {name}"
            try:
                d = vg.dispatch_op(v, g, errata)
            except (AssertionError, IndexError) as e:
                yield _stuck(label, e)
                continue
            facts = judge(v, g, d, bool(v.recorded), aligning, errata)
            v.recorded, v.events, v.migrations = [], [], []
            yield label, Snap(vigil_key(v, left, back, facts, log), v)
        if left:
            for r in regions:
                v = _copy(v0, regions)
                vg.publish(v, r, errata)
                yield f"publish {r.rid}", Snap(vigil_key(v, left - 1, back, Facts(), log), v)
        if back:
            v = _copy(v0, regions)
            try:
                ok = vg.rollback(v, errata)
            except (AssertionError, IndexError, KeyError) as e:
                yield _stuck("rollback", e)
                return
            facts = Facts(rollback_restores=not ok or restored(v))
            yield "rollback", Snap(vigil_key(v, left, back - 1, facts, log), v)

    v = vg.Vigil()
    return Machine("Vigil", Snap(vigil_key(v, publishes, rollbacks, Facts(), log), v), steps, (
        ("no dispatch fails a precondition", not_stuck),
        ("a COMPILED decision names a region op with the dispatched guard",
         lambda s: s.key[0] == STUCK or s.key[-1].handle_names_op),
        ("a DIVERGED decision falls back to RECORD and records nothing",
         lambda s: s.key[0] == STUCK or s.key[-1].divergence_clean),
        ("replayed and aligning ops are never recorded",
         lambda s: s.key[0] == STUCK or s.key[-1].not_recorded_when_compiled),
        ("compiled exactly when a region is active, and then nothing waits to align",
         lambda s: s.key[0] == STUCK or vg.mode_consistent(s.obj)),
        ("a rollback replays the restored transaction's region (when it has a plan)",
         lambda s: s.key[0] == STUCK or s.key[-1].rollback_restores),
        ("at most one transaction is ACTIVE, and active() names it",
         lambda s: s.key[0] == STUCK or tx.at_most_one_active(s.obj.tx_log))),
        done=lambda s: False)


def alignment_machine(region: ReplayRegion, alphabet: dict[str, Guard],
                      errata: frozenset[str] = NO_ERRATA) -> Machine:
    """Ops dispatched after `region` is published, until the context compiles: it compiles
    exactly when the last min(K, n) ops equal the region's first ones, never earlier, and the
    engine is then at that count mod n (K is the detector's 5, whatever Vigil uses)."""
    n = region.num_ops
    thr = min(n, K)
    want = [guard_key(op.guard, errata) for op in region.ops[:thr]]

    def key(v: vg.Vigil, recent: tuple, ok: bool) -> tuple:
        return (int(v.ctx.mode), v.alignment_pos, rid(v.pending_activation), recent, ok)

    def steps(s: Snap) -> Iterator[tuple[str, Snap]]:
        if s.key[0] == STUCK or s.key[0] == ContextMode.COMPILED:
            return
        for name, g in alphabet.items():
            v = _copy(s.obj, [region])
            try:
                vg.dispatch_op(v, g, errata)
            except (AssertionError, IndexError) as e:
                yield _stuck(f"dispatch {name}", e)
                continue
            recent = (*s.key[3], guard_key(g, errata))[-K:]
            should = len(recent) >= thr and list(recent[len(recent) - thr:]) == want
            compiled = v.ctx.mode == ContextMode.COMPILED
            ok = compiled == should and (not compiled or v.ctx.engine.cursor == thr % n)
            v.recorded = []
            yield f"dispatch {name}", Snap(key(v, recent, ok), v)

    v = vg.Vigil()
    vg.publish(v, region, errata)
    return Machine(f"alignment of {n} ops", Snap(key(v, (), True), v), steps, (
        ("no dispatch fails a precondition", not_stuck),
        ("compiles exactly when the last min(K, n) ops are the region's first",
         lambda s: s.key[0] == STUCK or s.key[-1])),
        done=lambda s: s.key[0] == ContextMode.COMPILED)


# --- TransactionLog ---------------------------------------------------------------------------

def txlog_machine(capacity: int, errata: frozenset[str] = NO_ERRATA) -> Machine:
    """Any sequence of begin, commit, activate and rollback on a TransactionLog<capacity>."""

    def key(log: tx.TransactionLog) -> tuple:
        return (tuple(int(t.status) for t in log.entries), log.head & (capacity - 1),
                log.count, log.active)

    def steps(s: Snap) -> Iterator[tuple[str, Snap]]:
        moves: list[tuple[str, Callable]] = [
            ("begin", lambda lg: tx.begin_tx(lg, 0, errata)), ("rollback", tx.rollback)]
        for k in range(capacity):
            moves += [(f"commit {k}", lambda lg, k=k: tx.commit(lg, k, None, 0, 0)),
                      (f"activate {k}", lambda lg, k=k: tx.activate(lg, k))]
        for label, move in moves:
            log = copy.deepcopy(s.obj)
            move(log)
            yield label, Snap(key(log), log)

    log = tx.TransactionLog(capacity)
    return Machine(f"TransactionLog<{capacity}>", Snap(key(log), log), steps,
                   (("at most one ACTIVE, and active() names it",
                     lambda s: tx.at_most_one_active(s.obj)),), done=lambda s: False)


# --- RegionCache ------------------------------------------------------------------------------

def cache_machine(capacity: int, hashes: list[int]) -> Machine:
    """Any sequence of inserts of regions with these content hashes (some shared)."""
    regions = [chain(k, [Guard(k, 0)], content=h) for k, h in enumerate(hashes)]

    def key(c: rc.RegionCache) -> tuple:
        return tuple(rid(c.regions[k]) for k in rc.mru(c)), c.count

    def steps(s: Snap) -> Iterator[tuple[str, Snap]]:
        for r in regions:
            c = _copy(s.obj, regions)
            rc.insert(c, r)
            yield f"insert {r.rid}", Snap(key(c), c)

    c = rc.RegionCache(capacity)
    return Machine(f"RegionCache capacity {capacity}", Snap(key(c), c), steps, (
        ("no two entries share a content hash", lambda s: rc.unique_hashes(s.obj)),
        ("at most capacity entries", lambda s: s.obj.count <= capacity)),
        done=lambda s: False)
