"""Reference for PyC's stable-repeat fast path: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.pyc.repeat import repeat_op

reference("pyc.repeat")(repeat_op)
