"""Reference for chapter 5: the storage span of a view."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.tensor_meta import compute_storage_nbytes


@reference("meta.storage_nbytes")
def storage_nbytes_op(sizes: list[int], strides: list[int], dtype: int) -> dict:
    return {"nbytes": compute_storage_nbytes(sizes, strides, dtype)}
