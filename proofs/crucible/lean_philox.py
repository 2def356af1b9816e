"""Chapter 17 obligation from the Lean formalization's Philox module: the 64-bit convenience
API lays its offset and key out as the counter's and key's low and high words."""

from __future__ import annotations

from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.crucible import philox
from ..core.obligation import Property, property_obligation

U64 = st.integers(0, 2**64 - 1)


def _check_layout(case: tuple[int, int]) -> None:
    offset, key = case
    words = [offset & 0xFFFFFFFF, offset >> 32, 0, 0]
    assert philox.generate(offset, key) == philox.philox_block(
        words, [key & 0xFFFFFFFF, key >> 32]), "generate is not block(lo, hi, 0, 0)"


@property_obligation(
    "PO17.40",
    "generate(offset, key) == philox_block([lo(offset), hi(offset), 0, 0], [lo(key), "
    "hi(key)]) for 64-bit offsets and keys: the low half in word 0, the high half in word 1, "
    "counter words 2 and 3 zero.",
    covers=("philox.offset",),
    subject=philox.generate,
    mutants=(
        Mutant.edit("halves swapped", "split64 gives [high, low]", philox.split64,
                    "[value & 0xFFFFFFFF, value >> 32]", "[value >> 32, value & 0xFFFFFFFF]"),
        Mutant.edit("counter words moved", "the offset fills counter words 2 and 3",
                    philox.generate, "[*split64(offset), 0, 0]", "[0, 0, *split64(offset)]"),
    ),
)
def generate_layout(subject):
    return [Property("64-bit layout", _check_layout, strategy=lambda: st.tuples(U64, U64),
                     examples=100)]
