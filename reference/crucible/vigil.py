"""Reference for Vigil's foreground dispatch: the spec's Vigil model over the stream."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.vigil_ops import vigil_dispatch

reference("vigil.dispatch")(vigil_dispatch)
