"""Explicit-state model checking: breadth-first search over every reachable state of a spec
machine, checking each invariant in each state and that only final states have no step.
A violation comes back with the shortest sequence of steps that reaches it. A
`CompiledMachine` is searched by its compiled search over packed states instead (fast/numba),
at bounds this search cannot reach; this one stays the reference it is tested against."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ...spec.core.machine import Machine, State


@dataclass
class Exploration:
    """What the search found: states and transitions seen, and the first violation."""

    states: int
    transitions: int
    violation: str | None = None
    trace: list[str] | None = None


@dataclass(frozen=True)
class CompiledMachine(Machine):
    """A spec machine with a compiled search over the same machine: `search()` returns what
    `explore` would (states, transitions, first violation, its trace); `warm()` compiles the
    search's kernels into numba's cache (a search at the smallest bounds)."""

    search: Callable[[], Exploration]
    warm: Callable[[], object]


def explore(m: Machine, max_states: int = 2_000_000) -> Exploration:
    if isinstance(m, CompiledMachine):
        return m.search()
    parent: dict[State, tuple[State, str] | None] = {m.initial: None}
    queue = deque([m.initial])
    transitions = 0

    def path(s: State) -> list[str]:
        labels = []
        while parent[s] is not None:
            s, label = parent[s]
            labels.append(label)
        return labels[::-1]

    while queue:
        s = queue.popleft()
        for name, holds in m.invariants:
            if not holds(s):
                return Exploration(len(parent), transitions, name, path(s))
        moved = False
        for label, t in m.steps(s):
            moved = True
            transitions += 1
            if t not in parent:
                if len(parent) >= max_states:
                    return Exploration(len(parent), transitions, f"more than {max_states} "
                                                                 f"states: bound the model")
                parent[t] = (s, label)
                queue.append(t)
        if not moved and not m.done(s):
            return Exploration(len(parent), transitions, "deadlock", path(s))
    return Exploration(len(parent), transitions)
