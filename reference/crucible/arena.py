"""Reference for chapter 3: the arena simulator."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.arena import arena_simulate

reference("arena.simulate")(arena_simulate)
