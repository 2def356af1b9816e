"""Reference for the host K2K broker: the spec's own step functions, in order."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.ringkernel.k2k.ops import simulate

reference("k2k.simulate")(simulate)
