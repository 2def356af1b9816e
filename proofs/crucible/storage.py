"""Chapters 2 and 5 obligations: the element size of every int8 ordinal against the ScalarType
table, and the storage span of every small view against its defining formula, both checked
exhaustively on the spec's own functions.

The span of a view is 0 when a size is 0, the element size for a 0-d tensor, and otherwise
(1 + sum over dims of (size - 1) * |stride|) element sizes: a negative stride extends the span
below the first element as far as a positive one extends it above.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible.tensor_meta import compute_storage_nbytes
from ...spec.crucible.types import element_size
from ..core.obligation import Property, property_obligation

BYTES_PER_ELEMENT = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 8: 4, 9: 8, 10: 16, 11: 1,
                     15: 2, 23: 1, 24: 1, 25: 1, 26: 1, -1: 0}
"""ScalarType ordinal -> bytes per element (Undefined, -1, has none); every other int8 ordinal
is no ScalarType."""


def _element_size_of(ordinal: int) -> None:
    if ordinal in BYTES_PER_ELEMENT:
        got = element_size(ordinal)
        assert got == BYTES_PER_ELEMENT[ordinal], f"{got} bytes"
        return
    try:
        got = element_size(ordinal)
    except InvalidInput:
        return
    raise AssertionError(f"an ordinal outside ScalarType gives {got} bytes, not a rejection")


@property_obligation(
    "PO2.20",
    "For every int8 ordinal, element_size is the ScalarType table's size (Undefined: 0), and "
    "every ordinal outside ScalarType is rejected.",
    covers=("types.element_size",),
    subject=element_size,
    mutants=(
        Mutant.edit("unknown ordinal is 0 bytes", "an ordinal outside ScalarType answers 0 "
                    "instead of a rejection", element_size,
                    'raise InvalidInput(f"{dtype} is not a ScalarType ordinal") from None',
                    "return 0"),
        Mutant.edit("ordinal read unsigned", "the int8 ordinal is read as its unsigned byte, "
                    "so Undefined (-1) becomes 255", element_size, "ScalarType(dtype)",
                    "ScalarType(dtype & 0xFF)"),
    ),
)
def element_size_table(_fn):
    return [Property("every int8 ordinal", _element_size_of, cases=lambda: range(-128, 128))]


SIZES, STRIDES, DTYPES = range(4), range(-2, 5), (0, 2, 6, 10, -1)
"""The small domain: sizes 0..3, strides -2..4, and dtypes of 1, 2, 4, 16 and 0 bytes."""


def span_by_formula(sizes: list[int], strides: list[int], dtype: int) -> int:
    """The defining formula of the storage span, in bytes."""
    if 0 in sizes:
        return 0
    elements = 1 + sum((n - 1) * abs(s) for n, s in zip(sizes, strides, strict=True))
    return elements * BYTES_PER_ELEMENT[dtype]


def small_views() -> Iterator[tuple[list[int], list[int], int]]:
    """Every view of rank <= 3 over the small domain, with each dtype."""
    for rank in range(4):
        for dims in itertools.product(itertools.product(SIZES, STRIDES), repeat=rank):
            for dtype in DTYPES:
                yield [n for n, _ in dims], [s for _, s in dims], dtype


def _span_is_formula(view: tuple[list[int], list[int], int]) -> None:
    got, want = compute_storage_nbytes(*view), span_by_formula(*view)
    assert got == want, f"{got} bytes, the formula gives {want}"


FACTS_EXAMPLES = (([32, 64], [64, 1], 6, 8192), ([3, 4], [-4, 1], 6, 48),
                  ([3, 4], [0, 0], 6, 4), ([], [], 6, 4), ([0, 4], [4, 1], 6, 0),
                  ([3, 4], [4, 1], -1, 0))
"""(sizes, strides, dtype, bytes): the spans measured on the real code."""


def _span_is_example(example: tuple[list[int], list[int], int, int]) -> None:
    sizes, strides, dtype, nbytes = example
    assert compute_storage_nbytes(sizes, strides, dtype) == nbytes


@property_obligation(
    "PO5.20",
    "For every view of rank <= 3 with sizes 0..3, strides -2..4 and five dtypes, "
    "compute_storage_nbytes is 0 if a size is 0, else (1 + sum (size - 1)·|stride|) · "
    "element size (a 0-d view: one element); and it gives the spans measured on the code.",
    covers=("meta.storage_nbytes",),
    subject=compute_storage_nbytes,
    mutants=(
        Mutant.edit("span off by one", "the span leaves out its last element",
                    compute_storage_nbytes, "(max_offset - min_offset + 1)",
                    "(max_offset - min_offset)"),
        Mutant.edit("extent off by one", "a dimension extends size·stride, not "
                    "(size - 1)·stride", compute_storage_nbytes, "extent = (size - 1) * stride",
                    "extent = size * stride"),
        Mutant.edit("zero size ignored", "a size of 0 no longer empties the view",
                    compute_storage_nbytes, "if size == 0:", "if size < 0:"),
        Mutant.edit("element size ignored", "the span is counted in elements, not bytes",
                    compute_storage_nbytes,
                    "(max_offset - min_offset + 1) * element_size(dtype)",
                    "(max_offset - min_offset + 1)"),
        Mutant.edit("negative extent flipped", "a negative stride's extent is subtracted, "
                    "shrinking the span", compute_storage_nbytes, "min_offset += extent",
                    "min_offset -= extent"),
    ),
)
def storage_span_formula(_fn):
    return [Property("every small view of rank <= 3", _span_is_formula, cases=small_views),
            Property("spans measured on the code", _span_is_example,
                     cases=lambda: FACTS_EXAMPLES)]
