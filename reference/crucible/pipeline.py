"""Reference for chapter 6's pipeline: the detector, then build and plan per iteration."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.pipeline_ops import pipeline_run

reference("pipeline.run")(pipeline_run)
