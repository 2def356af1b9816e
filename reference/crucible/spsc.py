"""Reference for the ring and MetaLog simulators: the spec's own step functions, in order."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.spsc_ops import metalog_simulate, ring_simulate

reference("ring.simulate")(ring_simulate)
reference("metalog.simulate")(metalog_simulate)
