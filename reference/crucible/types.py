"""Reference for chapter 2 ops."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.types import element_size


@reference("types.element_size")
def element_size_op(dtype: int) -> dict:
    return {"element_size": element_size(dtype)}
