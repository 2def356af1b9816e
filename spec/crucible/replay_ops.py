"""Ops `replay.engine`, `txlog.simulate` and `region_cache.simulate`.

replay.engine: a region's ops (their guard hashes) and a new stream; the engine checks each
stream op against the region's next op, as CrucibleContext::advance drives it (a COMPLETE pass
resets to op 0; a DIVERGED op leaves the cursor where it was). Result per stream op: its
status and the region op it was checked against; the pass and divergence counts; the first
divergence with the guard level that failed.

txlog.simulate steps: {"op": "begin", "step"}, {"op": "commit", "slot", "region"?,
"content_hash"?, "merkle_root"?}, {"op": "activate", "slot"}, {"op": "previous"},
{"op": "rollback"}; transactions are named by their slot in the ring.

region_cache.simulate: regions (region wire form) and steps {"op": "insert", "region"},
{"op": "find", "content_hash"}, {"op": "find_alternate", "pos", "schema_hash", "shape_hash",
"scope_hash"?, "callsite_hash"?, "exclude"?}, {"op": "plan_ready", "region", "plan"?};
regions are named by their index.
"""

from __future__ import annotations

from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.layout import hash64, u32, u64
from ..core.layout_ops import wire_schema
from ..core.registry import InvalidCase, declare
from ..core.schema import HASH64, U8, U32, Field, Json, List, record
from ..core.steps import parse_steps, step_field, steps_schema
from ..core.strategies import st
from . import region_cache as rc
from . import transaction as tx
from .pool_allocator import PoolAllocator
from .pool_allocator import init as pool_init
from .replay_engine import ReplayEngine, ReplayStatus, advance, init, reset
from .replay_region import (
    GUARD_KEYS,
    LEVELS,
    PLAN,
    REGION,
    REGIONS,
    STREAM_OP,
    Guard,
    ReplayOp,
    ReplayPlan,
    checked_levels,
    failed_level,
    guard_from_wire,
    plan_from_wire,
    region_from_wire,
    regions_from_wire,
)

MAX_STREAM = 1 << 22
"""The spec's own bound on the ops of one `replay.engine` stream."""
_SEQUENTIAL = "the steps are one sequence; each depends on the state the last one left"


STREAM = js.array(STREAM_OP, MAX_STREAM)
"""What `stream_from_wire` accepts."""
_HASH, _U32 = wire_schema(hash64), wire_schema(u32)


def stream_from_wire(stream: Any, path: str = "args.stream") -> list[Guard]:
    if not isinstance(stream, list) or len(stream) > MAX_STREAM:
        raise InvalidInput(f"{path}: expected a list of ops (at most {MAX_STREAM})")
    return [guard_from_wire(o, f"{path}[{i}]") for i, o in enumerate(stream)]


def engine_region(region: Any) -> list[Guard]:
    """The guards of a replay.engine region (a list of ops, or a region object)."""
    r = region_from_wire(region, 0, "args.region")
    if not r.ops:
        raise InvalidInput("args.region: a region to replay needs at least one op")
    return [op.guard for op in r.ops]


def guard_wire(g: Guard) -> dict:
    return {key: HASH64.encode(v) for key, v in zip(GUARD_KEYS, g, strict=True)}


def divergence_wire(index: int, pos: int, expected: Guard, got: Guard,
                    errata: frozenset[str]) -> dict:
    """Where a stream op diverged and why: the first failed level, expected and got."""
    level = failed_level(expected, got, errata)
    k = checked_levels(errata).index(level)
    return {"index": index, "region_op": pos, "level": level,
            "expected": HASH64.encode(expected[k]), "got": HASH64.encode(got[k])}


def run_engine(guards: list[Guard], stream: list[Guard], errata: frozenset[str] = NO_ERRATA
               ) -> tuple[list[int], list[int], int, int]:
    """Per stream op: status and the region op it was checked against; passes completed and
    divergences."""
    pool = PoolAllocator()
    pool_init(pool, ReplayPlan(0, []))
    e = ReplayEngine()
    init(e, [ReplayOp(g) for g in guards], pool)
    statuses, positions, passes, diverged = [], [], 0, 0
    for g in stream:
        positions.append(e.cursor)
        s = advance(e, g, errata)
        if s == ReplayStatus.COMPLETE:
            passes += 1
            reset(e)
        diverged += s == ReplayStatus.DIVERGED
        statuses.append(int(s))
    return statuses, positions, passes, diverged


def engine_result(guards: list[Guard], got: Guard | None, statuses: list[int],
                  positions: list[int], passes: int, diverged: int,
                  errata: frozenset[str], first: int | None) -> dict:
    """The wire result; `got` is the stream op at index `first` (the first divergence)."""
    return {"statuses": statuses, "positions": positions, "completed": passes,
            "diverged": diverged,
            "first_divergence": None if first is None else divergence_wire(
                first, positions[first], guards[positions[first]], got, errata)}


def replay_engine(region: Any, stream: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    guards, ops = engine_region(region), stream_from_wire(stream)
    statuses, positions, passes, diverged = run_engine(guards, ops, errata)
    first = next((i for i, s in enumerate(statuses) if s == ReplayStatus.DIVERGED), None)
    return engine_result(guards, None if first is None else ops[first], statuses, positions,
                         passes, diverged, errata, first)


def step_guard(s: dict, path: str) -> Guard:
    """The Guard a step names: schema_hash and shape_hash required, scope and callsite 0 if
    missing."""
    return Guard(*(step_field(s, key, hash64, InvalidInput if k < 2 else 0, path)
                   for k, key in enumerate(GUARD_KEYS)))


def _slot(step: dict, capacity: int, path: str) -> int:
    slot = step_field(step, "slot", u32, InvalidInput, path)
    if slot >= capacity:
        raise InvalidInput(f"{path}.slot: {slot} is not a slot of a log of {capacity}")
    return slot


def check_txlog_capacity(args: dict) -> None:
    n = args["capacity"]
    if not 2 <= n <= 1024 or n & (n - 1):
        raise InvalidInput("args.capacity: a power of two from 2 to 1024")


TXLOG_STEPS = {"begin": ("step",), "commit": ("slot", "region", "content_hash", "merkle_root"),
               "activate": ("slot",), "previous": (), "rollback": ()}


TXLOG_STEPS_SCHEMA = steps_schema(TXLOG_STEPS, {
    "step": wire_schema(u64), "slot": _U32, "region": _U32, "content_hash": _HASH,
    "merkle_root": _HASH}, {"begin": ("step",), "commit": ("slot",), "activate": ("slot",)})
_SLOT_OR_NULL = js.or_null(js.uint(32))
TXLOG_ANSWERS = js.array(js.one_of(
    js.obj({"slot": _SLOT_OR_NULL}), js.obj({"ok": js.BOOLEAN}),
    js.obj({"ok": js.BOOLEAN, "superseded": _SLOT_OR_NULL})))
"""Answers: begin and previous {slot}, commit and rollback {ok}, activate {ok, superseded}."""
TX_OUT = js.array(js.obj({"step_id": js.uint(64), "content_hash": js.HEX64_OUT,
                          "merkle_root": js.HEX64_OUT, "region": _SLOT_OR_NULL,
                          "status": js.uint(8)}))


def tx_wire(t: tx.Tx) -> dict:
    return {"step_id": t.step_id, "content_hash": HASH64.encode(t.content_hash),
            "merkle_root": HASH64.encode(t.merkle_root), "region": t.region,
            "status": int(t.status)}


def txlog_simulate(capacity: int, steps: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run the steps on a fresh TransactionLog<capacity>."""
    log = tx.TransactionLog(capacity)
    results: list[dict] = []
    for i, (op, s) in enumerate(parse_steps(steps, TXLOG_STEPS)):
        path = f"args.steps[{i}]"
        if op == "begin":
            results.append({"slot": tx.begin_tx(log, step_field(s, "step", u64, InvalidInput,
                                                            path), errata)})
        elif op == "commit":
            region = step_field(s, "region", u32, None, path)
            results.append({"ok": tx.commit(log, _slot(s, capacity, path), region,
                                            step_field(s, "content_hash", hash64, 0, path),
                                            step_field(s, "merkle_root", hash64, 0, path))})
        elif op == "activate":
            ok, old = tx.activate(log, _slot(s, capacity, path))
            results.append({"ok": ok, "superseded": old})
        elif op == "previous":
            results.append({"slot": tx.previous(log)})
        else:
            results.append({"ok": tx.rollback(log)})
    active = log.active
    return {"results": results, "entries": [tx_wire(t) for t in log.entries],
            "head": log.head, "count": log.count, "active": active,
            "active_status": None if active is None else int(log.entries[active].status)}


CACHE_STEPS = {"insert": ("region",), "find": ("content_hash",),
               "find_alternate": ("pos", "schema_hash", "shape_hash", "scope_hash",
                                  "callsite_hash", "exclude"),
               "plan_ready": ("region", "plan")}


CACHE_STEPS_SCHEMA = steps_schema(CACHE_STEPS, {
    "region": _U32, "content_hash": _HASH, "pos": _U32, "schema_hash": _HASH,
    "shape_hash": _HASH, "scope_hash": _HASH, "callsite_hash": _HASH, "exclude": _U32,
    "plan": PLAN}, {"insert": ("region",), "find": ("content_hash",),
                    "find_alternate": ("pos", "schema_hash", "shape_hash"),
                    "plan_ready": ("region",)})
CACHE_ANSWERS = js.array(js.one_of(js.obj({"inserted": js.BOOLEAN, "size": js.uint(32)}),
                                   js.obj({"region": _SLOT_OR_NULL}), js.obj()))
"""Answers: insert {inserted, size}, find and find_alternate {region}, plan_ready {}."""


def region_index(s: dict, name: str, n: int, path: str, required: bool = True) -> int | None:
    k = step_field(s, name, u32, InvalidInput if required else None, path)
    if k is not None and k >= n:
        raise InvalidInput(f"{path}.{name}: there are {n} regions, no region {k}")
    return k


def region_cache_simulate(regions: Any, steps: Any, errata: frozenset[str] = NO_ERRATA
                          ) -> dict:
    """Run the steps on a fresh RegionCache."""
    rs = regions_from_wire(regions, "args.regions")
    c = rc.RegionCache()
    results: list[dict] = []
    for i, (op, s) in enumerate(parse_steps(steps, CACHE_STEPS)):
        path = f"args.steps[{i}]"
        if op == "insert":
            wrote = rc.insert(c, rs[region_index(s, "region", len(rs), path)])
            results.append({"inserted": wrote, "size": c.count})
        elif op == "find":
            r = rc.find(c, step_field(s, "content_hash", hash64, InvalidInput, path))
            results.append({"region": None if r is None else r.rid})
        elif op == "find_alternate":
            got = step_guard(s, path)
            ex = region_index(s, "exclude", len(rs), path, required=False)
            r = rc.find_alternate(c, step_field(s, "pos", u32, InvalidInput, path), got,
                                  None if ex is None else rs[ex], errata)
            results.append({"region": None if r is None else r.rid})
        else:
            r = rs[region_index(s, "region", len(rs), path)]
            r.plan = plan_from_wire(s.get("plan", {"slots": []}), f"{path}.plan")
            rc.notify_plan_ready(c, r)
            results.append({})
    return {"results": results, "head": c.head, "count": c.count,
            "entries": [{"region": c.regions[k].rid,
                         "content_hash": HASH64.encode(c.content_hashes[k]),
                         "num_ops": c.num_ops[k]} for k in rc.mru(c)]}


def _op(schema: int, shape: int, scope: int = 0, callsite: int = 0) -> dict:
    return dict(zip(GUARD_KEYS, map(hex, (schema, shape, scope, callsite)), strict=True))


@st.composite
def region_ops(draw, max_ops: int = 8) -> list[dict]:
    """A region's ops over a small alphabet, so repeated ops and shared prefixes occur."""
    return [_op(draw(st.integers(0x100, 0x105)), draw(st.integers(0x200, 0x202)),
                draw(st.sampled_from([0, 0, 0x51])), draw(st.sampled_from([0, 0, 0xc5])))
            for _ in range(draw(st.integers(1, max_ops)))]


@st.composite
def perturbed(draw, ops: list[dict], iterations: int) -> list[dict]:
    """`iterations` passes over ops, each op sometimes changed at one guard level, dropped,
    or followed by a foreign op: divergences at every level and position."""
    out = []
    for _ in range(iterations):
        for op in ops:
            kind = draw(st.sampled_from(["same"] * 6 + ["level", "drop", "extra"]))
            if kind == "drop":
                continue
            op = dict(op)
            if kind == "level":
                key = draw(st.sampled_from(GUARD_KEYS))
                op[key] = hex(int(op[key], 16) ^ draw(st.integers(1, 3)))
            out.append(op)
            if kind == "extra":
                out.append(_op(0xBAD, 0x200))
    return out


@st.composite
def engine_inputs(draw) -> dict:
    ops = draw(region_ops())
    stream = draw(perturbed(ops, draw(st.integers(0, 4))))
    return {"region": ops, "stream": stream + ops[:draw(st.integers(0, len(ops)))]}


def linear(n: int, base: int = 0) -> list[dict]:
    """n ops with schema 100 + i and shape 200 + i (the seed's engine tests)."""
    return [_op(100 + i + base, 200 + i + base) for i in range(n)]


def _engine_edges() -> list[dict]:
    three = linear(3)
    bad_schema = [three[0], _op(999, 201), _op(999, 201), three[1], three[2]]
    return [{"region": three, "stream": three},
            {"region": three, "stream": bad_schema},
            {"region": three, "stream": [three[0], _op(101, 999)]},
            {"region": three, "stream": three + three},
            {"region": three, "stream": [three[0], _op(101, 201, 7), _op(101, 201, 0, 9)]},
            {"region": [_op(1, 1)], "stream": [_op(1, 1)] * 3}]


def _engine_bench(n: int, rng) -> list[dict]:
    ops = linear(50)
    stream = (ops * (n // 50 + 1))[:n]
    for k in rng.integers(0, n, size=max(1, n // 1000)).tolist():
        stream[k] = _op(0xBAD, 0x200)
    return [{"region": ops, "stream": stream}]


declare(
    "replay.engine", chapter=11,
    summary="Replay a stream against a region's ops: per op MATCH / DIVERGED / COMPLETE, the "
            "region op it met, passes, divergences and the first failed guard.",
    args=record(region=Field(Json("[op] or {ops}", REGION),
                             "the region's ops (guard hashes)"),
                stream=Field(Json("[op]", STREAM), "the new ops, in order")),
    result=record(statuses=Json("[ReplayStatus]", List(U8)), positions=Json("[u32]", List(U32)),
                  completed=U32, diverged=U32,
                  first_divergence=Json("{index, region_op, level, expected, got} or null",
                                        js.or_null(js.obj({
                                            "index": js.uint(64), "region_op": js.uint(32),
                                            "level": {"enum": list(LEVELS)},
                                            "expected": js.HEX64_OUT, "got": js.HEX64_OUT})))),
    spec=(advance, reset), domain=engine_inputs, bench=_engine_bench,
    errata=("E11.1",),
    not_applicable={"cupy": "one cursor walk: each op is checked where the last one left the "
                            "cursor (a scan over n-state automata would cost n^2 per op)"},
    invalid=(InvalidCase("an empty region", lambda: st.just({"region": [], "stream": []})),
             InvalidCase("a stream op with an unknown field",
                         lambda: st.just({"region": [_op(1, 1)], "stream": [{"schema": 1}]})),
             InvalidCase("a stream that is not a list",
                         lambda: st.just({"region": [_op(1, 1)], "stream": {}}))),
    edges=_engine_edges,
)


@st.composite
def txlog_steps(draw) -> dict:
    capacity = draw(st.sampled_from([2, 4, 16]))
    slot = st.integers(0, capacity - 1)
    step = st.one_of(
        st.builds(lambda s: {"op": "begin", "step": s}, st.integers(0, 40)),
        st.builds(lambda s, r: {"op": "commit", "slot": s, "region": r,
                                "content_hash": hex(0xC0 + r)}, slot, st.integers(0, 5)),
        st.builds(lambda s: {"op": "activate", "slot": s}, slot),
        st.just({"op": "previous"}), st.just({"op": "rollback"}))
    return {"capacity": capacity, "steps": draw(st.lists(step, max_size=30))}


def cycle(step: int, slot: int) -> list[dict]:
    return [{"op": "begin", "step": step}, {"op": "commit", "slot": slot, "region": step},
            {"op": "activate", "slot": slot}]


def txlog_test_steps() -> list[dict]:
    """test_transaction: two cycles, rollback twice, then 30 more cycles."""
    steps = [{"op": "begin", "step": 1}, {"op": "commit", "slot": 0, "region": 1},
             {"op": "commit", "slot": 0, "region": 1}, {"op": "activate", "slot": 0},
             *cycle(2, 1), {"op": "previous"}, {"op": "rollback"}, {"op": "previous"},
             {"op": "rollback"}]
    for k in range(30):
        steps += cycle(3 + k, (2 + k) % 16)
    return steps


declare(
    "txlog.simulate", chapter=18,
    summary="Run TransactionLog begin / commit / activate / previous / rollback in order; "
            "each result, the entries, head, count and the active transaction.",
    args=record(capacity=Field(U32, "N, a power of two from 2 to 1024", default=tx.TXLOG_CAPACITY),
                steps=Field(Json("[step]", TXLOG_STEPS_SCHEMA),
                            "begin / commit / activate / previous / rollback")),
    result=record(results=Json("[per-step result]", TXLOG_ANSWERS),
                  entries=Json("[transaction]", TX_OUT), head=U32, count=U32,
                  active=Json("slot or null", _SLOT_OR_NULL),
                  active_status=Json("TxStatus or null", js.or_null(js.uint(8)))),
    spec=(tx.begin_tx, tx.commit, tx.activate, tx.previous, tx.rollback), domain=txlog_steps,
    check=check_txlog_capacity, errata=(tx.E18_9,),
    not_applicable={"cupy": _SEQUENTIAL, "numba": _SEQUENTIAL + "; a few steps, no batch"},
    invalid=(InvalidCase("a slot outside the log",
                         lambda: st.just({"capacity": 4, "steps": [{"op": "activate",
                                                                     "slot": 4}]})),
             InvalidCase("begin without a step", lambda: st.just({"steps": [{"op": "begin"}]}))),
    edges=lambda: [{"steps": txlog_test_steps()},
                   {"capacity": 2, "steps": [*cycle(1, 0), {"op": "begin", "step": 2},
                                             {"op": "begin", "step": 3}]}],
)


@st.composite
def cache_inputs(draw) -> dict:
    n = draw(st.integers(1, 11))
    regions = []
    for _ in range(n):
        r: dict = {"ops": draw(region_ops(4)),
                   "content_hash": hex(draw(st.integers(1, 12)))}
        if draw(st.booleans()) or draw(st.booleans()):
            r["plan"] = {"slots": []}
        regions.append(r)
    k = st.integers(0, n - 1)
    step = st.one_of(
        k.map(lambda i: {"op": "insert", "region": i}),
        st.builds(lambda h: {"op": "find", "content_hash": hex(h)}, st.integers(1, 12)),
        st.builds(lambda p, s, sh, ex: {"op": "find_alternate", "pos": p, "schema_hash": hex(s),
                                        "shape_hash": hex(sh)} | ({} if ex is None else
                                                                  {"exclude": ex}),
                  st.integers(0, 4), st.integers(0x100, 0x105), st.integers(0x200, 0x202),
                  st.none() | k),
        k.map(lambda i: {"op": "plan_ready", "region": i}))
    return {"regions": regions, "steps": draw(st.lists(step, max_size=24))}


def cache_test_args() -> list[dict]:
    """test_region_cache: dedup, and 8 distinct hashes then a 9th evicting the oldest."""
    hashes = [0x1234, *range(0x2001, 0x2008), 0xFFFF]
    regions = [{"ops": [_op(1, 1)], "plan": {"slots": []}, "content_hash": hex(h)}
               for h in hashes]
    fill = [{"op": "insert", "region": k} for k in range(8)]
    return [{"regions": regions[:1], "steps": [{"op": "insert", "region": 0}] * 2},
            {"regions": regions, "steps": [*fill, {"op": "find", "content_hash": "0x1234"},
                                           {"op": "insert", "region": 8},
                                           {"op": "find", "content_hash": "0x1234"},
                                           {"op": "find", "content_hash": "0xffff"}]}]


declare(
    "region_cache.simulate", chapter=18,
    summary="Run RegionCache inserts, lookups by hash, alternate searches and plan-ready "
            "notices in order; each result and the entries, most recent first.",
    args=record(regions=Field(Json("[region]", REGIONS), "regions, named by index"),
                steps=Field(Json("[step]", CACHE_STEPS_SCHEMA),
                            "insert / find / find_alternate / plan_ready")),
    result=record(results=Json("[per-step result]", CACHE_ANSWERS), head=U32, count=U32,
                  entries=Json("[{region, content_hash, num_ops}]", js.array(js.obj({
                      "region": js.uint(32), "content_hash": js.HEX64_OUT,
                      "num_ops": js.uint(32)})))),
    spec=(rc.insert, rc.find_alternate), domain=cache_inputs, errata=("E11.1",),
    not_applicable={"cupy": _SEQUENTIAL, "numba": _SEQUENTIAL + "; 8 entries, no batch"},
    invalid=(InvalidCase("a step naming a region that is not there",
                         lambda: st.just({"regions": [], "steps": [{"op": "insert",
                                                                    "region": 0}]})),),
    edges=cache_test_args,
)
