"""spec/core/bits.py: is_pow2 on the first values. The int and z3 readings of every helper are
property obligations PO1.70-PO1.75 (checked with their mutants by test_prove)."""

from __future__ import annotations

from crucible_spec.spec.core import bits


def test_is_pow2():
    assert [x for x in range(70) if bits.is_pow2(x)] == [1, 2, 4, 8, 16, 32, 64]
