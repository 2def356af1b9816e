"""Reference for vyre's tensor-train contraction step, fusion pressure and fusion decision:
the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.vyre.fusion import pressure_op, should_fuse_op
from ...spec.vyre.tt import tt_contract_step_op

reference("vyre.tt_contract_step")(tt_contract_step_op)
reference("vyre.fusion_pressure")(pressure_op)
reference("vyre.should_fuse")(should_fuse_op)
