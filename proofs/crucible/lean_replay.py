"""Chapter 11 obligations from the Lean formalization's Pool and Mode modules: the pool
allocator built from the spec's own memory plans, and CrucibleContext's mode machine driven by
random steps through the spec's own activate, advance and deactivate."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from ...spec.core.bits import is_pow2
from ...spec.core.registry import Mutant
from ...spec.crucible import context as ctx
from ...spec.crucible import memory_plan as mp
from ...spec.crucible import pool_allocator as pool
from ...spec.crucible import replay_engine as engine
from ...spec.crucible.context import ContextMode
from ...spec.crucible.replay_engine import ReplayStatus
from ...spec.crucible.replay_region import Guard, ReplayOp, ReplayPlan, ReplayRegion, ReplaySlot
from ..core.obligation import Property, property_obligation

EXTERNAL_PTR = 0x7F00_0000_1000


def _replay_plan(args: dict) -> tuple[ReplayPlan, list[mp.PlanSlot]]:
    slots = mp.plan_slots(args["slots"])
    plan = mp.compute_memory_plan(slots)
    return ReplayPlan(plan.pool_bytes, [ReplaySlot(off, s.nbytes, s.is_external) for off, s in
                                        zip(plan.offsets, slots, strict=True)]), slots


def _check_pool(args: dict) -> None:
    plan, slots = _replay_plan(args)
    p = pool.PoolAllocator()
    assert not pool.is_initialized(p), "a fresh pool says it is initialized"
    pool.init(p, plan)
    assert pool.is_initialized(p)
    assert (p.num_slots, p.pool_bytes) == (len(slots), plan.pool_bytes)
    for sid, s in enumerate(plan.slots):
        h = pool.slot_ptr(p, sid)
        if s.is_external:
            assert h is None, f"external slot {sid} has {h}"
            pool.register_external(p, sid, EXTERNAL_PTR + sid)
            assert pool.slot_ptr(p, sid) == ("external", EXTERNAL_PTR + sid)
        else:
            assert h == ("pool", s.offset_bytes) and h.value % 256 == 0
            assert h.value + s.nbytes <= p.pool_bytes, f"slot {sid} ends past the pool"
    assert (p.num_slots, p.pool_bytes) == (len(slots), plan.pool_bytes), "externals moved it"
    assert pool.detach(p) == (plan.pool_bytes > 0, plan.pool_bytes)
    assert p == pool.PoolAllocator(), f"detach left {p}"


def _check_alignment(n: int) -> None:
    assert mp.ALIGNMENT == 1 << 8 and is_pow2(mp.ALIGNMENT) and mp.ALIGNMENT % 64 == 0
    r = mp.align256(n)
    assert all(r % (1 << e) == 0 for e in range(9)), f"align256({n}) = {r} is not 256-aligned"
    assert n <= r < n + 256, f"align256({n}) = {r} is not the least"


@property_obligation(
    "PO11.40",
    "PoolAllocator from the spec's own plans (random slot sets): a fresh pool is not "
    "initialized; init keeps the plan's slot count and pool size, gives every internal slot "
    "its 256-aligned offset with offset + nbytes <= pool and externals nothing; registering "
    "externals changes neither count; detach returns the whole buffer and leaves a zeroed "
    "pool. ALIGNMENT is 2^8, a multiple of the 64-byte line, and align256(n) is the least "
    "multiple of 256 that is >= n, so a multiple of every divisor of 256.",
    covers=("context.simulate",),
    subject=pool.init,
    mutants=(
        Mutant.edit("keeps pool bytes", "destroy forgets to zero pool_bytes", pool.destroy,
                    "p.pool_bytes = p.num_slots = p.num_external = 0",
                    "p.num_slots = p.num_external = 0"),
        Mutant.edit("round short", "align256 adds 254: n = 256k + 1 rounds down", mp.align256,
                    "(n + ALIGNMENT - 1)", "(n + ALIGNMENT - 2)"),
        Mutant.edit("count one less", "init counts one slot less", pool.init,
                    "len(plan.slots)  # 1.", "len(plan.slots) - 1  # 1."),
    ),
)
def pool_from_plans(subject):
    return [Property("pool from plan", _check_pool, strategy=mp.slot_sets, examples=100),
            Property("alignment", _check_alignment,
                     cases=lambda: [*range(0, 1030), 2 ** 32 - 1, 2 ** 40 + 1])]


GUARDS = (Guard(1, 1), Guard(2, 1), Guard(1, 2), Guard(3, 3))
"""Guards of a small alphabet; (1, 2) differs from (1, 1) only in its shape hash."""


@dataclass(frozen=True)
class ModeRun:
    ops: tuple[int, ...]
    steps: tuple[tuple[str, int], ...]


def mode_runs() -> st.SearchStrategy:
    op = st.integers(0, len(GUARDS) - 1)
    step = st.tuples(st.sampled_from(("activate", "deactivate", "advance", "advance",
                                      "advance")), op)
    return st.builds(ModeRun, st.lists(op, min_size=1, max_size=4).map(tuple),
                     st.lists(step, max_size=30).map(tuple))


def _region(ops: tuple[int, ...]) -> ReplayRegion:
    return ReplayRegion(0, [ReplayOp(GUARDS[g]) for g in ops], ReplayPlan(0, []), 0)


def _well_formed(c: ctx.CrucibleContext) -> None:
    if c.mode == ContextMode.COMPILED:
        n = c.active_region.num_ops
        assert n > 0 and 0 <= c.engine.cursor < n, f"COMPILED with cursor {c.engine.cursor}"
    else:
        assert c.active_region is None, "RECORD with an active region"


def _advance(c: ctx.CrucibleContext, got: Guard) -> None:
    cursor, n = c.engine.cursor, c.active_region.num_ops
    iters, diverged = c.compiled_iterations, c.diverged_count
    expected = c.active_region.ops[cursor].guard
    s = ctx.advance(c, got)
    assert c.mode == ContextMode.COMPILED and c.active_region.num_ops == n
    if got != expected:
        assert s == ReplayStatus.DIVERGED and c.engine.cursor == cursor
        assert (c.compiled_iterations, c.diverged_count) == (iters, diverged + 1)
    elif cursor + 1 < n:
        assert s == ReplayStatus.MATCH and c.engine.cursor == cursor + 1
        assert (c.compiled_iterations, c.diverged_count) == (iters, diverged)
    else:
        assert s == ReplayStatus.COMPLETE and c.engine.cursor == 0
        assert (c.compiled_iterations, c.diverged_count) == (iters + 1, diverged)


def _check_mode(run: ModeRun) -> None:
    c = ctx.CrucibleContext()
    _well_formed(c)
    r = _region(run.ops)
    for kind, g in run.steps:
        counters = (c.compiled_iterations, c.diverged_count)
        if kind == "activate":
            assert ctx.activate(c, r) and c.mode == ContextMode.COMPILED
            assert c.engine.cursor == 0
        elif kind == "deactivate":
            ctx.deactivate(c)
            assert c.mode == ContextMode.RECORD
        elif c.mode == ContextMode.COMPILED:
            _advance(c, GUARDS[g])
        if kind != "advance":
            assert (c.compiled_iterations, c.diverged_count) == counters
        _well_formed(c)


def _check_full_pass(run: ModeRun) -> None:
    c = ctx.CrucibleContext()
    r = _region(run.ops)
    ctx.activate(c, r)
    got = [ctx.advance(c, op.guard) for op in r.ops]
    assert got == [ReplayStatus.MATCH] * (len(r.ops) - 1) + [ReplayStatus.COMPLETE]
    assert (c.compiled_iterations, c.diverged_count, c.engine.cursor) == (1, 0, 0)


@property_obligation(
    "PO11.41",
    "CrucibleContext under random activate, deactivate and advance steps on a 1..4-op region "
    "(guards that differ in schema, or only in shape): COMPILED always has a region with "
    "0 <= cursor < num_ops; a match before the last op gives MATCH and cursor + 1, the last "
    "gives COMPLETE, cursor 0 and one more iteration, a miss gives DIVERGED, the cursor kept "
    "and one more divergence; advance keeps the mode and the region; deactivate always "
    "returns to RECORD; activate and deactivate keep both counters; feeding the region's "
    "guards in order from activation is one clean pass.",
    covers=("context.simulate", "replay.engine"),
    subject=ctx.advance,
    mutants=(
        Mutant.edit("no reset", "a COMPLETE pass leaves the cursor at the end", ctx.advance,
                    "engine_.reset(c.engine)", "engine_.prime(c.engine)"),
        Mutant.edit("stays compiled", "deactivate leaves the mode COMPILED", ctx.deactivate,
                    "c.mode = ContextMode.RECORD", "c.mode = c.mode"),
        Mutant.edit("complete early", "the pass completes one op early", engine.advance,
                    "if e.cursor == len(e.ops):", "if e.cursor == len(e.ops) - 1:"),
    ),
)
def context_mode_machine(subject):
    return [Property("random steps", _check_mode, strategy=mode_runs, examples=200),
            Property("one clean pass", _check_full_pass, strategy=mode_runs, examples=50)]
