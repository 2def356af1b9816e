"""Chapter 13: the roofline cost of a matmul tile and SympleX's 3-phase tile search (C++
optimizer), as the spec states them.

Problem C[M, N] = A[M, K] @ B[K, N], elements of `bpe` bytes; tile (tm, tn, tk).
0. Guard: tiling is a schedule, so the search runs only once the matmul nest's band (i, j, k)
   is shown tilable (spec/symplex/schedule.py, `matmul_tilable`).
1. Candidates: tm, tn, tk run over multiples of the target's MMA shape (m, n, k), from one
   MMA up to the problem extent rounded up to the MMA step, at most TILE_CAP; a candidate is
   kept if its footprint (tm tk + tk tn + tm tn) x bpe x stages fits the SM's shared memory.
2. Cost (the roofline): the grid is ceil(M/tm) x ceil(N/tn) output tiles of ceil(K/tk) steps.
   flops = 2 x (padded M) x (padded N) x (padded K); each output tile moves, per K step, one A
   tile (tm tk) and one B tile (tk tn) in, and its C tile (tm tn) out once, all x bpe.
   time = max(flops / peak, bytes / bandwidth); compared exactly as
   max(flops x bandwidth, bytes x peak).
3. Best: the least time; ties go to the smaller footprint, then the smaller (tm, tn, tk).
   speedup_vs_naive = the time of the one-MMA tile / the best time (never below 1).

SympleX (its profile) differs: it ignores M, N, K and scores one tile's own work, enumerating
up to 1024 (E13.402); its footprint is 3 tm tn tk bpe 2 (E13.401); between steps 1 and 3 it
keeps the compute-bound tiles (else the 200 of highest intensity), ranks them by a symmetry
score and keeps 20 (E13.403); its time blends 0.85 x max + 0.15 x min of the two terms, the
0.85 only with more than one stage (E13.404). Sorts are stable here (C++ std::sort is not).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errata import NO_ERRATA
from .hardware_target import Target, ridge
from .schedule import matmul_tilable

E13_401 = "E13.401"
E13_402 = "E13.402"
E13_403 = "E13.403"
E13_404 = "E13.404"

TILE_CAP = 256
"""The spec's largest tile extent per dimension."""
SYMPLEX_TILE_CAP = 1024
"""SympleX's enumeration bound per dimension, whatever the problem (E13.402)."""
PHASE1_KEEP = 200
PHASE2_KEEP = 200
PHASE3_KEEP = 20
"""SympleX's survivor counts after phases 1, 2 and the head phase 3 ranks (E13.403)."""
COALESCE = 64


@dataclass(frozen=True)
class Problem:
    m: int
    n: int
    k: int
    bpe: int = 2
    stages: int = 2


@dataclass(frozen=True)
class TileCost:
    """One tile's cost: its footprint, work, time and the roofline term that binds."""

    tile: tuple[int, int, int]
    footprint: int
    flops: int
    bytes: int
    seconds: float
    compute_bound: bool
    key: object


@dataclass(frozen=True)
class SearchResult:
    best: TileCost
    candidates: int
    ranked: int
    speedup_vs_naive: float


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def footprint(tile, bpe, stages, errata: frozenset[str] = NO_ERRATA):
    """Shared-memory bytes: the A, B and C tiles per stage (SympleX: 3 tm tn tk bpe 2, E13.401).
    Works on ints and on z3 terms."""
    tm, tn, tk = tile
    if E13_401 in errata:
        return 3 * tm * tn * tk * bpe * 2
    return (tm * tk + tk * tn + tm * tn) * bpe * stages


def aligned(tile, mma) -> tuple:
    """The alignment conditions: each extent a multiple of the MMA's (ints or z3 terms)."""
    return tuple(t % s == 0 for t, s in zip(tile, mma, strict=True))


def tile_bounds(p: Problem, mma: tuple[int, int, int], errata: frozenset[str] = NO_ERRATA
                ) -> tuple[tuple[int, int], ...]:
    """(lowest, highest) extent per dimension: one MMA step up to the problem rounded up to
    the step, at most TILE_CAP (SympleX: up to 1024, E13.402)."""
    if E13_402 in errata:
        return tuple((s, SYMPLEX_TILE_CAP) for s in mma)
    return tuple((s, min(TILE_CAP, ceil_div(e, s) * s)) for e, s in zip((p.m, p.n, p.k), mma,
                                                                           strict=True))


def grid(p: Problem, tile: tuple[int, int, int]) -> tuple[int, int, int]:
    """Output tiles along M and N, and K steps."""
    return ceil_div(p.m, tile[0]), ceil_div(p.n, tile[1]), ceil_div(p.k, tile[2])


def work(p: Problem, tile, counts, errata: frozenset[str] = NO_ERRATA):
    """(flops, bytes moved) for the grid `counts` (ints or z3 terms); SympleX: one tile's own
    2 tm tn tk and (tm tk + tk tn + tm tn) bpe (E13.402)."""
    tm, tn, tk = tile
    if E13_402 in errata:
        return 2 * tm * tn * tk, (tm * tk + tk * tn + tm * tn) * p.bpe
    gm, gn, gk = counts
    flops = 2 * (gm * tm) * (gn * tn) * (gk * tk)
    return flops, gm * gn * (gk * (tm * tk + tk * tn) + tm * tn) * p.bpe


def roofline_terms(flops, nbytes, t: Target) -> tuple:
    """Compute and memory time, both scaled by peak x bandwidth (exact; ints or z3 terms)."""
    return flops * t.hbm_bytes_per_s, nbytes * t.peak_flops


def seconds(flops: int, nbytes: int, t: Target, stages: int,
            errata: frozenset[str] = NO_ERRATA) -> float:
    """max(flops / peak, bytes / bandwidth); SympleX: 0.85 max + 0.15 min, 1.0 max with one
    stage (E13.404)."""
    c = float(flops) / float(t.peak_flops)
    m = float(nbytes) / float(t.hbm_bytes_per_s)
    if E13_404 in errata:
        return max(c, m) * (0.85 if stages > 1 else 1.0) + min(c, m) * 0.15
    return max(c, m)


def tile_cost(t: Target, p: Problem, tile: tuple[int, int, int], stages: int | None = None,
              errata: frozenset[str] = NO_ERRATA) -> TileCost:
    """Step 2 for one tile (`stages` overrides the problem's, for the naive tile)."""
    stages = p.stages if stages is None else stages
    flops, nbytes = work(p, tile, grid(p, tile), errata)
    secs = seconds(flops, nbytes, t, stages, errata)
    key = secs if E13_404 in errata else max(roofline_terms(flops, nbytes, t))
    c, m = roofline_terms(flops, nbytes, t)
    return TileCost(tuple(tile), footprint(tile, p.bpe, p.stages, errata), flops, nbytes, secs,
                    c >= m, key)


def candidates(t: Target, p: Problem, errata: frozenset[str] = NO_ERRATA
               ) -> list[tuple[int, int, int]]:
    """Step 1: aligned tiles within the bounds whose footprint fits, tm outermost."""
    (lm, hm), (ln, hn), (lk, hk) = tile_bounds(p, t.mma, errata)
    return [(tm, tn, tk) for tm in range(lm, hm + 1, t.mma[0]) for tn in range(ln, hn + 1, t.mma[1])
            for tk in range(lk, hk + 1, t.mma[2])
            if footprint((tm, tn, tk), p.bpe, p.stages, errata) <= t.sram_per_sm]


def intensity(c: TileCost) -> float:
    return float(c.flops) / float(c.bytes)


def symmetry_score(t: Target, c: TileCost) -> float:
    """SympleX's phase 2 score: 0.35 SRAM use + 0.45 tensor-core use + 0.20 coalescing."""
    tm, tn, tk = c.tile
    mm, mn, mk = t.mma
    sram_util = min(12 * tm * tn * tk / t.sram_per_sm, 1.0)
    mmas = (tm // mm) * (tn // mn) * (tk // mk)
    tc_util = 0.6 * float(all(aligned(c.tile, t.mma))) + 0.4 * min(mmas / (mm * mn * mk), 1.0)
    coalescing = (0.4 if tk % COALESCE == 0 else 0.0) + (0.3 if tm % COALESCE == 0 else 0.0) \
        + (0.3 if tn % COALESCE == 0 else 0.0)
    return 0.35 * sram_util + 0.45 * tc_util + 0.20 * coalescing


def symplex_phases(t: Target, costs: list[TileCost]) -> list[TileCost]:
    """SympleX's phases 1-2 and the head of 3 (E13.403): compute-bound tiles, else the 200 of
    highest intensity; the 200 best by symmetry score; their first 20."""
    knee = ridge(t)
    bound = [c for c in costs if intensity(c) >= knee]
    kept = bound or sorted(costs, key=intensity, reverse=True)[:PHASE1_KEEP]
    ranked = sorted(kept, key=lambda c: symmetry_score(t, c), reverse=True)[:PHASE2_KEEP]
    return ranked[:PHASE3_KEEP]


def rank_key(c: TileCost) -> tuple:
    """Step 3's order: time, then footprint, then the tile."""
    return c.key, c.footprint, c.tile


def tile_search(t: Target, p: Problem, errata: frozenset[str] = NO_ERRATA) -> SearchResult:
    """Steps 0-3 (SympleX's phases under E13.403)."""
    matmul_tilable()
    tiles = candidates(t, p, errata)
    costs = [tile_cost(t, p, tile, errata=errata) for tile in tiles]
    ranked = symplex_phases(t, costs) if E13_403 in errata else costs
    best = min(ranked, key=rank_key)
    naive = tile_cost(t, p, t.mma, stages=1, errata=errata)
    return SearchResult(best, len(tiles), len(ranked), naive.seconds / best.seconds)
