"""Reference for the block detector (chapter 6): the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.vis import classify_family_op, detect_blocks_op

reference("vis.classify_family")(classify_family_op)
reference("vis.detect_blocks")(detect_blocks_op)
