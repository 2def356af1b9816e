"""Chapter 14: the dependence ops on the wire (spec/symplex/dependence.py states the algorithm).

1. `dep.analyze {loops, accesses}`: every dependence with its kind, direction vector and
   constant distances, and whether z3 decided every pair ("exact") or not ("unknown").
2. `dep.legal {loops, accesses, transform}`: {"interchange": [u, v]} or {"fuse": s}; the
   verdict (legal, illegal, unknown) and the first dependence the transform would reverse.
"""

from __future__ import annotations

from ..core import shapes as js
from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import I64, U32, Field, Json, List, Optional, Utf8, record
from ..core.strategies import st
from ..pyc.wire import Named
from .banerjee import pair_independent
from .dependence import (
    DIRS,
    KINDS,
    MAX_ACCESSES,
    MAX_COEFF,
    MAX_DEPTH,
    READ,
    WRITE,
    Analysis,
    Dependence,
    Legality,
    Nest,
    analyze,
    fusion_legal,
    interchange_legal,
    interchange_verdict,
    lex_sign,
    nest_from_wire,
    permuted,
    runs_before,
)

_COEFF = js.integer(-MAX_COEFF, MAX_COEFF)
AFFINE = js.one_of(_COEFF, js.obj(optional={"coeffs": js.mapping(_COEFF), "const": _COEFF}))
"""An affine expression: an integer, or {coeffs: {var: int}, const: int}."""
LOOP = record(var=Field(Utf8(), "the loop variable"),
              lo=Field(Json("affine", AFFINE), "first value, affine in outer loop variables"),
              hi=Field(Json("affine", AFFINE), "last value (inclusive), affine likewise"),
              step=Field(I64, "increment, 1 to 2^31", 1))
ACCESS = record(array=Field(Utf8(), "the array's name"),
                kind=Field(Named(("read", "write"), "access kind"), "read or write"),
                index=Field(Json("[affine]", js.array(AFFINE, MAX_DEPTH, 1)),
                            "one affine subscript per dimension, over the loop variables"),
                stmt=Field(U32, "the statement's position in the body", 0))
DEP = record(source=Field(U32, "the access that runs first"),
             sink=Field(U32, "the access that runs second"),
             kind=Named(KINDS, "dependence kind"),
             direction=Field(List(Named(DIRS, "direction"), MAX_DEPTH),
                             "per loop, the sign of sink minus source iteration"),
             distance=Field(List(Optional(I64, 0), MAX_DEPTH),
                            "per loop, the constant distance, or null"))
TRANSFORM = js.one_of(js.obj({"interchange": js.array(js.STRING, 2, 2)}),
                      js.obj({"fuse": js.integer(0, 2**32 - 1)}))
OUTCOMES = ("exact", "unknown")
VERDICTS = ("legal", "illegal", "unknown")
NEST_ARGS = {"loops": Field(List(LOOP, MAX_DEPTH), "outermost first"),
             "accesses": Field(List(ACCESS, MAX_ACCESSES), "every array access of the body")}


def dep_to_wire(d: Dependence) -> dict:
    return {"source": d.source, "sink": d.sink, "kind": KINDS.index(d.kind),
            "direction": [DIRS.index(c) for c in d.direction], "distance": list(d.distance)}


def analysis_to_wire(a: Analysis) -> dict:
    return {"outcome": OUTCOMES.index(a.outcome),
            "dependences": [dep_to_wire(d) for d in a.dependences],
            "undecided": [{"source": s, "sink": t} for s, t in a.undecided]}


def legality_to_wire(r: Legality) -> dict:
    return {"verdict": VERDICTS.index(r.verdict),
            "violated": None if r.violated is None else dep_to_wire(r.violated)}


E14_405, E14_406 = "E14.405", "E14.406"
SEED_ERRATA = frozenset({E14_405, E14_406})
"""The errata by which SympleX's stage 3 reports fewer dependences than the nest has."""


def seed_view(nest: Nest, result: Analysis, errata: frozenset[str]) -> Analysis:
    """The dependences SympleX reports: under E14.405 none of an access with itself, under
    E14.406 none of a pair its test calls independent (spec/symplex/banerjee.py)."""
    def missed(d: Dependence) -> bool:
        if d.source == d.sink:
            return E14_405 in errata
        return E14_406 in errata and pair_independent(nest, d.source, d.sink)
    return Analysis(result.outcome, tuple(d for d in result.dependences if not missed(d)),
                    result.undecided)


def analyze_op(loops: list[dict], accesses: list[dict],
               errata: frozenset[str] = NO_ERRATA) -> dict:
    nest = nest_from_wire(loops, accesses)
    return analysis_to_wire(seed_view(nest, analyze(nest), errata))


def legal_op(loops: list[dict], accesses: list[dict], transform: dict,
             errata: frozenset[str] = NO_ERRATA) -> dict:
    nest = nest_from_wire(loops, accesses)
    names = [lp.var for lp in nest.loops]
    if not isinstance(transform, dict) or len(transform) != 1:
        raise InvalidInput("args.transform: one of {interchange: [u, v]} or {fuse: stmt}")
    if "interchange" in transform:
        pair = transform["interchange"]
        if not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1] or \
                any(v not in names for v in pair):
            raise InvalidInput(f"args.transform.interchange: two distinct loop variables "
                               f"of {names}")
        if errata & SEED_ERRATA:
            return legality_to_wire(interchange_verdict(nest, seed_view(nest, analyze(nest),
                                                                        errata), *pair))
        return legality_to_wire(interchange_legal(nest, *pair))
    split = transform.get("fuse")
    stmts = [a.stmt for a in nest.accesses]
    if isinstance(split, bool) or not isinstance(split, int) or \
            not any(s < split for s in stmts) or not any(s >= split for s in stmts):
        raise InvalidInput("args.transform.fuse: the first statement of the second nest; "
                           "both nests need an access")
    return legality_to_wire(fusion_legal(nest, split))


# ── hand-picked and generated nests ──────────────────────────────────────────────────────────

def aff(const: int = 0, **coeffs: int) -> dict:
    """The wire affine expression."""
    return {"coeffs": coeffs, "const": const}


def loop(var: str, lo=0, hi=3, step: int = 1) -> dict:
    return {"var": var, "lo": lo, "hi": hi, "step": step}


def acc(array: str, kind: str, index: list, stmt: int = 0) -> dict:
    return {"array": array, "kind": kind, "index": index, "stmt": stmt}


IJ = [loop("i", 1, 4), loop("j", 1, 4)]
SKEWED_RAW = [acc("A", "write", [aff(i=1), aff(j=1)]),
              acc("A", "read", [aff(-1, i=1), aff(1, j=1)])]
"""A[i][j] = A[i-1][j+1]: a flow dependence (<, >) that interchange would reverse."""
ROW_RAW = [acc("A", "write", [aff(i=1), aff(j=1)]), acc("A", "read", [aff(-1, i=1), aff(j=1)])]
"""A[i][j] = A[i-1][j]: direction (<, =), interchange keeps it."""
EVEN_ODD = [acc("A", "write", [aff(i=2)]), acc("A", "read", [aff(1, i=2)])]
"""A[2i] = A[2i+1]: never the same element."""
FUSE_OK = [acc("A", "write", [aff(i=1)], 0), acc("A", "read", [aff(-1, i=1)], 1)]
"""for i: A[i] = ...; for i: ... = A[i-1]: fused, each read still follows its write."""
FUSE_BAD = [acc("A", "write", [aff(i=1)], 0), acc("A", "read", [aff(1, i=1)], 1)]
"""for i: A[i] = ...; for i: ... = A[i+1]: fused, A[i+1] is read before it is written."""


def dep_edges() -> list[dict]:
    tri = [loop("i", 0, 4), loop("j", aff(i=1), 4)]
    return [{"loops": IJ, "accesses": SKEWED_RAW}, {"loops": IJ, "accesses": ROW_RAW},
            {"loops": [loop("i", 0, 7)], "accesses": EVEN_ODD},
            {"loops": tri, "accesses": [acc("B", "write", [aff(i=1, j=1)]),
                                        acc("B", "read", [aff(j=1)])]},
            {"loops": [loop("i", 0, 9, 3)], "accesses": [acc("C", "write", [aff(i=1)]),
                                                        acc("C", "read", [aff(-2, i=1)])]},
            {"loops": [loop("i", 0, 3)], "accesses": FUSE_BAD},
            {"loops": [loop("i", 0, 3)], "accesses": [acc("A", "write", [aff(i=1)]),
                                                     acc("A", "read", [aff(i=1)])]}]


def legal_edges() -> list[dict]:
    inter = {"interchange": ["i", "j"]}
    one = [loop("i", 0, 5)]
    return [{"loops": IJ, "accesses": SKEWED_RAW, "transform": inter},
            {"loops": IJ, "accesses": ROW_RAW, "transform": inter},
            {"loops": one, "accesses": FUSE_OK, "transform": {"fuse": 1}},
            {"loops": one, "accesses": FUSE_BAD, "transform": {"fuse": 1}}]


@st.composite
def small_nests(draw, max_depth: int = 3, hi: int = 4) -> dict:
    """Nests of 1-3 loops with small bounds (some triangular, some stepped) and 1-4 accesses
    to one- or two-dimensional arrays with coefficients in -2..2 (decoded: kinds as ordinals)."""
    names = ["i", "j", "k"][:draw(st.integers(1, max_depth))]
    loops = []
    for n, v in enumerate(names):
        lo = draw(st.integers(0, 2))
        if n and draw(st.booleans()):
            lo = aff(draw(st.integers(-1, 1)), **{names[n - 1]: 1})
        loops.append(loop(v, lo, draw(st.integers(0, hi)), draw(st.sampled_from([1, 1, 1, 2]))))
    coef = st.integers(-2, 2)

    def index(dims: int) -> list:
        return [aff(draw(st.integers(-2, 2)), **{v: draw(coef) for v in names})
                for _ in range(dims)]

    arrays = {"A": draw(st.integers(1, 2)), "B": 1}
    accs = [{"array": a, "kind": draw(st.sampled_from([READ, WRITE])), "index": index(arrays[a]),
             "stmt": draw(st.integers(0, 1))}
            for a in draw(st.lists(st.sampled_from(["A", "A", "B"]), min_size=1, max_size=4))]
    return {"loops": loops, "accesses": accs}


@st.composite
def legal_args(draw) -> dict:
    args = draw(small_nests(max_depth=3))
    names = [lp["var"] for lp in args["loops"]]
    stmts = sorted({a["stmt"] for a in args["accesses"]})
    if len(names) >= 2 and (len(stmts) < 2 or draw(st.booleans())):
        transform = {"interchange": draw(st.permutations(names))[:2]}
    elif len(stmts) >= 2:
        transform = {"fuse": stmts[-1]}
    else:
        args["loops"].append(loop("z", 0, 1))
        transform = {"interchange": [names[0], "z"]}
    return args | {"transform": transform}


_BAD = (InvalidCase("nine loops", lambda: st.just(
            {"loops": [loop(f"v{k}") for k in range(9)], "accesses": []})),
        InvalidCase("a coefficient of 2^31 + 1", lambda: st.just(
            {"loops": [loop("i")], "accesses": [acc("A", "read", [aff(i=2**31 + 1)])]})),
        InvalidCase("a bound over an inner loop", lambda: st.just(
            {"loops": [loop("i", 0, aff(j=1)), loop("j")], "accesses": []})),
        InvalidCase("a step of 0", lambda: st.just(
            {"loops": [loop("i", 0, 3, 0)], "accesses": []})))

declare(
    "dep.analyze", chapter=14,
    summary="Every dependence of an affine loop nest (flow, anti, output) with its direction "
            "vector and constant distances, decided exactly by z3 integer feasibility.",
    args=record(**NEST_ARGS),
    result=record(outcome=Field(Named(OUTCOMES, "analysis outcome"),
                                "exact, or unknown when z3 ran out of resources on a pair"),
                  dependences=List(DEP),
                  undecided=Field(List(record(source=U32, sink=U32)),
                                  "the pairs z3 could not decide")),
    spec=(analyze, nest_from_wire, runs_before, lex_sign), errata=(E14_405, E14_406),
    domain=small_nests, edges=dep_edges,
    invalid=_BAD,
    not_applicable={"numba": "an integer-feasibility search per pair of accesses: z3, not a "
                             "numeric kernel",
                    "cupy": "a handful of sequential solver queries per nest: nothing to spread "
                            "over a device"},
)

declare(
    "dep.legal", chapter=14,
    summary="Whether interchanging two loops or fusing two nests keeps every dependence "
            "lexicographically positive, and the first one it would reverse.",
    args=record(**NEST_ARGS,
                transform=Field(Json("{interchange: [u, v]} | {fuse: stmt}", TRANSFORM),
                                "the loops to swap, or the first statement of the second nest")),
    result=record(verdict=Named(VERDICTS, "legality verdict"),
                  violated=Field(Optional(DEP, None), "a dependence the transform reverses")),
    spec=(interchange_legal, interchange_verdict, fusion_legal, permuted, lex_sign),
    errata=(E14_405, E14_406),
    domain=legal_args,
    edges=legal_edges,
    invalid=(InvalidCase("nine loops", lambda: st.just(
                 {"loops": [loop(f"v{k}") for k in range(9)], "accesses": [],
                  "transform": {"interchange": ["v0", "v1"]}})),
             InvalidCase("interchange of an unknown loop", lambda: st.just(
                 {"loops": IJ, "accesses": ROW_RAW, "transform": {"interchange": ["i", "q"]}})),
             InvalidCase("fusion with an empty second nest", lambda: st.just(
                 {"loops": IJ, "accesses": ROW_RAW, "transform": {"fuse": 1}}))),
    not_applicable={"numba": "an integer-feasibility search per pair of accesses: z3, not a "
                             "numeric kernel",
                    "cupy": "a handful of sequential solver queries per nest: nothing to spread "
                            "over a device"},
)

_STAGE3 = "rust-engine/src/polyhedral.rs, optimize_trace_polyhedral_with_profile_and_guards stage 3"
_ONE_LOOP = [loop("i", 0, 3)]
_IJ4 = [loop("i", 0, 3), loop("j", 0, 3)]
erratum(
    E14_405, "SympleX never tests an access against itself",
    seed=SEEDS["symplex"], location=f"{_STAGE3}: pairs (i, j) with j > i only",
    ops=("dep.analyze", "dep.legal"),
    witness={"args": {"loops": _ONE_LOOP, "accesses": [acc("A", "write", [0])]},
             "spec": {"outcome": "exact", "dependences": [
                 {"source": 0, "sink": 0, "kind": "output", "direction": ["<"],
                  "distance": [None]}], "undecided": []},
             "seed": {"outcome": "exact", "dependences": [], "undecided": []}},
    also=({"op": "dep.legal",
           "args": {"loops": _IJ4, "accesses": [acc("A", "write", [aff(i=1, j=1)])],
                    "transform": {"interchange": ["i", "j"]}},
           "spec": {"verdict": "illegal", "violated": {
               "source": 0, "sink": 0, "kind": "output", "direction": ["<", ">"],
               "distance": [None, None]}},
           "seed": {"verdict": "legal", "violated": None}},),
    flag="result",
    detail="Stage 3 pairs every access with the accesses after it and runs the test on each "
           "pair, never on one access at two iterations: a write to A[0] in every iteration, "
           "or to A[i + j], carries an output dependence SympleX does not see, so an "
           "interchange that reverses it looks legal.",
)
erratum(
    E14_406, "SympleX's dependence test calls dependent pairs independent",
    seed=SEEDS["symplex"], location="rust-engine/src/polyhedral.rs, "
                                    "analyze_dependency_multivariate",
    ops=("dep.analyze", "dep.legal"),
    witness={"args": {"loops": _ONE_LOOP,
                      "accesses": [acc("A", "write", [aff(1, i=2)]),
                                   acc("A", "read", [aff(i=1)])]},
             "spec": {"outcome": "exact", "dependences": [
                 {"source": 0, "sink": 1, "kind": "flow", "direction": ["<"],
                  "distance": [None]}], "undecided": []},
             "seed": {"outcome": "exact", "dependences": [], "undecided": []}},
    also=({"op": "dep.legal",
           "args": {"loops": _IJ4,
                    "accesses": [acc("A", "write", [aff(1, i=2), aff(j=1)]),
                                 acc("A", "read", [aff(i=1), aff(1, j=1)])],
                    "transform": {"interchange": ["i", "j"]}},
           "spec": {"verdict": "illegal", "violated": {
               "source": 0, "sink": 1, "kind": "flow", "direction": ["<", ">"],
               "distance": [None, -1]}},
           "seed": {"verdict": "legal", "violated": None}},),
    flag="result",
    detail="The test subtracts the two subscripts coefficient by coefficient, as if both "
           "accesses ran at one iteration, and solves the difference over the loop's box "
           "(0..1024 for every loop, whatever the nest's bounds): A[2i + 1] against A[i] "
           "leaves i = -1, outside the box, so the pair is called independent although "
           "A[1] is written at i = 0 and read at i = 1. Its GCD, interval and two-variable "
           "steps then only cut further (spec/symplex/banerjee.py restates the test). "
           "Uniform pairs (equal coefficients) are tested soundly.",
)
