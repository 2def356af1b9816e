"""Reference for PyC's phantom graph: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.pyc.phantom import track_op

reference("pyc.phantom.track")(track_op)
