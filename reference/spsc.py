"""Reference for the ring and MetaLog simulators: the spec's own step functions, in order."""

from __future__ import annotations

from ..spec.registry import reference
from ..spec.spsc_ops import metalog_simulate, ring_simulate

reference("ring.simulate")(ring_simulate)
reference("metalog.simulate")(metalog_simulate)
