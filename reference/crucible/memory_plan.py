"""Reference for chapter 10: the sweep-line planner, and the greedy comparison planner."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.memory_plan import plan_compute, plan_greedy

reference("plan.compute")(plan_compute)
reference("plan.greedy_by_size")(plan_greedy)
