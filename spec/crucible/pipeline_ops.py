"""Op `pipeline.run`: a recorded stream in, what the background thread made of it out.

Args: ops (the wire form of `trace.build`, the whole stream) and optionally kernels. Result:
the stream index of every boundary, one summary per region (its window, content and Merkle
hash, edge, slot and external counts, pool size) and how many ops the current trace keeps.
"""

from __future__ import annotations

from typing import Any

from ..core.errata import NO_ERRATA
from ..core.registry import InvalidCase, declare
from ..core.schema import HASH64, U32, U64, Json, List, record
from ..core.strategies import st
from .iteration_detector import K
from .merkle_dag import chained
from .pipeline import PipelineRun, Region, Window, run_pipeline
from .trace_build_ops import (
    KERNELS_FIELD,
    OPS_FIELD,
    kernels_from_wire,
    recorded_ops,
    traces,
)


def region_summary(w: Window, content_hash: int, num_edges: int, num_slots: int,
                   num_external: int, pool_bytes: int) -> dict:
    """A region's summary: where it lies in the stream and what was built of it; its Merkle
    hash is its content hash chained to no continuation."""
    return {"boundary": w.boundary, "start": w.start, "num_ops": w.count,
            "content_hash": HASH64.encode(content_hash),
            "merkle_hash": HASH64.encode(chained(content_hash, None)), "num_edges": num_edges,
            "num_slots": num_slots, "num_external": num_external, "pool_bytes": pool_bytes}


def region_to_wire(r: Region) -> dict:
    g, p = r.graph, r.plan
    return region_summary(r.window, g.content_hash, len(g.edges), len(g.slots),
                          p.num_external if p else 0, p.pool_bytes if p else 0)


def run_to_wire(run: PipelineRun) -> dict:
    return {"boundaries": run.boundaries, "regions": [region_to_wire(r) for r in run.regions],
            "retained": run.retained}


def pipeline_run(ops: Any, kernels: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    return run_to_wire(run_pipeline(recorded_ops(ops), kernels_from_wire(kernels), errata))


@st.composite
def streams(draw) -> dict:
    """An optional warm-up, then one iteration repeated, then a partial one: iterations whose
    first ops carry distinct schema hashes (so the detector finds them) and share pointers."""
    body = draw(traces(max_ops=10))
    iteration = body["ops"]
    for k, op in enumerate(iteration):
        if k < K or draw(st.booleans()):
            op["schema_hash"] = hex(0x1000 + k)
    warmup = draw(traces(max_ops=4))["ops"]
    repeats = draw(st.integers(0, 4))
    tail = iteration[:draw(st.integers(0, len(iteration)))]
    return {"ops": warmup + iteration * repeats + tail, "kernels": body["kernels"]}


def _chain(iterations: int, tail: int) -> dict:
    """A linear chain of 8 ops, op i reading op i - 1's output, repeated, then `tail` ops."""
    ops = []
    for it in range(iterations + 1):
        for i in range(8 if it < iterations else tail):
            meta = {"ndim": 1, "sizes": [1024], "strides": [1], "dtype": 6, "device_idx": 0}
            ins = [meta | {"data_ptr": hex((it + 1) << 20 | i << 12)}] if i else []
            ops.append({"schema_hash": hex(0x100 + i), "shape_hash": hex(0x200 + i),
                        "inputs": ins,
                        "outputs": [meta | {"data_ptr": hex((it + 1) << 20 | (i + 1) << 12)}]})
    return {"ops": ops}


declare(
    "pipeline.run", chapter=6,
    summary="The background thread over a whole stream: boundaries, and each completed "
            "iteration built, planned and hashed into a region.",
    args=record(ops=OPS_FIELD, kernels=KERNELS_FIELD),
    result=record(boundaries=Json("[u32]", List(U32)), regions=Json("[region summary]", List(
                      record(boundary=U32, start=U32, num_ops=U32, content_hash=HASH64,
                             merkle_hash=HASH64, num_edges=U32, num_slots=U32, num_external=U32,
                             pool_bytes=U64))), retained=U32),
    spec=(run_pipeline,), domain=streams,
    errata=("E6.1", "E6.4", "E6.5", "E7.1", "E8.3", "E8.4", "E10.1"),
    not_applicable={"cupy": "detection and the pointer map are sequential over the stream"},
    invalid=(InvalidCase("ops that are not a list", lambda: st.just({"ops": {"0": {}}})),),
    edges=lambda: [{"ops": []}, _chain(2, K), _chain(4, 0), _chain(1, 7)],
)
