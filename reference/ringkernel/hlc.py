"""Reference for RingKernel's hybrid logical clock: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.ringkernel.hlc.ops import (
    compare_op,
    device_update_op,
    pack_op,
    tick_op,
    unpack_op,
    update_op,
)

reference("hlc.tick")(tick_op)
reference("hlc.update")(update_op)
reference("hlc.device_update")(device_update_op)
reference("hlc.pack")(pack_op)
reference("hlc.unpack")(unpack_op)
reference("hlc.compare")(compare_op)
