"""Chapter 19: RingKernel's CheckpointManager (ringkernel-core checkpoint.rs) over an
in-memory storage, as op `checkpoint.manager`.

The manager issues snapshot requests for registered actors, stores each completed snapshot as
a checkpoint named "checkpoint_<slot>_step_<step>", keeps at most max_snapshots of them per
actor (0: no limit) and loads an actor's latest. A restart is a new manager (no actors, no
pending requests, request ids from 1 again, counters at 0) over the same storage.
1. register (slot, kernel_id, kernel_type) / unregister (slot).
2. request (slot): not_registered, or a new request id (1, 2, ...) now pending.
3. complete (request_id, actor_slot, success, step, data): an id not pending is
   unknown_request. Otherwise the request stops pending; a failure counts in total_failed and
   answers RingKernel's error "invalid checkpoint: Snapshot failed for actor slot <actor_slot>".
   A success stores the checkpoint (kernel id and type from the request; step; the slot and
   request id; the data as its memory chunk (type 5) "actor_state") under its name, replacing
   one so named, counts in total_completed and becomes the actor's newest checkpoint.
4. Retention: an actor's checkpoints, oldest first, are its history. A manager that has none
   for the actor starts from the stored checkpoints named for it, ordered by step. A saved
   name leaves its old place and goes last (E19.80: RingKernel lists it twice and its
   retention deletes the file the newer entry names); while there are more than
   max_snapshots, the oldest is deleted (E19.82: RingKernel's new manager starts from an
   empty history, so checkpoints stored before a restart are never deleted).
5. load (slot): the newest in the history, or without one the stored checkpoint with the
   highest step (E19.81: RingKernel takes the last name in string order, step_9 after
   step_10); none when the actor has no checkpoint.
6. list (slot): the stored names for the actor, ordered by step (E19.81: string order).
7. cancel (request_id): whether it was pending; it no longer is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.layout import bool_, u32, u64
from ..core.registry import InvalidCase, declare
from ..core.schema import BYTES, U64, Field, Json, Utf8, record
from ..core.steps import parse_steps, step_field, steps_schema
from ..core.strategies import st

PREFIX = "checkpoint"
"""CheckpointConfig's default name_prefix."""
E19_80, E19_81, E19_82 = "E19.80", "E19.81", "E19.82"
STEP_FIELDS = {
    "register": ("actor_slot", "kernel_id", "kernel_type"), "unregister": ("actor_slot",),
    "request": ("actor_slot",), "complete": ("request_id", "actor_slot", "success", "step",
                                             "data"),
    "cancel": ("request_id",), "load": ("actor_slot",), "list": ("actor_slot",),
    "restart": ()}
FIELD_TYPES = {"actor_slot": u32, "request_id": u64, "success": bool_, "step": u64}


@dataclass(frozen=True)
class Stored:
    """A stored checkpoint: what load gives back."""

    kernel_id: str
    kernel_type: str
    step: int
    actor_slot: int
    request_id: int
    data: bytes


@dataclass
class Manager:
    """One manager's state; `storage` outlives it."""

    max_snapshots: int
    storage: dict[str, Stored]
    actors: dict[int, tuple[str, str]] = field(default_factory=dict)
    pending: dict[int, tuple[int, str, str]] = field(default_factory=dict)
    """request id -> (slot, kernel_id, kernel_type)."""
    next_request_id: int = 1
    history: dict[int, list[str]] = field(default_factory=dict)
    total_completed: int = 0
    total_failed: int = 0


def checkpoint_name(slot: int, step: int) -> str:
    return f"{PREFIX}_{slot}_step_{step}"


def stored_names(m: Manager, slot: int, errata: frozenset[str] = NO_ERRATA) -> list[str]:
    """Steps 5-6: the actor's stored names, by step (E19.81: as strings)."""
    names = [n for n in m.storage if n.startswith(f"{PREFIX}_{slot}_")]
    return sorted(names) if E19_81 in errata else sorted(names, key=lambda n: m.storage[n].step)


def history_of(m: Manager, slot: int, errata: frozenset[str] = NO_ERRATA) -> list[str]:
    """Step 4: the actor's history, started from storage (E19.82: empty)."""
    if slot not in m.history:
        m.history[slot] = [] if E19_82 in errata else stored_names(m, slot, errata)
    return m.history[slot]


def request(m: Manager, slot: int) -> dict:
    """Step 2."""
    if slot not in m.actors:
        return {"outcome": "not_registered"}
    rid = m.next_request_id
    m.next_request_id += 1
    m.pending[rid] = (slot, *m.actors[slot])
    return {"outcome": "ok", "request_id": rid}


def retain(m: Manager, slot: int, name: str, errata: frozenset[str] = NO_ERRATA) -> None:
    """Step 4: the saved name goes last; the oldest past max_snapshots are deleted."""
    history = history_of(m, slot, errata)
    if name in history and E19_80 not in errata:
        history.remove(name)
    history.append(name)
    while m.max_snapshots and len(history) > m.max_snapshots:
        m.storage.pop(history.pop(0), None)


def complete(m: Manager, s: dict, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Step 3."""
    if s["request_id"] not in m.pending:
        return {"outcome": "unknown_request"}
    slot, kernel_id, kernel_type = m.pending.pop(s["request_id"])
    if not s["success"]:
        m.total_failed += 1
        return {"outcome": "error", "message": "invalid checkpoint: Snapshot failed for actor "
                                               f"slot {s['actor_slot']}"}
    name = checkpoint_name(slot, s["step"])
    m.storage[name] = Stored(kernel_id, kernel_type, s["step"], slot, s["request_id"],
                             s["data"])
    m.total_completed += 1
    retain(m, slot, name, errata)
    return {"outcome": "saved", "name": name}


def load(m: Manager, slot: int, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Step 5."""
    names = m.history.get(slot) or stored_names(m, slot, errata)
    if not names:
        return {"outcome": "none"}
    got = m.storage.get(names[-1])
    if got is None:
        return {"outcome": "error", "message": f"I/O error: Checkpoint not found: {names[-1]}"}
    return {"outcome": "ok", "kernel_id": got.kernel_id, "kernel_type": got.kernel_type,
            "step": got.step, "actor_slot": got.actor_slot, "request_id": got.request_id,
            "data": got.data.hex()}


def run_step(m: Manager, op: str, s: dict, errata: frozenset[str]) -> tuple[Manager, dict]:
    """One step: the manager after it (a restart makes a new one) and the answer."""
    done = {"outcome": "ok"}
    if op == "register":
        m.actors[s["actor_slot"]] = (s["kernel_id"], s["kernel_type"])
    elif op == "unregister":
        m.actors.pop(s["actor_slot"], None)
    elif op == "restart":
        m = Manager(m.max_snapshots, m.storage)
    elif op == "cancel":
        done = {"outcome": "ok", "cancelled": m.pending.pop(s["request_id"], None) is not None}
    elif op == "list":
        done = {"outcome": "ok", "names": stored_names(m, s["actor_slot"], errata)}
    elif op == "load":
        done = load(m, s["actor_slot"], errata)
    else:
        done = request(m, s["actor_slot"]) if op == "request" else complete(m, s, errata)
    return m, done


def _field(s: dict, name: str, path: str) -> Any:
    """One field of a step, checked."""
    if name in ("kernel_id", "kernel_type", "data") and name not in s:
        raise InvalidInput(f"{path}: {s['op']} needs {name}")
    if name == "data":
        return BYTES.decode(s[name], f"{path}.data")
    if name in ("kernel_id", "kernel_type"):
        return Utf8().decode(s[name], f"{path}.{name}")
    return step_field(s, name, FIELD_TYPES[name], InvalidInput, path)


def parse(steps: Any) -> list[tuple[str, dict]]:
    """The steps with their fields checked."""
    return [(op, {f: _field(s, f, f"args.steps[{i}]") for f in STEP_FIELDS[op]})
            for i, (op, s) in enumerate(parse_steps(steps, STEP_FIELDS))]


def manager_op(max_snapshots: int, steps: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run the steps on a fresh manager over empty storage."""
    m = Manager(max_snapshots, {})
    results = []
    for op, s in parse(steps):
        m, answer = run_step(m, op, s, errata)
        results.append(answer)
    return {"results": results, "pending": len(m.pending), "total_completed": m.total_completed,
            "total_failed": m.total_failed, "stored": sorted(m.storage)}


def check_args(a: dict) -> None:
    parse(a["steps"])


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

_SCHEMAS = {"actor_slot": js.uint(32), "request_id": U64.json_schema(),
            "success": js.BOOLEAN, "step": U64.json_schema(), "data": BYTES.json_schema(),
            "kernel_id": js.STRING, "kernel_type": js.STRING}
_ANSWER = js.obj({"outcome": {"enum": ["ok", "not_registered", "unknown_request", "saved",
                                       "error", "none"]}},
                 {"request_id": js.uint(64), "name": js.STRING, "message": js.STRING,
                  "cancelled": js.BOOLEAN, "names": js.array(js.STRING),
                  "kernel_id": js.STRING, "kernel_type": js.STRING, "step": js.uint(64),
                  "actor_slot": js.uint(32), "data": js.STRING})


@st.composite
def _session(draw: Any) -> list[dict]:
    """One manager's life: actors registered, then snapshots requested and completed under
    the ids the manager hands out (1, 2, ...), steps often repeating."""
    slots = sorted(draw(st.sets(st.integers(0, 2), min_size=1)))
    steps: list[dict] = [{"op": "register", "actor_slot": a, "kernel_id": f"k{a}",
                          "kernel_type": "fdtd"} for a in slots]
    for rid in range(1, draw(st.integers(1, 7))):
        slot = draw(st.sampled_from(slots))
        steps += [{"op": "request", "actor_slot": slot},
                  {"op": "complete", "request_id": rid, "actor_slot": slot,
                   "success": draw(st.integers(0, 5)) > 0, "step": draw(st.integers(0, 11)),
                   "data": draw(st.binary(max_size=2)).hex()}]
    return steps


def _sessions(lives: list[list[dict]]) -> list[dict]:
    """The managers' lives, a restart between each two."""
    return [step for i, life in enumerate(lives) for step in ([RESTART] if i else []) + life]


def manager_domain() -> st.SearchStrategy:
    """Valid inputs: three slots, few request ids and steps, so that names collide."""
    slot, rid = st.integers(0, 2), st.integers(0, 4)
    step = st.one_of(
        st.fixed_dictionaries({"op": st.just("register"), "actor_slot": slot,
                               "kernel_id": st.sampled_from(["k0", "k1", "wave"]),
                               "kernel_type": st.sampled_from(["fdtd", "pagerank"])}),
        st.fixed_dictionaries({"op": st.just("unregister"), "actor_slot": slot}),
        st.fixed_dictionaries({"op": st.just("request"), "actor_slot": slot}),
        st.fixed_dictionaries({"op": st.just("complete"), "request_id": rid,
                               "actor_slot": slot, "success": st.booleans(),
                               "step": st.integers(0, 12),
                               "data": st.binary(max_size=4).map(bytes.hex)}),
        st.fixed_dictionaries({"op": st.just("cancel"), "request_id": rid}),
        st.fixed_dictionaries({"op": st.sampled_from(["load", "list"]), "actor_slot": slot}),
        st.just({"op": "restart"}))
    return st.fixed_dictionaries({"max_snapshots": st.integers(0, 3), "steps": st.one_of(
        st.lists(step, max_size=25), st.lists(_session(), min_size=1, max_size=3).map(_sessions))})


def _snap(slot: int, rid: int, step: int, data: str = "") -> list[dict]:
    """A request of the slot and its successful completion as request `rid`."""
    return [{"op": "request", "actor_slot": slot},
            {"op": "complete", "request_id": rid, "actor_slot": slot, "success": True,
             "step": step, "data": data}]


REG = {"op": "register", "actor_slot": 0, "kernel_id": "k0", "kernel_type": "fdtd"}
RESTART = {"op": "restart"}


def _load(slot: int = 0) -> dict:
    return {"op": "load", "actor_slot": slot}


SAME_STEP = {"max_snapshots": 1, "steps": [REG, *_snap(0, 1, 5, "aa"), *_snap(0, 2, 5, "bb"),
                                           _load()]}
AFTER_RESTART = {"max_snapshots": 5, "steps": [REG, *_snap(0, 1, 9, "09"),
                                               *_snap(0, 2, 10, "10"), RESTART, _load()]}
RETAINED = {"max_snapshots": 2, "steps": [REG, *_snap(0, 1, 1), *_snap(0, 2, 2), RESTART, REG,
                                          *_snap(0, 1, 3), *_snap(0, 2, 4)]}

declare(
    "checkpoint.manager", chapter=19,
    summary="RingKernel's CheckpointManager over in-memory storage: snapshot requests, "
            "completions saved as checkpoint_<slot>_step_<step>, retention of max_snapshots "
            "per actor, load of the latest, restarts over the same storage.",
    args=record(max_snapshots=Field(U64, "checkpoints kept per actor; 0: all"),
                steps=Field(Json("[step]", steps_schema(STEP_FIELDS, _SCHEMAS, STEP_FIELDS)),
                            "register / unregister / request / complete / cancel / load / "
                            "list / restart")),
    result=record(results=Json("[per-step answer]", js.array(_ANSWER)),
                  pending=Field(U64, "requests still pending"),
                  total_completed=Field(U64, "snapshots saved by the last manager"),
                  total_failed=Field(U64, "snapshots failed under the last manager"),
                  stored=Json("[name]", js.array(js.STRING))),
    spec=(request, complete, retain, load, stored_names), domain=manager_domain, check=check_args,
    errata=(E19_80, E19_81, E19_82),
    not_applicable={"numba": "maps of names and strings, a few steps per run: nothing a "
                             "compiled loop would speed up",
                    "cupy": "the steps are one sequence; each depends on the state the last "
                            "one left"},
    invalid=(InvalidCase("a slot of 2^32", lambda: st.just(
        {"max_snapshots": 1, "steps": [{"op": "request", "actor_slot": 1 << 32}]})),
             InvalidCase("a completion without data", lambda: st.just(
                 {"max_snapshots": 1, "steps": [{"op": "complete", "request_id": 1,
                                                 "actor_slot": 0, "success": True,
                                                 "step": 1}]})),
             InvalidCase("data that is not hex", lambda: st.just(
                 {"max_snapshots": 1, "steps": [{"op": "complete", "request_id": 1,
                                                 "actor_slot": 0, "success": True,
                                                 "step": 1, "data": "xyz"}]}))),
    edges=lambda: [SAME_STEP, AFTER_RESTART, RETAINED,
                   {"max_snapshots": 0, "steps": [_load(3), REG, *_snap(0, 1, 4),
                                                  {"op": "complete", "request_id": 1,
                                                   "actor_slot": 0, "success": True,
                                                   "step": 4, "data": ""},
                                                  {"op": "request", "actor_slot": 0},
                                                  {"op": "complete", "request_id": 2,
                                                   "actor_slot": 7, "success": False,
                                                   "step": 5, "data": ""}]}],
)

erratum(
    E19_80, "Two snapshots of one actor at one step: retention deletes the surviving file",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/checkpoint.rs "
                                       "CheckpointManager::complete_snapshot",
    ops=("checkpoint.manager",),
    witness={"args": SAME_STEP,
             "spec": {"stored": ["checkpoint_0_step_5"], "results": [
                 {"outcome": "ok"}, {"outcome": "ok", "request_id": 1},
                 {"outcome": "saved", "name": "checkpoint_0_step_5"},
                 {"outcome": "ok", "request_id": 2},
                 {"outcome": "saved", "name": "checkpoint_0_step_5"},
                 {"outcome": "ok", "kernel_id": "k0", "kernel_type": "fdtd", "step": 5,
                  "actor_slot": 0, "request_id": 2, "data": "bb"}]},
             "seed": {"stored": [], "results": [
                 {"outcome": "ok"}, {"outcome": "ok", "request_id": 1},
                 {"outcome": "saved", "name": "checkpoint_0_step_5"},
                 {"outcome": "ok", "request_id": 2},
                 {"outcome": "saved", "name": "checkpoint_0_step_5"},
                 {"outcome": "error",
                  "message": "I/O error: Checkpoint not found: checkpoint_0_step_5"}]}},
    flag="result",
    detail="The name holds only the slot and the step, so a second snapshot at the same step "
           "(a retry, or an actor that did not advance) overwrites the first file and pushes "
           "the name onto the history again. Retention counts the two entries, removes the "
           "older and deletes that name: the file the newer entry names. With "
           "max_snapshots 1 the actor is left with no checkpoint and load_latest fails; the "
           "counters say 2 completed. The spec keeps a name once in the history.",
)

erratum(
    E19_81, "Without a history, load_latest and list_checkpoints order steps as strings",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/checkpoint.rs "
                                       "CheckpointManager::load_latest, list_checkpoints",
    ops=("checkpoint.manager",),
    witness={"args": AFTER_RESTART,
             "spec": {"results": [
                 {"outcome": "ok"}, {"outcome": "ok", "request_id": 1},
                 {"outcome": "saved", "name": "checkpoint_0_step_9"},
                 {"outcome": "ok", "request_id": 2},
                 {"outcome": "saved", "name": "checkpoint_0_step_10"}, {"outcome": "ok"},
                 {"outcome": "ok", "kernel_id": "k0", "kernel_type": "fdtd", "step": 10,
                  "actor_slot": 0, "request_id": 2, "data": "10"}]},
             "seed": {"results": [
                 {"outcome": "ok"}, {"outcome": "ok", "request_id": 1},
                 {"outcome": "saved", "name": "checkpoint_0_step_9"},
                 {"outcome": "ok", "request_id": 2},
                 {"outcome": "saved", "name": "checkpoint_0_step_10"}, {"outcome": "ok"},
                 {"outcome": "ok", "kernel_id": "k0", "kernel_type": "fdtd", "step": 9,
                  "actor_slot": 0, "request_id": 1, "data": "09"}]}},
    flag="result",
    detail="A manager with no history for the actor (a new one after a restart: the recovery "
           "case) falls back to the storage's list, which is sorted as strings, and loads its "
           "last entry: checkpoint_0_step_9 sorts after checkpoint_0_step_10, so recovery "
           "resumes from an older state. list_checkpoints gives the same string order. The "
           "spec orders an actor's stored checkpoints by step.",
)

erratum(
    E19_82, "After a restart, retention never deletes the checkpoints stored before it",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/checkpoint.rs "
                                       "CheckpointManager::complete_snapshot",
    ops=("checkpoint.manager",),
    witness={"args": RETAINED,
             "spec": {"stored": ["checkpoint_0_step_3", "checkpoint_0_step_4"]},
             "seed": {"stored": ["checkpoint_0_step_1", "checkpoint_0_step_2",
                                 "checkpoint_0_step_3", "checkpoint_0_step_4"]}},
    flag="result",
    detail="Retention walks the in-memory history of the current manager only, and a new "
           "manager starts with none: every checkpoint stored before the restart outlives "
           "max_snapshots (\"when exceeded, the oldest checkpoint is deleted\"), and storage "
           "grows by the retained count at each restart. The spec starts an actor's history "
           "from the stored checkpoints named for it, ordered by step.",
)
