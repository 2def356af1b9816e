"""Chapter 11: ReplayEngine, the cursor that checks each dispatched op against the region's
next op and names the slots it reads and writes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from .pool_allocator import PoolAllocator
from .replay_region import E11_1, Guard, ReplayOp, guard_key

NO_GUARD = Guard(0, 0)
"""The expected hashes of an empty region."""


class ReplayStatus(enum.IntEnum):
    MATCH = 0
    DIVERGED = 1
    COMPLETE = 2


@dataclass
class ReplayEngine:
    """cursor_/end_ as indices into ops; current is the last matched op (None before any)."""

    ops: list[ReplayOp] = field(default_factory=list)
    cursor: int = 0
    current: int | None = None
    expected: Guard = NO_GUARD
    pool: PoolAllocator | None = None

    @property
    def ops_matched(self) -> int:
        """diverged_op_index: how many ops of this pass matched; the next expected op."""
        return self.cursor

    @property
    def is_complete(self) -> bool:
        return self.cursor == len(self.ops)


def prime(e: ReplayEngine) -> None:
    """The expected hashes are the cursor's op's (0 for an empty region)."""
    e.expected = e.ops[e.cursor].guard if e.cursor < len(e.ops) else NO_GUARD


def init(e: ReplayEngine, ops: list[ReplayOp], pool: PoolAllocator) -> None:
    """init(region, pool); precondition: the pool is initialized (under E11.4 a debug build
    of the seed aborts here for a 0-slot plan; the model goes on, as a release build does)."""
    assert pool.initialized, "ReplayEngine::init on an uninitialized pool"
    e.ops, e.pool, e.cursor, e.current = ops, pool, 0, None
    prime(e)


def advance(e: ReplayEngine, got: Guard, errata: frozenset[str] = NO_ERRATA) -> ReplayStatus:
    """advance(guard); precondition: cursor < end."""
    assert e.cursor < len(e.ops), "advance past the end of the region"
    if guard_key(got, errata) != guard_key(e.expected, errata):  # 1. a guard fails: no move
        return ReplayStatus.DIVERGED
    e.current = e.cursor  # 2. matched
    e.cursor += 1
    if e.cursor == len(e.ops):  # 3. the pass is complete; expected is left as it is
        return ReplayStatus.COMPLETE
    prime(e)  # 4. the next op's hashes
    return ReplayStatus.MATCH


def reset(e: ReplayEngine) -> None:
    """Back to op 0; current is kept so the last op's slots stay readable."""
    e.cursor = 0
    prime(e)


def current_ids(e: ReplayEngine, name: str) -> list[int]:
    """The slot ids (input_slot_ids or output_slot_ids) of the last matched op; none before
    any match or where the array is null."""
    return (getattr(e.ops[e.current], name) or []) if e.current is not None else []


erratum(
    E11_1, "Replay guards check the schema and shape hashes only, not scope and callsite",
    seed="crucible@8d2680a2", location="include/crucible/ReplayEngine.h: advance",
    ops=("replay.engine", "vigil.dispatch", "region_cache.simulate"),
    witness={"args": {"region": [{"schema_hash": "0x100", "shape_hash": "0x200",
                                  "scope_hash": "0x1"}],
                      "stream": [{"schema_hash": "0x100", "shape_hash": "0x200",
                                  "scope_hash": "0x2"}]},
             "spec": {"statuses": [1], "diverged": 1},
             "seed": {"statuses": [2], "diverged": 0}},
    flag="result",
    detail="The whitepaper (Fig. 7) describes four-level divergence detection: schema, shape, "
           "scope and callsite. The seed compares only schema_hash and shape_hash, so an op "
           "from another module or call site with the same schema and shapes replays as a "
           "match. The spec checks all four, in that order, wherever ops are compared: the "
           "engine's guard, alignment, the cache's alternate search and the prefix check of a "
           "region switch.",
)
