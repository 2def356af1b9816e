"""Reference for SympleX's fusion speedup and selection: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.symplex.fusion_select import select_op, speedup_op

reference("symplex.fusion_speedup")(speedup_op)
reference("symplex.fusion_select")(select_op)
