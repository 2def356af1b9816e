"""Lookup tables derived from the spec, shared by the numba and cupy kernels."""

from __future__ import annotations

import numpy as np

from ...spec.crucible.types import ELEMENT_SIZE

SIZE_BY_BYTE = np.zeros(256, dtype=np.uint8)
"""element_size indexed by the ScalarType's byte (Undefined = 0xFF); 0 for unknown ordinals."""
for _dtype, _size in ELEMENT_SIZE.items():
    SIZE_BY_BYTE[_dtype & 0xFF] = _size
