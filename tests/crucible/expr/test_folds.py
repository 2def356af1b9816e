"""PO14.550's quicker form of the division by 3: the substitution reaches every division, and
the definition it puts in their place has exactly C's quotient and remainder as solutions."""

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.proofs.crucible.expr.folds import BY_DEFINITION, division_queries, truncating


def c_truncating(a: int, r: int) -> tuple[int, int]:
    """C's a / r and a % r, derived from the magnitudes (the quotient truncates toward zero)."""
    q = abs(a) // abs(r)
    q = q if (a < 0) == (r < 0) else -q
    return q, a - r * q


def test_no_divider_is_left_for_the_defined_divisors():
    a = z3.BitVec("a", 64)
    defined = [q for q in division_queries(a) if f"(a, {BY_DEFINITION[0]})" in q.label]
    assert len(defined) == 6
    for q in defined:
        text = q.formula.sexpr()
        assert "bvsdiv" not in text and "bvsrem" not in text, q.label


@settings(max_examples=60, deadline=None)
@given(st.integers(-(1 << 63), (1 << 63) - 1), st.sampled_from(BY_DEFINITION))
def test_the_definition_has_only_c_quotient_and_remainder(a: int, r: int):
    x = z3.BitVec("x", 64)
    q, rem = z3.BitVecs(f"q{r} rem{r}", 64)
    probe = truncating(x, r)(z3.BoolVal(True))
    want_q, want_rem = c_truncating(a, r)
    solver = z3.Solver()
    solver.add(probe, x == a)
    assert solver.check() == z3.sat
    solver.add(z3.Or(q != want_q, rem != want_rem))
    assert solver.check() == z3.unsat
