"""Chapter 11: PoolAllocator, the one pool an active region's plan lives in.

Pointers are abstract: a slot's handle is ("pool", offset) for an internal slot and
("external", pointer) once an external slot is registered; None stands for a null pointer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..core.errata import NO_ERRATA, erratum
from .memory_plan import ALIGNMENT
from .replay_region import ReplayPlan

E11_4 = "E11.4"


class Handle(NamedTuple):
    """What slot_ptr gives: a pool offset or a registered external pointer."""

    kind: str
    value: int


@dataclass
class PoolAllocator:
    """The pool's counts, whether a buffer is held, and the slot table (None until init)."""

    pool_bytes: int = 0
    num_slots: int = 0
    num_external: int = 0
    has_buffer: bool = False
    table: list[Handle | None] | None = None
    initialized: bool = False


def is_initialized(p: PoolAllocator, errata: frozenset[str] = NO_ERRATA) -> bool:
    """The spec: init has run since the last destroy. Under E11.4 the seed asks whether the
    slot table exists, so a pool of a 0-slot plan is never initialized."""
    return p.table is not None if E11_4 in errata else p.initialized


def init(p: PoolAllocator, plan: ReplayPlan) -> None:
    """init(plan); precondition: not initialized."""
    assert not p.initialized, "PoolAllocator initialized twice"
    p.pool_bytes, p.num_slots = plan.pool_bytes, len(plan.slots)  # 1. copy the counts
    p.num_external = sum(s.is_external for s in plan.slots)
    p.has_buffer = plan.pool_bytes > 0  # 2. aligned_alloc(256, align256(pool_bytes))
    p.table = None
    if plan.slots:  # 3. the table: base + offset per internal slot, externals null
        p.table = [None] * len(plan.slots)
        for sid, s in enumerate(plan.slots):
            if not s.is_external:
                assert s.offset_bytes % ALIGNMENT == 0
                assert s.offset_bytes + s.nbytes <= plan.pool_bytes
                p.table[sid] = Handle("pool", s.offset_bytes)
    p.initialized = True


def slot_ptr(p: PoolAllocator, sid: int) -> Handle | None:
    """table[sid]."""
    assert p.table is not None and sid < p.num_slots
    return p.table[sid]


def register_external(p: PoolAllocator, sid: int, ptr: int) -> None:
    """table[sid] = ptr (ptr is never null)."""
    assert p.table is not None and sid < p.num_slots and ptr != 0
    p.table[sid] = Handle("external", ptr)


def destroy(p: PoolAllocator) -> None:
    """Free the buffer and the table and zero every field."""
    p.pool_bytes = p.num_slots = p.num_external = 0
    p.has_buffer, p.table, p.initialized = False, None, False


def detach(p: PoolAllocator) -> tuple[bool, int]:
    """Hand out the buffer (whether one was held, its size) and reset the allocator."""
    out = (p.has_buffer, p.pool_bytes)
    destroy(p)
    return out


erratum(
    E11_4, "A pool whose plan has no slots never counts as initialized",
    seed="crucible@8d2680a2", location="include/crucible/PoolAllocator.h: is_initialized",
    ops=("context.simulate",),
    witness={"args": {"regions": [{"ops": [{"schema_hash": "0x1"}], "plan": {"slots": []}}],
                      "steps": [{"op": "activate", "region": 0}]},
             "spec": {"mode": 1, "pool": {"initialized": True, "pool_bytes": 0,
                                          "num_slots": 0, "num_external": 0}},
             "seed": {"mode": 1, "pool": {"initialized": False, "pool_bytes": 0,
                                          "num_slots": 0, "num_external": 0}}},
    flag="result",
    detail="is_initialized() is 'the slot table is non-null', and init allocates no table for "
           "0 slots: after activating a region with an empty plan the pool reports itself "
           "uninitialized, and ReplayEngine::init's precondition (the pool is initialized) "
           "fails — a debug build aborts there, a release build goes on. The spec counts a "
           "pool as initialized once init has run, whatever its slot count.",
)
