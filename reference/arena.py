"""Reference for chapter 3: the arena simulator."""

from __future__ import annotations

from ..spec.arena import arena_simulate
from ..spec.registry import reference

reference("arena.simulate")(arena_simulate)
