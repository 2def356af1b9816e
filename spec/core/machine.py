"""Protocol state machines (design §6): an initial state, the enabled steps of any state, and
invariants. States are immutable and hashable, so every interleaving of the atomic steps can
be explored exhaustively at small bounds (proofs/core/model.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

State = Any


@dataclass(frozen=True)
class Machine:
    """`steps(s)` yields (label, next state) for every atomic step enabled in s. A state with
    no step must be `done`; anything else is a deadlock."""

    name: str
    initial: State
    steps: Callable[[State], Iterable[tuple[str, State]]]
    invariants: tuple[tuple[str, Callable[[State], bool]], ...]
    done: Callable[[State], bool]
