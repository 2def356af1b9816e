"""numba path for `pipeline.run`: the detector kernel over the schema hashes, the spec's window
bookkeeping, then the build and plan kernels over each iteration's slice of the arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...spec.build_trace import E6_5, slot_caps
from ...spec.iteration_detector import E7_1
from ...spec.pipeline import Window, iteration_windows
from ...spec.pipeline_ops import region_summary
from ...spec.registry import kernel
from ...spec.trace_build_ops import recorded_ops
from ..trace_arrays import TraceArrays, arrays_of
from .build_trace import Built, build_arrays
from .iteration_detector import boundaries_of
from .memory_plan import plan_arrays


@dataclass
class FastRegion:
    """One region as arrays: its window, what the build kernel made, the planned offsets."""

    window: Window
    built: Built
    offsets: np.ndarray
    pool_bytes: int

    @property
    def num_external(self) -> int:
        return int(self.built.slots[:, 3].sum())


@dataclass
class FastRun:
    boundaries: list[int]
    regions: list[FastRegion]
    skipped: list[Window]
    retained: int


def run_arrays(a: TraceArrays, errata: frozenset[str] = frozenset(),
               progress=None) -> FastRun:
    """The pipeline over a whole trace in arrays; `progress(done_ops, total_ops)` after each
    region."""
    idx, lens, _, _ = boundaries_of(a.schema, errata)
    found = [{"index": i, "last_completed_len": n} for i, n in
             zip(idx.tolist(), lens.tolist(), strict=True)]
    windows, retained = iteration_windows(found, a.schema.size)
    run = FastRun(idx.tolist(), [], [], retained)
    scratch = 0
    for w in windows:
        part = a.window(w.start, w.count)
        if ((part.meta_start < 0) & (part.n_in + part.n_out > 0)).any():
            run.skipped.append(w)
            continue
        cap, scratch = slot_caps(int(part.n_in.sum()), int(part.n_out.sum()), scratch)
        built = build_arrays(part, errata, cap if E6_5 in errata else -1)
        s = built.slots
        offsets, pool = plan_arrays(s[:, 0].astype(np.uint64), s[:, 1], s[:, 2],
                                    s[:, 3].astype(np.bool_), errata)
        run.regions.append(FastRegion(w, built, offsets, pool if s.shape[0] else 0))
        if progress:
            progress(w.start + w.count, a.schema.size)
    return run


def region_wire(r: FastRegion) -> dict:
    b = r.built
    return region_summary(r.window, b.content_hash, int(b.edges.shape[0]),
                          int(b.slots.shape[0]), r.num_external, r.pool_bytes)


@kernel("pipeline.run", "numba", models=("E6.1", "E6.4", E6_5, E7_1, "E8.3", "E8.4",
                                        "E10.1"))
def pipeline_batch(ops, kernels, errata: frozenset[str] = frozenset()):
    rows = []
    for wire_ops in ops:
        run = run_arrays(arrays_of(recorded_ops(wire_ops)), errata)
        rows.append({"boundaries": run.boundaries,
                     "regions": [region_wire(r) for r in run.regions],
                     "retained": run.retained})
    return {k: [r[k] for r in rows] for k in ("boundaries", "regions", "retained")}

