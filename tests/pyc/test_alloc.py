"""PyC's allocator with the values measured by running PyC at fdf1563 (facts sheet §1.4)."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata

load_all()


def _req(tid, size, start, end, alignment=64):
    return {"tensor_id": tid, "size": size, "alignment": alignment, "start_step": start,
            "end_step": end}


A_B_C = [_req(0, 128, 0, 2), _req(1, 64, 3, 4), _req(2, 256, 1, 3)]


def _alloc(args, impl="reference", profile="crucible"):
    req = json.dumps({"id": 1, "op": "pyc.alloc", "args": args})
    return answer(req, Implementation(impl, profile_errata(profile)), profile)


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("mode,peak,tensors,remat", [
    ("memory_first", 256, 3, 159), ("balanced", 299, 1, 85), ("utilization_first", 384, 0, 0)])
def test_the_facts_sheets_three_requests(impl, mode, peak, tensors, remat):
    got = _alloc({"requests": A_B_C, "mode": mode, "budget": 256}, impl)["result"]
    assert got["offsets"] == [0, 0, 128] and got["peak_bytes"] == peak
    assert (got["reused"], got["allocation_events"], got["overlap_pairs"]) == (1, 2, 2)
    assert (got["pressure_events"], got["remat_tensors"], got["remat_bytes"]) == \
        (1, tensors, remat)


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_a_reused_offset_keeps_its_alignment_only_in_the_spec(impl):
    reqs = [_req(0, 3, 0, 0, 1), _req(1, 5, 0, 0, 1), _req(2, 4, 1, 1, 4)]
    args = {"requests": reqs, "mode": "balanced", "budget": 0}
    assert _alloc(args, impl)["result"]["offsets"] == [0, 3, 8]
    assert _alloc(args, impl, "pyc@fdf1563")["result"]["offsets"] == [0, 3, 3]


@pytest.mark.parametrize("args,field", [
    ({"requests": [_req(0, 0, 0, 0)], "mode": "balanced", "budget": 0}, "requests[0].size"),
    ({"requests": [_req(0, 8, 3, 2)], "mode": "balanced", "budget": 0}, "requests[0].end_step"),
    ({"requests": [], "mode": "fastest", "budget": 0}, "mode"),
    ({"requests": [_req(0, "8", 0, 1)], "mode": "balanced", "budget": 0}, "requests"),
    ({"requests": [_req(0, -8, 0, 1)], "mode": "balanced", "budget": 0}, "requests"),
    ({"requests": [_req(0, 8, -1, 1)], "mode": "balanced", "budget": 0}, "requests"),
    ({"requests": [_req(0, (1 << 63) - 1, 0, 0), _req(1, (1 << 63) - 1, 0, 0),
                   _req(2, 2, 0, 0)], "mode": "balanced", "budget": 0}, "requests"),
    ({"requests": [], "mode": 3, "budget": 0}, "mode"),
    ({"requests": [], "mode": "balanced", "budget": -1}, "budget"),
])
def test_bad_requests_name_the_field(args, field):
    error = _alloc(args)["error"]
    assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]


def test_no_budget_means_no_pressure():
    got = _alloc({"requests": A_B_C, "mode": "memory_first", "budget": 0})["result"]
    assert got["peak_bytes"] == 384 and got["pressure_events"] == 0


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_rematerialization_moves_no_offset(impl):
    # c ends at 128 + 256 = 384 bytes while MEMORY_FIRST reports a peak of 256.
    got = _alloc({"requests": A_B_C, "mode": "memory_first", "budget": 256}, impl)["result"]
    assert got["offsets"][2] + 256 == 384 and got["peak_bytes"] == 256


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_alignment_zero_means_one_and_touching_lifetimes_overlap(impl):
    reqs = [_req(0, 3, 0, 1, 0), _req(1, 3, 1, 2, 0), _req(2, 3, 2, 2, 0)]
    got = _alloc({"requests": reqs, "mode": "balanced", "budget": 0}, impl)["result"]
    assert got["offsets"] == [0, 3, 0] and got["peak_bytes"] == 6
    assert (got["reused"], got["allocation_events"], got["overlap_pairs"]) == (1, 2, 2)


# The answers below are PyC's own: its allocator at fdf1563, called through its C API.

@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("profile", ["crucible", "pyc@fdf1563"])
def test_a_request_that_relieves_nothing_is_never_rematerialized(impl, profile):
    reqs = [_req(0, 1, 0, 3, 1), _req(1, 1, 0, 3, 1), _req(2, 4, 0, 1, 1)]
    got = _alloc({"requests": reqs, "mode": "memory_first", "budget": 2}, impl, profile)
    assert got["result"] == {"offsets": [0, 1, 2], "peak_bytes": 4, "reused": 0,
                             "allocation_events": 3, "overlap_pairs": 3, "pressure_events": 1,
                             "remat_tensors": 1, "remat_bytes": 2}


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_a_negative_step_is_planned_only_by_pyc(impl):
    args = {"requests": [_req(0, 8, -2, 0), _req(1, 8, 1, 2)], "mode": "balanced", "budget": 0}
    assert _alloc(args, impl)["error"]["code"] == "invalid_input"
    got = _alloc(args, impl, "pyc@fdf1563")["result"]
    assert (got["offsets"], got["peak_bytes"], got["reused"]) == ([0, 0], 8, 1)


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_sizes_past_two_to_the_64_wrap_only_in_pyc(impl):
    big = (1 << 63) - 1
    args = {"requests": [_req(0, big, 0, 0), _req(1, big, 0, 0), _req(2, 2, 0, 0)],
            "mode": "balanced", "budget": 0}
    assert _alloc(args, impl)["error"]["code"] == "invalid_input"
    got = _alloc(args, impl, "pyc@fdf1563")["result"]
    assert (got["offsets"], got["peak_bytes"]) == ([0, 1 << 63, 0], 2)
    assert (got["reused"], got["allocation_events"], got["overlap_pairs"]) == (0, 3, 3)
