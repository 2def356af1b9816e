"""Chapter 14 obligations of skewing and tiling legality: the band condition is exactly the
one under which every tiling keeps every dependence in order (PO14.460), skewing by an outer
loop keeps every dependence in order and by an inner one need not (PO14.461), and dep.schedule
answers as enumeration of every pair of iterations does (PO14.462)."""

from __future__ import annotations

import itertools

from ...spec.core.lazy_z3 import z3
from ...spec.core.registry import Mutant
from ...spec.symplex.dependence_ops import nest_from_wire
from ...spec.symplex.schedule import (
    Skew,
    band_negative,
    lex_negative,
    schedule_from_wire,
    schedule_legal,
    skewed,
)
from ...spec.symplex.schedule_ops import schedule_args, schedule_edges
from ..core.obligation import Property, Query, property_obligation, z3_obligation
from .dependence import BOUND_OFF_BY_ONE, _before, _decoded, dependent_pairs

DEPTH = 3
BANDS = [(b, e) for b in range(DEPTH) for e in range(b, DEPTH)]


def _lex_positive(d: list):
    return z3.And(z3.Not(lex_negative(d)), z3.Or([x != 0 for x in d]))


def _tiled(c: list, q: list, band: tuple[int, int]) -> list:
    """The tiled nest's order: loops before the band, the band's tile indices, its points,
    the loops after it."""
    b, e = band
    return [*c[:b], *q, *c[b:e + 1], *c[e + 1:]]


def _monotone(dc, dq) -> list:
    """A tile index map that never decreases: equal points share a tile, a later point is never
    in an earlier tile (floor(c / T) for any T >= 1, and any other such map)."""
    return [z3.Implies(dc >= 0, dq >= 0), z3.Implies(dc <= 0, dq <= 0)]


@z3_obligation(
    "PO14.460",
    "For every band of a 3-deep nest and every dependence distance D that runs forward "
    "(lexicographically positive): if band_negative(D) is false, every rectangular tiling "
    "(any non-decreasing tile index map, floor(c / T) for any T >= 1 among them) keeps D "
    "forward; if it is true, the tiling that splits only the first negative band loop "
    "reverses D.",
    covers=("dep.schedule",), subject=band_negative,
    mutants=(
        Mutant.edit("first band loop only", "only the band's first loop is checked",
                    band_negative, "range(first, last + 1)", "range(first, first + 1)"),
        Mutant.edit("carried outside ignored", "a dependence carried by an outer loop also "
                    "blocks the band", band_negative, "*[x == 0 for x in d[:first]], ", ""),
        Mutant.edit("last band loop dropped", "the band's last loop is not checked",
                    band_negative, "range(first, last + 1)", "range(first, last)"),
    ),
)
def tiling_band(negative):
    out = []
    for band in BANDS:
        b, e = band
        d = [z3.Int(f"d{k}") for k in range(DEPTH)]
        dq = [z3.Int(f"q{k}") for k in range(b, e + 1)]
        mono = [c for k in range(b, e + 1) for c in _monotone(d[k], dq[k - b])]
        sound = z3.And(_lex_positive(d), z3.Not(negative(d, band)), *mono,
                       z3.Not(_lex_positive(_tiled(d, dq, band))))
        splits = [z3.And(z3.And(*[d[j] >= 0 for j in range(b, m)]), d[m] < 0,
                         lex_negative(_tiled(d, [d[m] if k == m else 0 for k in range(b, e + 1)],
                                             band)))
                  for m in range(b, e + 1)]
        complete = z3.And(_lex_positive(d), negative(d, band), z3.Not(z3.Or(splits)))
        out += [Query(f"band {band}: a legal band some tiling reverses", sound),
                Query(f"band {band}: an illegal band no split reverses", complete)]
    return out


@z3_obligation(
    "PO14.461",
    "Skewing loop j by an outer loop i (i before j) with a factor in -3..3 keeps every forward "
    "distance of a 3-deep nest forward; skewing an outer loop by an inner one can reverse one "
    "(a witness for each pair and factor +-1).",
    covers=("dep.schedule",), subject=skewed,
    mutants=(
        Mutant.edit("skews the other loop", "c_by += f * c_loop", skewed,
                    "c[s.loop] = c[s.loop] + s.factor * c[s.by]",
                    "c[s.by] = c[s.by] + s.factor * c[s.loop]"),
        Mutant.edit("lex by any component", "a distance is backward when any component is "
                    "below 0", lex_negative, "z3.And(*[x == 0 for x in d[:k]], d[k] < 0)",
                    "d[k] < 0"),
    ),
)
def skew_order(skew):
    out = []
    d = [z3.Int(f"d{k}") for k in range(DEPTH)]
    for i, j in itertools.permutations(range(DEPTH), 2):
        for f in (-3, -2, -1, 1, 2, 3) if i < j else (-1, 1):
            moved = skew(d, (Skew(j, i, f),))
            bad = z3.And(_lex_positive(d), lex_negative(moved))
            out.append(Query(f"skew {j} by {i}, f = {f}", bad,
                             expect="unsat" if i < j else "sat"))
    return out


def _brute(args: dict) -> tuple[bool, bool]:
    """(order kept, band permutable) by enumeration of every dependent pair."""
    nest = nest_from_wire(args["loops"], args["accesses"])
    names = [lp.var for lp in nest.loops]
    skews = [(names.index(s["loop"]), names.index(s["by"]), s["factor"]) for s in args["skew"]]
    band = [names.index(v) for v in args["tile"]]

    def coords(p: tuple) -> list:
        c = list(p)
        for j, i, f in skews:
            c[j] += f * c[i]
        return c

    order = permutable = True
    for s, t, x, y in dependent_pairs(nest):
        if not _before(nest, s, t, x, y):
            continue
        d = [b - a for a, b in zip(coords(x), coords(y), strict=True)]
        first = next((v for v in d if v), 0)
        order &= first >= 0
        if band and not any(d[:band[0]]):
            permutable &= all(d[m] >= 0 for m in band)
    return order, permutable


def _exact(args: dict) -> None:
    nest = nest_from_wire(args["loops"], args["accesses"])
    got = schedule_legal(nest, schedule_from_wire(nest, args["skew"], args["tile"]))
    order, permutable = _brute(args)
    want = "legal" if order and permutable else "illegal"
    assert got.verdict == want, (got, order, permutable)
    assert got.reason == ("none" if want == "legal" else "order" if not order else "band") or \
        (not order and not permutable), got


@property_obligation(
    "PO14.462",
    "dep.schedule is exact: on the edges and on generated nests (1-3 loops, bounds up to 4) "
    "with up to two skews and a band, its verdict is legal iff enumerating every dependent "
    "pair of iterations finds none the skewed nest runs backward and none that breaks the "
    "band's full permutability; an illegal verdict names the step that fails.",
    covers=("dep.schedule",), subject=schedule_legal,
    mutants=(
        Mutant.edit("band's end dropped", "the band is its first loop", schedule_from_wire,
                    "(band[0], band[-1])", "(band[0], band[0])"),
        Mutant.edit("band never checked", "tiling is taken as always legal", schedule_legal,
                    "if schedule.band is not None:", "if False:"),
        Mutant.edit("skew subtracts", "c_loop -= f * c_by", skewed,
                    "c[s.loop] + s.factor * c[s.by]", "c[s.loop] - s.factor * c[s.by]"),
        BOUND_OFF_BY_ONE,
    ),
)
def schedule_exact(_subject):
    return [Property("the edges", _exact, cases=lambda: _decoded("dep.schedule", schedule_edges)),
            Property("generated nests and schedules", _exact, strategy=schedule_args,
                     examples=60)]

