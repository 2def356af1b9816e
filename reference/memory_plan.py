"""Reference for chapter 10: the sweep-line planner, and the greedy comparison planner."""

from __future__ import annotations

from ..spec.memory_plan import plan_compute, plan_greedy
from ..spec.registry import reference

reference("plan.compute")(plan_compute)
reference("plan.greedy_by_size")(plan_greedy)
