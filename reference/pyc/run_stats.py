"""Reference for the counters of PyC's pyc_run_stats over a sequence of runs: the spec's own
functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.pyc.run_stats import run_stats_op

reference("pyc.run_stats")(run_stats_op)
