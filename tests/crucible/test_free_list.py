"""The memory planner's free list (chapter 10, erratum E10.1): the spec keeps every freed block,
merged with its free neighbours, so its pool stays near the live-bytes lower bound; the seed's
capped, unmerged list loses space without bound. Expected plans are worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from crucible_spec.engine import Implementation
from crucible_spec.fast.numba.crucible.memory_plan import plan_arrays
from crucible_spec.spec.core.errata import SEEDS, profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.memory_plan import (
    E10_1,
    PlanSlot,
    compute_memory_plan,
    live_lower_bound,
    scattered_slots,
)
from crucible_spec.spec.crucible.plan_validity import plan_violations

SEED = frozenset({E10_1})
TWO_HOLES = {"slots": [{"nbytes": 256, "birth_op": 0, "death_op": 0, "is_external": False},
                       {"nbytes": 256, "birth_op": 0, "death_op": 0, "is_external": False},
                       {"nbytes": 512, "birth_op": 2, "death_op": 2, "is_external": False}]}
"""Two 256-byte slots die at op 0; a 512-byte slot is born at op 2 and fits only their union."""


def _arrays(slots: list[PlanSlot]) -> list[np.ndarray]:
    return [np.array([getattr(s, f) for s in slots], dtype=t) for f, t in
            (("nbytes", np.uint64), ("birth_op", np.int64), ("death_op", np.int64),
             ("is_external", np.bool_))]


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_adjacent_holes_merge_for_a_larger_slot(impl):
    got = Implementation(impl).call("plan.compute", TWO_HOLES)
    assert (got["offsets"], got["pool_bytes"]) == ([0, 256, 0], 512)


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_the_seed_profile_keeps_the_unmerged_list(impl):
    errata = profile_errata(SEEDS["crucible"])
    assert E10_1 in errata
    got = Implementation(impl, errata).call("plan.compute", TWO_HOLES)
    assert (got["offsets"], got["pool_bytes"]) == ([0, 256, 512], 1024)


def test_the_erratum_names_its_witnesses():
    e = REGISTRY.errata[E10_1]
    assert e.seed == SEEDS["crucible"] and "plan.compute" in e.ops
    assert e.witness["args"] == TWO_HOLES
    assert {"plan.compute", "trace.build", "pipeline.run", "vigil.dispatch"} <= set(e.ops)
    for name in e.ops:
        assert E10_1 in REGISTRY.errata_for(name)


def test_large_witness_spec_stays_near_the_bound_and_the_seed_does_not():
    """100,000 scattered slots: the spec's pool is within 25% of the most bytes alive at
    once; the seed's is over a thousand times that. The erratum's figures reproduce."""
    large = REGISTRY.errata[E10_1].witness["large"]
    slots = scattered_slots(100_000, seed=1)
    bound = live_lower_bound(slots)
    _, spec_pool = plan_arrays(*_arrays(slots))
    _, seed_pool = plan_arrays(*_arrays(slots), SEED)
    assert spec_pool <= 1.25 * bound
    assert seed_pool >= 1000 * bound
    assert (bound, spec_pool, seed_pool) == (large["live_lower_bound"],
                                            large["spec_pool_bytes"],
                                            large["seed_pool_bytes"])


@pytest.mark.parametrize("errata", [frozenset(), SEED], ids=["crucible", "E10.1"])
def test_numba_follows_the_spec_on_scattered_slots(errata):
    slots = scattered_slots(10_000, seed=7)
    offsets, pool = plan_arrays(*_arrays(slots), errata)
    plan = compute_memory_plan(slots, errata)
    assert (offsets.tolist(), pool) == (plan.offsets, plan.pool_bytes)


@pytest.mark.parametrize("errata", [frozenset(), SEED], ids=["crucible", "E10.1"])
def test_scattered_plans_are_valid(errata):
    slots = scattered_slots(400, seed=3, max_nbytes=4096, max_span=8)
    assert plan_violations(slots, compute_memory_plan(slots, errata)) == []


def test_no_freed_block_is_dropped_past_4096():
    """5,000 holes that never touch (a live slot after each), then 5,000 newborns of the same
    size: the spec reuses every hole; the seed loses the 904 past its cap."""
    n = 5000
    slots = [PlanSlot(256, 0, 0), PlanSlot(256, 0, 3)] * n + [PlanSlot(256, 2, 2)] * n
    assert compute_memory_plan(slots).pool_bytes == 2 * n * 256
    assert compute_memory_plan(slots, SEED).pool_bytes == (2 * n + n - 4096) * 256
