"""SympleX's dependence test as its facts sheet describes it (§2.4: Banerjee-Wolfe bounds plus a
UTVPI integer feasibility solver over affine accesses, directions LT/EQ/GT/ANY), written as the
textbook test: the sheet gives no more detail and no code of it could be read.

For a pair of accesses (source at x, sink at y) and a direction vector over LT, EQ, GT, ANY:
1. Box: each loop's range [L_k, U_k] is the extreme of its bounds over the outer loops' boxes
   (steps are ignored: the real relaxation of the iteration space).
2. GCD (per subscript equation sum a_k x_k - sum b_k y_k = c_b - c_a): an EQ component merges
   a_k and b_k into one coefficient a_k - b_k; if the gcd of the coefficients does not divide
   the constant, the pair is independent under that vector.
3. Banerjee-Wolfe: per component, the least and greatest value of a_k x_k - b_k y_k over the
   box restricted by the direction (x < y, x = y, x > y or free; the extremes lie at the
   region's corners); if the constant lies outside the summed range, independent; an empty
   region (LT or GT on a one-point range) is independent too.
4. UTVPI: when every constraint (the subscript equations, the bounds, the direction) has at
   most two variables with coefficients +-1, integer feasibility is decided by the octagon
   closure (Floyd-Warshall on x+ / x- nodes), tightened to even unary bounds; a negative cycle
   or a crossed unary pair is independent.
5. Otherwise the pair may depend under the vector.

Each step only drops solutions of a relaxation, so the test is conservative: proofs/dependence.py
checks that it never calls a pair independent where z3 finds a dependence (no erratum follows).
"""

from __future__ import annotations

import math
from fractions import Fraction

from .dependence import Access, Affine, Nest

LT, EQ, GT, ANY = "<", "=", ">", "*"
SYMPLEX_SEED = "symplex@1.0.0"


def box(nest: Nest) -> list[tuple[int, int]]:
    """Step 1: [L_k, U_k] per loop from the outer loops' ranges."""
    out: list[tuple[int, int]] = []
    names = [lp.var for lp in nest.loops]

    def extreme(e: Affine, pick) -> int:
        total = e.const
        for v, c in e.coeffs:
            lo, hi = out[names.index(v)]
            total += pick(c * lo, c * hi)
        return total

    for lp in nest.loops:
        out.append((extreme(lp.lo, min), extreme(lp.hi, max)))
    return out


def _coeffs(e: Affine, names: list[str]) -> list[int]:
    d = dict(e.coeffs)
    return [d.get(v, 0) for v in names]


def gcd_rules_out(a: list[int], b: list[int], rhs: int, dirs: tuple[str, ...]) -> bool:
    """Step 2 for one equation sum a x - sum b y = rhs."""
    terms: list[int] = []
    for ak, bk, d in zip(a, b, dirs, strict=True):
        terms += [ak - bk] if d == EQ else [ak, bk]
    g = math.gcd(*terms)
    return rhs != 0 if g == 0 else rhs % g != 0


def component_range(ak: int, bk: int, lo: int, hi: int, d: str) -> tuple[int, int] | None:
    """Step 3: least and greatest a x - b y with x, y in [lo, hi] under direction d; None when
    the region is empty."""
    corners = {EQ: [(lo, lo), (hi, hi)], ANY: [(lo, lo), (lo, hi), (hi, lo), (hi, hi)],
               LT: [(lo, lo + 1), (lo, hi), (hi - 1, hi)],
               GT: [(lo + 1, lo), (hi, lo), (hi, hi - 1)]}[d]
    if hi < lo or (d in (LT, GT) and hi < lo + 1):
        return None
    values = [ak * x - bk * y for x, y in corners]
    return min(values), max(values)


def banerjee_rules_out(a: list[int], b: list[int], rhs: int, dirs: tuple[str, ...],
                       ranges: list[tuple[int, int]]) -> bool:
    """Step 3 for one equation."""
    low = high = 0
    for ak, bk, d, (lo, hi) in zip(a, b, dirs, ranges, strict=True):
        r = component_range(ak, bk, lo, hi, d)
        if r is None:
            return True
        low, high = low + r[0], high + r[1]
    return not low <= rhs <= high


def _rows(nest: Nest, a: Access, b: Access, dirs: tuple[str, ...]) -> list[tuple[dict, int]]:
    """Every constraint as ({var: coeff}, c) meaning sum coeff var <= c, over x_k and y_k."""
    names = [lp.var for lp in nest.loops]
    rows: list[tuple[dict, int]] = []

    def over(e: Affine, side: str, sign: int) -> dict:
        return {f"{side}{v}": sign * c for v, c in e.coeffs}

    for side in ("x", "y"):
        for lp in nest.loops:
            v = f"{side}{lp.var}"
            lo, hi = over(lp.lo, side, 1), over(lp.hi, side, -1)
            rows += [({**lo, v: lo.get(v, 0) - 1}, -lp.lo.const),
                     ({**hi, v: hi.get(v, 0) + 1}, lp.hi.const)]
    for ea, eb in zip(a.index, b.index, strict=True):
        eq: dict = {}
        for key, c in [*over(ea, "x", 1).items(), *over(eb, "y", -1).items()]:
            eq[key] = eq.get(key, 0) + c
        rhs = eb.const - ea.const
        rows += [(eq, rhs), ({k: -c for k, c in eq.items()}, -rhs)]
    for v, d in zip(names, dirs, strict=True):
        x, y = f"x{v}", f"y{v}"
        rows += {LT: [({x: 1, y: -1}, -1)], GT: [({y: 1, x: -1}, -1)],
                 EQ: [({x: 1, y: -1}, 0), ({y: 1, x: -1}, 0)], ANY: []}[d]
    return [({k: c for k, c in r.items() if c}, c) for r, c in rows]


def utvpi_rules_out(rows: list[tuple[dict, int]]) -> bool | None:
    """Step 4: True when the UTVPI system has no integer solution, False when it has one, None
    when some constraint is not UTVPI."""
    if any(len(r) > 2 or any(abs(c) != 1 for c in r.values()) for r, _ in rows):
        return None
    for r, c in rows:
        if not r and c < 0:
            return True
    names = sorted({v for r, _ in rows for v in r})
    n = 2 * len(names)
    inf = math.inf
    m = [[0 if i == j else inf for j in range(n)] for i in range(n)]

    def node(v: str, c: int) -> int:  # +v is 2i, -v is 2i+1
        return 2 * names.index(v) + (c < 0)

    def edge(i: int, j: int, c) -> None:  # V_j - V_i <= c
        m[i][j] = min(m[i][j], c)

    for r, c in rows:
        items = list(r.items())
        if len(items) == 1:
            (v, s), = items
            edge(node(v, -s), node(v, s), 2 * c)
        elif items:
            (u, su), (v, sv) = items
            edge(node(u, -su), node(v, sv), c)
            edge(node(v, -sv), node(u, su), c)
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if m[i][k] + m[k][j] < m[i][j]:
                    m[i][j] = m[i][k] + m[k][j]
    if any(m[i][i] < 0 for i in range(n)):
        return True
    tight = [2 * math.floor(Fraction(m[i][i ^ 1]) / 2) if m[i][i ^ 1] < inf else inf
             for i in range(n)]
    return any(tight[i] + tight[i ^ 1] < 0 for i in range(n))


def symplex_independent(nest: Nest, a: Access, b: Access, dirs: tuple[str, ...]) -> bool:
    """Steps 1-5: True when SympleX's test calls the pair independent under `dirs`."""
    names = [lp.var for lp in nest.loops]
    ranges = box(nest)
    for ea, eb in zip(a.index, b.index, strict=True):
        ca, cb, rhs = _coeffs(ea, names), _coeffs(eb, names), eb.const - ea.const
        if gcd_rules_out(ca, cb, rhs, dirs) or banerjee_rules_out(ca, cb, rhs, dirs, ranges):
            return True
    return bool(utvpi_rules_out(_rows(nest, a, b, dirs)))
