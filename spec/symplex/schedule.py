"""Chapter 14: legality of skewing and rectangular tiling of an affine loop nest, decided exactly
by z3 (the nest, its dependences and their direction vectors: spec/symplex/dependence.py).

A schedule keeps the nest's loop order and maps an iteration x to coordinates c(x): first
c = x, then each skew (j, i, f) in turn sets c_j = c_j + f * c_i (loop j skewed by loop i,
factor f), then the band (a run of consecutive loops b..e) is tiled with rectangular tiles.
For a dependence from a(x) to b(y), its schedule distance is D = c(y) - c(x).
1. The dependences come from `analyze` (exact direction vectors, in its order).
2. Order: the skews are legal iff no dependence has a pair whose D is lexicographically
   negative (its first non-zero component below 0): the skewed nest would run b(y) first.
3. Band: tiling b..e is legal iff the band is fully permutable: no dependence has a pair whose
   D is zero on every loop outside and before the band (not carried there) and below 0 on some
   loop of the band. Every tile size then keeps every pair in order (PO14.460).
4. Per dependence, in `analyze`'s order, z3 asks for a pair of its direction vector meeting
   step 2's condition, then step 3's; the first found makes the verdict illegal, naming that
   dependence and the step ("order" or "band"). A query past the budget, or an analysis that
   is itself unknown, makes the verdict unknown when nothing illegal was found.
5. Skewing j by an outer loop i (i before j) never breaks step 2 (PO14.461), and a skew can
   make a band tilable: A[i][j] = A[i-1][j+1] has D = (1, -1), not tilable; skewed j by i with
   f = 1, D = (1, 0).

The e-graph (spec/symplex/egraph/) rewrites tensor terms, never loop schedules: no rewrite
needs this guard. The schedule the spec does choose is the tile search's tiling of the matmul
nest (spec/symplex/tile_search.py), which runs only once `require_tilable` admits its band.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..core.errors import InvalidInput
from ..core.lazy_z3 import z3
from .dependence import (
    DEP_QUERIES,
    DEP_RLIMIT,
    Dependence,
    Nest,
    PairSolver,
    analyze,
    nest_from_wire,
)

MAX_FACTOR = 64
"""The spec's bound on a skew factor's magnitude."""
REASONS = ("none", "order", "band")


@dataclass(frozen=True)
class Skew:
    loop: int
    by: int
    factor: int


@dataclass(frozen=True)
class Schedule:
    skews: tuple[Skew, ...] = ()
    band: tuple[int, int] | None = None
    """First and last loop of the tiled band (positions in the nest), or no tiling."""


@dataclass(frozen=True)
class Verdict:
    verdict: str
    violated: Dependence | None = None
    reason: str = "none"


def skewed(point: list, skews: tuple[Skew, ...]) -> list:
    """The schedule coordinates of an iteration (ints or z3 terms), skews applied in order."""
    c = list(point)
    for s in skews:
        c[s.loop] = c[s.loop] + s.factor * c[s.by]
    return c


def lex_negative(d: list):
    """D's first non-zero component is below 0 (a z3 formula)."""
    return z3.Or([z3.And(*[x == 0 for x in d[:k]], d[k] < 0) for k in range(len(d))])


def band_negative(d: list, band: tuple[int, int]):
    """D is zero before the band and below 0 somewhere in it (a z3 formula)."""
    first, last = band
    return z3.And(*[x == 0 for x in d[:first]], z3.Or([d[m] < 0 for m in range(first, last + 1)]))


def distance(pair: PairSolver, schedule: Schedule) -> list:
    """D = c(y) - c(x) over the pair's z3 iterations."""
    xs = [pair.xs[v] for v in pair.vars]
    ys = [pair.ys[v] for v in pair.vars]
    cx, cy = skewed(xs, schedule.skews), skewed(ys, schedule.skews)
    return [b - a for a, b in zip(cx, cy, strict=True)]


def schedule_legal(nest: Nest, schedule: Schedule, rlimit: int = DEP_RLIMIT,
                   queries: int = DEP_QUERIES) -> Verdict:
    """Steps 1-4."""
    result = analyze(nest, rlimit, queries)
    budget, undecided = [queries], result.outcome == "unknown"
    for dep in result.dependences:
        a, b = nest.accesses[dep.source], nest.accesses[dep.sink]
        pair = PairSolver(nest, a, b, rlimit, budget)
        d = distance(pair, schedule)
        checks = [("order", lex_negative(d))]
        if schedule.band is not None:
            checks.append(("band", band_negative(d, schedule.band)))
        for reason, bad in checks:
            r = pair.check([*pair.prefix(dep.direction), bad])
            if r == z3.sat:
                return Verdict("illegal", dep, reason)
            undecided |= r == z3.unknown
    return Verdict("unknown" if undecided else "legal")


def schedule_from_wire(nest: Nest, skews: list[dict], tile: list[str]) -> Schedule:
    """Loop names to positions; a skew by itself, or a band out of order, is invalid_input."""
    names = [lp.var for lp in nest.loops]

    def pos(v, path: str) -> int:
        if v not in names:
            raise InvalidInput(f"{path}: {v!r} is not a loop of the nest ({', '.join(names)})")
        return names.index(v)

    out = []
    for k, s in enumerate(skews):
        j, i = pos(s["loop"], f"args.skew[{k}].loop"), pos(s["by"], f"args.skew[{k}].by")
        if i == j or not -MAX_FACTOR <= s["factor"] <= MAX_FACTOR:
            raise InvalidInput(f"args.skew[{k}]: a loop skewed by another loop, factor within "
                               f"+-{MAX_FACTOR}")
        out.append(Skew(j, i, s["factor"]))
    band = [pos(v, f"args.tile[{k}]") for k, v in enumerate(tile)]
    if band and band != list(range(band[0], band[0] + len(band))):
        raise InvalidInput("args.tile: consecutive loops of the nest, outermost first")
    return Schedule(tuple(out), (band[0], band[-1]) if band else None)


def require_tilable(nest: Nest, band: tuple[int, int]) -> None:
    """The guard of a chosen tiling: invalid_input unless step 3 calls the band legal."""
    v = schedule_legal(nest, Schedule((), band))
    if v.verdict != "legal":
        raise InvalidInput(f"the band {band} is not tilable: {v.verdict} ({v.reason})")


MATMUL = {"loops": [{"var": v, "lo": 0, "hi": 3, "step": 1} for v in ("i", "j", "k")],
          "accesses": [{"array": "C", "kind": 0, "index": [{"coeffs": {"i": 1}},
                                                           {"coeffs": {"j": 1}}], "stmt": 0},
                       {"array": "A", "kind": 0, "index": [{"coeffs": {"i": 1}},
                                                           {"coeffs": {"k": 1}}], "stmt": 0},
                       {"array": "B", "kind": 0, "index": [{"coeffs": {"k": 1}},
                                                           {"coeffs": {"j": 1}}], "stmt": 0},
                       {"array": "C", "kind": 1, "index": [{"coeffs": {"i": 1}},
                                                           {"coeffs": {"j": 1}}], "stmt": 0}]}
"""C[i][j] = C[i][j] + A[i][k] * B[k][j] on a 4 x 4 x 4 box (the dependences do not depend on
the extents: every one is (=, =, <))."""


@cache
def matmul_tilable() -> bool:
    """The tile search's guard: the matmul nest's band (i, j, k) is tilable."""
    require_tilable(nest_from_wire(MATMUL["loops"], MATMUL["accesses"]), (0, 2))
    return True
