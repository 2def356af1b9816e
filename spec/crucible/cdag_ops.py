"""Ops `cdag.encode`, `cdag.decode`, `cdag.encode_branch`, `cdag.decode_branch` (chapter 18).

Wire form of a region: {ops, has_plan, measured_ms_bits, variant_id, plan?} (design §4b), ops as
trace ops (`cdag.regions` of the vectors), plan as {pool_bytes, num_slots, num_external,
device_type, device_idx, device_capability, rank, world_size, slots[TensorSlot fields]}. Three
optional fields carry what a file holds beyond that: content_hash (default: computed from the
ops), merkle_hash (default: the Merkle hash of the region followed by a TERMINAL, fmix64 of
the content hash, as the pipeline's regions are chained) and first_op_schema (default: the
first op's schema hash, 0 without ops). `cdag.decode` gives all three back, so
encode(decode(h)) == h. Non-zero pad bytes of a plan (pad0) or slot (pad, pad2) are carried
the same way.

A branch: {guard{kind, op_index, arg_index, dim_index}, arms[{value, target_merkle}],
next_merkle (null: no continuation, written 0), merkle_hash (default: computed from the guard,
arms and continuation as dag.merkle does)}.
"""

from __future__ import annotations

from typing import Any

from ...synthetic_bench import content_bench
from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.layout import bool_, f32, field_at, hash64, i8, i32, i64, pad, u32, u64
from ..core.layout_ops import from_wire, scalar_from_wire, to_wire, values_strategy, wire_schema
from ..core.registry import InvalidCase, declare
from ..core.schema import BYTES, HASH64, Field, Json, Optional, record
from ..core.strategies import st
from .cdag import (
    E18_6,
    E18_7,
    E18_8,
    CdagBranch,
    CdagPlan,
    CdagRegion,
    check_arms,
    check_op,
    decode_branch,
    decode_region,
    encode_branch,
    encode_region,
)
from .cdag import EMPTY_REGION as _EMPTY
from .content_hash import E8_3, E8_4, compute_content_hash, trace_ops_from_wire
from .merkle_dag import E9_1, E9_2, GUARD, branch_hash, chained, guard_hash
from .tensor_meta import TENSOR_META
from .tensor_slot import TENSOR_SLOT
from .trace_entry import TraceOp, trace_op_from_wire, trace_op_schema, trace_op_to_wire

_REGION_KEYS = {"ops", "has_plan", "measured_ms_bits", "variant_id", "plan", "content_hash",
                "merkle_hash", "first_op_schema"}
_PLAN_INTS = {"pool_bytes": u64, "num_external": u32, "device_type": i8, "device_idx": i8,
              "device_capability": u64, "rank": i32, "world_size": i32}
_PLAN_KEYS = set(_PLAN_INTS) | {"num_slots", "slots", "pad0"}


def _object(obj: Any, keys: set[str], path: str) -> dict:
    if not isinstance(obj, dict):
        raise InvalidInput(f"{path}: expected an object")
    extra = sorted(set(obj) - keys)
    if extra:
        raise InvalidInput(f"{path}: no field {extra[0]!r}")
    return obj


def plan_from_wire(obj: Any, path: str) -> CdagPlan:
    obj = _object(obj, _PLAN_KEYS, path)
    p = CdagPlan()
    for name, ctype in _PLAN_INTS.items():
        if name in obj:
            setattr(p, name, scalar_from_wire(ctype, obj[name], f"{path}.{name}"))
    if "pad0" in obj:
        p.pad0 = scalar_from_wire(pad(2), obj["pad0"], f"{path}.pad0")
    slots = obj.get("slots", [])
    if not isinstance(slots, list):
        raise InvalidInput(f"{path}.slots: expected a list of TensorSlot fields")
    p.slots = [from_wire(TENSOR_SLOT, s, f"{path}.slots[{k}]") for k, s in enumerate(slots)]
    if "num_slots" in obj and obj["num_slots"] != len(slots):
        raise InvalidInput(f"{path}.num_slots: {obj['num_slots']}, but {len(slots)} slots given")
    return p


def region_from_wire(obj: Any, errata: frozenset[str] = NO_ERRATA,
                     path: str = "args.region") -> CdagRegion:
    """The region the wire form describes, with its header hashes filled in."""
    obj = _object(obj, _REGION_KEYS, path)
    ops = obj.get("ops")
    if not isinstance(ops, list):
        raise InvalidInput(f"{path}.ops: expected a list of trace ops")
    if "content_hash" in obj:
        r = CdagRegion([trace_op_from_wire(o, f"{path}.ops[{i}]") for i, o in enumerate(ops)])
        r.content_hash = scalar_from_wire(hash64, obj["content_hash"], f"{path}.content_hash")
    else:
        r = CdagRegion(trace_ops_from_wire(ops, f"{path}.ops"))
        r.content_hash = compute_content_hash(r.ops, errata)
    r.merkle_hash = scalar_from_wire(hash64, obj["merkle_hash"], f"{path}.merkle_hash") \
        if "merkle_hash" in obj else chained(r.content_hash, 0)
    r.first_op_schema = scalar_from_wire(hash64, obj["first_op_schema"],
                                         f"{path}.first_op_schema") \
        if "first_op_schema" in obj else (r.ops[0].schema_hash if r.ops else 0)
    r.measured_ms_bits = scalar_from_wire(f32, obj.get("measured_ms_bits", 0),
                                          f"{path}.measured_ms_bits")
    r.variant_id = scalar_from_wire(u32, obj.get("variant_id", 0), f"{path}.variant_id")
    plan = obj.get("plan")
    has_plan = obj.get("has_plan", plan is not None)
    if has_plan not in (True, False) or bool(has_plan) != (plan is not None):
        raise InvalidInput(f"{path}.has_plan: {has_plan!r}, but a plan is "
                           f"{'given' if plan is not None else 'not given'}")
    if plan is not None:
        r.plan = plan_from_wire(plan, f"{path}.plan")
    for k, op in enumerate(r.ops):
        check_op(op, f"{path}.ops[{k}]")
    return r


def _without(schema: dict, *optional: str) -> dict:
    """An object schema in which the `optional` members may be left out."""
    return schema | {"required": [n for n in schema["required"] if n not in optional]}


def region_schema(result: bool = False) -> dict:
    """The JSON Schema of what `region_from_wire` accepts, or of what `region_to_wire` writes."""
    plan = {n: wire_schema(t, result) for n, t in _PLAN_INTS.items()}
    plan |= {"num_slots": wire_schema(u32, result), "pad0": wire_schema(pad(2), result)}
    if result:
        slot = _without(wire_schema(TENSOR_SLOT, True), "pad", "pad2")
        plan_schema = _without(js.obj(plan | {"slots": js.array(slot)}), "pad0")
        return js.obj({"ops": js.array(trace_op_schema(True)), "has_plan": js.BOOLEAN,
                       "measured_ms_bits": wire_schema(f32, True),
                       "variant_id": wire_schema(u32, True), "content_hash": js.HEX64_OUT,
                       "merkle_hash": js.HEX64_OUT, "first_op_schema": js.HEX64_OUT},
                      {"plan": plan_schema})
    plan_schema = js.obj(optional=plan | {"slots": js.array(wire_schema(TENSOR_SLOT))})
    return js.obj({"ops": js.array(trace_op_schema())}, {
        "has_plan": wire_schema(bool_), "measured_ms_bits": wire_schema(f32),
        "variant_id": wire_schema(u32), "plan": js.or_null(plan_schema),
        **{n: wire_schema(hash64) for n in ("content_hash", "merkle_hash", "first_op_schema")}})


ARMS = js.array(js.obj(optional={"value": wire_schema(i64), "target_merkle": wire_schema(hash64)}))
"""What `branch_from_wire` accepts as arms."""
ARMS_OUT = js.array(js.obj({"value": wire_schema(i64, True), "target_merkle": js.HEX64_OUT}))
"""What `cdag_decode_branch` writes as arms."""


def _slot_wire(slot: dict) -> dict:
    out = to_wire(TENSOR_SLOT, slot)
    return {k: v for k, v in out.items() if k not in ("pad", "pad2") or int(v, 16)}


def region_to_wire(r: CdagRegion) -> dict:
    """Every field of the region, so that it encodes back to the same bytes."""
    out: dict[str, Any] = {
        "ops": [trace_op_to_wire(op) for op in r.ops], "has_plan": r.plan is not None,
        "measured_ms_bits": f"0x{r.measured_ms_bits:08x}", "variant_id": r.variant_id,
        "content_hash": HASH64.encode(r.content_hash), "merkle_hash": HASH64.encode(r.merkle_hash),
        "first_op_schema": HASH64.encode(r.first_op_schema)}
    if r.plan is not None:
        p = r.plan
        plan = {"pool_bytes": p.pool_bytes, "num_slots": len(p.slots),
                "num_external": p.num_external, "device_type": p.device_type,
                "device_idx": p.device_idx, "device_capability": p.device_capability,
                "rank": p.rank, "world_size": p.world_size,
                "slots": [_slot_wire(s) for s in p.slots]}
        if any(p.pad0):
            plan["pad0"] = p.pad0.hex()
        out["plan"] = plan
    return out


def cdag_encode(region: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """The region's CDAG file."""
    return {"hex": encode_region(region_from_wire(region, errata))}


def cdag_decode(hex: bytes, errata: frozenset[str] = NO_ERRATA) -> dict:
    """A region file read back (every field, header hashes as stored)."""
    return {"region": region_to_wire(decode_region(hex, errata))}


def branch_from_wire(guard: Any, arms: Any, next_merkle: int | None, merkle_hash: int | None,
                     errata: frozenset[str] = NO_ERRATA) -> CdagBranch:
    """The branch the wire form describes; its Merkle hash computed unless given."""
    g = from_wire(GUARD, guard, "args.guard")
    if not isinstance(arms, list):
        raise InvalidInput("args.arms: expected a list of {value, target_merkle}")
    pairs = []
    for k, a in enumerate(arms):
        a = _object(a, {"value", "target_merkle"}, f"args.arms[{k}]")
        pairs.append((scalar_from_wire(i64, a.get("value", 0), f"args.arms[{k}].value"),
                      scalar_from_wire(hash64, a.get("target_merkle", 0),
                                       f"args.arms[{k}].target_merkle")))
    check_arms(pairs, errata)
    if merkle_hash is None:
        own = branch_hash(guard_hash(g["kind"], g["op_index"], g["arg_index"], g["dim_index"],
                                     errata), pairs, errata)
        merkle_hash = chained(own, next_merkle)
    return CdagBranch(g, pairs, merkle_hash, next_merkle or 0)


def guard_to_wire(g: dict) -> dict:
    out = to_wire(GUARD, g)
    return out if int(out["pad"], 16) else {k: v for k, v in out.items() if k != "pad"}


def cdag_encode_branch(guard: Any, arms: Any, next_merkle: int | None = None,
                       merkle_hash: int | None = None,
                       errata: frozenset[str] = NO_ERRATA) -> dict:
    """The branch's CDAG file."""
    return {"hex": encode_branch(branch_from_wire(guard, arms, next_merkle, merkle_hash,
                                                  errata))}


def cdag_decode_branch(hex: bytes, errata: frozenset[str] = NO_ERRATA) -> dict:
    """A branch file read back: hashes, guard (pad only if non-zero) and arms."""
    b = decode_branch(hex, errata)
    return {"guard": guard_to_wire(b.guard),
            "arms": [{"value": v, "target_merkle": HASH64.encode(t)} for v, t in b.arms],
            "next_merkle": b.next_merkle, "merkle_hash": b.merkle_hash}


@st.composite
def region_values(draw, max_ops: int = 4) -> CdagRegion:
    """Regions of 0-4 ops with 0-2 inputs and outputs, random metas (ndim <= 8), scalars,
    flags, ids, and an optional plan of 0-3 slots."""
    meta = values_strategy(TENSOR_META).map(lambda m: m | {"ndim": m["ndim"] % 9,
                                                           "data_ptr": 0})
    ids = st.integers(0, 2**32 - 1)
    ops = []
    for _ in range(draw(st.integers(0, max_ops))):
        op = TraceOp()
        op.schema_hash, op.shape_hash, op.scope_hash, op.callsite_hash = draw(
            st.tuples(*[st.integers(0, 2**64 - 1)] * 4))
        op.inputs = draw(st.lists(meta, max_size=2))
        op.outputs = draw(st.lists(meta, max_size=2))
        nsa = draw(st.integers(0, 3))
        op.num_scalar_args = nsa
        op.scalar_args = draw(st.none() | st.lists(st.integers(-2**63, 2**63 - 1),
                                                   min_size=nsa, max_size=nsa))
        op.grad_enabled, op.inference_mode, op.is_mutable, op.torch_function = draw(
            st.tuples(*[st.booleans()] * 4))
        op.training_phase, op.kernel_id = draw(st.integers(0, 3)), draw(st.integers(0, 255))
        for name, n in (("input_trace_indices", len(op.inputs)),
                        ("input_slot_ids", len(op.inputs)),
                        ("output_slot_ids", len(op.outputs))):
            setattr(op, name, draw(st.none() | st.lists(ids, min_size=n, max_size=n)))
        ops.append(op)
    content = compute_content_hash(ops)
    r = CdagRegion(ops, content, draw(st.sampled_from([chained(content, 0), content])),
                   ops[0].schema_hash if ops else 0, draw(st.integers(0, 2**32 - 1)),
                   draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        r.plan = CdagPlan(*draw(st.tuples(
            st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1), st.integers(-128, 127),
            st.integers(-128, 127), st.binary(min_size=2, max_size=2),
            st.integers(0, 2**64 - 1), st.integers(-2**31, 2**31 - 1),
            st.integers(-2**31, 2**31 - 1))))
        r.plan.slots = draw(st.lists(values_strategy(TENSOR_SLOT), max_size=3))
    return r


def region_files() -> st.SearchStrategy:
    """Valid region files (canonical encodings)."""
    return region_values().map(encode_region)


def _encode_domain() -> st.SearchStrategy:
    def args(r: CdagRegion, explicit: bool) -> dict:
        wire = region_to_wire(r)
        if not explicit:
            wire.pop("content_hash")
            wire.pop("first_op_schema")
            if r.merkle_hash == chained(r.content_hash, 0):
                wire.pop("merkle_hash")
        return {"region": wire}
    return st.tuples(region_values(), st.booleans()).map(lambda t: args(*t))


def branch_values() -> st.SearchStrategy:
    guard = values_strategy(GUARD)
    arms = st.lists(st.tuples(st.integers(-2**63, 2**63 - 1), st.integers(0, 2**64 - 1)),
                    max_size=4, unique_by=lambda a: a[0]).map(sorted)
    return st.builds(CdagBranch, guard, arms, st.integers(0, 2**64 - 1),
                     st.integers(0, 2**64 - 1))


def cdag_bench(n: int, rng) -> list[dict]:
    """One region of n ops (a synthetic transformer's trace ops) with a plan of 64 slots."""
    ops = content_bench(n, rng)[0]["ops"]
    slots = [{"offset_bytes": 256 * k, "nbytes": 256, "birth_op": k, "death_op": k + 1,
              "dtype": 6, "device_idx": 0, "slot_id": k} for k in range(64)]
    return [{"region": {"ops": ops, "has_plan": True, "measured_ms_bits": "0x3fc00000",
                        "variant_id": 1, "plan": {"pool_bytes": 256 * 64, "num_slots": 64,
                                                  "num_external": 0, "slots": slots}}}]


def locate_region(args: dict) -> Any:
    """Byte offset of an encoded region -> the field it belongs to."""
    spans: list = []
    encode_region(region_from_wire(args["region"]), spans)
    return lambda offset: name_at(spans, offset)


def locate_branch(args: dict) -> Any:
    spans: list = []
    encode_branch(branch_from_wire(args["guard"], args["arms"], args["next_merkle"],
                                   args["merkle_hash"]), spans)
    return lambda offset: name_at(spans, offset)


def name_at(spans: list[tuple[int, int, str]], offset: int) -> str:
    """The field of the span holding `offset`; inside a TensorMeta, TensorSlot or Guard, its
    member."""
    for start, size, name in spans:
        if start <= offset < start + size:
            inner = offset - start
            if name.endswith("]") and ("inputs[" in name or "outputs[" in name):
                return f"{name}: {field_at(TENSOR_META, inner)}"
            if name.startswith("plan.slots["):
                return f"{name}: {field_at(TENSOR_SLOT, inner)}"
            if name == "guard":
                return field_at(GUARD, inner)
            return f"{name} (byte {inner} of {size})" if size > 1 else name
    return "past the end of the node"


_SEQUENTIAL = ("variable-length records: each op's offset depends on every count before it (a "
               "sequential scan) and each copy is a few hundred bytes; no elementwise form")
_TINY = "one guard and a few 16-byte arms per node: nothing to batch"

"""A region file with no ops and no plan (53 bytes, hashes 0)."""

declare(
    "cdag.encode", chapter=18,
    summary="The CDAG v7 file of a region: header, fixed fields, optional plan, ops.",
    args=record(region=Field(Json("{ops, has_plan, measured_ms_bits, variant_id, plan?, "
                                  "content_hash?, merkle_hash?, first_op_schema?}",
                                  region_schema()),
                             "the region (design §4b)")),
    result=record(hex=BYTES), spec=(encode_region,), errata=(E8_3, E8_4),
    domain=_encode_domain, bench=cdag_bench, locate=locate_region,
    not_applicable={"cupy": _SEQUENTIAL},
    invalid=(
        InvalidCase("has_plan without a plan",
                    lambda: st.just({"region": {"ops": [], "has_plan": True}})),
        InvalidCase("num_slots that does not count the slots", lambda: st.just({"region": {
            "ops": [], "has_plan": True, "plan": {"num_slots": 2, "slots": [{}]}}})),
        InvalidCase("a training phase that does not fit 2 bits", lambda: st.just({"region": {
            "ops": [{"schema_hash": "0x1", "training_phase": 4}], "has_plan": False}})),
        InvalidCase("fewer scalars than num_scalar_args", lambda: st.just({"region": {
            "ops": [{"schema_hash": "0x1", "scalar_args": [1], "num_scalar_args": 2}],
            "has_plan": False}})),
    ),
    edges=lambda: [{"region": {"ops": [], "has_plan": False, "measured_ms_bits": "0x0",
                               "variant_id": 0}},
                   {"region": {"ops": [{"schema_hash": "0x1", "num_scalar_args": 2}],
                               "has_plan": True, "plan": {"slots": []}}},
                   {"region": {"ops": [{"schema_hash": "0x1", "inputs": [{}], "outputs": [{}]}],
                               "has_plan": False, "content_hash": "0x0", "merkle_hash": "0x0"}}],
)

declare(
    "cdag.decode", chapter=18,
    summary="A CDAG region file read back; anything but a canonical encoding is invalid_input.",
    args=record(hex=Field(BYTES, "the file's bytes")),
    result=record(region=Json("{ops, has_plan, measured_ms_bits, variant_id, plan?, "
                              "content_hash, merkle_hash, first_op_schema}",
                              region_schema(True))),
    spec=(decode_region,), errata=(E18_6, E18_8), not_applicable={"cupy": _SEQUENTIAL},
    domain=lambda: region_files().map(lambda b: {"hex": b}), bench=lambda n, rng: [
        {"hex": cdag_encode(**a)["hex"]} for a in cdag_bench(n, rng)],
    invalid=(
        InvalidCase("a wrong magic ('CDAG' in reading order)",
                    lambda: st.just({"hex": "43444147" + _EMPTY[8:]})),
        InvalidCase("version 6", lambda: st.just({"hex": _EMPTY[:8] + "06" + _EMPTY[10:]})),
        InvalidCase("a branch file", lambda: st.just({"hex": _EMPTY[:16] + "01" + _EMPTY[18:]})),
        InvalidCase("truncated by one byte", lambda: st.just({"hex": _EMPTY[:-2]})),
        InvalidCase("2^32-1 ops claimed in 53 bytes",
                    lambda: st.just({"hex": _EMPTY[:64] + "ffffffff" + _EMPTY[72:]})),
        InvalidCase("any truncation of a valid file", lambda: region_files().filter(
            lambda b: len(b) > 0).flatmap(lambda b: st.integers(0, len(b) - 1).map(
                lambda k: {"hex": b[:k].hex()}))),
    ),
    edges=lambda: [{"hex": _EMPTY}],
)

declare(
    "cdag.encode_branch", chapter=18,
    summary="The CDAG v7 file of a branch: header, Guard verbatim, (value, target merkle) arms.",
    args=record(guard=Field(Json("{kind, op_index, arg_index, dim_index}", wire_schema(GUARD)),
                            default={}),
                arms=Field(Json("[{value, target_merkle}]", ARMS), "sorted by value", default=[]),
                next_merkle=Field(Optional(HASH64, 0), "continuation's merkle, null if none",
                                  default=None),
                merkle_hash=Field(Optional(HASH64, 0), "default: computed", default=None)),
    result=record(hex=BYTES), spec=(encode_branch,), errata=(E9_1, E9_2, E18_7),
    not_applicable={"numba": _TINY, "cupy": _TINY},
    domain=lambda: branch_values().map(lambda b: {
        "guard": to_wire(GUARD, b.guard), "merkle_hash": b.merkle_hash,
        "next_merkle": b.next_merkle,
        "arms": [{"value": v, "target_merkle": HASH64.encode(t)} for v, t in b.arms]}),
    locate=locate_branch,
    invalid=(InvalidCase("a guard field too wide",
                         lambda: st.just({"guard": {"arg_index": 1 << 16}})),),
    edges=lambda: [{}, {"guard": {"kind": 1, "op_index": 0}, "next_merkle": "0x0"}],
)

declare(
    "cdag.decode_branch", chapter=18,
    summary="A CDAG branch file read back: merkle, continuation merkle, guard, arms.",
    args=record(hex=Field(BYTES, "the file's bytes")),
    result=record(guard=Json("{kind, op_index, arg_index, dim_index, pad?}",
                             _without(wire_schema(GUARD, True), "pad")),
                  arms=Json("[{value, target_merkle}]", ARMS_OUT), next_merkle=HASH64,
                  merkle_hash=HASH64),
    spec=(decode_branch,), errata=(E18_7, E18_8),
    not_applicable={"numba": _TINY, "cupy": _TINY},
    domain=lambda: branch_values().map(lambda b: {"hex": encode_branch(b)}),
    invalid=(
        InvalidCase("a region file", lambda: st.just({"hex": _EMPTY})),
        InvalidCase("arms claimed past the end", lambda: st.just({
            "hex": _EMPTY[:16] + "01" + _EMPTY[18:64] + "00" * 12 + "02000000"})),
    ),
    edges=lambda: [{"hex": _EMPTY[:16] + "01" + _EMPTY[18:64] + "00" * 12 + "00000000"}],
)
