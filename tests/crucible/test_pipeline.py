"""The background thread's pipeline: the seed's own runs (facts §27) reproduced, the numba path
equal to the reference on generated streams and on files, and the fast .crtrace loader equal
to the spec's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from crucible_spec.conformance.seed_runs import (
    MLP_FWD_OFFSETS,
    MLP_REV_OFFSETS,
    MLP_SLOTS,
    PIPELINE_RUNS,
    mlp_stream,
)
from crucible_spec.fast.core.trace_arrays import arrays_of
from crucible_spec.fast.core.trace_file import load_arrays
from crucible_spec.fast.numba.crucible.pipeline import run_arrays
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.crucible.crtrace import parse_crtrace, write_crtrace
from crucible_spec.spec.crucible.iteration_detector import K
from crucible_spec.spec.crucible.pipeline import (
    iteration_windows,
    recorded_of,
    run_pipeline,
    trace_of,
)
from crucible_spec.spec.crucible.pipeline_ops import pipeline_run, streams
from crucible_spec.spec.crucible.trace_build_ops import recorded_ops, trace_build

SEED = profile_errata("crucible@8d2680a2")


@pytest.mark.parametrize("name", sorted(PIPELINE_RUNS))
def test_the_seed_runs_are_reproduced_under_the_seed_profile(name):
    stream, expected = PIPELINE_RUNS[name]
    assert pipeline_run(stream(), [], SEED) == expected


def test_the_mlp_region_has_the_seed_slots_edges_and_offsets():
    region = mlp_stream()[10:20]
    got = trace_build(region, [], SEED)
    slots = [(s["is_external"], s["nbytes"], s["birth_op"], s["death_op"], s["offset_bytes"])
             for s in got["slots"]]
    assert slots == MLP_SLOTS
    assert got["fwd_offsets"] == MLP_FWD_OFFSETS
    assert got["rev_offsets"] == MLP_REV_OFFSETS
    assert got["pool_bytes"] == 768


def test_the_spec_gives_each_mlp_parameter_one_slot():
    got = pipeline_run(mlp_stream(), [], frozenset())
    assert got["regions"][0]["num_external"] == 5
    assert got["regions"][0]["content_hash"] == "0x54b300b4f0a5396f"


def test_windows_follow_the_boundaries_and_keep_k_ops():
    # A stream of period 7 fed 4 times: boundaries at the K-th op of iterations 3 and 4.
    found = [{"index": 18, "last_completed_len": 7}, {"index": 25, "last_completed_len": 7}]
    windows, retained = iteration_windows(found, 28)
    assert [(w.start, w.count) for w in windows] == [(7, 7), (14, 7)]
    assert retained == 28 - (25 + 1 - K)


def test_a_warm_up_before_the_signature_is_dropped():
    found = [{"index": 30, "last_completed_len": 7}]
    windows, _ = iteration_windows(found, 31)
    assert [(w.start, w.count) for w in windows] == [(19, 7)]


def _same_arrays(a, b) -> None:
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape and np.array_equal(x.astype(np.uint64), y.astype(np.uint64)), \
            name


@settings(max_examples=60)
@given(streams())
def test_the_fast_loader_reads_a_file_as_the_spec_does(args):
    data = write_crtrace(trace_of(recorded_ops(args["ops"])))
    fast, scope, callsite, _ = load_arrays(data)
    spec = parse_crtrace(data)
    _same_arrays(fast, arrays_of(recorded_of(spec)))
    assert scope.tolist() == spec.scope_hashes and callsite.tolist() == spec.callsite_hashes


@settings(max_examples=60)
@given(streams())
def test_numba_pipeline_over_a_file_equals_the_reference(args):
    recorded = recorded_ops(args["ops"])
    data = write_crtrace(trace_of(recorded))
    for errata in (frozenset(), SEED):
        spec = run_pipeline(recorded_of(parse_crtrace(data, errata)), None, errata)
        fast = run_arrays(load_arrays(data, errata)[0], errata)
        assert fast.boundaries == spec.boundaries and fast.retained == spec.retained
        assert [r.window for r in fast.regions] == [r.window for r in spec.regions]
        for f, s in zip(fast.regions, spec.regions, strict=True):
            assert f.built.content_hash == s.graph.content_hash
            assert f.pool_bytes == (s.plan.pool_bytes if s.plan else 0)
            assert f.offsets.tolist() == (s.plan.offsets if s.plan else [])


def test_a_window_of_the_arrays_is_the_arrays_of_the_window():
    recorded = recorded_ops(mlp_stream())
    whole = arrays_of(recorded)
    _same_arrays(whole.window(10, 10), arrays_of(recorded[10:20]))
