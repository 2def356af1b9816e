"""SympleX's dependence test as symplex@1.0.0 ships it (rust-engine polyhedral.rs §3,
`analyze_dependency_multivariate`, and the pairing of its stage 3), restated step by step.

The test looks at one subscript of two accesses, src and dst, and a box of loop bounds: the
pipeline always passes PIPELINE_BOUNDS for every loop, whatever the nest's bounds and steps.
It subtracts the two subscripts coefficient by coefficient, as if both accesses ran at one
iteration, and reads the difference of each loop's coefficients as a coefficient of that loop:
  1. diff = src - dst per loop and in the constant; target = -diff.const. The active loops are
     those with a nonzero coefficient in src or dst.
  2. Uniform pair (every diff coefficient 0): g = gcd over the active loops of
     gcd(src_k, dst_k); independent iff g > 1 and g does not divide target. Else dependent.
  3. Else, with c_1..c_n the nonzero diff coefficients in loop order: independent iff
     gcd(c) does not divide target.
  4. Interval: lo = hi = target. n times, take the remaining coefficient of largest magnitude
     (the first on a tie; the last one takes its place) over its loop's [l, u] and subtract its
     range from [lo, hi]; while others remain, round lo up and hi down to multiples of the
     others' gcd r when r > 1. Independent as soon as lo > hi.
  5. One coefficient: independent iff c_1 does not divide target or target / c_1 lies outside
     its loop's [l, u].
  6. Several: a two-variable system over d_1..d_n in their boxes, one pair of constraints per
     pair (i, j) of coefficients: s_i d_i + s_j d_j <= rem and -s_i d_i - s_j d_j <= rem2 (s the
     signs), where rem starts at target and, for every other k, is first truncated to a
     multiple of gcd(|min(c_i, c_j, c_k)|, |c_k|) when that gcd exceeds 1, then loses c_k u_k
     (c_k > 0) or c_k l_k; rem2 = -target plus c_k l_k (c_k > 0) or c_k u_k over the others.
     Its closure (`closure_infeasible`) decides; an infeasible system is independent.
  7. Otherwise dependent.
A pair of accesses is independent iff some subscript is (the N-dimensional intersection);
stage 3 tests each pair of distinct accesses once, the later one as src, and never an access
against itself. SympleX computes in 64-bit integers; on the spec's inputs (coefficients and
constants of magnitude at most 2^31, boxes of 1024) nothing overflows, so Python's integers
give the same answers.
"""

from __future__ import annotations

import math

from .dependence import Access, Affine, Nest

PIPELINE_BOUNDS = (0, 1024)
"""The box stage 3 passes for every loop: polyhedral.rs `[(0i64, 1024i64); MAX_POLY_DEPTH]`."""


def _coeffs(e: Affine, names: list[str]) -> list[int]:
    d = dict(e.coeffs)
    return [d.get(v, 0) for v in names]


def _truncate(x: int, g: int) -> int:
    """x rounded toward zero to a multiple of g > 0 (Rust's `(x / g) * g`)."""
    return (abs(x) // g * g) * (1 if x >= 0 else -1)


def uniform_independent(src: list[int], dst: list[int], target: int) -> bool:
    """Step 2."""
    g = 0
    for s, d in zip(src, dst, strict=True):
        if s or d:
            g = math.gcd(g, math.gcd(s, d))
    return g > 1 and target % g != 0


def interval_independent(cs: list[int], ls: list[int], us: list[int], target: int) -> bool:
    """Step 4."""
    lo = hi = target
    rem = list(zip(cs, ls, us, strict=True))
    while rem:
        best = max(range(len(rem)), key=lambda k: (abs(rem[k][0]), -k))
        c, low, up = rem[best]
        lo, hi = (lo - c * up, hi - c * low) if c > 0 else (lo - c * low, hi - c * up)
        if len(rem) > 1:
            r = math.gcd(*(rem[k][0] for k in range(len(rem)) if k != best))
            if r > 1:
                lo += (r - lo % r) % r
                hi -= hi % r
        if lo > hi:
            return True
        rem[best] = rem[-1]
        rem.pop()
    return False


def closure_infeasible(n: int, rows: list[tuple[int, int, int, int, int]]) -> bool:
    """Step 6's closure, as SympleX's UtvpiSolver::is_feasible computes it: nodes 2k (+d_k) and
    2k+1 (-d_k); a row (s_a, a, s_b, b, c) with b = -1 for a unary one; edge weights are minima;
    both nodes of a variable joined by 0-weight edges; Floyd-Warshall, infeasible on a negative
    diagonal."""
    inf = math.inf
    m = [[0 if i == j else inf for j in range(2 * n)] for i in range(2 * n)]

    def node(s: int, v: int, flip: bool) -> int:
        return 2 * v + ((s > 0) == flip)

    def edge(i: int, j: int, c: int) -> None:
        m[i][j] = min(m[i][j], c)

    for sa, a, sb, b, c in rows:
        if b < 0:
            edge(node(sa, a, True), node(sa, a, False), c)
            continue
        edge(node(sb, b, True), node(sa, a, False), c)
        edge(node(sa, a, True), node(sb, b, False), c)
    for k in range(n):
        edge(2 * k, 2 * k + 1, 0)
        edge(2 * k + 1, 2 * k, 0)
    for k in range(2 * n):
        for i in range(2 * n):
            for j in range(2 * n):
                m[i][j] = min(m[i][j], m[i][k] + m[k][j])
        if m[k][k] < 0:
            return True
    return any(m[i][i] < 0 for i in range(2 * n))


def system_rows(cs: list[int], ls: list[int], us: list[int], target: int) -> list[tuple]:
    """Step 6's constraints: each box, then one pair per pair of coefficients."""
    n = len(cs)
    rows: list[tuple] = []
    for k in range(n):
        rows += [(1, k, 0, -1, us[k]), (-1, k, 0, -1, -ls[k])]
    for i in range(n):
        for j in range(i + 1, n):
            rem, rem2 = target, -target
            for k in range(n):
                if k in (i, j):
                    continue
                low = min(cs[i], cs[j], cs[k])
                g = math.gcd(abs(low), abs(cs[k]))
                if g > 1:
                    rem = _truncate(rem, g)
                rem -= cs[k] * (us[k] if cs[k] > 0 else ls[k])
                rem2 += cs[k] * (ls[k] if cs[k] > 0 else us[k])
            si, sj = (1 if cs[i] > 0 else -1), (1 if cs[j] > 0 else -1)
            rows += [(si, i, sj, j, rem), (-si, i, -sj, j, rem2)]
    return rows


def subscript_independent(src: list[int], dst: list[int], c_src: int, c_dst: int,
                          box: tuple[int, int] = PIPELINE_BOUNDS) -> bool:
    """Steps 1-7 for one subscript (coefficients per loop and constants)."""
    diff = [s - d for s, d in zip(src, dst, strict=True)]
    target = -(c_src - c_dst)
    if not any(diff):
        return uniform_independent(src, dst, target)
    cs = [c for c in diff if c]
    if target % math.gcd(*cs) != 0:
        return True
    ls, us = [box[0]] * len(cs), [box[1]] * len(cs)
    if interval_independent(cs, ls, us, target):
        return True
    if len(cs) == 1:
        return target % cs[0] != 0 or not ls[0] <= target // cs[0] <= us[0]
    return closure_infeasible(len(cs), system_rows(cs, ls, us, target))


def symplex_independent(nest: Nest, later: Access, earlier: Access) -> bool:
    """True when SympleX's test calls the pair independent: some subscript is."""
    names = [lp.var for lp in nest.loops]
    return any(subscript_independent(_coeffs(a, names), _coeffs(b, names), a.const, b.const)
               for a, b in zip(later.index, earlier.index, strict=True))


def pair_independent(nest: Nest, source: int, sink: int) -> bool:
    """Stage 3's verdict on two distinct accesses: the later one is the test's src."""
    later, earlier = max(source, sink), min(source, sink)
    return symplex_independent(nest, nest.accesses[later], nest.accesses[earlier])
