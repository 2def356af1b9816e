"""Reference for the content hash: the spec's chain over the region's ops."""

from __future__ import annotations

from ..spec.content_hash import content_hash_op
from ..spec.registry import reference

reference("dag.content_hash")(content_hash_op)
