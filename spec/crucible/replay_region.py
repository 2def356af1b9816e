"""Chapter 11: what compiled replay reads of a region, and its wire form.

A region, for replay, is its ops' guard hashes and slot ids, its memory plan (slot offsets,
sizes, which slots are external) and its content hash. Pointers are abstract: a slot's handle
is its pool offset, an external's is the data pointer it was registered with. Regions come
either as JSON (`region_from_wire`) or from a recorded stream through the background
pipeline (`regions_from_recording`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput, SpecError
from ..core.layout import bool_, hash64, id32, u64
from ..core.layout_ops import scalar_from_wire, wire_schema
from ..core.steps import step_field
from .build_trace import TraceGraph
from .hashing import fmix64
from .memory_plan import ALIGNMENT, Plan
from .pipeline import PipelineRun, run_pipeline
from .trace_build_ops import recorded_ops
from .trace_entry import TraceOp
from .types import NONE32

E11_1 = "E11.1"
LEVELS = ("schema", "shape", "scope", "callsite")
"""The four guard levels, in the order they are checked."""
MAX_REGION_OPS = 1 << 20
"""The spec's own bound on a region read from the wire (no counterpart in the real code)."""


class Guard(NamedTuple):
    """The four hashes an op is checked against when it is replayed."""

    schema: int
    shape: int
    scope: int = 0
    callsite: int = 0


def checked_levels(errata: frozenset[str] = NO_ERRATA) -> tuple[str, ...]:
    """The spec checks all four levels; under E11.1 the seed checks schema and shape only."""
    return LEVELS[:2] if E11_1 in errata else LEVELS


def guard_key(g: Guard, errata: frozenset[str] = NO_ERRATA) -> tuple[int, ...]:
    """What two ops must share to be the same op for replay."""
    return tuple(g)[:len(checked_levels(errata))]


def failed_level(expected: Guard, got: Guard, errata: frozenset[str] = NO_ERRATA) -> str | None:
    """The first checked level on which `got` differs from `expected`, or None."""
    for k, level in enumerate(checked_levels(errata)):
        if expected[k] != got[k]:
            return level
    return None


@dataclass
class ReplayOp:
    """One op of a region: its guard, its slot ids (None where the array is null) and the data
    pointers recorded for its inputs (externals are registered from these)."""

    guard: Guard
    input_slot_ids: list[int] | None = None
    output_slot_ids: list[int] | None = None
    input_ptrs: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class ReplaySlot:
    """A plan slot as replay reads it; its slot id is its index."""

    offset_bytes: int
    nbytes: int
    is_external: bool = False


@dataclass
class ReplayPlan:
    pool_bytes: int
    slots: list[ReplaySlot]


@dataclass(eq=False)
class ReplayRegion:
    """A region node as replay sees it; `rid` names it on the wire (its index in the args).
    Regions compare by identity, as the C++ compares RegionNode pointers."""

    rid: int
    ops: list[ReplayOp]
    plan: ReplayPlan | None
    content_hash: int

    @property
    def num_ops(self) -> int:
        return len(self.ops)


def guard_fold(guards: list[Guard]) -> int:
    """The default content hash of a JSON region: its guards folded through fmix64 (any hash
    that tells different op sequences apart serves the cache)."""
    h = 0
    for g in guards:
        for v in g:
            h = fmix64(h ^ v)
    return h


GUARD_KEYS = ("schema_hash", "shape_hash", "scope_hash", "callsite_hash")
"""The wire names of a Guard's four hashes, in level order."""
STREAM_FIELDS = frozenset({"inputs", "outputs", "scalars", "op_flags", "grad_enabled"})
"""The other fields of a trace.build op, allowed and ignored in a stream op."""


def guard_from_wire(obj: Any, path: str) -> Guard:
    """An op of a new stream: its four hashes (missing ones are 0). The other fields of a
    trace.build op (inputs, outputs, scalars, flags) are allowed and ignored."""
    if not isinstance(obj, dict):
        raise InvalidInput(f"{path}: expected an op object with schema_hash and shape_hash")
    extra = sorted(set(obj) - set(GUARD_KEYS) - STREAM_FIELDS)
    if extra:
        raise InvalidInput(f"{path}: an op has no field {extra[0]!r}")
    return Guard(*(step_field(obj, k, hash64, 0, path) for k in GUARD_KEYS))


def _ids(obj: dict, name: str, path: str) -> list[int] | None:
    if name not in obj or obj[name] is None:
        return None
    if not isinstance(obj[name], list):
        raise InvalidInput(f"{path}.{name}: expected a list of slot ids")
    return [scalar_from_wire(id32, v, f"{path}.{name}[{k}]") for k, v in enumerate(obj[name])]


_REGION_OP_KEYS = set(GUARD_KEYS) | {"input_slot_ids", "output_slot_ids", "input_ptrs"}


def region_op_from_wire(obj: Any, path: str) -> ReplayOp:
    if not isinstance(obj, dict):
        raise InvalidInput(f"{path}: expected a region op object")
    extra = sorted(set(obj) - _REGION_OP_KEYS)
    if extra:
        raise InvalidInput(f"{path}: a region op has no field {extra[0]!r}")
    ptrs = obj.get("input_ptrs", [])
    if not isinstance(ptrs, list):
        raise InvalidInput(f"{path}.input_ptrs: expected a list of pointers")
    return ReplayOp(Guard(*(step_field(obj, k, hash64, 0, path) for k in GUARD_KEYS)),
                    _ids(obj, "input_slot_ids", path), _ids(obj, "output_slot_ids", path),
                    [scalar_from_wire(hash64, p, f"{path}.input_ptrs[{k}]")
                     for k, p in enumerate(ptrs)])


def plan_from_wire(obj: Any, path: str) -> ReplayPlan:
    """{pool_bytes, slots: [{offset_bytes, nbytes, is_external}]}; pool_bytes defaults to the
    end of the last internal slot."""
    if not isinstance(obj, dict) or not isinstance(obj.get("slots", []), list):
        raise InvalidInput(f"{path}: expected {{pool_bytes, slots: [...]}}")
    extra = sorted(set(obj) - {"pool_bytes", "slots"})
    if extra:
        raise InvalidInput(f"{path}: a plan has no field {extra[0]!r}")
    slots = []
    for k, s in enumerate(obj.get("slots", [])):
        p = f"{path}.slots[{k}]"
        if not isinstance(s, dict) or sorted(set(s) - {"offset_bytes", "nbytes", "is_external",
                                                       "slot_id"}):
            raise InvalidInput(f"{p}: expected {{offset_bytes, nbytes, is_external}}")
        get = {n: step_field(s, n, t, d, p) for n, t, d in (
            ("offset_bytes", u64, 0), ("nbytes", u64, 0), ("is_external", bool_, False))}
        if not get["is_external"] and get["offset_bytes"] % ALIGNMENT:
            raise InvalidInput(f"{p}.offset_bytes: {get['offset_bytes']} is not a multiple of "
                               f"{ALIGNMENT}")
        slots.append(ReplaySlot(get["offset_bytes"], get["nbytes"], get["is_external"]))
    end = max((s.offset_bytes + s.nbytes for s in slots if not s.is_external), default=0)
    pool = step_field(obj, "pool_bytes", u64, end, path)
    if pool < end:
        raise InvalidInput(f"{path}.pool_bytes: {pool} is less than the end of a slot, {end}")
    return ReplayPlan(pool, slots)


STREAM_OP = js.obj(optional={**{k: wire_schema(hash64) for k in GUARD_KEYS},
                             **{k: js.ANY for k in sorted(STREAM_FIELDS)}})
"""What `guard_from_wire` accepts: an op of a new stream."""
_REGION_OP = js.obj(optional={**{k: wire_schema(hash64) for k in GUARD_KEYS},
                              "input_slot_ids": js.or_null(js.array(wire_schema(id32))),
                              "output_slot_ids": js.or_null(js.array(wire_schema(id32))),
                              "input_ptrs": js.array(wire_schema(hash64))})
PLAN = js.obj(optional={"pool_bytes": wire_schema(u64), "slots": js.array(js.obj(optional={
    "offset_bytes": wire_schema(u64), "nbytes": wire_schema(u64),
    "is_external": wire_schema(bool_), "slot_id": js.ANY}))})
"""What `plan_from_wire` accepts."""
REGION = js.obj({"ops": js.array(_REGION_OP, MAX_REGION_OPS)},
                {"plan": js.or_null(PLAN), "content_hash": wire_schema(hash64)}) | {
    "type": ["array", "object"], "items": _REGION_OP, "maxItems": MAX_REGION_OPS}
"""What `region_from_wire` accepts: {ops, plan?, content_hash?} or a bare list of ops (the
plan's alignment and size rules, and the slot ids' range, are its own)."""
REGIONS = js.array(REGION)
"""What `regions_from_wire` accepts."""


def _check_slot_ids(r: ReplayRegion, path: str) -> None:
    """A planned region's slot ids name slots of its plan (a region without a plan is
    never replayed, so its ids are not read)."""
    if r.plan is None:
        return
    n = len(r.plan.slots)
    for i, op in enumerate(r.ops):
        for name in ("input_slot_ids", "output_slot_ids"):
            for k, sid in enumerate(getattr(op, name) or []):
                if sid != NONE32 and sid >= n:
                    raise InvalidInput(f"{path}.ops[{i}].{name}[{k}]: slot {sid} is not in a "
                                       f"plan of {n} slots")


def region_from_wire(obj: Any, rid: int, path: str) -> ReplayRegion:
    """{ops: [{schema_hash, shape_hash, scope_hash?, callsite_hash?, input_slot_ids?,
    output_slot_ids?, input_ptrs?}], plan?: {...}, content_hash?}; or a bare list of ops."""
    if isinstance(obj, list):
        obj = {"ops": obj}
    if not isinstance(obj, dict) or not isinstance(obj.get("ops"), list):
        raise InvalidInput(f"{path}: expected a region {{ops: [...], plan?, content_hash?}}")
    extra = sorted(set(obj) - {"ops", "plan", "content_hash"})
    if extra:
        raise InvalidInput(f"{path}: a region has no field {extra[0]!r}")
    if len(obj["ops"]) > MAX_REGION_OPS:
        raise InvalidInput(f"{path}.ops: more than {MAX_REGION_OPS} ops")
    ops = [region_op_from_wire(o, f"{path}.ops[{i}]") for i, o in enumerate(obj["ops"])]
    plan = None if obj.get("plan") is None else plan_from_wire(obj["plan"], f"{path}.plan")
    content = step_field(obj, "content_hash", hash64, 0, path) if "content_hash" in obj else \
        guard_fold([op.guard for op in ops])
    r = ReplayRegion(rid, ops, plan, content)
    _check_slot_ids(r, path)
    return r


def regions_from_wire(value: Any, path: str) -> list[ReplayRegion]:
    """A list of regions in region wire form, each named by its index."""
    if not isinstance(value, list):
        raise InvalidInput(f"{path}: expected a list of regions")
    return [region_from_wire(r, k, f"{path}[{k}]") for k, r in enumerate(value)]


def prefix_replays(old: ReplayRegion, alt: ReplayRegion, pos: int,
                   errata: frozenset[str] = NO_ERRATA) -> bool:
    """alt's first pos ops are the same ops for replay as old's (always so for pos 0)."""
    return pos <= min(old.num_ops, alt.num_ops) and all(
        guard_key(old.ops[i].guard, errata) == guard_key(alt.ops[i].guard, errata)
        for i in range(pos))


def replay_op_of(op: TraceOp) -> ReplayOp:
    """A recorded op as replay reads it: its four hashes, slot ids and input data pointers."""
    return ReplayOp(Guard(op.schema_hash, op.shape_hash, op.scope_hash, op.callsite_hash),
                    op.input_slot_ids, op.output_slot_ids, [m["data_ptr"] for m in op.inputs])


def regions_of_run(run: PipelineRun, first_rid: int = 0) -> list[ReplayRegion]:
    """The regions of a pipeline run, as replay reads them, in the order it publishes them."""
    return [replay_region_of(first_rid + k, r.graph, r.plan) for k, r in enumerate(run.regions)]


def replay_region_of(rid: int, graph: TraceGraph, plan: Plan | None) -> ReplayRegion:
    """A trace graph and its memory plan (None: not compiled), as replay reads them."""
    rplan = None
    if plan is not None:
        rplan = ReplayPlan(plan.pool_bytes, [ReplaySlot(plan.offsets[s], slot.nbytes,
                                                        slot.is_external)
                                             for s, slot in enumerate(graph.slots)])
    return ReplayRegion(rid, [replay_op_of(op) for op in graph.ops], rplan, graph.content_hash)


def regions_from_recording(ops: Any, first_rid: int, errata: frozenset[str] = NO_ERRATA,
                           path: str = "args.recording") -> list[ReplayRegion]:
    """The regions the background pipeline makes of a recorded stream (trace.build's ops
    form, at `path`), in the order it publishes them."""
    try:
        run = run_pipeline(recorded_ops(ops), None, errata)
    except SpecError as e:
        raise InvalidInput(e.message.replace("args.ops", path, 1)) from None
    return regions_of_run(run, first_rid)
