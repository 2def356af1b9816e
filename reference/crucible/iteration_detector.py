"""Reference for chapter 7: the detector fed one hash at a time."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.iteration_detector import detector_run

reference("detector.run")(detector_run)
