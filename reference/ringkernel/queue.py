"""Reference for RingKernel's queue family and message envelope ops: the spec's own
functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.ringkernel.message import decode_op, encode_op
from ...spec.ringkernel.mpsc import bounded_op, mpsc_op
from ...spec.ringkernel.partitioned import partitioned_op
from ...spec.ringkernel.queue import simulate_op
from ...spec.ringkernel.queue_tier import tier_op

reference("queue.simulate")(simulate_op)
reference("queue.mpsc")(mpsc_op)
reference("queue.bounded")(bounded_op)
reference("queue.partitioned")(partitioned_op)
reference("queue.tier")(tier_op)
reference("message.encode")(encode_op)
reference("message.decode")(decode_op)
