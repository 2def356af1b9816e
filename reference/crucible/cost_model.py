"""Reference for the cost model's profiles, roofline and synthesis: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.cost_ops import profile_op, roofline_op, synthesize_op

reference("cost.profile")(profile_op)
reference("cost.roofline")(roofline_op)
reference("cost.synthesize")(synthesize_op)
