"""Chapter 11: CrucibleContext, the foreground's replay state: RECORD or COMPILED, the active
region, its pool and engine, and two counters that are never reset."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from . import pool_allocator as pool_
from . import replay_engine as engine_
from .pool_allocator import PoolAllocator
from .replay_engine import ReplayEngine, ReplayStatus
from .replay_region import Guard, ReplayRegion
from .types import NONE32

E11_3 = "E11.3"
MIGRATION_MAX_SLOTS = 1024
"""The migration bitset covers at most 1024 slots of the new plan. Real code:
`CrucibleContext.h`, the migration bitset."""


class ContextMode(enum.IntEnum):
    RECORD = 0
    COMPILED = 1


@dataclass(frozen=True)
class Migration:
    """One prefix slot copied into the new pool on a region switch."""

    op: int
    old_slot: int
    new_slot: int
    nbytes: int


@dataclass
class CrucibleContext:
    mode: ContextMode = ContextMode.RECORD
    compiled_iterations: int = 0
    diverged_count: int = 0
    active_region: ReplayRegion | None = None
    pool: PoolAllocator = field(default_factory=PoolAllocator)
    engine: ReplayEngine = field(default_factory=ReplayEngine)


def activate(c: CrucibleContext, r: ReplayRegion) -> bool:
    """activate(region): a region without a plan cannot be compiled."""
    if r.plan is None:  # 1
        return False
    if c.mode == ContextMode.COMPILED:  # 2
        deactivate(c)
    pool_.init(c.pool, r.plan)  # 3
    engine_.init(c.engine, r.ops, c.pool)  # 4. cursor 0, primed from op 0
    c.active_region, c.mode = r, ContextMode.COMPILED  # 5
    return True


def deactivate(c: CrucibleContext) -> None:
    """Back to RECORD: the pool is freed, the engine is left as it is."""
    c.mode = ContextMode.RECORD
    pool_.destroy(c.pool)
    c.active_region = None


def advance(c: CrucibleContext, got: Guard, errata: frozenset[str] = NO_ERRATA
            ) -> ReplayStatus:
    """advance(schema, shape); precondition: COMPILED."""
    assert c.mode == ContextMode.COMPILED
    s = engine_.advance(c.engine, got, errata)  # 1
    if s == ReplayStatus.COMPLETE:  # 2. an iteration ends: count it, back to op 0
        c.compiled_iterations += 1
        engine_.reset(c.engine)
    elif s == ReplayStatus.DIVERGED:  # 3. count it; the caller decides
        c.diverged_count += 1
    return s


def register_external(c: CrucibleContext, sid: int, ptr: int) -> None:
    assert c.mode == ContextMode.COMPILED
    pool_.register_external(c.pool, sid, ptr)


def migrate_prefix_slots(old: ReplayRegion, alt: ReplayRegion, old_buffer: bool, div_pos: int,
                         errata: frozenset[str] = NO_ERRATA) -> list[Migration]:
    """The prefix outputs copied from the old pool to the new one: for ops i < div_pos with
    both output id arrays, output j pairs old and new slot ids; none ids, externals on either
    side and new slots already copied are skipped. The spec copies min(old, new) bytes; under
    E11.3 the seed copies the old slot's nbytes even into a smaller new slot."""
    assert len(alt.plan.slots) <= MIGRATION_MAX_SLOTS
    visited: set[int] = set()
    out = []
    for i in range(div_pos):  # 1. the prefix ops
        old_ids, new_ids = old.ops[i].output_slot_ids, alt.ops[i].output_slot_ids
        if old_ids is None or new_ids is None:
            continue
        for j in range(min(len(old_ids), len(new_ids))):  # 2. output j of both
            o, n = old_ids[j], new_ids[j]
            if o == NONE32 or n == NONE32:
                continue
            if old.plan.slots[o].is_external or alt.plan.slots[n].is_external:  # 3
                continue
            if n in visited:  # 4. each new slot once
                continue
            visited.add(n)
            nbytes = old.plan.slots[o].nbytes  # 5. the copy
            if E11_3 not in errata:
                nbytes = min(nbytes, alt.plan.slots[n].nbytes)
            if nbytes > 0 and old_buffer:
                out.append(Migration(i, o, n, nbytes))
    return out


def switch_region(c: CrucibleContext, alt: ReplayRegion, div_pos: int,
                  errata: frozenset[str] = NO_ERRATA) -> tuple[bool, list[Migration]]:
    """switch_region(alt, div_pos); precondition: COMPILED. Returns whether it switched and
    the slots migrated."""
    assert c.mode == ContextMode.COMPILED
    if alt.plan is None:  # 1
        return False, []
    if div_pos == 0:  # 2. nothing to carry over
        return activate(c, alt), []
    old = c.active_region
    had_buffer, _ = pool_.detach(c.pool)  # 3. the old buffer lives until the copy is done
    pool_.init(c.pool, alt.plan)  # 4
    moved = migrate_prefix_slots(old, alt, had_buffer, div_pos, errata)  # 5
    engine_.init(c.engine, alt.ops, c.pool)  # 6
    c.active_region = alt
    for i in range(div_pos):  # 7. the engine catches up; the counters are not touched
        s = engine_.advance(c.engine, alt.ops[i].guard, errata)
        assert s != ReplayStatus.DIVERGED
    return True, moved


def _witness_results(nbytes: int) -> list[dict]:
    return [{"ok": True}, {"status": 0, "outputs": [{"slot": 0, "offset": 0}], "inputs": []},
            {"ok": True, "migrations": [{"op": 0, "old_slot": 0, "new_slot": 0,
                                         "nbytes": nbytes}]}]


erratum(
    E11_3, "A region switch copies the old slot's size into the new slot",
    seed="crucible@8d2680a2", location="include/crucible/CrucibleContext.h: "
                                      "migrate_prefix_slots_",
    ops=("context.simulate", "vigil.dispatch"),
    witness={"op": "context.simulate", "args": {"regions": [
        {"ops": [{"schema_hash": "0x1", "output_slot_ids": [0]}, {"schema_hash": "0x2"}],
         "plan": {"slots": [{"offset_bytes": 0, "nbytes": 2048}]}},
        {"ops": [{"schema_hash": "0x1", "output_slot_ids": [0]}, {"schema_hash": "0x3"}],
         "plan": {"slots": [{"offset_bytes": 0, "nbytes": 256}]}}],
        "steps": [{"op": "activate", "region": 0},
                  {"op": "advance", "schema_hash": "0x1", "shape_hash": "0x0"},
                  {"op": "switch", "region": 1, "pos": 1}]},
        "spec": {"results": _witness_results(256)}, "seed": {"results": _witness_results(2048)}},
    flag="result",
    detail="Prefix ops match on their guard hashes only, which does not fix a tensor's byte "
           "size (strides, storage offset, a hash collision). The seed copies "
           "old_plan.slots[old].nbytes into the new slot whatever its size, writing past it "
           "into its neighbours or past the pool (2048 bytes into a 256-byte slot in the "
           "witness: the switch's migrations say nbytes 2048 under the seed profile, 256 under "
           "the spec's). The spec copies min(old, new) bytes.",
)
