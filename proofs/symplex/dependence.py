"""Chapter 14 obligations of dependence legality: z3's dependence test is exact on small nests
(PO14.440), a transform is legal iff it keeps every dependent pair of iterations in order
(PO14.441), and the restatement of SympleX's test is the shipped one and is conservative on
uniform pairs only (PO14.442). The oracle is brute-force enumeration of iteration pairs."""

from __future__ import annotations

import itertools

from ...spec.core.registry import REGISTRY, Mutant
from ...spec.symplex.banerjee import (
    pair_independent,
    subscript_independent,
    system_rows,
    uniform_independent,
)
from ...spec.symplex.dependence import (
    READ,
    WRITE,
    Access,
    Affine,
    Nest,
    PairSolver,
    analyze,
    dependence_kind,
    direction_constraint,
    fusion_legal,
    interchange_legal,
    interchange_verdict,
    iteration_space,
    runs_before,
)
from ...spec.symplex.dependence_ops import (
    dep_edges,
    legal_args,
    legal_edges,
    nest_from_wire,
    small_nests,
)
from ..core.obligation import Property, property_obligation

DRAWS = 150


def value(e: Affine, env: dict) -> int:
    return e.const + sum(c * env[v] for v, c in e.coeffs)


def iterations(nest: Nest) -> list[tuple[int, ...]]:
    """Every iteration vector, in execution (lexicographic) order."""
    out: list[tuple[int, ...]] = []

    def walk(k: int, env: dict, point: tuple[int, ...]) -> None:
        if k == len(nest.loops):
            out.append(point)
            return
        lp = nest.loops[k]
        for v in range(value(lp.lo, env), value(lp.hi, env) + 1, lp.step):
            walk(k + 1, {**env, lp.var: v}, (*point, v))

    walk(0, {}, ())
    return out


def dependent_pairs(nest: Nest):
    """(s, t, x, y) for every access s at x and t at y that touch one element, one of them a
    write (s before t in no particular order)."""
    names = [lp.var for lp in nest.loops]
    points = iterations(nest)
    for s, a in enumerate(nest.accesses):
        for t, b in enumerate(nest.accesses):
            if _kind(a, b) is None:
                continue
            for x, y in itertools.product(points, repeat=2):
                ex, ey = dict(zip(names, x, strict=True)), dict(zip(names, y, strict=True))
                if [value(e, ex) for e in a.index] == [value(e, ey) for e in b.index]:
                    yield s, t, x, y


def _before(nest: Nest, s: int, t: int, x: tuple, y: tuple) -> bool:
    """Access s at x runs before access t at y: an earlier iteration, or in one iteration an
    earlier statement, or in one statement the read before the write."""
    a, b = nest.accesses[s], nest.accesses[t]
    return x < y or (x == y and (a.stmt < b.stmt or
                                 (a.stmt == b.stmt and a.kind == READ and b.kind == WRITE)))


def _kind(a: Access, b: Access) -> str | None:
    """flow, anti or output; None for two reads or two arrays."""
    if a.array != b.array or a.kind == b.kind == READ:
        return None
    return {(WRITE, READ): "flow", (READ, WRITE): "anti"}.get((a.kind, b.kind), "output")


def _sign(d: int) -> str:
    return "<" if d > 0 else "=" if d == 0 else ">"


def brute_dependences(nest: Nest) -> dict:
    """{(source, sink, kind, direction): set of distance vectors} by enumeration."""
    out: dict = {}
    for s, t, x, y in dependent_pairs(nest):
        a, b = nest.accesses[s], nest.accesses[t]
        if _before(nest, s, t, x, y):
            dist = tuple(q - p for p, q in zip(x, y, strict=True))
            key = (s, t, _kind(a, b), tuple(_sign(d) for d in dist))
            out.setdefault(key, set()).add(dist)
    return out


def _exact(args: dict) -> None:
    nest = nest_from_wire(args["loops"], args["accesses"])
    got = analyze(nest)
    want = brute_dependences(nest)
    assert got.outcome == "exact", got
    assert {(d.source, d.sink, d.kind, d.direction) for d in got.dependences} == set(want), \
        (got, sorted(want))
    for d in got.dependences:
        dists = want[(d.source, d.sink, d.kind, d.direction)]
        const = tuple(next(iter({v[k] for v in dists})) if len({v[k] for v in dists}) == 1
                      else None for k in range(len(nest.loops)))
        assert d.distance == const, (d, dists)


def _brute_legal(nest: Nest, transform: dict) -> bool:
    if "interchange" in transform:
        names = [lp.var for lp in nest.loops]
        i, j = (names.index(v) for v in transform["interchange"])
        order = list(range(len(names)))
        order[i], order[j] = j, i
        return not any(_before(nest, s, t, x, y) and
                       tuple(y[k] for k in order) < tuple(x[k] for k in order)
                       for s, t, x, y in dependent_pairs(nest))
    split = transform["fuse"]
    return not any(nest.accesses[s].stmt < split <= nest.accesses[t].stmt and y < x
                   for s, t, x, y in dependent_pairs(nest))


def _legal(args: dict) -> None:
    nest = nest_from_wire(args["loops"], args["accesses"])
    tr = args["transform"]
    got = interchange_legal(nest, *tr["interchange"]) if "interchange" in tr else \
        fusion_legal(nest, tr["fuse"])
    want = _brute_legal(nest, tr)
    assert got.verdict == ("legal" if want else "illegal"), (got, want)
    assert (got.violated is None) == want, got


def _uniform(nest: Nest, s: int, t: int) -> bool:
    """Both accesses have one coefficient vector in every subscript."""
    a, b = nest.accesses[s], nest.accesses[t]
    return all(dict(x.coeffs) == dict(y.coeffs) for x, y in zip(a.index, b.index, strict=True))


def _conservative_on_uniform(args: dict) -> None:
    nest = nest_from_wire(args["loops"], args["accesses"])
    for d in analyze(nest).dependences:
        if d.source != d.sink and _uniform(nest, d.source, d.sink):
            assert not pair_independent(nest, d.source, d.sink), d


SEED_ANSWERS = (
    ([-2, 2], [3, 1], 4, 4, False), ([-1, 1], [1, -1], -5, -5, False),
    ([1, 3, 3], [2, 3, -3], -2, -2, False), ([-3, 1], [1, -1], -4, -4, False),
    ([-2, 0], [2, -3], 1389, -2229, True), ([0, -3, -2], [-3, 1, 3], 433, -1819, True),
    ([-3, 1, -1], [1, 3, 2], 1764, 1679, True), ([-2, -1, -3], [1, 2, -3], 3, -3, True),
    ([-2], [2], -6, 3, True), ([-1, -2], [3, -2], -3, -5, True), ([1], [-3], -1213, -646, True),
    ([2], [-2], 1067, -2340, True), ([1, -3], [1, -2], 552, 425, False),
    ([-2], [-3], -6, 3, False), ([-1, 2], [0, 2], 782, -89, False),
    ([0, -3], [0, 2], -1439, -2449, False), ([-1, 1, 0], [-1, 2, 0], -2401, -2033, True),
    ([-3, 3], [-3, -1], 2440, -2468, True), ([-1, -3], [-2, -3], 5, -2, True),
    ([2], [1], 6, 2, True), ([2], [2], 1734, 2580, False), ([0], [0], -4, 0, False),
    ([-1, 2, 0], [-1, 2, 0], -4, -5, False), ([-1], [-1], 5, -2, False),
    ([-2], [-2], -6, 1, True), ([-2], [-2], -2200, 1159, True), ([-3], [-3], -2676, -1513, True),
    ([-3], [-3], 0, 2, True), ([4, -2], [1, 3], -1, -2, True),
    ([0, -2, -4], [1, 1, 1], -1867, 94, True), ([-4], [-3], 1024, 0, False),
)
"""(src coefficients, dst coefficients, src constant, dst constant, independent) as the real
analyze_dependency_multivariate of symplex@1.0.0 answered them, compiled from the sdist, with
the pipeline's box (0, 1024) per loop: a uniform, GCD, one-loop and two-variable verdict of
each kind."""


def _seed_answer(case: tuple) -> None:
    src, dst, c_src, c_dst, independent = case
    assert subscript_independent(src, dst, c_src, c_dst) is independent, case


def _decoded(op: str, edges) -> list[dict]:
    """The op's hand-picked wire args as its records decode them (kinds as ordinals)."""
    return [REGISTRY.ops[op].args.decode(args, "args") for args in edges()]


BOUND_OFF_BY_ONE = Mutant.edit("exclusive upper bound", "hi is taken as exclusive",
                               iteration_space, "x <= term(lp.hi, env)", "x < term(lp.hi, env)")


@property_obligation(
    "PO14.440",
    "dep.analyze is exact: on generated nests of 1-3 loops (bounds up to 4, some triangular, "
    "some stepped) with 1-4 accesses, its dependences (source, sink, kind, direction vector) "
    "are exactly those found by enumerating every pair of iterations, and a distance "
    "component is given iff every such pair of that vector has the same one.",
    covers=("dep.analyze",),
    subject=analyze,
    mutants=(
        Mutant.edit("wrong direction sign", "'<' read as the sink's iteration below the "
                    "source's", direction_constraint, 'y > x if d == "<"',
                    'y < x if d == "<"'),
        BOUND_OFF_BY_ONE,
        Mutant.edit("step ignored", "a stepped loop runs every integer", iteration_space,
                    "if lp.step > 1:", "if False:"),
        Mutant.edit("write before reads", "a statement's write runs before its reads",
                    runs_before, "(a.stmt, a.kind) < (b.stmt, b.kind)",
                    "(a.stmt, -a.kind) < (b.stmt, -b.kind)"),
        Mutant.edit("output read as anti", "two writes are labelled an anti dependence",
                    dependence_kind, "KINDS[1] if a.kind == READ", "KINDS[1] if a.kind == WRITE"),
        Mutant.edit("any distance is constant", "one pair's distance is reported as constant",
                    PairSolver.distance,
                    "out.append(d if r == z3.unsat else None)", "out.append(d)"),
    ),
)
def analysis_is_exact(_subject):
    return [Property("the edges", _exact, cases=lambda: _decoded("dep.analyze", dep_edges)),
            Property("generated small nests", _exact, strategy=small_nests, examples=DRAWS)]


@property_obligation(
    "PO14.441",
    "dep.legal's verdict is legal iff the transform keeps every dependent pair of iterations "
    "in order: an interchange iff no dependence's permuted iteration pair runs sink first, a "
    "fusion iff no second-nest access at y meets a first-nest access at x with y before x; "
    "an illegal verdict names a dependence. On the edges and generated nests and transforms.",
    covers=("dep.legal",),
    subject=interchange_legal,
    mutants=(
        Mutant.edit("interchange ignores '='", "only the permuted vector's first component is "
                    "read", interchange_verdict, 'if lex_sign(permuted(dep.direction, '
                    'tuple(order))) == ">":', 'if permuted(dep.direction, tuple(order))[0] == '
                    '">":'),
        Mutant.edit("wrong direction sign", "a permuted vector starting '<' is the reversed "
                    "one", interchange_verdict, 'tuple(order))) == ">"',
                    'tuple(order))) == "<"'),
        Mutant.edit("fusion forbids equal iterations", "a same-iteration pair blocks fusion",
                    fusion_legal, 'lambda p: lex_sign(p) == ">"', 'lambda p: lex_sign(p) != "<"'),
        BOUND_OFF_BY_ONE,
    ),
)
def legality_is_order(_subject):
    return [Property("the edges", _legal, cases=lambda: _decoded("dep.legal", legal_edges)),
            Property("generated nests and transforms", _legal, strategy=legal_args,
                     examples=DRAWS)]


@property_obligation(
    "PO14.442",
    "The restatement of SympleX's test (spec/symplex/banerjee.py) answers as the shipped "
    "analyze_dependency_multivariate does on pinned pairs of every kind, and it is "
    "conservative on uniform pairs: on generated nests it never calls two accesses with one "
    "coefficient vector independent where z3 finds a dependence between them (other pairs: "
    "E14.406).",
    covers=("dep.analyze",),
    subject=subscript_independent,
    mutants=(
        Mutant.edit("gcd of the sum", "a uniform pair's gcd taken over the summed "
                    "coefficients", uniform_independent, "math.gcd(g, math.gcd(s, d))",
                    "math.gcd(g, s + d)"),
        Mutant.edit("uniform pairs by their constants", "a uniform pair with two constants "
                    "is independent", uniform_independent, "return g > 1 and target % g != 0",
                    "return target != 0"),
        Mutant.edit("box one short", "the pipeline's box taken as 0..1023",
                    subscript_independent, "[box[1]] * len(cs)", "[box[1] - 1] * len(cs)"),
        Mutant.edit("upper pair rows only", "each pair of coefficients bounds its sum from "
                    "above only", system_rows, "rows += [(si, i, sj, j, rem), (-si, i, -sj, j, "
                    "rem2)]", "rows += [(si, i, sj, j, rem)]"),
        Mutant.edit("lower pair rows only", "each pair of coefficients bounds its sum from "
                    "below only", system_rows, "rows += [(si, i, sj, j, rem), (-si, i, -sj, j, "
                    "rem2)]", "rows += [(-si, i, -sj, j, rem2)]"),
    ),
)
def symplex_restated(_subject):
    return [Property("the shipped test's answers", _seed_answer, cases=lambda: SEED_ANSWERS),
            Property("generated small nests, uniform pairs", _conservative_on_uniform,
                     strategy=small_nests, examples=3 * DRAWS)]
