"""Reference for chapter 11's replay engine and chapter 18's TransactionLog and RegionCache:
the spec's own state machines, stepped in order."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.replay_ops import region_cache_simulate, replay_engine, txlog_simulate

reference("replay.engine")(replay_engine)
reference("txlog.simulate")(txlog_simulate)
reference("region_cache.simulate")(region_cache_simulate)
