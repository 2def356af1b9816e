"""Skewing and tiling legality (dep.schedule): hand-worked nests through `serve`, the guard the
tile search runs, and bad schedules. Expected verdicts are worked by hand from each nest's
dependence distances."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import InvalidInput
from crucible_spec.spec.symplex.dependence import nest_from_wire
from crucible_spec.spec.symplex.schedule import matmul_tilable, require_tilable

load_all()


def _ask(args: dict) -> dict:
    impl = Implementation("reference", profile_errata("crucible"))
    return answer(json.dumps({"id": 1, "op": "dep.schedule", "args": args}), impl, "crucible")


def e(const: int = 0, **coeffs: int) -> dict:
    return {"coeffs": coeffs, "const": const}


def loop(var: str, lo=1, hi=4) -> dict:
    return {"var": var, "lo": lo, "hi": hi, "step": 1}


IJ = [loop("i"), loop("j")]
STENCIL = [{"array": "A", "kind": "write", "index": [e(i=1), e(j=1)], "stmt": 0},
           {"array": "A", "kind": "read", "index": [e(-1, i=1), e(1, j=1)], "stmt": 0}]
"""A[i][j] = A[i-1][j+1]: one flow dependence, distance (1, -1)."""
ROW = [{"array": "A", "kind": "write", "index": [e(i=1), e(j=1)], "stmt": 0},
       {"array": "A", "kind": "read", "index": [e(-1, i=1), e(j=1)], "stmt": 0}]
"""A[i][j] = A[i-1][j]: distance (1, 0)."""


def _skew(loop_: str, by: str, f: int) -> list:
    return [{"loop": loop_, "by": by, "factor": f}]


@pytest.mark.parametrize(("accesses", "skew", "tile", "verdict", "reason"), [
    (STENCIL, [], ["i", "j"], "illegal", "band"),      # (1, -1): a negative band component
    (STENCIL, _skew("j", "i", 1), ["i", "j"], "legal", "none"),   # (1, 0)
    (STENCIL, _skew("j", "i", 2), ["i", "j"], "legal", "none"),   # (1, 1)
    (STENCIL, _skew("i", "j", 1), [], "illegal", "order"),        # (0, -1): runs backward
    (STENCIL, _skew("i", "j", 2), ["i", "j"], "illegal", "order"),  # (1 - 2, -1) = (-1, -1)
    (STENCIL, [], ["j"], "legal", "none"),             # carried by i, outside the band
    (STENCIL, [], [], "legal", "none"),
    (ROW, [], ["i", "j"], "legal", "none"),
    (ROW, _skew("j", "i", -1), ["i", "j"], "illegal", "band"),    # (1, -1)
])
def test_hand_worked_schedules(accesses, skew, tile, verdict, reason):
    out = _ask({"loops": IJ, "accesses": accesses, "skew": skew, "tile": tile})["result"]
    assert (out["verdict"], out["reason"]) == (verdict, reason), out
    assert (out["violated"] is None) == (verdict == "legal")


def test_the_violated_dependence_is_named():
    out = _ask({"loops": IJ, "accesses": STENCIL, "skew": [], "tile": ["i", "j"]})["result"]
    assert out["violated"] == {"source": 0, "sink": 1, "kind": "flow", "direction": ["<", ">"],
                               "distance": [1, -1]}


def test_the_tile_search_guard():
    assert matmul_tilable() is True
    stencil = [{**a, "kind": ("read", "write").index(a["kind"])} for a in STENCIL]
    with pytest.raises(InvalidInput, match="not tilable"):
        require_tilable(nest_from_wire(IJ, stencil), (0, 1))


@pytest.mark.parametrize(("skew", "tile"), [
    (_skew("i", "i", 1), []), (_skew("j", "i", 65), []), ([], ["i", "q"]),
    ([], ["j", "i"]), (_skew("q", "i", 1), [])])
def test_bad_schedules_are_invalid(skew, tile):
    out = _ask({"loops": IJ, "accesses": ROW, "skew": skew, "tile": tile})
    assert out["error"]["code"] == "invalid_input"
