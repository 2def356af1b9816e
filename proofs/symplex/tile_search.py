"""Chapter 13 obligations of SympleX's tile search: z3 finds no aligned tile that fits shared
memory and beats the search's best roofline time, on small spaces (PO13.420); the cost model
meets the facts sheet's numbers and hand-worked values (PO13.421); the best never loses to any
aligned fitting tile and never to the one-MMA tile (PO13.422)."""

from __future__ import annotations

import z3
from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.symplex.hardware_target import TARGETS, target
from ...spec.symplex.tile_search import (
    Problem,
    aligned,
    candidates,
    footprint,
    grid,
    rank_key,
    roofline_terms,
    symplex_phases,
    tile_bounds,
    tile_cost,
    tile_search,
    work,
)
from ..core.obligation import Property, Query, property_obligation, z3_obligation

SMALL = ((64, 64, 64, 2), (48, 40, 200, 2), (256, 256, 256, 8), (256, 128, 256, 6),
         (17, 9, 33, 1), (130, 70, 260, 4))
"""(M, N, K, stages) of the small spaces: up to 16 x 32 x 16 tiles, shared memory binding in
the deep-pipeline ones."""


def beaten(t, p: Problem, bound: int) -> z3.BoolRef:
    """Some tile within the bounds, aligned and fitting, has a roofline key below `bound`."""
    tile = z3.Ints("tm tn tk")
    counts = z3.Ints("gm gn gk")
    cons = [z3.And(lo <= v, v <= hi) for v, (lo, hi) in zip(tile, tile_bounds(p, t.mma),
                                                             strict=True)]
    cons += list(aligned(tile, t.mma))
    cons.append(footprint(tile, p.bpe, p.stages) <= t.sram_per_sm)
    for g, v, e in zip(counts, tile, (p.m, p.n, p.k), strict=True):
        cons += [g * v >= e, (g - 1) * v < e]  # g = ceil(e / v)
        cons += [g >= 1, g <= e]  # implied (1 <= v): it only narrows z3's search
    flops, nbytes = work(p, tile, counts)
    return z3.And(*cons, *(term < bound for term in roofline_terms(flops, nbytes, t)))


def _queries(search) -> list[Query]:
    out = []
    for name in TARGETS:
        t = target(name)
        for m, n, k, stages in SMALL:
            p = Problem(m, n, k, 2, stages)
            best = search(t, p).best
            out.append(Query(f"{name} {m}x{n}x{k}, {stages} stages: nothing beats {best.tile}",
                             beaten(t, p, best.key)))
            out.append(Query(f"{name} {m}x{n}x{k}: {best.tile} is feasible",
                             beaten(t, p, best.key + 1), expect="sat"))
    return out


STEP_OFF = Mutant.edit("alignment off", "tn steps by 16, skipping odd multiples of 8",
                       candidates, "range(ln, hn + 1, t.mma[1])", "range(ln, hn + 1, 16)")
HALF_SRAM = Mutant.edit("half the shared memory", "candidates must fit half an SM's shared "
                        "memory", candidates, "<= t.sram_per_sm]", "<= t.sram_per_sm // 2]")
FLOORED_GRID = Mutant.edit("floored grid", "the grid drops the partial tile", grid,
                           "ceil_div(p.m, tile[0])", "max(p.m // tile[0], 1)")
FIRST_NOT_BEST = Mutant.edit("worst tile", "the search keeps the largest time",
                             tile_search, "best = min(ranked", "best = max(ranked")


@z3_obligation(
    "PO13.420",
    "On small spaces (6 problems x 3 targets, stages 1-8) z3 finds no tile within the bounds, "
    "aligned to the MMA, fitting shared memory (true footprint) with a roofline time below the "
    "search's best, and finds the best itself feasible: the exhaustive search equals z3's "
    "optimum.",
    covers=("symplex.tile_search",),
    subject=tile_search,
    mutants=(STEP_OFF, HALF_SRAM, FLOORED_GRID, FIRST_NOT_BEST),
)
def search_is_optimal(search):
    return _queries(search)


SEED_ERRATA = frozenset({"E13.400", "E13.401", "E13.402", "E13.403", "E13.404", "E13.405",
                         "E13.406"})


def _facts(_case) -> None:
    """The facts sheet's faithful results, and values worked out by hand."""
    for name, tile, count, speedup in (("h100", (16, 8, 64), 44, 0.362),
                                       ("b200", (16, 8, 64), 25, 0.633),
                                       ("generic", (16, 24, 16), 25, 0.588)):
        t = target(name, SEED_ERRATA)
        r = tile_search(t, Problem(4096, 4096, 4096, 2, t.stages), SEED_ERRATA)
        assert (r.best.tile, r.candidates, r.ranked) == (tile, count, 20), (name, r)
        assert round(r.speedup_vs_naive, 3) == speedup, (name, r.speedup_vs_naive)
    h100 = target("h100", SEED_ERRATA)
    costs = [tile_cost(h100, Problem(1, 1, 1), c, errata=SEED_ERRATA)
             for c in candidates(h100, Problem(1, 1, 1), SEED_ERRATA)]
    assert symplex_phases(h100, costs)[-1].tile == (16, 8, 64)  # 20th of 20
    assert round(tile_cost(h100, Problem(1, 1, 1), (16, 8, 64), errata=SEED_ERRATA).seconds
                 * 1e9, 3) == 0.845
    assert footprint((128, 128, 64), 2, 2) == 131072  # (8192 + 8192 + 16384) x 2 x 2
    assert footprint((16, 8, 16), 2, 3) == 3072  # (256 + 128 + 128) x 2 x 3
    assert footprint((64, 64, 64), 2, 2, SEED_ERRATA) == 3145728  # 3 x 64^3 x 2 x 2
    c = tile_cost(target("h100"), Problem(100, 300, 70), (64, 128, 32))
    assert (c.flops, c.bytes) == (2 * 128 * 384 * 96, 2 * 3 * (3 * (2048 + 4096) + 8192) * 2)
    assert target("h100").peak_flops == 989_400_000_000_000


@property_obligation(
    "PO13.421",
    "The cost model meets the facts sheet: SympleX's search gives (16, 8, 64) on H100 and B200 "
    "and (16, 24, 16) on Generic from 44, 25 and 25 candidates, 20 ranked, speedups 0.362, "
    "0.633, 0.588, (16, 8, 64) 20th of 20 at 0.845 ns; and hand-worked footprints, work and "
    "the H100 dense peak.",
    covers=("symplex.tile_search", "symplex.tile_cost", "symplex.target"),
    subject=footprint,
    mutants=(
        Mutant.edit("footprint without C", "the mn term is missing", footprint,
                    "+ tm * tn) * bpe", ") * bpe"),
        Mutant.edit("stages ignored", "one stage whatever the pipeline", footprint,
                    "* bpe * stages", "* bpe * 2"),
        Mutant.edit("volume halved", "SympleX's footprint counts two operands", footprint,
                    "3 * tm * tn * tk", "2 * tm * tn * tk"),
        Mutant.edit("21 ranked", "phase 3 ranks one more", symplex_phases,
                    "ranked[:PHASE3_KEEP]", "ranked[:PHASE3_KEEP + 1]"),
    ),
)
def cost_model_facts(_subject):
    return [Property("facts and hand-worked values", _facts, cases=lambda: [None])]


def _never_beaten(args: dict) -> None:
    t = target(args["target"])
    p = Problem(args["m"], args["n"], args["k"], 2, args["stages"])
    r = tile_search(t, p)
    lo_hi = tile_bounds(p, t.mma)
    tile = tuple(min(lo + s * args["steps"][i], hi) // s * s
                 for i, ((lo, hi), s) in enumerate(zip(lo_hi, t.mma, strict=True)))
    assert all(aligned(r.best.tile, t.mma)) and r.best.footprint <= t.sram_per_sm
    assert all(lo <= v <= hi for v, (lo, hi) in zip(r.best.tile, lo_hi, strict=True))
    if footprint(tile, 2, p.stages) <= t.sram_per_sm:
        assert rank_key(r.best) <= rank_key(tile_cost(t, p, tile)), (r.best, tile)
    assert r.speedup_vs_naive >= 1.0, r


@property_obligation(
    "PO13.422",
    "The search's best is aligned, within the bounds and fits; no drawn aligned fitting tile "
    "ranks before it; its speedup over the one-MMA tile is at least 1.",
    covers=("symplex.tile_search",),
    subject=tile_search,
    mutants=(FIRST_NOT_BEST, STEP_OFF,
             Mutant.edit("no shared-memory check", "every tile fits", candidates,
                         "if footprint(", "if 0 * footprint(")),
)
def best_is_never_beaten(_subject):
    strategy = st.fixed_dictionaries({
        "target": st.sampled_from(TARGETS), "m": st.integers(1, 600), "n": st.integers(1, 600),
        "k": st.integers(1, 600), "stages": st.integers(1, 8),
        "steps": st.lists(st.integers(0, 40), min_size=3, max_size=3)})
    return [Property("generated problems", _never_beaten, strategy=lambda: strategy,
                     examples=150)]
