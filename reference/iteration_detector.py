"""Reference for chapter 7: the detector fed one hash at a time."""

from __future__ import annotations

from ..spec.iteration_detector import detector_run
from ..spec.registry import reference

reference("detector.run")(detector_run)
