"""Op `vigil.dispatch`: Vigil's foreground decisions for a new op stream, given the regions
the background thread made.

Args: `regions` (region wire form: ops with guard hashes and slot ids, an optional plan),
`recordings` (recorded streams in trace.build's ops form; each goes through the background
pipeline and its regions follow `regions`, in order), `published` (the regions the background
publishes before the stream starts, in order; default all of them), `cipher` (whether the
Vigil has a Cipher store, empty at the start) and `stream`: ops, {"publish": k or [k, ...]}
items where the background publishes more regions, and the API calls {"rollback": true},
{"persist": true} and {"load": true} (section 13.5).

Result: per stream op its DispatchResult {action, status, op_index} and, when compiled (and
`handles` is on), the handles of the matched op's outputs and inputs (a pool offset or an
external pointer, by slot id; null for a none slot); every mode change with the stream index
where it happened (a publish or API item is a change of its own); per API item what it returned;
which ops were recorded; the slots migrated by region switches; the final state, with the step
of the active transaction and the Cipher head (0 when there is none).
"""

from __future__ import annotations

from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, HASH64, U32, U64, Field, Json, record
from ..core.strategies import st
from . import vigil as vg
from .cipher import Cipher
from .iteration_detector import K
from .memory_plan import align256
from .pool_allocator import Handle, slot_ptr
from .region_cache import mru
from .replay_engine import ReplayEngine, current_ids
from .replay_ops import linear, region_ops
from .replay_region import (
    REGION,
    STREAM_OP,
    Guard,
    ReplayRegion,
    guard_from_wire,
    regions_from_recording,
    regions_from_wire,
)
from .trace_build_ops import RECORDED_OPS
from .transaction import TxStatus
from .types import NONE32

MAX_REGIONS = 4096
"""The spec's own bound on the regions of one `vigil.dispatch` request."""


def handle_wire(sid: int, h: Handle | None) -> dict | None:
    if sid == NONE32:
        return None
    if h is not None and h.kind == "pool":
        return {"slot": sid, "offset": h.value}
    return {"slot": sid, "external": None if h is None else HASH64.encode(h.value)}


HANDLES = js.array(js.or_null(js.one_of(
    js.obj({"slot": js.uint(32), "offset": js.uint(64)}),
    js.obj({"slot": js.uint(32), "external": js.or_null(js.HEX64_OUT)}))))
"""What `current_handles` gives: by slot, a pool offset or an external pointer; null for none."""


def current_handles(e: ReplayEngine, name: str) -> list:
    """The handles of the last matched op's inputs or outputs."""
    return [handle_wire(sid, None if sid == NONE32 else slot_ptr(e.pool, sid))
            for sid in current_ids(e, name)]


def load_regions(regions: Any, recordings: Any, errata: frozenset[str]) -> list[ReplayRegion]:
    if not isinstance(regions, list) or len(regions) > MAX_REGIONS:
        raise InvalidInput(f"args.regions: expected a list of at most {MAX_REGIONS} regions")
    out = regions_from_wire(regions, "args.regions")
    if not isinstance(recordings, list):
        raise InvalidInput("args.recordings: expected a list of recorded streams")
    for j, rec in enumerate(recordings):
        out += regions_from_recording(rec, len(out), errata, f"args.recordings[{j}]")
    return out


def region_indices(value: Any, n: int, path: str) -> list[int]:
    ks = value if isinstance(value, list) else [value]
    for i, k in enumerate(ks):
        if type(k) is not int or not 0 <= k < n:
            raise InvalidInput(f"{path}" + (f"[{i}]" if isinstance(value, list) else "") +
                               f": {k!r} is not one of the {n} regions")
    return ks


CALLS = ("rollback", "persist", "load")
"""The Vigil API calls a stream item can make: {"rollback": true} and so on."""

Item = Guard | list[int] | str


_INDICES = {"type": ["integer", "array"], "minimum": 0, "items": js.integer(0)}
"""What `region_indices` accepts: a region index or a list of them (the range is its own)."""
_CALL_KEYS = ("publish", *CALLS)
STREAM = js.array({"type": "object", "allOf": [
    {"if": {"required": ["publish"]}, "then": js.obj({"publish": _INDICES})},
    *({"if": {"required": [c]}, "then": {"properties": {c: {"const": True}}}} for c in CALLS),
    {"if": {"not": {"anyOf": [{"required": [k]} for k in _CALL_KEYS]}}, "then": STREAM_OP}]})
"""What `parse_stream` accepts: ops, {"publish": k or [k, ...]} and {"rollback" | "persist" |
"load": true}."""


def call_name(item: Any) -> str | None:
    """The API call an item names, if it is a dict with one of the call keys."""
    if isinstance(item, dict):
        return next((c for c in CALLS if c in item), None)
    return None


def parse_stream(stream: Any, n: int, path: str = "args.stream") -> list[Item]:
    """Each item as a Guard (an op), the region indices it publishes, or an API call's name."""
    if not isinstance(stream, list):
        raise InvalidInput(f"{path}: expected a list of ops, publish and call items")
    out: list[Item] = []
    for i, item in enumerate(stream):
        if isinstance(item, dict) and "publish" in item:
            if len(item) != 1:
                raise InvalidInput(f"{path}[{i}]: a publish item has no other field")
            out.append(region_indices(item["publish"], n, f"{path}[{i}].publish"))
        elif (name := call_name(item)) is not None:
            if len(item) != 1 or item[name] is not True:
                raise InvalidInput(f"{path}[{i}]: a {name} item is {{\"{name}\": true}}")
            out.append(name)
        else:
            out.append(guard_from_wire(item, f"{path}[{i}]"))
    return out


def _change(v: vg.Vigil, at: int, event: str) -> dict:
    r = v.ctx.active_region
    return {"at": at, "event": event, "ctx_mode": int(v.ctx.mode), "mode": int(v.mode),
            "region": None if r is None else r.rid}


def call(v: vg.Vigil, name: str, errata: frozenset[str]) -> bool:
    if name == "rollback":
        return vg.rollback(v, errata)
    if name == "persist":
        return vg.persist(v, errata)
    return vg.load(v)


def run_dispatch(rs: list[ReplayRegion], published: list[int], items: list[Item],
                 errata: frozenset[str], handles: bool = True, cipher: bool = True) -> dict:
    """The reference walk: publish, then dispatch, publish or call item by item."""
    v = vg.Vigil(cipher=Cipher() if cipher else None)
    for k in published:
        vg.publish(v, rs[k], errata)
    decisions, changes, recorded, migrations, calls = [], [], [], [], []
    for at, item in enumerate(items):
        if isinstance(item, list):
            for k in item:
                vg.publish(v, rs[k], errata)
            changes.append(_change(v, at, "published"))
            continue
        if isinstance(item, str):
            calls.append({"at": at, "call": item, "ok": call(v, item, errata)})
            changes.append(_change(v, at, item))
            continue
        before, n_recorded = len(v.events), len(v.recorded)
        d = vg.dispatch_op(v, item, errata)
        out: dict = {"action": int(d.action), "status": int(d.status), "op_index": d.op_index}
        if handles and d.action == vg.Action.COMPILED:
            out["outputs"] = current_handles(v.ctx.engine, "output_slot_ids")
            out["inputs"] = current_handles(v.ctx.engine, "input_slot_ids")
        decisions.append(out)
        if len(v.recorded) > n_recorded:
            recorded.append(at)
        for event in v.events[before:]:
            changes.append(_change(v, at, event))
            if event == "switched":
                migrations += [{"at": at, "op": m.op, "old_slot": m.old_slot,
                                "new_slot": m.new_slot, "nbytes": m.nbytes}
                               for m in v.migrations]
    active = v.ctx.active_region
    tx = v.tx_log.active
    live = tx is not None and v.tx_log.entries[tx].status == TxStatus.ACTIVE
    return {"decisions": decisions, "changes": changes, "recorded": recorded,
            "migrations": migrations, "calls": calls,
            "ctx_mode": int(v.ctx.mode), "mode": int(v.mode),
            "compiled_iterations": v.ctx.compiled_iterations,
            "diverged_count": v.ctx.diverged_count,
            "active_region": None if active is None else active.rid,
            "region_cache": [v.region_cache.regions[k].rid for k in mru(v.region_cache)],
            "step": v.step, "reset_requested": v.reset_requested,
            "active_tx_region": None if not live else v.tx_log.entries[tx].region,
            "active_tx_step": None if not live else v.tx_log.entries[tx].step_id,
            "cipher_head": 0 if v.cipher is None else v.cipher.head}


def vigil_dispatch(regions: Any, recordings: Any, published: Any, stream: Any,
                   handles: bool = True, cipher: bool = True,
                   errata: frozenset[str] = NO_ERRATA) -> dict:
    rs = load_regions(regions, recordings, errata)
    first = list(range(len(rs))) if published is None else region_indices(published, len(rs),
                                                                     "args.published")
    return run_dispatch(rs, first, parse_stream(stream, len(rs)), errata, handles, cipher)


def chain_region(shapes: list[int], nbytes: list[int], content: int | None = None) -> dict:
    """A linear chain: op i (schema 0x100 + i) writes slot i and reads slot i - 1; slot i is
    nbytes[i] bytes, the slots laid out one after another."""
    offsets, end = [], 0
    for b in nbytes:
        offsets.append(end)
        end += align256(b)
    ops = [{"schema_hash": hex(0x100 + i), "shape_hash": hex(s), "output_slot_ids": [i],
            "input_slot_ids": [i - 1] if i else []} for i, s in enumerate(shapes)]
    out: dict = {"ops": ops, "plan": {"pool_bytes": end, "slots": [
        {"offset_bytes": o, "nbytes": b} for o, b in zip(offsets, nbytes, strict=True)]}}
    if content is not None:
        out["content_hash"] = hex(content)
    return out


def chain_recording(iterations: range, shapes: list[int], sizes: list[int], variant: int = -1,
                    tail: int = 0) -> list[dict]:
    """The seed's dispatch tests' loop, recorded: op i (schema 0x100 + i) reads op i - 1's
    output; tensors are 1-d floats of sizes[i] elements at fake pointers
    (variant + 1) * 2^28 + (iter + 1) * 2^20 + (op + 1) * 2^12; after the iterations, the first
    `tail` ops of the next one."""
    def meta(it: int, i: int) -> dict:
        ptr = (variant + 1) * 0x10000000 + (it + 1) * 0x100000 + (i + 1) * 0x1000
        return {"ndim": 1, "sizes": [sizes[i]], "strides": [1], "dtype": 6, "device_idx": 0,
                "data_ptr": hex(ptr)}

    ops = []
    for it in [*iterations, iterations.stop]:
        for i in range(len(shapes) if it < iterations.stop else tail):
            ops.append({"schema_hash": hex(0x100 + i), "shape_hash": hex(shapes[i]),
                        "inputs": [meta(it, i - 1)] if i else [], "outputs": [meta(it, i)]})
    return ops


def _ops_of(region: dict, lo: int = 0, hi: int | None = None) -> list[dict]:
    return [{"schema_hash": o["schema_hash"], "shape_hash": o["shape_hash"]}
            for o in region["ops"][lo:hi]]


@st.composite
def dispatch_inputs(draw) -> dict:
    """One to three variants of a chain sharing a prefix, published in some order, and a
    stream of whole and partial iterations, foreign ops, later publishes and API calls."""
    n = draw(st.integers(1, 8))
    variants = []
    for v in range(draw(st.integers(1, 3))):
        split = draw(st.integers(0, n))
        shapes = [0x200 + i if i < split or v == 0 else 0x300 * (v + 1) + i for i in range(n)]
        nbytes = [1024 if i < split or v == 0 else 512 * draw(st.integers(1, 4))
                  for i in range(n)]
        variants.append(chain_region(shapes, nbytes, 0x7000 + v))
    chains = len(variants)
    if draw(st.booleans()):
        variants.append({"ops": draw(region_ops(5))})
    stream: list[dict] = []
    story = chains > 1 and draw(st.booleans())
    if story:  # replay 0, diverge onto 1, publish 1, replay it, then switch back and forth
        a, b = _ops_of(variants[0]), _ops_of(variants[1])
        split = next((i for i in range(n) if a[i] != b[i]), n)
        stream += a * draw(st.integers(1, 2)) + a[:split] + b[split:split + 1]
        stream += [{"publish": 1}] + b * 2 + a + b
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["iteration"] * 4 + ["partial", "foreign", "publish",
                                                         "call"]))
        k = draw(st.integers(0, len(variants) - 1))
        if kind == "iteration":
            stream += _ops_of(variants[k])
        elif kind == "partial":
            stream += _ops_of(variants[k], draw(st.integers(0, n)), draw(st.integers(0, n)))
        elif kind == "foreign":
            stream.append({"schema_hash": "0xbad", "shape_hash": hex(0x200 + draw(
                st.integers(0, n)))} | draw(st.sampled_from([{}, {"scope_hash": "0x5"}])))
        elif kind == "publish":
            stream.append({"publish": k})
        else:
            stream.append({draw(st.sampled_from(CALLS)): True})
    recordings = []
    if draw(st.integers(0, 3)) == 0:
        recordings.append(chain_recording(range(draw(st.integers(1, 3))),
                                          [0x200 + i for i in range(n)], [256] * n,
                                          tail=min(K, n)))
    published = [0] if story else draw(st.none() | st.lists(st.integers(0, len(variants) - 1),
                                                            max_size=3))
    return {"regions": variants, "recordings": recordings, "published": published,
            "stream": stream, "handles": draw(st.booleans()),
            "cipher": draw(st.integers(0, 3)) > 0}


_REGION_OR_NULL = js.or_null(js.uint(32))


def vigil_edges() -> list[dict]:
    a = chain_region([0x200 + i for i in range(8)], [1024] * 8, 0xA)
    b = chain_region([0x200, 0x201, 0x202, *(0x300 + i for i in range(3, 8))],
                     [1024] * 3 + [2048] * 5, 0xB)
    it_a, it_b = _ops_of(a), _ops_of(b)
    short = chain_region([0x200, 0x201, 0x202], [256] * 3, 0xC)
    return [
        {"regions": [a], "stream": it_a * 3},
        {"regions": [a], "stream": it_a * 2 + it_a[:3] + [{"schema_hash": "0xbad",
                                                          "shape_hash": "0x203"}] + it_a},
        {"regions": [a, b], "published": [0], "stream": it_a * 2 + it_b[:4] +
         [{"publish": 1}] + it_b * 2 + it_a + it_b},
        {"regions": [short], "stream": _ops_of(short) * 3},
        {"regions": [{"ops": linear(K)}], "stream": linear(K) * 2},
        {"regions": [a], "stream": it_a[:2] + [{"schema_hash": "0x100", "shape_hash": "0x200",
                                               "scope_hash": "0x9"}] + it_a * 2},
        {"regions": [a, b], "published": [], "stream": [{"publish": 0}, {"publish": 1},
                                                       {"rollback": True}, {"rollback": True},
                                                       *it_a]},
        {"regions": [a, b], "published": [1], "stream": [
            *it_a, {"publish": 0}, *it_a[:5], {"persist": True}, {"rollback": True},
            {"load": True}, *it_a]},
    ]


def _vigil_bench(n: int, rng) -> list[dict]:
    """Variants A and B of a 16-op chain sharing 8 ops: mostly A, a B pass every ~20 (two
    switches), and a foreign op every ~5000 (a fallback, then a new publication of A)."""
    a = chain_region([0x200 + i for i in range(16)], [4096] * 16, 0xA)
    b = chain_region([0x200 + i if i < 8 else 0x300 + i for i in range(16)],
                     [4096] * 8 + [8192] * 8, 0xB)
    it_a, it_b = _ops_of(a), _ops_of(b)
    stream: list[dict] = it_a + it_b + it_a
    while len(stream) < n:
        roll = int(rng.integers(0, 1000))
        if roll < 3:
            stream += [{"schema_hash": "0xbad", "shape_hash": "0x0"}, {"publish": 0}]
        stream += it_b if roll % 20 == 0 else it_a
    return [{"regions": [a, b], "recordings": [], "published": [1, 0], "stream": stream[:n],
             "handles": True, "cipher": True}]


declare(
    "vigil.dispatch", chapter=11,
    summary="Vigil's foreground over a new stream: per op record / align / replay, divergence "
            "handling with cached alternates, mode changes and the final state.",
    args=record(regions=Field(Json("[region]", js.array(REGION, MAX_REGIONS)), "regions as JSON",
                              default=[]),
                recordings=Field(Json("[[op]]", js.array(RECORDED_OPS)),
                                 "recorded streams (trace.build ops)", default=[]),
                published=Field(Json("[region index] or null", js.or_null(_INDICES)),
                                "published before the stream (default: all)", default=None),
                stream=Field(Json("[op or {publish} or {rollback|persist|load: true}]", STREAM),
                             "the new ops, publications and API calls, in order"),
                handles=Field(BOOL, "report the handles of compiled ops", default=True),
                cipher=Field(BOOL, "the Vigil has a (fresh) Cipher store", default=True)),
    result=record(decisions=Json("[{action, status, op_index, outputs?, inputs?}]", js.array(
                      js.obj({"action": js.uint(8), "status": js.uint(8),
                              "op_index": js.uint(32)}, {"outputs": HANDLES, "inputs": HANDLES}))),
                  changes=Json("[{at, event, ctx_mode, mode, region}]", js.array(js.obj({
                      "at": js.uint(64), "event": js.STRING, "ctx_mode": js.uint(8),
                      "mode": js.uint(8), "region": _REGION_OR_NULL}))),
                  recorded=Json("[stream index]", js.array(js.uint(64))),
                  migrations=Json("[migration]", js.array(js.obj({
                      "at": js.uint(64), "op": js.uint(32), "old_slot": js.uint(32),
                      "new_slot": js.uint(32), "nbytes": js.uint(64)}))),
                  calls=Json("[{at, call, ok}]", js.array(js.obj({
                      "at": js.uint(64), "call": {"enum": list(CALLS)}, "ok": js.BOOLEAN}))),
                  ctx_mode=U32, mode=U32, compiled_iterations=U32, diverged_count=U32,
                  active_region=Json("region index or null", _REGION_OR_NULL),
                  region_cache=Json("[region]", js.array(js.uint(32))),
                  step=U64, reset_requested=Json("bool", js.BOOLEAN),
                  active_tx_region=Json("region index or null", _REGION_OR_NULL),
                  active_tx_step=Json("step or null", js.or_null(js.uint(64))),
                  cipher_head=HASH64),
    spec=(vg.dispatch_op, vg.handle_divergence, vg.try_align, vg.rollback, vg.persist,
          vg.load), domain=dispatch_inputs,
    bench=_vigil_bench,
    errata=("E11.1", "E11.2", "E11.3", "E11.5", "E11.6", "E18.5", "E18.9", "E6.1", "E6.4",
            "E6.5", "E7.1", "E8.3", "E8.4", "E10.1"),
    not_applicable={"cupy": "one sequential state machine over the stream"},
    invalid=(InvalidCase("publishing a region that is not there",
                         lambda: st.just({"stream": [{"publish": 0}]})),
             InvalidCase("a region op slot outside its plan", lambda: st.just(
                 {"regions": [{"ops": [{"output_slot_ids": [3]}], "plan": {"slots": []}}],
                  "stream": []})),
             InvalidCase("a misaligned plan slot", lambda: st.just(
                 {"regions": [{"ops": [], "plan": {"slots": [{"offset_bytes": 8}]}}],
                  "stream": []}))),
    edges=vigil_edges,
)

