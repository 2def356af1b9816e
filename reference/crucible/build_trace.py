"""Reference for chapter 6: build_trace op by op, then the planner over its slots."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.trace_build_ops import trace_build

reference("trace.build")(trace_build)
