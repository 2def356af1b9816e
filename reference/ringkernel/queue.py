"""Reference for RingKernel's queue and message envelope ops: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.ringkernel.message import decode_op, encode_op
from ...spec.ringkernel.queue import simulate_op

reference("queue.simulate")(simulate_op)
reference("message.encode")(encode_op)
reference("message.decode")(decode_op)
