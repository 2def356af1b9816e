"""Reference for dep.schedule: the spec's own functions (z3 decides each query)."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.symplex.schedule_ops import schedule_op

reference("dep.schedule")(schedule_op)
