"""Reference for the host K2K broker: the spec's own step functions, in order."""

from __future__ import annotations

from ..spec.k2k_ops import simulate
from ..spec.registry import reference

reference("k2k.simulate")(simulate)
