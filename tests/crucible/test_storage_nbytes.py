"""compute_storage_nbytes against PyTorch's own storage sizes on generated views (slices,
transposes, expands, as_strided) when torch is installed. Its own properties are property
obligations PO5.70-PO5.72."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.spec.crucible.tensor_meta import compute_storage_nbytes

torch = pytest.importorskip("torch")

TORCH_DTYPES = [torch.float32, torch.float64, torch.int16, torch.uint8, torch.bfloat16,
                torch.complex64, torch.bool]
ORDINAL = {torch.float32: 6, torch.float64: 7, torch.int16: 2, torch.uint8: 0,
           torch.bfloat16: 15, torch.complex64: 9, torch.bool: 11}


@st.composite
def views(draw):
    """A base tensor and a chain of view operations on it."""
    shape = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    v = torch.zeros(shape, dtype=draw(st.sampled_from(TORCH_DTYPES)))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["slice", "transpose", "expand", "as_strided", "select"]))
        d = draw(st.integers(0, max(v.dim() - 1, 0)))
        if kind == "slice" and v.dim():
            start = draw(st.integers(0, v.size(d)))
            v = v.narrow(d, start, draw(st.integers(0, v.size(d) - start)))
            step = draw(st.integers(1, 3))
            v = v[(slice(None),) * d + (slice(None, None, step),)]
        elif kind == "transpose" and v.dim() >= 2:
            v = v.transpose(d, draw(st.integers(0, v.dim() - 1)))
        elif kind == "expand" and v.dim() < 8:
            v = v.unsqueeze(0).expand(draw(st.integers(1, 4)), *v.shape)
        elif kind == "select" and v.dim():
            v = v.select(d, draw(st.integers(0, v.size(d) - 1))) if v.size(d) else v
        elif kind == "as_strided":
            size = draw(st.lists(st.integers(0, 4), max_size=4))
            stride = draw(st.lists(st.integers(0, 5), min_size=len(size), max_size=len(size)))
            need = 1 + sum((s - 1) * t for s, t in zip(size, stride, strict=True)) \
                if all(size) else 0
            base = v.untyped_storage().nbytes() // v.element_size()
            if need <= base:
                v = v.as_strided(size, stride, 0)
    return v


@settings(max_examples=600)
@given(views())
def test_agrees_with_torch_storage_of_real_views(v):
    sizes, strides = list(v.size()), list(v.stride())
    ours = compute_storage_nbytes(sizes, strides, ORDINAL[v.dtype])
    own = torch.empty_strided(sizes, strides, dtype=v.dtype).untyped_storage().nbytes()
    assert ours == own
    fits = v.untyped_storage().nbytes() - v.storage_offset() * v.element_size()
    assert ours == 0 or ours <= fits
