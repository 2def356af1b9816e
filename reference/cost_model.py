"""Reference for the cost model's profiles, roofline and synthesis: the spec's own functions."""

from __future__ import annotations

from ..spec.cost_ops import profile_op, roofline_op, synthesize_op
from ..spec.registry import reference

reference("cost.profile")(profile_op)
reference("cost.roofline")(roofline_op)
reference("cost.synthesize")(synthesize_op)
