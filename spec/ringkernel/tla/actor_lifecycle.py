"""Chapter 19: RingKernel's actor_lifecycle.tla as an explicit-state machine; the previous
state is kept, so legal transitions, snapshot monotonicity and inert terminated actors are
checked on every step.

1. Actors start Spawning with snapshot and live state 0; a1 is the root, a2 and a3 its
   children (the .cfg's DefaultParent); at most MAX_STEPS steps in all.
2. Activate (Spawning -> Active) snapshots the live state; DoWork (Active) adds one to it;
   Quiesce (Active -> Quiescing) snapshots it; Restart (Quiescing -> Active) restores it from
   the snapshot; Destroy (any but Terminated -> Terminated) needs every child Terminated.
3. Invariants over the last step: the stepping actor moved along an edge of step 2 and no
   other actor changed (StateTransitionsLegal); no snapshot went down (SnapshotMonotonic); a
   Terminated actor changed nothing (TerminatedInert); a Restart left the live state equal to
   the snapshot. Over each state: a Terminated parent has only Terminated children, and an
   Active actor's live state is at least its snapshot.

Bounds: the .cfg's (3 actors, MAX_STEPS 8).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ...core.errata import SEEDS, erratum
from ...core.machine import Machine

SPAWNING, ACTIVE, QUIESCING, TERMINATED = "Spawning", "Active", "Quiescing", "Terminated"
PARENT = (None, 0, 0)
MAX_STEPS = 8
LEGAL = frozenset({(SPAWNING, "Activate", ACTIVE), (ACTIVE, "DoWork", ACTIVE),
                   (ACTIVE, "Quiesce", QUIESCING), (QUIESCING, "Restart", ACTIVE),
                   (SPAWNING, "Destroy", TERMINATED), (ACTIVE, "Destroy", TERMINATED),
                   (QUIESCING, "Destroy", TERMINATED)})
"""The lifecycle diagram as (from, action, to)."""


erratum(
    "E19.68", "actor_lifecycle.tla's SnapshotMonotonic is snapshot >= 0",
    seed=SEEDS["ringkernel"], location="docs/verification/actor_lifecycle.tla SnapshotMonotonic",
    ops=(),
    witness={"documents": "the snapshot never exceeds the most recent observed live state",
             "checks": "every snapshot is a natural number"},
    flag="doc",
    detail="Neither the comment's claim nor monotonicity is checked. The spec compares each "
           "snapshot with the previous state's (PO19.65).",
)

erratum(
    "E19.69", "actor_lifecycle.tla's TerminatedInert is TRUE and is not in the .cfg",
    seed=SEEDS["ringkernel"], location="docs/verification/actor_lifecycle.tla TerminatedInert; "
                                       "actor_lifecycle.cfg",
    ops=(),
    witness={"documents": "terminated actors don't change live_state further",
             "checks": "nothing: the body is state = Terminated => TRUE and TLC is not asked"},
    flag="doc",
    detail="The spec requires a Terminated actor's state, snapshot and live state to equal the "
           "previous state's on every step (PO19.65).",
)


class Actor(NamedTuple):
    state: str
    snapshot: int
    live: int


class LifecycleModel(NamedTuple):
    actors: tuple[Actor, ...]
    steps: int
    previous: tuple[Actor, ...]
    last: tuple[int, str] | None
    """The stepping actor and its action."""


def activate(a: Actor) -> Actor | None:
    """Spawning -> Active, snapshotting the live state."""
    return a._replace(state=ACTIVE, snapshot=a.live) if a.state == SPAWNING else None


def do_work(a: Actor) -> Actor | None:
    """An Active actor's live state grows by one."""
    return a._replace(live=a.live + 1) if a.state == ACTIVE else None


def quiesce(a: Actor) -> Actor | None:
    """Active -> Quiescing, snapshotting the live state."""
    return a._replace(state=QUIESCING, snapshot=a.live) if a.state == ACTIVE else None


def restart(a: Actor) -> Actor | None:
    """Quiescing -> Active, the live state restored from the snapshot."""
    return a._replace(state=ACTIVE, live=a.snapshot) if a.state == QUIESCING else None


def destroy(actors: tuple[Actor, ...], i: int) -> Actor | None:
    """Terminated, once every child is."""
    children_done = all(actors[c].state == TERMINATED for c, p in enumerate(PARENT) if p == i)
    a = actors[i]
    return a._replace(state=TERMINATED) if a.state != TERMINATED and children_done else None


def lifecycle_steps(s: LifecycleModel) -> Iterator[tuple[str, LifecycleModel]]:
    """Each action of each actor, while fewer than MAX_STEPS were taken."""
    if s.steps >= MAX_STEPS:
        return
    for i, a in enumerate(s.actors):
        for name, new in (("Activate", activate(a)), ("DoWork", do_work(a)),
                          ("Quiesce", quiesce(a)), ("Restart", restart(a)),
                          ("Destroy", destroy(s.actors, i))):
            if new is not None:
                yield f"{name}(a{i + 1})", LifecycleModel(
                    tuple(new if j == i else x for j, x in enumerate(s.actors)), s.steps + 1,
                    s.actors, (i, name))


def legal_step(s: LifecycleModel) -> bool:
    """The stepping actor followed the diagram and no other actor changed."""
    if s.last is None:
        return True
    i, action = s.last
    others = all(s.previous[j] == a for j, a in enumerate(s.actors) if j != i)
    return others and (s.previous[i].state, action, s.actors[i].state) in LEGAL


def restart_preserves_state(s: LifecycleModel) -> bool:
    """A Restart's live state is its snapshot; an Active live state is never below it."""
    restarted = s.last is None or s.last[1] != "Restart" or \
        s.actors[s.last[0]].live == s.actors[s.last[0]].snapshot
    return restarted and all(a.live >= a.snapshot for a in s.actors if a.state == ACTIVE)


def lifecycle_machine() -> Machine:
    """actor_lifecycle.tla at 3 actors (a1 the parent of a2 and a3) and MAX_STEPS 8."""
    init_actors = (Actor(SPAWNING, 0, 0),) * len(PARENT)
    return Machine(
        f"actor_lifecycle.tla actors={len(PARENT)} max_steps={MAX_STEPS}",
        LifecycleModel(init_actors, 0, init_actors, None), lifecycle_steps, (
            ("StateTransitionsLegal", legal_step),
            ("ChildActorsTerminate", lambda s: all(
                s.actors[p].state != TERMINATED or a.state == TERMINATED
                for a, p in zip(s.actors, PARENT, strict=True) if p is not None)),
            ("RestartPreservesState", restart_preserves_state),
            ("SnapshotMonotonic", lambda s: all(
                a.snapshot >= b.snapshot for a, b in zip(s.actors, s.previous, strict=True))),
            ("TerminatedInert", lambda s: all(
                a == b for a, b in zip(s.actors, s.previous, strict=True)
                if b.state == TERMINATED))),
        done=lambda s: s.steps == MAX_STEPS or all(a.state == TERMINATED for a in s.actors))


def tla_view(s: LifecycleModel) -> tuple:
    """The .tla's variables: states, snapshots, live states and the step count."""
    return s.actors, s.steps
