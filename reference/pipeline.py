"""Reference for chapter 6's pipeline: the detector, then build and plan per iteration."""

from __future__ import annotations

from ..spec.pipeline_ops import pipeline_run
from ..spec.registry import reference

reference("pipeline.run")(pipeline_run)
