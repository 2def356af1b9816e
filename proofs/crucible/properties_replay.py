"""The replay chapters (11 and 18) as properties over seeded draws of each op's own domain: the
engine's cursor walk, clean passes, the TransactionLog's one active transaction, the
RegionCache's unique entries, CrucibleContext's step contract and Vigil's compiled decisions.
The model-checked obligations (proofs/crucible/replay.py) explore small bounds exhaustively; these
run
the spec on the longer, random inputs the ops accept."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from ...spec.core.errata import NO_ERRATA, SEEDS, profile_errata
from ...spec.core.registry import REGISTRY, Mutant
from ...spec.crucible import context, replay_engine, replay_ops, vigil
from ...spec.crucible.replay_context_ops import context_simulate
from ...spec.crucible.replay_ops import region_cache_simulate, txlog_simulate
from ...spec.crucible.types import NONE32
from ...spec.crucible.vigil_ops import load_regions, vigil_dispatch
from ..core.obligation import Property, property_obligation
from .replay import (
    ACTIVATE_KEEPS_OLD,
    BEGIN_UNMASKED,
    COMPLETE_EARLY,
    COUNT_UNCAPPED,
    DEDUP_NEWEST_ONLY,
    FALLBACK_STAYS_COMPILED,
    MOVING_ADVANCE,
    NO_RESET,
    RECORDS_DIVERGENT_OP,
    ROLLBACK_KEEPS_ACTIVE,
)

SEED = profile_errata(SEEDS["crucible"])
PROFILES = st.sampled_from([NO_ERRATA, SEED])
MATCH, DIVERGED, COMPLETE = 0, 1, 2


def _domain(op: str):
    return REGISTRY.ops[op].strategy


def _with_profile(op: str):
    return lambda: st.tuples(_domain(op)(), PROFILES)


# --- the replay engine (chapter 11) ---------------------------------------------------------


def _walk(case: tuple[dict, frozenset[str]]) -> None:
    args, errata = case
    r = replay_ops.replay_engine(**args, errata=errata)
    n, pos = len(args["region"]), r["positions"]
    for i, s in enumerate(r["statuses"]):
        nxt = pos[i + 1] if i + 1 < len(pos) else None
        if s == DIVERGED:  # a divergence never moves the cursor
            assert nxt in (None, pos[i]), i
        elif s == MATCH:
            assert pos[i] < n - 1 and nxt in (None, pos[i] + 1), i
        else:  # a completed pass starts again at op 0
            assert s == COMPLETE and pos[i] == n - 1 and nxt in (None, 0), i
    assert r["completed"] == r["statuses"].count(COMPLETE)
    assert r["diverged"] == r["statuses"].count(DIVERGED)


@property_obligation(
    "PO11.70",
    "replay.engine on generated regions and perturbed streams (both profiles): a DIVERGED op "
    "leaves the cursor where it was, a MATCH moves it by one before the last op, a COMPLETE "
    "happens at the last op and starts again at op 0; the pass and divergence counts are the "
    "COMPLETE and DIVERGED statuses.",
    covers=("replay.engine",),
    subject=replay_engine.advance,
    mutants=(MOVING_ADVANCE, COMPLETE_EARLY),
)
def engine_walk(_subject):
    return [Property("an engine case and a profile", _walk,
                     strategy=_with_profile("replay.engine"), examples=150)]


def _ops(n: int) -> list[dict]:
    return [{"schema_hash": hex(0x10 + i), "shape_hash": "0x20"} for i in range(n)]


def _clean(case: tuple[int, int]) -> None:
    n, passes = case
    r = replay_ops.replay_engine(_ops(n), _ops(n) * passes)
    assert r["statuses"] == ([MATCH] * (n - 1) + [COMPLETE]) * passes
    assert r["completed"] == passes and r["first_divergence"] is None


@property_obligation(
    "PO11.71",
    "Replaying 1-4 clean passes of a 1-9-op region gives n - 1 MATCHes then a COMPLETE per "
    "pass, counts each pass and finds no divergence.",
    covers=("replay.engine",),
    subject=replay_ops.run_engine,
    mutants=(Mutant.edit("no reset after a pass", "the walk does not reset the engine after a "
                         "COMPLETE pass", replay_ops.run_engine, "reset(e)", "pass"),
             Mutant.edit("expected not advanced", "a MATCH does not load the next op's "
                         "hashes", replay_engine.advance, "prime(e)  # 4.", "pass  # 4.")),
)
def clean_passes(_subject):
    return [Property("n ops, passes", _clean,
                     cases=lambda: [(n, p) for n in range(1, 10) for p in range(1, 5)])]


# --- the TransactionLog and the RegionCache (chapter 18) ------------------------------------


@st.composite
def txlog_cycles(draw) -> dict:
    """Steps that mostly commit and activate the transaction just begun (the slot a log that
    never skips would give it), so activations, wraps and rollbacks are frequent."""
    capacity = draw(st.sampled_from([2, 4]))
    steps, begun = [], 0
    for _ in range(draw(st.integers(0, 24))):
        kind = draw(st.sampled_from(["begin", "begin", "commit", "activate", "rollback"]))
        slot = (begun - 1) % capacity
        if kind == "begin":
            steps.append({"op": "begin", "step": begun})
            begun += 1
        elif kind == "rollback":
            steps.append({"op": "rollback"})
        else:
            steps.append({"op": kind, "slot": slot})
    return {"capacity": capacity, "steps": steps}


def txlog_sequences(max_steps: int = 7) -> list[dict]:
    """Every sequence of at most `max_steps` begins, commits, activates (of the transaction
    just begun) and rollbacks on a log of capacity 2."""
    out = []
    for n in range(max_steps + 1):
        for kinds in itertools.product(("begin", "commit", "activate", "rollback"), repeat=n):
            steps, begun = [], 0
            for kind in kinds:
                if kind == "begin":
                    steps.append({"op": "begin", "step": begun})
                    begun += 1
                elif kind == "rollback":
                    steps.append({"op": "rollback"})
                else:
                    steps.append({"op": kind, "slot": (begun - 1) % 2})
            out.append({"capacity": 2, "steps": steps})
    return out


def _one_active(args: dict) -> None:
    r = txlog_simulate(**args)
    actives = [k for k, t in enumerate(r["entries"]) if t["status"] == 3]
    assert actives == ([] if r["active"] is None else [r["active"]])
    assert r["count"] <= args["capacity"]


@property_obligation(
    "PO11.72",
    "txlog.simulate on generated step sequences (capacities 2, 4 and 16): at most one "
    "transaction is ACTIVE and active() names it; the count never exceeds the capacity.",
    covers=("txlog.simulate", "TransactionLog"),
    subject=txlog_simulate,
    mutants=(BEGIN_UNMASKED, ROLLBACK_KEEPS_ACTIVE, ACTIVATE_KEEPS_OLD),
)
def txlog_one_active(_subject):
    return [Property("txlog steps", _one_active, strategy=_domain("txlog.simulate"),
                     examples=150),
            Property("txlog cycles", _one_active, strategy=txlog_cycles, examples=150),
            Property("every sequence of up to 7 steps", _one_active, cases=txlog_sequences)]


@st.composite
def many_inserts(draw) -> dict:
    """9-12 regions of distinct content hashes (more than the cache holds), inserted in any
    order, some twice: evictions."""
    hashes = draw(st.lists(st.integers(1, 12), min_size=9, max_size=12, unique=True))
    regions = [{"ops": _ops(1), "plan": {"slots": []}, "content_hash": hex(h)} for h in hashes]
    order = draw(st.permutations(range(len(regions))))
    again = draw(st.lists(st.integers(0, len(regions) - 1), max_size=6))
    return {"regions": regions, "steps": [{"op": "insert", "region": k}
                                          for k in [*order, *again]]}


def _unique(args: dict) -> None:
    r = region_cache_simulate(**args)
    hashes = [e["content_hash"] for e in r["entries"]]
    assert len(hashes) == len(set(hashes)) == r["count"] <= 8


@property_obligation(
    "PO11.73",
    "region_cache.simulate on generated regions and steps: the entries' content hashes are "
    "distinct, and there are count <= 8 of them.",
    covers=("region_cache.simulate", "RegionCache"),
    subject=region_cache_simulate,
    mutants=(DEDUP_NEWEST_ONLY, COUNT_UNCAPPED),
)
def cache_entries_unique(_subject):
    return [Property("cache steps", _unique, strategy=_domain("region_cache.simulate"),
                     examples=100),
            Property("many inserts", _unique, strategy=many_inserts, examples=60)]


# --- CrucibleContext (chapter 11) -----------------------------------------------------------


def _contract(case: tuple[dict, frozenset[str]]) -> None:
    args, errata = case
    r = context_simulate(**args, errata=errata)
    compiled = False
    for step, out in zip(args["steps"], r["results"], strict=True):
        if step["op"] == "activate":
            compiled = compiled or out["ok"]
        elif step["op"] == "deactivate":
            compiled = False
        elif step["op"] == "advance":
            assert compiled
            if out["status"] == DIVERGED:  # a divergent op names no slot
                assert out["outputs"] == out["inputs"] == []
        elif step["op"] == "switch":
            assert out["ok"] and compiled
            for m in out["migrations"]:
                assert m["op"] < step["pos"] and m["nbytes"] > 0
    assert (r["mode"] == 1) == compiled == (r["active_region"] is not None)
    assert r["pool"]["initialized"] == compiled or errata == SEED


@property_obligation(
    "PO11.74",
    "context.simulate on generated steps (both profiles): a failed activate leaves the mode, a "
    "deactivate returns to RECORD; a DIVERGED advance names no slot; a switch inside the shared "
    "prefix succeeds and migrates only prefix ops' slots, each of some bytes; at the end the "
    "context is COMPILED exactly when a region is active, and (in the spec) its pool is "
    "initialized exactly then.",
    covers=("context.simulate", "CrucibleContext"),
    subject=context.activate,
    mutants=(NO_RESET,
             Mutant.edit("deactivate keeps the region", "deactivate leaves the region active",
                         context.deactivate, "    c.active_region = None\n", ""),
             Mutant.edit("migration past the prefix", "a switch also migrates the slots of "
                         "the op at the divergence", context.migrate_prefix_slots,
                         "for i in range(div_pos):  # 1.", "for i in range(div_pos + 1):  # 1.")),
)
def context_contract(_subject):
    return [Property("context steps and a profile", _contract,
                     strategy=_with_profile("context.simulate"), examples=150)]


# --- Vigil's foreground (chapter 11) --------------------------------------------------------

CALLS = {"publish", "rollback", "persist", "load"}


def _active_by_index(result: dict, n: int) -> list[int | None]:
    """The active region after each stream item, from the reported changes."""
    active, out, changes = None, [], {}
    for c in result["changes"]:
        changes.setdefault(c["at"], []).append(c)
    for i in range(n):
        for c in changes.get(i, []):
            active = c["region"]
        out.append(active)
    return out


def _decisions(args: dict) -> None:
    r = vigil_dispatch(**args | {"handles": True})
    regions = load_regions(args["regions"], args["recordings"], NO_ERRATA)
    stream = args["stream"]
    at_ops = [i for i, s in enumerate(stream) if not CALLS.intersection(s)]
    decisions = r["decisions"]
    assert len(decisions) == len(at_ops)
    active = _active_by_index(r, len(stream))
    for d, at in zip(decisions, at_ops, strict=True):
        if d["status"] == DIVERGED:
            assert d["action"] == 0 and d["op_index"] == NONE32 and at not in r["recorded"]
        if d["action"] == 1:
            _matches_a_region_op(regions[active[at]], stream[at], d)
    assert all(decisions[at_ops.index(i)] == {"action": 0, "status": 0, "op_index": NONE32}
               for i in r["recorded"])
    assert r["diverged_count"] >= sum(d["status"] == DIVERGED for d in decisions)
    assert r["compiled_iterations"] >= sum(d["status"] == COMPLETE for d in decisions)
    assert (r["ctx_mode"] == 1) == (r["active_region"] is not None)
    assert all(c["ctx_mode"] == 0 and c["region"] is None
               for c in r["changes"] if c["event"] == "fallback")


def _matches_a_region_op(region, item: dict, d: dict) -> None:
    """A COMPILED decision: some op of the active region has the dispatched guard and the
    reported output slots; each pool handle is its slot's offset, inside the pool."""
    got = (int(item["schema_hash"], 16), int(item["shape_hash"], 16),
           int(item.get("scope_hash", "0x0"), 16), 0)
    outs = [h and h["slot"] for h in d["outputs"]]
    assert any(tuple(o.guard) == got and (o.output_slot_ids or []) == outs for o in region.ops)
    for h in d["outputs"] + d["inputs"]:
        if h and "offset" in h:
            slot = region.plan.slots[h["slot"]]
            assert h["offset"] == slot.offset_bytes < region.plan.pool_bytes or slot.nbytes == 0


@property_obligation(
    "PO11.75",
    "vigil.dispatch on generated regions, recordings and streams: one decision per op; a "
    "DIVERGED decision is RECORD with no op index and the op is not recorded; a COMPILED "
    "decision names outputs of an op of the active region with the dispatched guard, and pool "
    "handles at their slots' offsets inside the pool; a recorded op's decision is plain RECORD; "
    "the counters cover the decisions; a fallback leaves the context in RECORD with no region; "
    "the context is compiled exactly when a region is active.",
    covers=("vigil.dispatch", "Vigil"),
    subject=vigil.dispatch_op,
    mutants=(RECORDS_DIVERGENT_OP, FALLBACK_STAYS_COMPILED),
)
def compiled_decisions(_subject):
    return [Property("a dispatch case", _decisions, strategy=_domain("vigil.dispatch"),
                     examples=100)]
