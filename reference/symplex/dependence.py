"""Reference for the dependence ops: the spec's own functions (z3 decides each query)."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.symplex.dependence_ops import analyze_op, legal_op

reference("dep.analyze")(analyze_op)
reference("dep.legal")(legal_op)
