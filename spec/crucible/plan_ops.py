"""Ops `plan.compute` and `plan.greedy_by_size` (chapter 10): slots in, the spec's memory plan
(spec/crucible/memory_plan.py states it) or the greedy comparison plan out, and erratum E10.1."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from ...synthetic import synthetic_trace
from ...synthetic_bench import SHAPE, bench_seed
from ..core import shapes as js
from ..core.errata import erratum
from ..core.layout_ops import wire_schema
from ..core.registry import InvalidCase, declare
from ..core.schema import U32, U64, Field, Json, List, record
from ..core.strategies import st
from .build_trace import build_trace
from .memory_plan import (
    E10_1,
    MAX_DEATH,
    SLOT_FIELDS,
    compute_memory_plan,
    greedy_by_size,
    live_lower_bound,
    slot_sets,
)
from .pipeline import plan_slots_of, recorded_of

PLAN_BENCH_OPS = 100_000
"""The longest trace plan.compute's bench builds; past it the trace's slots are repeated, so
inputs of millions of slots take seconds and a few hundred MB to make, not a trace of
millions of ops."""


def plan_bench(n: int, rng: np.random.Generator) -> list[dict]:
    """The slots build_trace makes of an n-op trace with fresh storages. Past PLAN_BENCH_OPS
    ops: those of a PLAN_BENCH_OPS-op trace, then its internal slots again, each copy that
    many ops later, as long as they are born before op n."""
    block = min(n, PLAN_BENCH_OPS)
    t = synthetic_trace(block, SHAPE, bench_seed(rng), fresh_storages=True)
    slots = [asdict(s) for s in plan_slots_of(build_trace(recorded_of(t)))]
    internal = [s for s in slots if not s["is_external"]]
    for shift in range(block, n, block):
        slots += [s | {"birth_op": s["birth_op"] + shift, "death_op": s["death_op"] + shift}
                  for s in internal if s["birth_op"] + shift < n]
    return [{"slots": slots}]


SLOTS = js.array(js.obj(
    {k: wire_schema(SLOT_FIELDS[k]) for k in ("nbytes", "birth_op", "death_op")},
    {k: wire_schema(SLOT_FIELDS[k]) for k in ("is_external", "device_type", "device_idx")}))
"""What `plan_slots` accepts (the lifetime rule is its own)."""
_SLOTS = Field(Json("[{nbytes, birth_op, death_op, is_external}]", SLOTS), "slots in index order")
_SEQUENTIAL = "the sweep is sequential: each op's placements depend on the free list so far"

declare(
    "plan.compute", chapter=10,
    summary="The memory plan: a 256-aligned pool offset per internal slot, and the pool size.",
    args=record(slots=_SLOTS),
    result=record(offsets=Json("[u64]", List(U64)), pool_bytes=U64, num_slots=U32,
                  num_external=U32),
    spec=(compute_memory_plan,), domain=slot_sets, bench=plan_bench, errata=(E10_1,),
    not_applicable={"cupy": _SEQUENTIAL},
    invalid=(InvalidCase("an internal slot that dies before it is born", lambda: st.just(
        {"slots": [{"nbytes": 8, "birth_op": 3, "death_op": 2, "is_external": False}]})),),
    edges=lambda: [{"slots": []},
                   {"slots": [{"nbytes": 9, "birth_op": 0, "death_op": 0, "is_external": True}]},
                   {"slots": [{"nbytes": 0, "birth_op": 0, "death_op": MAX_DEATH}]}],
)

declare(
    "plan.greedy_by_size", chapter=10,
    summary="Extension, not the spec's planner: greedy largest-first placement, and the "
            "live-bytes lower bound, for comparing plan quality.",
    args=record(slots=_SLOTS),
    result=record(offsets=Json("[u64]", List(U64)), pool_bytes=U64, lower_bound=U64),
    spec=(greedy_by_size, live_lower_bound), domain=slot_sets,
    not_applicable={"cupy": _SEQUENTIAL,
                    "numba": "an extension for comparing plan quality, on no hot path"},
)

_SMALL = [{"nbytes": 256, "birth_op": 0, "death_op": 0, "is_external": False},
          {"nbytes": 256, "birth_op": 0, "death_op": 0, "is_external": False},
          {"nbytes": 512, "birth_op": 2, "death_op": 2, "is_external": False}]

def _tensor(ptr: int, numel: int) -> dict:
    return {"data_ptr": hex(ptr), "dtype": 6, "ndim": 1, "sizes": [numel], "strides": [1]}


_SMALL_TRACE = [{"schema_hash": "0x1", "outputs": [_tensor(0x1000, 64), _tensor(0x2000, 64)]},
                {"schema_hash": "0x2", "inputs": [_tensor(0x1000, 64), _tensor(0x2000, 64)]},
                {"schema_hash": "0x3", "outputs": [_tensor(0x3000, 128)]},
                {"schema_hash": "0x4", "inputs": [_tensor(0x3000, 128)]}]
"""The small witness as a trace: two 256-byte float tensors last read at op 1, then a
512-byte one made at op 2 (the merged hole fits it; the seed's two holes do not)."""


erratum(
    E10_1, "The free list drops blocks past 4096 entries and never merges neighbours",
    seed="crucible@8d2680a2", location="include/crucible/BackgroundThread.h compute_memory_plan",
    ops=("plan.compute", "trace.build", "pipeline.run", "vigil.dispatch"),
    witness={"args": {"slots": _SMALL},
             "spec": {"offsets": [0, 256, 0], "pool_bytes": 512},
             "seed": {"offsets": [0, 256, 512], "pool_bytes": 1024},
             "large": {"slots": "memory_plan.scattered_slots(100000, seed=1)",
                       "live_lower_bound": 34_267_392, "spec_pool_bytes": 39_813_120,
                       "seed_pool_bytes": 39_639_049_472}},
    also=({"op": "trace.build", "args": {"ops": _SMALL_TRACE},
           "spec": {"pool_bytes": 512}, "seed": {"pool_bytes": 1024}},),
    flag="result",
    detail="The pool is meant to make running out of memory structurally impossible: the plan "
           "should need little more than the most bytes alive at once. The seed's free list "
           "is unordered, holds at most 4096 entries (a block freed past that is lost for the "
           "rest of the sweep) and never merges a freed block with its free neighbours, so "
           "two adjacent 256-byte holes never serve a 512-byte slot. The loss has no bound: "
           "on scattered_slots(100000, seed=1) the seed plans 39.6 GB for 34.3 MB alive at "
           "once (1157x); the spec plans 39.8 MB (1.16x). The spec keeps every freed block in "
           "address order, merged with the blocks at both its ends, and places a newborn at "
           "the lowest block that fits, else grows the block that ends the pool, else the end "
           "of the pool.",
)
