"""Reference for SympleX's targets, tile cost and tile search: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.symplex.tile_ops import target_op, tile_cost_op, tile_search_op

reference("symplex.target")(target_op)
reference("symplex.tile_cost")(tile_cost_op)
reference("symplex.tile_search")(tile_search_op)
