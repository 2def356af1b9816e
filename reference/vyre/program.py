"""Reference for the Program vyre's tt_contract_step builds: the spec's own function."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.vyre.program import program_op

reference("vyre.tt_program")(program_op)
