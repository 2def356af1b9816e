"""Op `cipher.simulate`: a sequence of Cipher calls on a store opened over an empty directory.

Steps (each an object with "op"): {"op": "open"} reopens the store over the same directory (a
new process) and answers {head, log_entries}; {"op": "store", "region": <cdag.encode region>}
answers {hash} (0 when nothing was stored); {"op": "load", "hash"} answers {region} (null when
there is none); {"op": "advance_head", "hash", "step"} answers {}; {"op": "hash_at_step",
"step"} answers {hash}; {"op": "head"} answers {hash}; {"op": "empty"} answers {empty}.
The result lists each step's answer and the final directory: objects as hex bytes, HEAD and log
as text, with each log timestamp the model's clock (the count of advance_head calls so far).
"""

from __future__ import annotations

from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.layout import hash64, u64
from ..core.layout_ops import scalar_from_wire, wire_schema
from ..core.registry import InvalidCase, declare
from ..core.schema import HASH64, Field, Json, record
from ..core.strategies import st
from .cdag_ops import region_from_wire, region_schema, region_to_wire
from .cipher import E18_5, Cipher
from .content_hash import E8_3, E8_4

_STEP_KEYS = {"open": set(), "store": {"region"}, "load": {"hash"},
              "advance_head": {"hash", "step"}, "hash_at_step": {"step"}, "head": set(),
              "empty": set()}


STEPS = js.array(js.tagged("op", {
    "open": js.obj(), "store": js.obj({"region": region_schema()}),
    "load": js.obj({"hash": wire_schema(hash64)}),
    "advance_head": js.obj({"hash": wire_schema(hash64), "step": wire_schema(u64)}),
    "hash_at_step": js.obj({"step": wire_schema(u64)}), "head": js.obj(), "empty": js.obj()}))
"""What `run_step` accepts, step by step."""
ANSWERS = js.array(js.one_of(
    js.obj({"head": js.HEX64_OUT, "log_entries": js.uint(64)}), js.obj({"hash": js.HEX64_OUT}),
    js.obj({"region": js.or_null(region_schema(True))}), js.obj(), js.obj({"empty": js.BOOLEAN})))
"""What `run_step` answers: one of open, store / hash_at_step / head, load, advance_head, empty."""


def _arg(step: dict, name: str, ctype, path: str) -> int:
    if name not in step:
        raise InvalidInput(f"{path}: {step['op']} needs {name!r}")
    return scalar_from_wire(ctype, step[name], f"{path}.{name}")


def run_step(c: Cipher, step: Any, path: str, errata: frozenset[str]) -> tuple[Cipher, dict]:
    """One call on the store; `open` replaces the store by one reopened over its files."""
    if not isinstance(step, dict) or step.get("op") not in _STEP_KEYS:
        raise InvalidInput(f"{path}: a step {{op: {' | '.join(_STEP_KEYS)}, ...}}")
    extra = sorted(set(step) - _STEP_KEYS[step["op"]] - {"op"})
    if extra:
        raise InvalidInput(f"{path}: {step['op']} has no field {extra[0]!r}")
    op = step["op"]
    if op == "open":
        c = Cipher.open(c.files, c.clock)
        return c, {"head": HASH64.encode(c.head), "log_entries": len(c.log)}
    if op == "store":
        region = region_from_wire(step.get("region"), errata, f"{path}.region")
        return c, {"hash": HASH64.encode(c.store(region, errata))}
    if op == "load":
        found = c.load(_arg(step, "hash", hash64, path))
        return c, {"region": None if found is None else region_to_wire(found)}
    if op == "advance_head":
        c.advance_head(_arg(step, "hash", hash64, path), _arg(step, "step", u64, path))
        return c, {}
    if op == "hash_at_step":
        return c, {"hash": HASH64.encode(c.hash_at_step(_arg(step, "step", u64, path)))}
    if op == "head":
        return c, {"hash": HASH64.encode(c.head)}
    return c, {"empty": c.empty()}


def listing(files: dict[str, bytes]) -> dict[str, str]:
    """The directory, sorted by path: objects as hex, HEAD and log as text."""
    return {p: files[p].hex() if p.startswith("objects/") else files[p].decode()
            for p in sorted(files)}


def cipher_simulate(steps: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Open a store over an empty directory, run the steps, list the directory."""
    if not isinstance(steps, list):
        raise InvalidInput("args.steps: expected a list of steps")
    c, results = Cipher.open({}), []
    for k, step in enumerate(steps):
        c, answer = run_step(c, step, f"args.steps[{k}]", errata)
        results.append(answer)
    return {"results": results, "files": listing(c.files)}


def _small_region(schema: int, n: int, plan: bool) -> dict:
    out: dict = {"ops": [{"schema_hash": hex(schema + i)} for i in range(n)], "has_plan": plan}
    if plan:
        out["plan"] = {"pool_bytes": 256, "slots": [{"nbytes": 256, "slot_id": 0}]}
    return out


@st.composite
def sessions(draw) -> dict:
    """Up to 8 calls over a few small regions, steps and hashes."""
    regions = [_small_region(0x10 * (k + 1), k + 1, k % 2 == 1) for k in range(3)]
    known = st.sampled_from(["0x0", "0x1234", "0xdeadbeef12345678"])
    step = st.one_of(
        st.just({"op": "open"}), st.just({"op": "head"}), st.just({"op": "empty"}),
        st.sampled_from(regions).map(lambda r: {"op": "store", "region": r}),
        known.map(lambda h: {"op": "load", "hash": h}),
        st.tuples(known, st.integers(0, 100)).map(
            lambda t: {"op": "advance_head", "hash": t[0], "step": t[1]}),
        st.integers(0, 120).map(lambda s: {"op": "hash_at_step", "step": s}))
    return {"steps": draw(st.lists(step, max_size=8))}


def facts_session() -> list[dict]:
    """The seed's Cipher test (facts §24): store twice, load, advance to step 10 and 50, ask
    hash_at_step at 0, 10, 30, 50 and 999, load a missing hash."""
    region = _small_region(0xAA, 3, False) | {"content_hash": "0x1234"}
    return [{"op": "empty"}, {"op": "store", "region": region},
            {"op": "store", "region": region}, {"op": "load", "hash": "0x1234"},
            {"op": "advance_head", "hash": "0x1234", "step": 10},
            {"op": "advance_head", "hash": "0xdeadbeef12345678", "step": 50},
            *[{"op": "hash_at_step", "step": s} for s in (0, 10, 30, 50, 999)],
            {"op": "load", "hash": "0x5678"}, {"op": "open"}, {"op": "head"}]


_NOT_BATCHED = "a sequential model of a file store: one session is one ordered run of calls"

declare(
    "cipher.simulate", chapter=18,
    summary="Cipher calls (store, load, advance_head, hash_at_step, reopen) on an in-memory "
            "directory: each call's answer and the final files.",
    args=record(steps=Field(Json("[{op, ...}]", STEPS), "the calls, in order")),
    result=record(results=Json("[answer]", ANSWERS),
                  files=Json("{path: hex or text}", js.mapping(js.STRING))),
    spec=(Cipher.store, Cipher.load, Cipher.advance_head, Cipher.hash_at_step),
    errata=(E8_3, E8_4, E18_5), domain=sessions,
    not_applicable={"numba": _NOT_BATCHED, "cupy": _NOT_BATCHED},
    invalid=(
        InvalidCase("an unknown call", lambda: st.just({"steps": [{"op": "delete"}]})),
        InvalidCase("advance_head without a step",
                    lambda: st.just({"steps": [{"op": "advance_head", "hash": "0x1"}]})),
        InvalidCase("a region with an invalid op", lambda: st.just({"steps": [
            {"op": "store", "region": {"ops": [{"training_phase": 9}], "has_plan": False}}]})),
    ),
    edges=lambda: [{"steps": []}, {"steps": facts_session()},
                   {"steps": [{"op": "store", "region": _small_region(1, 299, False)}]},
                   {"steps": [{"op": "store", "region": _small_region(1, 300, False)}]},
                   {"steps": [{"op": "store", "region": _small_region(1, 327, True)}]},
                   {"steps": [{"op": "store", "region": _small_region(1, 328, True)}]}],
)
