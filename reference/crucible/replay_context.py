"""Reference for CrucibleContext's simulator: the spec's context, stepped in order."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.replay_context_ops import context_simulate

reference("context.simulate")(context_simulate)
