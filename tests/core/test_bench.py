"""`crucible-spec bench`: the reference splits are the references, kernels with a prepare step
are timed on their core, and small whole-trace rows check out against the reference."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crucible_spec import bench, load_all
from crucible_spec.engine import decode_args, run_reference
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY

load_all()

WHOLE_TRACE = ["detector.run", "trace.build", "dag.content_hash", "plan.compute"]


@pytest.mark.parametrize("name", sorted(bench.REFERENCE_SPLITS))
def test_a_split_reference_is_the_reference(name):
    op, split = REGISTRY.ops[name], bench.REFERENCE_SPLITS[name]
    edges = [decode_args(op, wire) for wire in (op.edges() if op.edges else [])]
    for args in [*op.bench(300, np.random.default_rng(1)), *edges]:
        try:
            want = op.result.encode(run_reference(op, args))
        except SpecError:  # an edge the spec refuses (pyc.alloc's negative step, E10.3)
            continue
        assert op.result.encode(split.finish(split.core(split.prepare(**args)))) == want


def test_best_of_stops_repeating_past_its_budget():
    calls = []
    bench.best_of(lambda: calls.append(1), repeat=5, budget=0.0)
    assert calls == [1]
    bench.best_of(lambda: calls.append(1), repeat=3, budget=float("inf"))
    assert len(calls) == 4


@pytest.mark.parametrize("name", WHOLE_TRACE)
def test_a_whole_trace_row_matches_the_reference(name):
    row = bench.bench_op(REGISTRY.ops[name], 300, ["numba"], ref_max=1000, repeat=1, seed=0)
    assert row.mismatch == [] and row.reference is not None and row.reference_e2e is not None
    assert row.reference <= row.reference_e2e
    assert set(row.kernel) == set(row.end_to_end) == {"numba"}
    assert ("numba" in row.core_only) == (name in ("trace.build", "plan.compute"))
    text = bench.render([row], ["numba"])
    assert "numba x ref" in text and "ref e2e" in text and "MISMATCH" not in text
    json.dumps(bench.as_json([row], {"numba": "cpu"}))


def test_the_reference_is_skipped_above_ref_max():
    row = bench.bench_op(REGISTRY.ops["plan.compute"], 50, ["numba"], ref_max=10, repeat=1,
                         seed=0)
    assert row.reference is None and row.speedup("numba") is None
    assert any("reference skipped" in n for n in row.notes)


def test_planner_quality_rows_compare_both_free_lists_with_the_bound():
    """On 2,000 scattered slots the spec's pool is within 25% of the live-bytes bound and the
    seed's (E10.1) is at least twice the spec's; the table and the JSON carry both."""
    (row,) = bench.plan_quality([2000], seed=0)
    assert row.n == 2000 and row.lower_bound > 0
    assert row.lower_bound <= row.spec_pool <= 1.25 * row.lower_bound
    assert row.seed_pool >= 2 * row.spec_pool
    assert row.spec_ratio == row.spec_pool / row.lower_bound
    text = bench.render_quality([row])
    assert "spec/bound" in text and "seed/bound" in text and f"{row.spec_ratio:.3f}" in text
    (q,) = bench.as_json([], {}, [row])["plan_quality"]
    assert q["spec_pool"] == row.spec_pool and q["seed_ratio"] == row.seed_ratio


def test_a_plan_bench_past_its_longest_trace_repeats_that_traces_slots(monkeypatch):
    from crucible_spec.spec.crucible import plan_ops

    monkeypatch.setattr(plan_ops, "PLAN_BENCH_OPS", 200)
    (block,) = plan_ops.plan_bench(200, np.random.default_rng(3))
    (long,) = plan_ops.plan_bench(450, np.random.default_rng(3))
    slots = block["slots"]
    internal = [s for s in slots if not s["is_external"]]
    copies = [dict(s, birth_op=s["birth_op"] + shift, death_op=s["death_op"] + shift)
              for shift in (200, 400) for s in internal if s["birth_op"] + shift < 450]
    assert long["slots"] == slots + copies
    assert any(s["birth_op"] >= 400 for s in long["slots"])
    assert sum(s["is_external"] for s in long["slots"]) == sum(s["is_external"] for s in slots)
