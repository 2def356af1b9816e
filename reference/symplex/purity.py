"""Reference for SympleX's purity check: the spec's own function."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.symplex.purity import purity_op

reference("symplex.purity")(purity_op)
