"""Op `context.simulate`: CrucibleContext driven step by step, as the seed's context tests do.

Args: regions (region wire form, named by index) and steps: {"op": "activate", "region"},
{"op": "deactivate"}, {"op": "advance", "schema_hash", "shape_hash", "scope_hash"?,
"callsite_hash"?}, {"op": "register_external", "slot", "ptr"}, {"op": "switch", "region",
"pos"}. advance, register_external and switch need a compiled context; a switch needs the new
region's first pos ops to replay (the caller checks the prefix), and advance an active
region with at least one op. Result per step: activate and switch {ok} (a switch also lists
its migrations), advance {status, outputs, inputs} with the handles of the op it matched (none
on DIVERGED); and the final mode, counters, active region, cursor and pool.
"""

from __future__ import annotations

from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.layout import hash64, u32
from ..core.layout_ops import wire_schema
from ..core.registry import InvalidCase, declare
from ..core.schema import U32, Field, Json, record
from ..core.steps import parse_steps, step_field, steps_schema
from ..core.strategies import st
from . import context as cx
from .context import ContextMode, CrucibleContext
from .pool_allocator import is_initialized
from .replay_engine import ReplayStatus
from .replay_ops import region_index, region_ops, step_guard
from .replay_region import REGIONS, prefix_replays, regions_from_wire
from .vigil_ops import HANDLES, chain_region, current_handles

CONTEXT_STEPS = {"activate": ("region",), "deactivate": (),
                 "advance": ("schema_hash", "shape_hash", "scope_hash", "callsite_hash"),
                 "register_external": ("slot", "ptr"), "switch": ("region", "pos")}


_HASH, _U32 = wire_schema(hash64), wire_schema(u32)
CONTEXT_STEPS_SCHEMA = steps_schema(CONTEXT_STEPS, {
    "region": _U32, "schema_hash": _HASH, "shape_hash": _HASH, "scope_hash": _HASH,
    "callsite_hash": _HASH, "slot": _U32, "ptr": _HASH, "pos": _U32},
    {"activate": ("region",), "advance": ("schema_hash", "shape_hash"),
     "register_external": ("slot", "ptr"), "switch": ("region", "pos")})
MIGRATIONS = js.array(js.obj({"op": js.uint(32), "old_slot": js.uint(32),
                              "new_slot": js.uint(32), "nbytes": js.uint(64)}))
CONTEXT_ANSWERS = js.array(js.one_of(
    js.obj({"ok": js.BOOLEAN}), js.obj(),
    js.obj({"status": js.uint(8), "outputs": HANDLES, "inputs": HANDLES}),
    js.obj({"ok": js.BOOLEAN, "migrations": MIGRATIONS})))
"""Answers: activate {ok}, deactivate and register_external {}, advance {status, outputs,
inputs}, switch {ok, migrations}."""


def _compiled(c: CrucibleContext, op: str, path: str) -> None:
    if c.mode != ContextMode.COMPILED:
        raise InvalidInput(f"{path}: {op} needs a compiled context")


def context_simulate(regions: Any, steps: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run the steps on a fresh CrucibleContext."""
    rs = regions_from_wire(regions, "args.regions")
    c = CrucibleContext()
    results: list[dict] = []
    for i, (op, s) in enumerate(parse_steps(steps, CONTEXT_STEPS)):
        path = f"args.steps[{i}]"
        if op == "activate":
            results.append({"ok": cx.activate(c, rs[region_index(s, "region", len(rs), path)])})
        elif op == "deactivate":
            cx.deactivate(c)
            results.append({})
        elif op == "advance":
            _compiled(c, op, path)
            if not c.active_region.ops:
                raise InvalidInput(f"{path}: advance needs an active region with ops (the "
                                   f"engine would read past the end of an empty one)")
            status = cx.advance(c, step_guard(s, path), errata)
            matched = status != ReplayStatus.DIVERGED
            results.append({"status": int(status),
                            "outputs": current_handles(c.engine, "output_slot_ids")
                            if matched else [],
                            "inputs": current_handles(c.engine, "input_slot_ids")
                            if matched else []})
        elif op == "register_external":
            _compiled(c, op, path)
            sid, ptr = step_field(s, "slot", u32, InvalidInput, path), \
                step_field(s, "ptr", hash64, InvalidInput, path)
            if sid >= c.pool.num_slots or ptr == 0:
                raise InvalidInput(f"{path}: slot {sid} of {c.pool.num_slots} with a non-null "
                                   f"pointer")
            cx.register_external(c, sid, ptr)
            results.append({})
        else:
            _compiled(c, op, path)
            alt = rs[region_index(s, "region", len(rs), path)]
            pos = step_field(s, "pos", u32, InvalidInput, path)
            if alt.plan is not None and not prefix_replays(c.active_region, alt, pos, errata):
                raise InvalidInput(f"{path}.pos: the first {pos} ops of region {alt.rid} do "
                                   f"not replay the active region's")
            ok, moved = cx.switch_region(c, alt, pos, errata)
            results.append({"ok": ok, "migrations": [
                {"op": m.op, "old_slot": m.old_slot, "new_slot": m.new_slot,
                 "nbytes": m.nbytes} for m in moved]})
    active = c.active_region
    return {"results": results, "mode": int(c.mode),
            "compiled_iterations": c.compiled_iterations, "diverged_count": c.diverged_count,
            "active_region": None if active is None else active.rid,
            "cursor": c.engine.cursor,
            "pool": {"initialized": is_initialized(c.pool, errata),
                     "pool_bytes": c.pool.pool_bytes, "num_slots": c.pool.num_slots,
                     "num_external": c.pool.num_external}}


@st.composite
def context_inputs(draw) -> dict:
    """Two chains sharing a prefix and a free region; sometimes a switch from the first chain
    to the second inside their prefix; then steps that keep each precondition (the strategy
    tracks whether the context is compiled)."""
    n = draw(st.integers(1, 5))
    split = draw(st.integers(0, n))
    sizes = [256 * draw(st.integers(1, 4)) for _ in range(n)]
    regions = [chain_region([0x200 + i for i in range(n)], sizes),
               chain_region([0x200 + i if i < split else 0x300 + i for i in range(n)],
                            [s if i < split else 256 * draw(st.integers(1, 4))
                             for i, s in enumerate(sizes)])]
    regions.append({"ops": draw(region_ops(4))} | draw(st.sampled_from([{}, {
        "plan": {"slots": []}}])))
    compiled, steps = False, []
    if split and draw(st.booleans()):
        k = draw(st.integers(0, min(split, n - 1)))
        steps += [{"op": "activate", "region": 0}]
        steps += [{"op": "advance", "schema_hash": hex(0x100 + i), "shape_hash": hex(0x200 + i)}
                  for i in range(k)]
        steps.append({"op": "switch", "region": 1, "pos": k})
        compiled = True
    for _ in range(draw(st.integers(0, 16))):
        kind = draw(st.sampled_from(["activate", "advance", "advance", "advance",
                                     "deactivate"] if compiled else ["activate"]))
        if kind == "activate":
            k = draw(st.integers(0, 2))
            steps.append({"op": "activate", "region": k})
            compiled = compiled or k < 2 or "plan" in regions[2]
        elif kind == "deactivate":
            steps.append({"op": "deactivate"})
            compiled = False
        else:
            i = draw(st.integers(0, n))
            steps.append({"op": "advance", "schema_hash": hex(0x100 + i),
                          "shape_hash": hex(draw(st.sampled_from([0x200, 0x300])) + i)})
    return {"regions": regions, "steps": steps}


def context_test_args() -> list[dict]:
    """test_crucible_context's scenarios and the PoolAllocator's manual plan."""
    two = {"ops": [{"schema_hash": "0x64", "shape_hash": "0xc8", "output_slot_ids": [0]},
                   {"schema_hash": "0x65", "shape_hash": "0xc9", "input_slot_ids": [0],
                    "output_slot_ids": [1]}],
           "plan": {"pool_bytes": 2048, "slots": [{"offset_bytes": 0, "nbytes": 1024},
                                                  {"offset_bytes": 1024, "nbytes": 1024}]}}
    op0 = {"op": "advance", "schema_hash": "0x64", "shape_hash": "0xc8"}
    op1 = {"op": "advance", "schema_hash": "0x65", "shape_hash": "0xc9"}
    bad = {"op": "advance", "schema_hash": "0x3e7", "shape_hash": "0xc9"}
    act, deact = {"op": "activate", "region": 0}, {"op": "deactivate"}
    return [
        {"regions": [], "steps": []},
        {"regions": [two, {"ops": two["ops"]}],
         "steps": [{"op": "activate", "region": 1}, act, op0, op1, op0, op1]},
        {"regions": [two], "steps": [act, op0, bad, deact]},
        {"regions": [two, chain_region([0x200, 0x201], [512, 512])],
         "steps": [act, op0, op1, deact, {"op": "activate", "region": 1},
                   {"op": "advance", "schema_hash": "0x100", "shape_hash": "0x200"},
                   {"op": "advance", "schema_hash": "0x101", "shape_hash": "0x201"}]},
        {"regions": [two], "steps": [act, op0, bad, deact, act, op0, bad, deact, act, op0,
                                     op1]},
        {"regions": [{"ops": [{"schema_hash": "0x1", "input_slot_ids": [2],
                               "output_slot_ids": [0, 1]}],
                      "plan": {"pool_bytes": 2048, "slots": [
                          {"offset_bytes": 0, "nbytes": 1024},
                          {"offset_bytes": 1024, "nbytes": 1024},
                          {"nbytes": 64, "is_external": True}]}}],
         "steps": [act, {"op": "advance", "schema_hash": "0x1", "shape_hash": "0x0"},
                   {"op": "register_external", "slot": 2, "ptr": "0x7f0000001000"},
                   {"op": "advance", "schema_hash": "0x1", "shape_hash": "0x0"}]},
    ]


declare(
    "context.simulate", chapter=11,
    summary="Run CrucibleContext activate / deactivate / advance / register_external / "
            "switch in order; each result, the counters, cursor and pool.",
    args=record(regions=Field(Json("[region]", REGIONS), "regions, named by index"),
                steps=Field(Json("[step]", CONTEXT_STEPS_SCHEMA),
                            "activate / deactivate / advance / register_external / switch")),
    result=record(results=Json("[per-step result]", CONTEXT_ANSWERS), mode=U32,
                  compiled_iterations=U32, diverged_count=U32,
                  active_region=Json("region index or null", js.or_null(js.uint(32))),
                  cursor=U32,
                  pool=Json("{initialized, pool_bytes, num_slots, num_external}", js.obj({
                      "initialized": js.BOOLEAN, "pool_bytes": js.uint(64),
                      "num_slots": js.uint(32), "num_external": js.uint(32)}))),
    spec=(cx.activate, cx.advance, cx.switch_region), domain=context_inputs,
    errata=("E11.1", "E11.3", "E11.4"),
    not_applicable={"cupy": "one sequential state machine",
                    "numba": "one sequential state machine; a few steps, no batch"},
    invalid=(InvalidCase("advance on a context in RECORD", lambda: st.just(
        {"regions": [], "steps": [{"op": "advance", "schema_hash": "0x1",
                                   "shape_hash": "0x2"}]})),),
    edges=context_test_args,
)
