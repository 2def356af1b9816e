"""Reference for RingKernel's queue and message envelope ops: the spec's own functions."""

from __future__ import annotations

from ..spec.registry import reference
from ..spec.rk_queue import simulate_op

reference("queue.simulate")(simulate_op)
