"""Reference for SympleX's e-graph ops: the spec's own functions."""

from __future__ import annotations

from ....spec.core.registry import reference
from ....spec.symplex.egraph.ops import cost_op, eval_op, rules_op, saturate_op

reference("egraph.eval")(eval_op)
reference("egraph.cost")(cost_op)
reference("egraph.rules")(rules_op)
reference("egraph.saturate")(saturate_op)
