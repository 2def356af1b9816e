"""numba path for `pipeline.run`: the detector kernel over the schema hashes, the spec's window
bookkeeping, then one regions_into call that builds and plans every iteration's window."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....spec.core.registry import kernel
from ....spec.crucible.build_trace import E6_1, E6_4, E6_5, slot_caps
from ....spec.crucible.content_hash import E8_3
from ....spec.crucible.iteration_detector import E7_1
from ....spec.crucible.memory_plan import E10_1
from ....spec.crucible.pipeline import Window, iteration_windows
from ....spec.crucible.pipeline_ops import region_summary
from ...core.trace_arrays import TraceArrays, arrays_of
from ...core.wire_structs import decoded_ops
from .build_trace import DIMMIX, Built
from .free_tree import new_tree
from .iteration_detector import boundaries_of
from .regions import regions_into


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


def built_windows(a: TraceArrays, windows: list[Window], errata: frozenset[str]
                  ) -> tuple[list[Window], list[Window], list[int]]:
    """The windows to build, the skipped ones (an op with tensors but no MetaLog entry), and
    each built one's E6.5 slot cap (-1 without E6.5), the scratch buffer carried along."""
    bad = np.zeros(a.schema.size + 1, dtype=np.int64)
    np.cumsum((a.meta_start < 0) & (a.n_in + a.n_out > 0), out=bad[1:])
    ins, outs = (np.concatenate(([0], np.cumsum(x))) for x in (a.n_in, a.n_out))
    built, skipped, caps, scratch = [], [], [], 0
    for w in windows:
        stop = w.start + w.count
        if bad[stop] > bad[w.start]:
            skipped.append(w)
            continue
        cap, scratch = slot_caps(int(ins[stop] - ins[w.start]), int(outs[stop] - outs[w.start]),
                                 scratch)
        built.append(w)
        caps.append(cap if E6_5 in errata else -1)
    return built, skipped, caps


def build_regions(a: TraceArrays, windows: list[Window], caps: list[int],
                  errata: frozenset[str]) -> list[FastRegion]:
    """Every window built and planned in one regions_into call, sliced back into regions."""
    m = a.ptr.size
    meta_trace, meta_slot, offsets = (np.zeros(m, dtype=t) for t in (np.int64, np.int64,
                                                                     np.uint64))
    edges, slots = np.zeros((m, 5), dtype=np.int64), np.zeros((m, 5), dtype=np.int64)
    out = np.zeros((len(windows), 4), dtype=np.int64)
    hashes, pools = np.zeros(len(windows), np.uint64), np.zeros(len(windows), np.uint64)
    regions_into(a.schema, a.flags, a.meta_start, a.n_in, a.n_out, a.scalar_off, a.scalars,
                 a.ptr, a.ndim, a.sizes, a.strides, a.packed(errata), a.nbytes.view(np.int64),
                 DIMMIX, E6_1 in errata, E6_4 in errata, E8_3 in errata, E10_1 in errata,
                 np.array([w.start for w in windows], dtype=np.int64),
                 np.array([w.count for w in windows], dtype=np.int64),
                 np.array(caps, dtype=np.int64), new_tree(1 if E10_1 in errata else m + 2),
                 meta_trace, meta_slot, edges, slots, offsets, out, hashes, pools)
    return [FastRegion(w, Built(meta_trace[lo:hi], meta_slot[lo:hi], edges[lo:lo + ne],
                                slots[lo:lo + ns], h), offsets[lo:lo + ns], pool)
            for w, (lo, hi, ne, ns), h, pool in zip(windows, out.tolist(), hashes.tolist(),
                                                    pools.tolist(), strict=True)]


def run_arrays(a: TraceArrays, errata: frozenset[str] = frozenset(),
               progress=None) -> FastRun:
    """The pipeline over a whole trace in arrays; `progress(done_ops, total_ops)` once per
    built region, after all are built."""
    idx, lens, _, _ = boundaries_of(a.schema, errata)
    found = [{"index": i, "last_completed_len": n} for i, n in
             zip(idx.tolist(), lens.tolist(), strict=True)]
    windows, retained = iteration_windows(found, a.schema.size)
    built, skipped, caps = built_windows(a, windows, errata)
    run = FastRun(idx.tolist(), build_regions(a, built, caps, errata), skipped, retained)
    if progress:
        for w in built:
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
        run = run_arrays(arrays_of(decoded_ops(wire_ops)), errata)
        rows.append({"boundaries": run.boundaries,
                     "regions": [region_wire(r) for r in run.regions],
                     "retained": run.retained})
    return {k: [r[k] for r in rows] for k in ("boundaries", "regions", "retained")}

