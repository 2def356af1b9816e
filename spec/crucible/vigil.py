"""Chapter 11: Vigil's foreground dispatch. Each op is recorded (RECORD), used to align with
a published region (not recorded), or replayed against the active region (COMPILED); a
divergence tries a cached alternate at the same position and otherwise falls back to
recording. The background thread is modelled by `publish` (its region_ready callback);
rollback, persist and load are the API calls of section 13.5."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from . import context as ctx_
from . import region_cache as cache_
from . import transaction as tx_
from .cdag import CdagPlan, CdagRegion
from .cipher import Cipher
from .context import ContextMode, CrucibleContext, Migration
from .iteration_detector import K
from .replay_engine import ReplayStatus
from .replay_region import (
    Guard,
    ReplayPlan,
    ReplayRegion,
    ReplaySlot,
    guard_key,
    prefix_replays,
    replay_op_of,
)
from .tensor_meta import TENSOR_META
from .tensor_slot import TENSOR_SLOT
from .trace_entry import TraceOp
from .types import NONE32

E11_2, E11_5, E11_6 = "E11.2", "E11.5", "E11.6"
ALIGNMENT_K = K
"""Consecutive matches that confirm an iteration boundary (IterationDetector::K). Real code:
`Vigil.h`, `ALIGNMENT_K`."""


class Mode(enum.IntEnum):
    """Vigil::Mode, what is_compiled() reports."""

    RECORDING = 0
    COMPILED = 1
    DIVERGED = 2


class Action(enum.IntEnum):
    RECORD = 0
    COMPILED = 1


@dataclass(frozen=True)
class DispatchResult:
    """What dispatch_op tells the caller. op_index is set only when a divergence was recovered
    by switching to an alternate (the engine's position after the op); the header says
    'none for RECORD', but the compiled hot path leaves it none too."""

    action: Action = Action.RECORD
    status: ReplayStatus = ReplayStatus.MATCH
    op_index: int = NONE32


@dataclass
class Vigil:
    """The foreground's state, plus what the background has published and been told."""

    mode: Mode = Mode.RECORDING
    step: int = 0
    pending_region: ReplayRegion | None = None
    pending_activation: ReplayRegion | None = None
    alignment_pos: int = 0
    ctx: CrucibleContext = field(default_factory=CrucibleContext)
    region_cache: cache_.RegionCache = field(default_factory=cache_.RegionCache)
    tx_log: tx_.TransactionLog = field(default_factory=tx_.TransactionLog)
    reset_requested: bool = False
    regions: dict[int, ReplayRegion] = field(default_factory=dict)
    bg_active: ReplayRegion | None = None
    cipher: Cipher | None = None
    stored: dict[int, int] = field(default_factory=dict)
    recorded: list[Guard] = field(default_factory=list)
    migrations: list[Migration] = field(default_factory=list)
    events: list[str] = field(default_factory=list)


def publish(v: Vigil, r: ReplayRegion, errata: frozenset[str] = NO_ERRATA) -> None:
    """on_region_ready(region), on the background thread."""
    step = v.step  # 1. step_.fetch_add(1)
    v.step += 1
    slot = tx_.begin_tx(v.tx_log, step, errata)  # 2. begin, commit, activate
    tx_.commit(v.tx_log, slot, r.rid, r.content_hash, r.content_hash)  # Merkle = content here
    tx_.activate(v.tx_log, slot)
    v.regions[r.rid] = r
    v.bg_active = r  # the background stores its active region before the callback
    v.pending_region = r  # 3. release-store: a newer region replaces an unconsumed one
    v.mode = Mode.COMPILED  # 4
    if v.cipher is not None:  # 5. pre-store the object; the result is ignored
        cipher_store(v, r, errata)


def record_op(v: Vigil, g: Guard) -> None:
    """record_op: the op goes to the ring (and its metas to the MetaLog) for the background."""
    v.recorded.append(g)


def dispatch_op(v: Vigil, g: Guard, errata: frozenset[str] = NO_ERRATA) -> DispatchResult:
    """dispatch_op(entry, ...): the hot path when compiled, else a transition or recording."""
    if v.ctx.mode == ContextMode.COMPILED:  # A. replay
        s = ctx_.advance(v.ctx, g, errata)
        if s == ReplayStatus.DIVERGED:
            return handle_divergence(v, g, errata)
        return DispatchResult(Action.COMPILED, s)
    if v.pending_region is not None or v.pending_activation is not None:  # B. transition
        return dispatch_transition(v, g, errata)
    record_op(v, g)  # C. plain recording
    return DispatchResult()


def dispatch_transition(v: Vigil, g: Guard, errata: frozenset[str]) -> DispatchResult:
    """A published region is waiting: consume it, then align (or record when none is left)."""
    if v.pending_region is not None:  # 1. consume: a newer region restarts alignment
        r, v.pending_region = v.pending_region, None
        if r.num_ops > 0:
            v.pending_activation, v.alignment_pos = r, 0
    if v.pending_activation is not None:  # 2. align; the op is not recorded
        try_align(v, g, errata)
    else:
        record_op(v, g)
    return DispatchResult()


def alignment_step(r: ReplayRegion, pos: int, g: Guard, errata: frozenset[str]) -> int:
    """The matched prefix length after op g. The spec keeps the longest suffix of the stream
    that is a prefix of the region (a sliding window; the region's first pos ops are that
    suffix so far); under E11.5 the seed restarts at 0 on a mismatch (1 when g is the
    region's op 0), missing overlapping starts."""
    key = guard_key(g, errata)
    if E11_5 in errata:
        if key == guard_key(r.ops[pos].guard, errata):
            return pos + 1
        return 1 if key == guard_key(r.ops[0].guard, errata) else 0
    seq = [guard_key(op.guard, errata) for op in r.ops[:pos]] + [key]
    for n in range(len(seq), 0, -1):
        if seq[-n:] == [guard_key(op.guard, errata) for op in r.ops[:n]]:
            return n
    return 0


def try_align(v: Vigil, g: Guard, errata: frozenset[str]) -> None:
    """One alignment step; at min(K, n) matched ops the region is activated and the engine
    catches up past them (a region of at most K ops completes a pass right here)."""
    r = v.pending_activation
    v.alignment_pos = alignment_step(r, v.alignment_pos, g, errata)  # 1
    if v.alignment_pos < min(r.num_ops, ALIGNMENT_K):  # 2. threshold
        return
    if not ctx_.activate(v.ctx, r):  # 3. no plan: give up on this region
        v.pending_activation = None
        v.events.append("no_plan")
        return
    register_externals_from_region(v, r)  # 4
    cache_.insert(v.region_cache, r)
    for i in range(v.alignment_pos):  # 5. the engine catches up (a short region completes)
        s = ctx_.advance(v.ctx, r.ops[i].guard, errata)
        assert s != ReplayStatus.DIVERGED
    v.mode = Mode.COMPILED  # 6
    v.pending_activation = None
    v.events.append("aligned")


def register_externals_from_region(v: Vigil, r: ReplayRegion) -> None:
    """Each external slot takes the data pointer of the first op input that reads it (the
    first non-null one, scanning ops in order)."""
    if r.plan is None:
        return
    for target, slot in enumerate(r.plan.slots):
        if not slot.is_external:
            continue
        ptr = 0
        for op in r.ops:
            if op.input_slot_ids is None:
                continue
            for j, sid in enumerate(op.input_slot_ids):
                if sid == target:
                    ptr = op.input_ptrs[j] if j < len(op.input_ptrs) else 0
                    break
            if ptr:
                break
        if ptr:
            ctx_.register_external(v.ctx, target, ptr)


def handle_divergence(v: Vigil, g: Guard, errata: frozenset[str]) -> DispatchResult:
    """Replay met an op it did not expect: switch to a cached alternate that has it at this
    position, or fall back to recording without recording the op."""
    div_pos = v.ctx.engine.ops_matched  # 1. where it diverged
    active = v.ctx.active_region
    cache_.insert(v.region_cache, active)  # 2. keep the diverging region for later switches
    alt = cache_.find_alternate(v.region_cache, div_pos, g, active, errata)  # 3
    if alt is not None and try_switch_region(v, alt, div_pos, errata):  # 4. switch, go on
        s = ctx_.advance(v.ctx, g, errata)
        assert s != ReplayStatus.DIVERGED, "alt's op at div_pos has g's guard"
        v.events.append("switched")
        return DispatchResult(Action.COMPILED, s, v.ctx.engine.ops_matched)
    assert v.ctx.mode == ContextMode.COMPILED, "a switch that was not made changes nothing"
    ctx_.deactivate(v.ctx)  # 5. fall back to recording; g is not recorded
    v.mode = Mode.RECORDING if E11_2 in errata else Mode.DIVERGED
    v.reset_requested = True
    v.events.append("fallback")
    return DispatchResult(Action.RECORD, ReplayStatus.DIVERGED)


def try_switch_region(v: Vigil, alt: ReplayRegion, div_pos: int,
                      errata: frozenset[str]) -> bool:
    """Switch when alt has a plan and, for div_pos > 0, the same guards on ops [0, div_pos)."""
    if alt.plan is None:
        return False
    if not prefix_replays(v.ctx.active_region, alt, div_pos, errata):
        return False
    ok, moved = ctx_.switch_region(v.ctx, alt, div_pos, errata)
    assert ok, "a region with a plan always switches"
    v.migrations = moved
    register_externals_from_region(v, alt)
    return True


def rollback(v: Vigil, errata: frozenset[str] = NO_ERRATA) -> bool:
    """rollback(): the previous SUPERSEDED transaction is active again and the context is
    re-activated on its region; Vigil::mode_ is left as it is. The spec also drops a pending
    or aligning region, which the seed keeps and later activates (E11.6)."""
    if not tx_.rollback(v.tx_log):  # 1
        return False
    if v.ctx.mode == ContextMode.COMPILED:  # 2
        ctx_.deactivate(v.ctx)
    if E11_6 not in errata:
        v.pending_region = v.pending_activation = None
    tx = v.tx_log.entries[v.tx_log.active]  # 3. the restored transaction's region
    r = v.regions.get(tx.region) if tx.region is not None else None
    if r is not None:
        v.bg_active = r
        if ctx_.activate(v.ctx, r):  # 4
            register_externals_from_region(v, r)
    return True


def cdag_of(r: ReplayRegion) -> CdagRegion:
    """The region as a CDAG file describes it: an input's meta carries its data pointer (the
    writer stores it as 0), the merkle hash is the content hash (as on_region_ready commits)."""
    meta = TENSOR_META.default_values()
    ops = []
    for op in r.ops:
        n_in = max(len(op.input_slot_ids or []), len(op.input_ptrs))
        ptrs = op.input_ptrs + [0] * (n_in - len(op.input_ptrs))
        ops.append(TraceOp(op.guard.schema, op.guard.shape, op.guard.scope, op.guard.callsite,
                           inputs=[meta | {"data_ptr": p} for p in ptrs],
                           outputs=[meta] * len(op.output_slot_ids or []),
                           input_slot_ids=op.input_slot_ids, output_slot_ids=op.output_slot_ids))
    plan = None
    if r.plan is not None:
        slot = TENSOR_SLOT.default_values()
        plan = CdagPlan(r.plan.pool_bytes, sum(s.is_external for s in r.plan.slots), slots=[
            slot | {"offset_bytes": s.offset_bytes, "nbytes": s.nbytes,
                    "is_external": s.is_external, "slot_id": k}
            for k, s in enumerate(r.plan.slots)])
    first = r.ops[0].guard.schema if r.ops else 0
    return CdagRegion(ops, r.content_hash, r.content_hash, first, plan=plan)


def region_of(c: CdagRegion, rid: int) -> ReplayRegion:
    """A loaded CDAG region as replay reads it (named by the region first stored under its
    hash); its input data pointers come back as the file holds them."""
    ops = [replay_op_of(op) for op in c.ops]
    plan = None if c.plan is None else ReplayPlan(c.plan.pool_bytes, [
        ReplaySlot(s["offset_bytes"], s["nbytes"], bool(s["is_external"])) for s in c.plan.slots])
    return ReplayRegion(rid, ops, plan, c.content_hash)


def cipher_store(v: Vigil, r: ReplayRegion, errata: frozenset[str]) -> int:
    """cipher.store(region): the content hash once the object exists, else 0."""
    h = v.cipher.store(cdag_of(r), errata)
    if h:
        v.stored.setdefault(h, r.rid)
    return h


def persist(v: Vigil, errata: frozenset[str] = NO_ERRATA) -> bool:
    """persist(): store the background's active region and advance the head to the step."""
    if v.cipher is None or v.bg_active is None:  # 1
        return False
    h = cipher_store(v, v.bg_active, errata)  # 2
    if not h:
        return False
    v.cipher.advance_head(h, v.step)  # 3
    return True


def load(v: Vigil) -> bool:
    """load(): the head's region becomes the active one and Vigil::mode_ COMPILED, even when
    the context cannot activate it (no plan); with a plan it is activated and cached."""
    if v.cipher is None or v.cipher.empty():  # 1
        return False
    c = v.cipher.load(v.cipher.head)  # 2
    if c is None:
        return False
    r = region_of(c, v.stored[v.cipher.head])
    v.bg_active = r  # 3
    v.mode = Mode.COMPILED
    if ctx_.activate(v.ctx, r):  # 4
        register_externals_from_region(v, r)
        cache_.insert(v.region_cache, r)
    return True


def mode_consistent(v: Vigil) -> bool:
    """Invariant: the context is compiled exactly when it has an active region, and then
    nothing is waiting for alignment."""
    compiled = v.ctx.mode == ContextMode.COMPILED
    return compiled == (v.ctx.active_region is not None) and \
        (not compiled or v.pending_activation is None)


erratum(
    E11_2, "Vigil never enters its DIVERGED mode",
    seed="crucible@8d2680a2", location="include/crucible/Vigil.h: handle_divergence_",
    ops=("vigil.dispatch",),
    witness={"args": {"regions": [{"ops": [{"schema_hash": "0x1"}, {"schema_hash": "0x2"}],
                                   "plan": {"slots": []}}],
                      "stream": [{"schema_hash": "0x1"}, {"schema_hash": "0x2"},
                                 {"schema_hash": "0x9"}]},
             "spec": {"mode": 2}, "seed": {"mode": 0}},
    flag="result",
    detail="Vigil::Mode documents DIVERGED as 'guard mismatch, fell back from COMPILED', but "
           "no code assigns it: a fallback sets RECORDING directly, so mode() cannot tell a "
           "fresh Vigil from one whose replay just failed. The spec's fallback sets DIVERGED; "
           "the next published region sets COMPILED as before.",
)

erratum(
    E11_5, "Alignment misses an iteration start that overlaps a failed partial match",
    seed="crucible@8d2680a2", location="include/crucible/Vigil.h: try_align_",
    ops=("vigil.dispatch",),
    witness={"args": {"regions": [{"ops": [{"schema_hash": "0xa"}, {"schema_hash": "0xa"},
                                           {"schema_hash": "0xb"}],
                                   "plan": {"slots": []}}],
                      "stream": [{"schema_hash": "0xa"}, {"schema_hash": "0xa"},
                                 {"schema_hash": "0xa"}, {"schema_hash": "0xb"}]},
             "spec": {"ctx_mode": 1}, "seed": {"ctx_mode": 0}},
    flag="result",
    detail="try_align_ is documented as a sliding-window match of the last K ops against the "
           "region's first K, but on a mismatch it restarts from 0 (or 1 if the op equals "
           "op 0). After a, a, a, b against a region a, a, b, ... the window a, a, b matched; "
           "the seed has lost it and waits for the next iteration. The spec keeps the longest "
           "suffix of the stream that is a prefix of the region.",
)

erratum(
    E11_6, "rollback leaves the rolled-back region pending for alignment",
    seed="crucible@8d2680a2", location="include/crucible/Vigil.h: rollback",
    ops=("vigil.dispatch",),
    witness={"args": {"regions": [{"ops": [{"schema_hash": "0x1"}, {"schema_hash": "0x2"}],
                                   "plan": {"slots": []}},
                                  {"ops": [{"schema_hash": "0x3"}, {"schema_hash": "0x4"}],
                                   "plan": {"slots": []}}],
                      "published": [0],
                      "stream": [{"schema_hash": "0x1"}, {"schema_hash": "0x2"},
                                 {"publish": 1}, {"rollback": True}, {"schema_hash": "0x9"},
                                 {"schema_hash": "0x3"}, {"schema_hash": "0x4"}]},
             "spec": {"ctx_mode": 0, "active_region": None},
             "seed": {"ctx_mode": 1, "active_region": 1}},
    flag="result",
    detail="rollback() is documented to restore the previous transaction as the active one, "
           "but it leaves pending_region_ and pending_activation_ as they are: a region "
           "published while the context was compiled and then rolled back is consumed at the "
           "next fallback, aligned and activated, so the context replays a region whose "
           "transaction is ROLLED_BACK. The spec's rollback drops what was waiting to align.",
)
