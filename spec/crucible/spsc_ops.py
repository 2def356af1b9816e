"""Ops `ring.simulate` and `metalog.simulate`: run a sequence of producer and consumer calls
on a TraceRing or a MetaLog and report each call's result and the final counters.

ring.simulate steps: {"op": "append", "entry": <64-byte hex>, "meta_start", "scope_hash",
"callsite_hash"} (all but "op" optional), {"op": "drain", "max": n}, {"op": "reset"}.
metalog.simulate steps: {"op": "append", "n"}, {"op": "contiguous", "start", "count"},
{"op": "advance_tail", "to"}, {"op": "reset"}.
"""

from __future__ import annotations

from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput, SpecError
from ..core.registry import InvalidCase, declare
from ..core.schema import BYTES, HASH64, U32, U64, Field, Json, record
from ..core.steps import parse_steps, steps_schema
from ..core.strategies import st
from . import meta_log, trace_ring
from .types import NONE32

_HEX = HASH64


def _field(step: dict, name: str, t: Any, default: Any, path: str) -> Any:
    if name not in step:
        return default
    try:
        return t.decode(step[name], f"{path}.{name}")
    except SpecError as e:
        raise InvalidInput(e.message) from None


RING_STEP_FIELDS = {"append": ("entry", "meta_start", "scope_hash", "callsite_hash"),
                    "drain": ("max",), "reset": ()}


RING_STEPS = steps_schema(RING_STEP_FIELDS, {
    "entry": BYTES.json_schema(), "meta_start": U32.json_schema(), "scope_hash": U64.json_schema(),
    "callsite_hash": U64.json_schema(), "max": U32.json_schema()}, {"drain": ("max",)})
"""What `ring_steps` accepts (the 64-byte entry size is its own)."""
RING_ANSWERS = js.array(js.one_of(
    js.obj({"ok": js.BOOLEAN}), js.obj(), js.obj({"count": js.uint(32), "items": js.array(js.obj({
        "entry": BYTES.json_schema(True), "meta_start": js.uint(32),
        "scope_hash": js.HEX64_OUT, "callsite_hash": js.HEX64_OUT}))})))
"""Answers: append {ok}, drain {count, items}, reset {}."""


def ring_steps(steps: Any) -> list[tuple]:
    """Parsed ring.simulate steps: ("append", item) / ("drain", max) / ("reset",)."""
    out: list[tuple] = []
    for i, (op, s) in enumerate(parse_steps(steps, RING_STEP_FIELDS)):
        path = f"args.steps[{i}]"
        if op == "append":
            entry = _field(s, "entry", BYTES, bytes(trace_ring.ENTRY.size), path)
            if len(entry) != trace_ring.ENTRY.size:
                raise InvalidInput(f"{path}.entry: an entry is 64 bytes, got {len(entry)}")
            out.append(("append", (entry, _field(s, "meta_start", U32, NONE32, path),
                                   _field(s, "scope_hash", U64, 0, path),
                                   _field(s, "callsite_hash", U64, 0, path))))
        elif op == "drain":
            if "max" not in s:
                raise InvalidInput(f"{path}: drain needs max")
            out.append(("drain", _field(s, "max", U32, 0, path)))
        else:
            out.append(("reset",))
    return out


def ring_item_wire(item: tuple) -> dict:
    entry, meta_start, scope, callsite = item
    return {"entry": entry.hex(), "meta_start": meta_start, "scope_hash": _HEX.encode(scope),
            "callsite_hash": _HEX.encode(callsite)}


def check_capacity(capacity: int, largest: int) -> None:
    if capacity & (capacity - 1) or not 1 <= capacity <= largest:
        raise InvalidInput(f"args.capacity: a power of two from 1 to {largest}")


def ring_simulate(capacity: int, steps: Any) -> dict:
    """Run the steps on a fresh ring."""
    r = trace_ring.Ring(capacity)
    results: list[dict] = []
    for step in ring_steps(steps):
        if step[0] == "append":
            results.append({"ok": trace_ring.try_append(r, step[1])})
        elif step[0] == "drain":
            items = trace_ring.drain(r, step[1])
            results.append({"count": len(items), "items": [ring_item_wire(x) for x in items]})
        else:
            trace_ring.reset(r)
            results.append({})
    return {"results": results, "head": r.head, "tail": r.tail, "cached_tail": r.cached_tail}


METALOG_STEP_FIELDS = {"append": ("n",), "contiguous": ("start", "count"),
                       "advance_tail": ("to",), "reset": ()}


METALOG_STEPS = steps_schema(METALOG_STEP_FIELDS, dict.fromkeys(
    ("n", "start", "count", "to"), U32.json_schema()), METALOG_STEP_FIELDS)
"""What `metalog_steps` accepts: every field of a step is needed."""
METALOG_ANSWERS = js.array(js.one_of(js.obj({"start": js.or_null(js.uint(32))}),
                                     js.obj({"slot": js.or_null(js.uint(32))}), js.obj()))
"""Answers: append {start}, contiguous {slot}, advance_tail and reset {}."""


def metalog_steps(steps: Any) -> list[tuple]:
    """Parsed metalog.simulate steps with their u32 arguments."""
    out: list[tuple] = []
    for i, (op, s) in enumerate(parse_steps(steps, METALOG_STEP_FIELDS)):
        path = f"args.steps[{i}]"
        missing = [f for f in METALOG_STEP_FIELDS[op] if f not in s]
        if missing:
            raise InvalidInput(f"{path}: {op} needs {missing[0]}")
        out.append((op, *(_field(s, f, U32, 0, path) for f in METALOG_STEP_FIELDS[op])))
    return out


def check_advance(i: int, to: int, head: int, tail: int) -> None:
    """The consumer may move its tail forward, up to the head."""
    if (to - tail) % 2**32 > (head - tail) % 2**32:
        raise InvalidInput(f"args.steps[{i}].to: {to} is past the head {head}")


def metalog_simulate(capacity: int, steps: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run the steps on a fresh MetaLog (u32 counters)."""
    m = meta_log.MetaLogState(capacity)
    results: list[dict] = []
    for i, (op, *a) in enumerate(metalog_steps(steps)):
        if op == "append":
            results.append({"start": meta_log.try_append(m, a[0], errata)})
        elif op == "contiguous":
            results.append({"slot": meta_log.try_contiguous(m, a[0], a[1])})
        elif op == "advance_tail":
            check_advance(i, a[0], m.head, m.tail)
            meta_log.advance_tail(m, (a[0] - m.tail) % 2**32)
            results.append({})
        else:
            m.head = m.tail = m.cached_tail = 0
            results.append({})
    return {"results": results, "head": m.head, "tail": m.tail, "cached_tail": m.cached_tail}


def _ring_domain() -> st.SearchStrategy:
    item = st.fixed_dictionaries({"op": st.just("append")}, optional={
        "entry": st.binary(min_size=64, max_size=64).map(bytes.hex),
        "meta_start": st.integers(0, NONE32), "scope_hash": st.integers(0, 2**64 - 1).map(hex),
        "callsite_hash": st.integers(0, 2**64 - 1).map(hex)})
    step = st.one_of(item, item, st.fixed_dictionaries({"op": st.just("drain"),
                                                        "max": st.integers(0, 6)}),
                     st.just({"op": "reset"}))
    return st.fixed_dictionaries({"capacity": st.sampled_from([1, 2, 4, 8]),
                                  "steps": st.lists(step, max_size=24)})


@st.composite
def _metalog_domain(draw) -> dict:
    """Step sequences whose tail advances stay between the tail and the head: the strategy
    runs the spec alongside to know where they are."""
    capacity = draw(st.sampled_from([1, 2, 4, 8, 16]))
    shadow = meta_log.MetaLogState(capacity)
    steps: list[dict] = []
    for _ in range(draw(st.integers(0, 24))):
        kind = draw(st.sampled_from(["append", "append", "contiguous", "advance", "reset"]))
        if kind == "append":
            n = draw(st.integers(0, 10))
            meta_log.try_append(shadow, n)
            steps.append({"op": "append", "n": n})
        elif kind == "contiguous":
            steps.append({"op": "contiguous", "start": draw(st.integers(0, 2**32 - 1)),
                          "count": draw(st.integers(0, 10))})
        elif kind == "advance":
            used = (shadow.head - shadow.tail) % 2**32
            shadow.tail = (shadow.tail + draw(st.integers(0, used))) % 2**32
            steps.append({"op": "advance_tail", "to": shadow.tail})
        else:
            shadow.head = shadow.tail = shadow.cached_tail = 0
            steps.append({"op": "reset"})
    return {"capacity": capacity, "steps": steps}


_STATE = {"head": Field(U64, "producer counter"), "tail": Field(U64, "consumer counter"),
          "cached_tail": Field(U64, "the producer's copy of tail")}
_SEQUENTIAL = "the steps are one sequence; each depends on the state the last one left"

declare(
    "ring.simulate", chapter=4,
    summary="Run TraceRing appends, drains and resets in order; each result and the counters.",
    args=record(capacity=Field(U32, "a power of two up to 65536", default=trace_ring.CAPACITY),
                steps=Field(Json("[step]", RING_STEPS), "append / drain / reset steps")),
    result=record(results=Json("[per-step result]", RING_ANSWERS), **_STATE),
    spec=(trace_ring.try_append, trace_ring.drain), domain=_ring_domain,
    check=lambda a: check_capacity(a["capacity"], trace_ring.CAPACITY),
    not_applicable={"cupy": _SEQUENTIAL},
    invalid=(InvalidCase("a capacity that is not a power of two",
                         lambda: st.just({"capacity": 3, "steps": []})),
             InvalidCase("an unknown step", lambda: st.just({"steps": [{"op": "pop"}]})),
             InvalidCase("an entry of 63 bytes",
                         lambda: st.just({"steps": [{"op": "append", "entry": "00" * 63}]}))),
    edges=lambda: [{"capacity": 2, "steps": [{"op": "append"}] * 3 + [{"op": "drain", "max": 9}]
                    + [{"op": "append", "meta_start": 7}] * 2 + [{"op": "drain", "max": 1}]}],
)

declare(
    "metalog.simulate", chapter=4,
    summary="Run MetaLog bulk appends, contiguous reads and tail advances; results, counters.",
    args=record(capacity=Field(U32, "a power of two up to 2^20", default=meta_log.CAPACITY),
                steps=Field(Json("[step]", METALOG_STEPS),
                            "append / contiguous / advance_tail / reset")),
    result=record(results=Json("[per-step result]", METALOG_ANSWERS), **_STATE),
    spec=(meta_log.try_append, meta_log.try_contiguous), domain=_metalog_domain,
    check=lambda a: check_capacity(a["capacity"], meta_log.CAPACITY),
    errata=(meta_log.E4_2,), not_applicable={"cupy": _SEQUENTIAL},
    invalid=(InvalidCase("advancing the tail past the head",
                         lambda: st.just({"steps": [{"op": "advance_tail", "to": 5}]})),
             InvalidCase("an append without n", lambda: st.just({"steps": [{"op": "append"}]}))),
    edges=lambda: [{"capacity": 4, "steps": [
        {"op": "append", "n": 3}, {"op": "append", "n": 2}, {"op": "advance_tail", "to": 3},
        {"op": "append", "n": 3}, {"op": "contiguous", "start": 3, "count": 3},
        {"op": "contiguous", "start": 4, "count": 2}, {"op": "append", "n": 0},
        {"op": "append", "n": 4294967295}]}],
)
