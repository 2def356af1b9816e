"""Reference for RingKernel's checkpoints, delta checkpoints, content digest and checkpoint
manager: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.ringkernel.checkpoint_manager import manager_op
from ...spec.ringkernel.checkpoint_ops import apply_op, decode_op, delta_op, digest_op, encode_op

reference("checkpoint.encode")(encode_op)
reference("checkpoint.decode")(decode_op)
reference("checkpoint.digest")(digest_op)
reference("checkpoint.delta")(delta_op)
reference("checkpoint.apply")(apply_op)
reference("checkpoint.manager")(manager_op)
