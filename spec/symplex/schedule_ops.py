"""Chapter 14: `dep.schedule` on the wire (spec/symplex/schedule.py states the algorithm): an
affine nest, skews and a band to tile; the verdict, the first dependence the schedule breaks
and how (order or band)."""

from __future__ import annotations

from ..core.errata import SEEDS, erratum
from ..core.registry import InvalidCase, declare
from ..core.schema import I64, Field, List, Optional, Utf8, record
from ..core.strategies import st
from ..pyc.wire import Named
from .dependence import MAX_DEPTH, nest_from_wire
from .dependence_ops import DEP, IJ, NEST_ARGS, ROW_RAW, SKEWED_RAW, VERDICTS, dep_to_wire, loop
from .dependence_ops import small_nests as nests
from .schedule import (
    MATMUL,
    REASONS,
    band_negative,
    lex_negative,
    schedule_from_wire,
    schedule_legal,
    skewed,
)

SKEW = record(loop=Field(Utf8(), "the loop skewed"), by=Field(Utf8(), "the loop it is skewed by"),
              factor=Field(I64, "the factor f: c_loop += f * c_by"))


def schedule_op(loops: list[dict], accesses: list[dict], skew: list[dict],
                tile: list[str]) -> dict:
    nest = nest_from_wire(loops, accesses)
    v = schedule_legal(nest, schedule_from_wire(nest, skew, tile))
    return {"verdict": VERDICTS.index(v.verdict),
            "violated": None if v.violated is None else dep_to_wire(v.violated),
            "reason": REASONS.index(v.reason)}


@st.composite
def schedule_args(draw) -> dict:
    """A small nest, up to two skews by factors in -2..2, and a band of its loops (or none)."""
    args = draw(nests(max_depth=3))
    names = [lp["var"] for lp in args["loops"]]
    skews = []
    if len(names) >= 2:
        for _ in range(draw(st.integers(0, 2))):
            j, i = draw(st.permutations(names))[:2]
            skews.append({"loop": j, "by": i, "factor": draw(st.integers(-2, 2))})
    first = draw(st.integers(0, len(names) - 1))
    last = draw(st.integers(first, len(names) - 1))
    tile = names[first:last + 1] if draw(st.integers(0, 4)) else []
    return args | {"skew": skews, "tile": tile}


def schedule_edges() -> list[dict]:
    both = ["i", "j"]
    skew_j = [{"loop": "j", "by": "i", "factor": 1}]
    skew_i = [{"loop": "i", "by": "j", "factor": 1}]
    return [{"loops": IJ, "accesses": SKEWED_RAW, "skew": [], "tile": both},
            {"loops": IJ, "accesses": SKEWED_RAW, "skew": skew_j, "tile": both},
            {"loops": IJ, "accesses": SKEWED_RAW, "skew": skew_i, "tile": []},
            {"loops": IJ, "accesses": SKEWED_RAW, "skew": [], "tile": ["j"]},
            {"loops": IJ, "accesses": ROW_RAW, "skew": [], "tile": both},
            {"loops": MATMUL["loops"], "accesses": [
                {**a, "kind": ("read", "write")[a["kind"]]} for a in MATMUL["accesses"]],
             "skew": [], "tile": ["i", "j", "k"]}]


def _bad(skew: list, tile: list) -> InvalidCase:
    what = f"skew {skew} and tile {tile}"
    return InvalidCase(what, lambda: st.just({"loops": IJ, "accesses": ROW_RAW, "skew": skew,
                                              "tile": tile}))


declare(
    "dep.schedule", chapter=14,
    summary="Whether skewing loops and tiling a band of an affine nest keeps every dependence "
            "in order, the band fully permutable, and the first dependence it would break.",
    args=record(**NEST_ARGS,
                skew=Field(List(SKEW, MAX_DEPTH), "skews, applied in order", []),
                tile=Field(List(Utf8(), MAX_DEPTH), "the band to tile, outermost first; empty: "
                                                    "no tiling", [])),
    result=record(verdict=Named(VERDICTS, "legality verdict"),
                  violated=Field(Optional(DEP, None), "the first dependence the schedule breaks"),
                  reason=Field(Named(REASONS, "what breaks"),
                               "order: the skewed nest reverses it; band: the band is not "
                               "fully permutable")),
    spec=(schedule_legal, skewed, lex_negative, band_negative, schedule_from_wire),
    domain=schedule_args, edges=schedule_edges,
    invalid=(_bad([{"loop": "i", "by": "i", "factor": 1}], []),
             _bad([{"loop": "j", "by": "i", "factor": 100}], []),
             _bad([], ["j", "q"]),
             InvalidCase("a band out of order", lambda: st.just(
                 {"loops": [*IJ, loop("k", 0, 2)], "accesses": ROW_RAW, "skew": [],
                  "tile": ["i", "k"]}))),
    not_applicable={"numba": "an integer-feasibility search per dependence: z3, not a numeric "
                             "kernel",
                    "cupy": "a handful of sequential solver queries per nest: nothing to spread "
                            "over a GPU"},
)

erratum(
    "E14.417", "The dependence analysis guards no fusion, rewrite or schedule choice",
    seed=SEEDS["symplex"],
    location="rust-engine/src/fusion_engine.rs (discover_with_egraph_ilp, speculative_handshake) "
             "and polyhedral.rs (optimize_trace_polyhedral_with_profile_and_guards)",
    ops=("dep.schedule", "symplex.fusion_select"),
    witness={"code": "the fusion engine's candidates and ILP selection never call polyhedral.rs; "
                     "speculative_handshake trusts a validator the caller passes; stage 3 of "
                     "the polyhedral pass applies its skew and its interchange of loops 0 and 1 "
                     "when it meets a '>' component, without testing either for legality",
             "documents": "fusion decisions are handed to the polyhedral engine, which checks "
                          "their legality and drops the illegal ones"},
    flag="doc",
    detail="The Banerjee and UTVPI analysis (spec/symplex/banerjee.py) only steers the loop "
           "trace's own transforms, and nothing tests those. The spec decides a schedule's "
           "legality exactly (dep.schedule) and the one schedule it chooses, the tile "
           "search's tiling, runs only once its band is shown tilable.",
)
