"""Reference for vyre's tensor-train dispatch contract: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.vyre.dispatch import decode_op, grid_op, inputs_op

reference("vyre.dispatch_grid")(grid_op)
reference("vyre.dispatch_inputs")(inputs_op)
reference("vyre.decode_output")(decode_op)
