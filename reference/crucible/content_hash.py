"""Reference for the content hash: the spec's chain over the region's ops."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.content_hash import content_hash_op

reference("dag.content_hash")(content_hash_op)
