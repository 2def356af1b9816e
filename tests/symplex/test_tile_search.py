"""SympleX's hardware targets and tile search (facts sheet §2.5, §2.6) through `serve`: the
faithful (16, 8, 64) on H100, the peak erratum, the spec's roofline search, z3 against brute
force on a small space, bad input and the numba tile-cost kernel. Expected values are the
facts sheet's or worked out by hand."""

from __future__ import annotations

import json
import struct

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation, decode_args, run_reference
from crucible_spec.proofs.symplex.tile_search import SMALL, beaten
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.symplex.hardware_target import target
from crucible_spec.spec.symplex.tile_search import Problem, tile_search

load_all()
SEED = "symplex@1.0.0"


def _ask(op: str, args: dict, profile: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, profile)


def _f(hexbits: str) -> float:
    return struct.unpack("<d", struct.pack("<Q", int(hexbits, 16)))[0]


def _search(profile="crucible", **kw) -> dict:
    args = {"target": "h100", "m": 4096, "n": 4096, "k": 4096} | kw
    return _ask("symplex.tile_search", args, profile)["result"]


@pytest.mark.parametrize("name,tile,count,speedup", [
    ("h100", [16, 8, 64], 44, 0.362), ("b200", [16, 8, 64], 25, 0.633),
    ("generic", [16, 24, 16], 25, 0.588)])
def test_faithful_search_reproduces_the_facts(name, tile, count, speedup):
    r = _search(SEED, target=name)
    assert (r["tile"], r["candidates_evaluated"], r["ranked"]) == (tile, count, 20)
    assert round(_f(r["speedup_vs_naive"]), 3) == speedup


def test_faithful_h100_latency_and_problem_blindness():
    r = _search(SEED)
    assert round(_f(r["predicted_seconds"]) * 1e9, 3) == 0.845
    assert (r["flops"], r["bytes_moved"]) == (2 * 16 * 8 * 64, (1024 + 512 + 128) * 2)
    assert _search(SEED, m=3, n=5, k=7)["tile"] == [16, 8, 64]  # E13.402


def test_h100_peak_erratum():
    spec = _ask("symplex.target", {"name": "h100"})["result"]
    seed = _ask("symplex.target", {"name": "h100"}, SEED)["result"]
    assert _f(spec["peak_flops"]) == 989.4e12
    assert _f(seed["peak_flops"]) == 132 * 4 * 2048 * 2 * 1.83e9  # 3957.7 TFLOPS
    assert round(_f(seed["ridge"]), 1) == 1181.4
    assert (spec["sms"], spec["sram_per_sm"], _f(spec["hbm_bytes_per_s"])) == \
        (132, 228 * 1024, 3.35e12)
    b200 = _ask("symplex.target", {"name": "b200"}, SEED)["result"]
    assert round(_f(b200["peak_flops"]) / 1e12, 1) == 19188.9


def test_spec_search_on_h100_4096_cube():
    r = _search()
    assert r["tile"] == [192, 256, 16]
    assert r["footprint_bytes"] == (192 * 16 + 16 * 256 + 192 * 256) * 2 * 2
    grid = (4096 // 192 + 1) * (4096 // 256)  # 22 x 16 output tiles, 256 K steps
    assert r["bytes_moved"] == grid * (256 * (192 * 16 + 16 * 256) + 192 * 256) * 2
    assert r["flops"] == 2 * (22 * 192) * 4096 * 4096
    assert _f(r["predicted_seconds"]) == r["bytes_moved"] / 3.35e12
    assert r["bound"] == "memory" and _f(r["speedup_vs_naive"]) > 1


def test_true_footprint_and_stages():
    cost = _ask("symplex.tile_cost", {"target": "h100", "m": 64, "n": 64, "k": 64,
                                      "tile": [64, 64, 64], "stages": 3})["result"]
    assert cost["footprint_bytes"] == 3 * 4096 * 2 * 3 and cost["fits"] and cost["aligned"]
    odd = _ask("symplex.tile_cost", {"target": "h100", "m": 64, "n": 64, "k": 64,
                                     "tile": [20, 8, 16]})["result"]
    assert not odd["aligned"]
    seed = _ask("symplex.tile_cost", {"target": "h100", "m": 64, "n": 64, "k": 64,
                                      "tile": [64, 64, 64]}, SEED)["result"]
    assert (seed["footprint_bytes"], seed["fits"]) == (3 * 64 ** 3 * 2 * 2, False)


def test_small_space_brute_force_by_hand():
    """16 x 16 x 16 on H100: tiles (16, 8 or 16, 16); (16, 16, 16) moves one A, B and C tile
    (3 x 256 x 2 bytes) against (16, 8, 16)'s two grid columns of 256 + 128 + 128 elements."""
    r = _search(m=16, n=16, k=16)
    assert (r["tile"], r["candidates_evaluated"], r["bytes_moved"]) == \
        ([16, 16, 16], 2, 3 * 256 * 2)


def test_z3_equals_brute_force():
    t = target("h100")
    m, n, k, stages = SMALL[2]
    p = Problem(m, n, k, 2, stages)
    best = tile_search(t, p).best
    s = z3.Solver()
    s.add(beaten(t, p, best.key))
    assert s.check() == z3.unsat


@pytest.mark.parametrize("bad,field", [({"m": 0}, "args.m"), ({"k": "64"}, "args.k"),
                                       ({"n": 10**30}, "args.n"), ({"n": 2**20 + 1}, "args.n"),
                                       ({"target": "a100"}, "args.target"),
                                       ({"stages": 9}, "args.stages")])
def test_bad_input_names_the_field(bad, field):
    args = {"target": "h100", "m": 64, "n": 64, "k": 64} | bad
    for op, extra in (("symplex.tile_search", {}), ("symplex.tile_cost", {"tile": [16, 8, 16]})):
        err = _ask(op, args | extra)["error"]
        code = "bad_request" if isinstance(bad.get("k"), str) else "invalid_input"
        assert err["code"] == code and err["message"].startswith(field), err


@settings(max_examples=60, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_numba_tile_cost_matches_the_reference(data):
    op = REGISTRY.ops["symplex.tile_cost"]
    drawn = data.draw(st.lists(op.domain(), min_size=1, max_size=8))
    items = [decode_args(op, op.args.encode(a)) for a in drawn]
    want = [op.result.encode(run_reference(op, a)) for a in items]
    got = [op.result.encode(r) for r in Implementation("numba").run_batch(op, items)]
    assert got == want
