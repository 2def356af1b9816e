"""`crucible-spec bench`: reference vs numba vs cupy on the same inputs at several sizes.

For each op with a bench generator, `n` is what its generator says: the number of items in a
batch for most ops, the number of ops in the one trace for whole-trace ops (detector.run,
trace.build, dag.content_hash, plan.compute; past 100000 ops, plan.compute repeats the slots of
a 100000-op trace), the core cells of the one step for
vyre.tt_contract_step (r_prev = r_next = isqrt(n)), and the nodes of the one term
egraph.saturate saturates (a sum of matmuls, under 10 n nodes and 30 iterations; reference
only).

Each side is timed on inputs already converted to what it works on. The reference runs on
decoded arguments: for an op whose reference decodes its own wire arguments, a `Split` below
names that decoding (prepare, untimed), the work (core, timed) and the result (finish); the
reference end to end is all three. A fast kernel is timed columns in, columns out (best of
`repeat`), or, when the kernel has `prepare` and `core` attributes, on `core(prepare(**columns))`
with only the core timed (its conversion of columns into its own arrays excluded); its end to
end takes wire (JSON) values in and out through `Implementation.run_batch_wire`, decoding and
encoding included. Every fast result is checked against the
reference wherever the reference ran. Sizes above `ref_max` skip the reference, and say so.

The reference runs a batch item by item until `budget` seconds are spent; when that stops it
early its seconds are the prefix's scaled by items (`reference_from` is the prefix, the table
marks it '~') and fast results are checked on the prefix. An op with a `work` measure above
`ref_max` is timed at a smaller size and scaled by work instead. Wire implementations (`serve
--impl B`, any `--cmd`) get the same requests through a pipe, in batch requests where their
hello declares the batch form, and those are also timed against the json module's own parse
and write of the same lines; see bench_wire.

An op may also have `BASELINES`: other ways to produce as many bytes as its kernel does for n
items (another library's generator, a plain memory copy), timed beside it and shown as GB/s
and millions of 4-byte words per second. The numba stream and the copy write into buffers
allocated once, untimed; numpy's `random_raw` allocates its output on every call.

Planner quality (`plan_quality`): on n scattered slots (the E10.1 witness's generator) the
numba planner's pool under the spec's free list and the seed's, each against the live-bytes
lower bound, with the planner's seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .bench_baseline import Baseline
from .bench_kernels import KERNEL_BASELINES
from .bench_wire import BENCH_BATCH, WireImpl, answers_agree, time_wire
from .commands.console import render as render_table
from .commands.console import table
from .conformance.diff import within_envelope
from .engine import Implementation, run_reference
from .spec.core.registry import BACKENDS, REGISTRY, Op
from .spec.crucible.build_trace import build_trace
from .spec.crucible.content_hash import compute_content_hash, trace_ops_from_wire
from .spec.crucible.iteration_detector import run_detector, state_wire
from .spec.crucible.memory_plan import (
    E10_1,
    Plan,
    compute_memory_plan,
    live_lower_bound,
    plan_slots,
    scattered_slots,
)
from .spec.crucible.trace_build_ops import graph_to_wire, kernels_from_wire, plan_of, recorded_ops
from .spec.pyc.alloc import build_plan, requests_from_wire

REPEAT_BUDGET_S = 1.0
"""Timed runs stop repeating once they have taken this long in all (at least one run)."""
REFERENCE_BUDGET_S = 20.0
"""The reference runs on a batch's items until this many seconds are spent, and its time for
the whole batch is that prefix's scaled by items."""
REFERENCE_WORK_BUDGET = 200_000
"""Above --ref-max, an op with a `work` measure times its reference at the largest power of
two n0 whose work is at most this many scalar steps, and scales by work(n) / work(n0)."""


@dataclass(frozen=True)
class Split:
    """A reference in three steps: prepare(**args) decodes the wire arguments (untimed),
    core(state) is the op's work (timed), finish(core's value) is the op's result."""

    prepare: Callable[..., Any]
    core: Callable[[Any], Any]
    finish: Callable[[Any], dict]


def _build_and_plan(state: tuple) -> tuple:
    graph = build_trace(*state)
    return graph, plan_of(graph)


def _plan_result(p: Plan) -> dict:
    return {"offsets": p.offsets, "pool_bytes": p.pool_bytes, "num_slots": len(p.offsets),
            "num_external": p.num_external}


REFERENCE_SPLITS = {
    "trace.build": Split(lambda ops, kernels: (recorded_ops(ops), kernels_from_wire(kernels)),
                         _build_and_plan, lambda r: graph_to_wire(*r)),
    "plan.compute": Split(plan_slots, compute_memory_plan, _plan_result),
    "dag.content_hash": Split(trace_ops_from_wire, compute_content_hash,
                              lambda h: {"out": h}),
    "pyc.alloc": Split(lambda requests, mode, budget: (requests_from_wire(requests), mode, budget),
                       lambda state: build_plan(*state), vars),
    "detector.run": Split(lambda stream: stream, run_detector,
                          lambda r: {"boundaries": r[0], "final_state": state_wire(r[1])}),
}
"""References that decode their own wire arguments; every other reference gets arguments
the schema has already decoded, and is timed whole."""


_PHILOX_KEY = 0x12345678


def _philox_stream(n: int) -> Callable[[], object]:
    from .fast.numba.crucible.philox import stream_into

    out = np.empty(4 * n, dtype=np.uint32)
    start, key = np.uint64(0), np.uint64(_PHILOX_KEY)
    stream_into(start, key, out[:4])  # compile outside the timing
    return lambda: stream_into(start, key, out)


def _numpy_philox(n: int) -> Callable[[], object]:
    gen = np.random.Philox(key=_PHILOX_KEY)
    return lambda: gen.random_raw(2 * n)


def _memory_copy(nbytes: int) -> Callable[[], object]:
    src = np.arange(nbytes // 8, dtype=np.uint64)
    dst = np.empty_like(src)
    return lambda: np.copyto(dst, src)


def _read_once(nbytes: int) -> Callable[[], object]:
    src = np.ones(nbytes // 4, dtype=np.uint32)
    return lambda: np.add.reduce(src)


BASELINES: dict[str, tuple[Baseline, ...]] = {
    "philox.offset": (
        Baseline("numba Philox4x32-10 raw stream, 4 u32 per item", lambda n: 16 * n,
                 lambda n, _: _philox_stream(n)),
        Baseline("numpy Philox4x64-10 random_raw, 2 u64 per item", lambda n: 16 * n,
                 lambda n, _: _numpy_philox(n)),
        Baseline("numpy copy into a preallocated array", lambda n: 16 * n,
                 lambda n, _: _memory_copy(16 * n)),
    ),
    "vyre.tt_contract_step": (
        Baseline("numpy sum of the core, read once (4 bytes per cell)", lambda n: 4 * n,
                 lambda n, _: _read_once(4 * n)),
    ),
}
"""Per op, the baselines its kernel is compared with (same bytes out for the same n); numpy's
random_raw allocates its output inside the timed call, the others reuse preallocated buffers."""


@dataclass
class Row:
    """One op at one size: seconds per implementation, and notes on anything skipped.

    `reference` is the reference's core (decoding excluded), `reference_e2e` the reference
    with its decoding; `kernel[b]` is backend b's kernel (its core where `core_only` lists b),
    `end_to_end[b]` the backend from wire values to wire values."""

    op: str
    n: int
    reference: float | None
    reference_e2e: float | None = None
    kernel: dict[str, float] = field(default_factory=dict)
    end_to_end: dict[str, float] = field(default_factory=dict)
    core_only: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    mismatch: list[str] = field(default_factory=list)
    baseline: dict[str, float] = field(default_factory=dict)
    baseline_bytes: dict[str, int | None] = field(default_factory=dict)
    wire: dict[str, float] = field(default_factory=dict)
    """Wire implementations (serve, --cmd): seconds from first request to last answer."""
    wire_json: dict[str, float] = field(default_factory=dict)
    """Wire implementations that took batch requests: the json module's seconds to parse the
    same request lines and write the same answer lines (bench_wire, 5)."""
    reference_from: int | None = None
    """Where the reference was timed at a smaller size and scaled (by work, or by items when
    its time budget ran out): that size."""

    def speedup(self, backend: str) -> float | None:
        k = self.kernel.get(backend)
        return self.reference / k if self.reference and k else None

    def e2e_speedup(self, backend: str) -> float | None:
        k = self.end_to_end.get(backend)
        return self.reference_e2e / k if self.reference_e2e and k else None


def best_of(fn: Callable[[], object], repeat: int, budget: float = REPEAT_BUDGET_S) -> float:
    """The fastest of `repeat` runs, fewer once the runs so far took `budget` seconds."""
    best, spent = float("inf"), 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
        if spent >= budget:
            break
    return best


def time_reference(op: Op, items: list[dict], budget: float = float("inf"),
                   errata: frozenset[str] = frozenset()) -> tuple[list, float, float]:
    """The encoded reference results under the profile's `errata`, the core's seconds and the
    end-to-end seconds. Items run in order until `budget` seconds are spent (at least one
    item): the results are then those of a prefix, and the seconds are for that prefix alone.
    An op that models errata runs whole under a profile that has some (its split does not)."""
    split = None if errata and op.errata else REFERENCE_SPLITS.get(op.name)
    start = time.perf_counter()
    results, core = [], 0.0
    for a in items:
        if split is None:
            t = time.perf_counter()
            results.append(run_reference(op, a, errata))
            core += time.perf_counter() - t
        else:
            state = split.prepare(**a)
            t = time.perf_counter()
            value = split.core(state)
            core += time.perf_counter() - t
            results.append(split.finish(value))
        if time.perf_counter() - start >= budget:
            break
    total = time.perf_counter() - start
    return [op.result.encode(r) for r in results], core, total


def kernel_columns(op: Op, backend: str, items: list[dict],
                   errata: frozenset[str] = frozenset()) -> dict:
    """The kernel's arguments for `items`, with the profile's errata if it models errata."""
    columns = op.args.columns(items)
    if REGISTRY.kernel_models[backend][op.name]:
        columns["errata"] = errata
    return columns


def time_kernel(op: Op, backend: str, items: list[dict], repeat: int,
                errata: frozenset[str] = frozenset()) -> tuple[float, bool]:
    """Seconds of the kernel on prepared columns, and whether that is its core alone."""
    kern = REGISTRY.kernels[backend][op.name]
    columns = kernel_columns(op, backend, items, errata)
    prepare, core = getattr(kern, "prepare", None), getattr(kern, "core", None)
    if prepare is None or core is None:
        return best_of(lambda: kern(**columns), repeat), False
    state = prepare(**columns)
    return best_of(lambda: core(state), repeat), True


def bench_op(op: Op, n: int, backends: list[str], ref_max: int, repeat: int, seed: int,
             budget: float = REFERENCE_BUDGET_S, wires: Sequence[WireImpl] = (),
             errata: frozenset[str] = frozenset()) -> Row:
    rng = np.random.default_rng(seed)
    items = op.bench(n, rng)
    warm = op.bench(min(n, 2), rng)
    row = Row(op.name, n, None)
    expected = None
    if n <= ref_max:
        expected = budget_reference(op, items, row, budget, errata)
        if op.name in REFERENCE_SPLITS and errata and op.errata:
            row.notes.append("reference: timed whole under the profile (core and e2e alike)")
        elif op.name in REFERENCE_SPLITS:
            row.notes.append("reference: core timed on decoded args; e2e includes decoding")
    elif op.work is not None:
        extrapolate_reference(op, n, row, seed, errata)
    else:
        row.notes.append(f"reference skipped above {ref_max}")
    for b in backends:
        impl = Implementation(b, errata)
        route = impl.route(op)
        if route.how != "kernel":
            row.notes.append(f"{b}: {route.reason}")
            continue
        impl.run_batch(op, warm)  # compile / warm up outside the timing
        row.kernel[b], core = time_kernel(op, b, items, repeat, errata)
        if core:
            row.core_only.append(b)
            row.notes.append(f"{b}: kernel is its core (columns -> its arrays excluded)")
        elif op.name in REFERENCE_SPLITS:
            row.notes.append(f"{b}: kernel includes decoding the args (it has no prepare step)")
        wire_args = [op.args.encode(a) for a in items]
        impl.run_batch_wire(op, [op.args.encode(a) for a in warm])
        start = time.perf_counter()
        got = impl.run_batch_wire(op, wire_args)
        row.end_to_end[b] = time.perf_counter() - start
        if expected is not None and not all(
                have == want or within_envelope(op, want, have)
                for want, have in zip(expected, got[:len(expected)], strict=True)):
            row.mismatch.append(b)
    for wire in wires:
        timing = time_wire(wire, op, items, warm)
        row.wire[wire.name] = timing.seconds
        if timing.json_seconds is not None:
            row.wire_json[wire.name] = timing.json_seconds
        if not answers_agree(op, expected or [], timing.answers):
            row.mismatch.append(wire.name)
    for base in baselines(op.name):
        timed = base.make(n, items)
        if timed is None:
            row.notes.append(f"baseline {base.name}: not available here")
            continue
        timed()
        row.baseline[base.name] = best_of(timed, repeat)
        row.baseline_bytes[base.name] = base.nbytes(n) if base.nbytes else None
    return row


def baselines(op: str) -> tuple[Baseline, ...]:
    """The op's baselines: the byte-rate ones above and the kernels' library equivalents."""
    return BASELINES.get(op, ()) + KERNEL_BASELINES.get(op, ())


def budget_reference(op: Op, items: list[dict], row: Row, budget: float,
                     errata: frozenset[str] = frozenset()) -> list:
    """Time the reference on as many items as `budget` seconds allow; where that is a prefix,
    scale its seconds by len(items) / prefix and say so. Returns the prefix's results."""
    expected, core, total = time_reference(op, items, budget, errata)
    done = len(expected)
    scale = len(items) / done
    row.reference, row.reference_e2e = core * scale, total * scale
    if done < len(items):
        row.reference_from = done
        row.notes.append(f"reference extrapolated from its first {done} of {len(items)} items "
                         f"(--reference-budget {budget:g} s), fast results checked on those")
    return expected


def extrapolate_reference(op: Op, n: int, row: Row, seed: int,
                          errata: frozenset[str] = frozenset()) -> None:
    """Time the reference at the largest power of two n0 <= n within the work budget and
    scale it by work(n) / work(n0); the row says so."""
    n0 = 1
    while 2 * n0 <= n and op.work(2 * n0) <= REFERENCE_WORK_BUDGET:
        n0 *= 2
    _, core, total = time_reference(op, op.bench(n0, np.random.default_rng(seed)),
                                    errata=errata)
    scale = op.work(n) / max(op.work(n0), 1)
    row.reference, row.reference_e2e, row.reference_from = core * scale, total * scale, n0
    row.notes.append(f"reference extrapolated from n={n0} by its work ({scale:.3g}x)")


def run(ops: list[Op], sizes: list[int], backends: list[str], ref_max: int, repeat: int,
        seed: int, steps: Any = None, budget: float = REFERENCE_BUDGET_S,
        wires: Sequence[WireImpl] = (), errata: frozenset[str] = frozenset()) -> list[Row]:
    """Every op at every size; `steps` (console.Steps) is moved to each cell as it starts and
    told when it is done."""
    rows = []
    for op in ops:
        for n in sizes:
            name = f"{op.name} n={n}"
            if steps is not None:
                steps.reach(len(rows), name)
            rows.append(bench_op(op, n, backends, ref_max, repeat, seed, budget, wires, errata))
            if steps is not None:
                steps.step(name)
    return rows


@dataclass(frozen=True)
class QualityRow:
    """The planner on n scattered slots: the live-bytes lower bound, and per free list (the
    spec's, the seed's E10.1) its pool and the planner's seconds."""

    n: int
    lower_bound: int
    spec_pool: int
    seed_pool: int
    spec_s: float
    seed_s: float

    @property
    def spec_ratio(self) -> float:
        return self.spec_pool / self.lower_bound

    @property
    def seed_ratio(self) -> float:
        return self.seed_pool / self.lower_bound


def quality_row(n: int, seed: int) -> QualityRow:
    """Plan scattered_slots(n, seed) with the numba planner under both free lists."""
    from .fast.numba.crucible.memory_plan import plan_arrays

    slots = scattered_slots(n, seed)
    arrays = [np.array([getattr(s, f) for s in slots], dtype=t) for f, t in
              (("nbytes", np.uint64), ("birth_op", np.int64), ("death_op", np.int64),
               ("is_external", np.bool_))]
    plan_arrays(*(a[:2] for a in arrays))  # compile outside the timing
    pools, secs = [], []
    for errata in (frozenset(), frozenset({E10_1})):
        start = time.perf_counter()
        pools.append(plan_arrays(*arrays, errata)[1])
        secs.append(time.perf_counter() - start)
    return QualityRow(n, live_lower_bound(slots), *pools, *secs)


def plan_quality(sizes: list[int], seed: int,
                 progress: Callable[[str], None] | None = None) -> list[QualityRow]:
    rows = []
    for n in sizes:
        if progress:
            progress(f"planner quality n={n}")
        rows.append(quality_row(n, seed))
    return rows


def render_quality(rows: list[QualityRow]) -> str:
    header = ["planner quality: slots", "live bound B", "spec pool B", "spec/bound", "spec s",
              "seed pool B", "seed/bound", "seed s"]
    body = [[str(r.n), str(r.lower_bound), str(r.spec_pool), f"{r.spec_ratio:.3f}",
             f"{r.spec_s:.3f}", str(r.seed_pool), f"{r.seed_ratio:.1f}", f"{r.seed_s:.3f}"]
            for r in rows]
    return render_table(table(header, body, right=header[1:]))


def _fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{x * 1e3:.3f} ms" if x < 1 else f"{x:.2f} s"


def _rate(n: int, s: float | None) -> str:
    return "-" if not s else f"{n / s / 1e6:.1f} M/s"


def _times(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}x" if x >= 10 else f"{x:.2g}x"


def render(rows: list[Row], backends: list[str]) -> str:
    """The table (a reference scaled from fewer items or a smaller size is marked '~'), then
    notes, baselines and mismatches."""
    wires = list(dict.fromkeys(w for r in rows for w in r.wire))
    header = ["op", "n", "reference", "ref e2e"]
    for b in backends:
        header += [f"{b} kernel", f"{b} rate", f"{b} x ref", f"{b} e2e", f"{b} e2e x ref"]
    for w in wires:
        header += [w, f"{w} x ref e2e"]
    body = []
    for r in rows:
        mark = "~" if r.reference_from is not None else ""
        line = [r.op, str(r.n), mark + _fmt_s(r.reference), mark + _fmt_s(r.reference_e2e)]
        for b in backends:
            line += [_fmt_s(r.kernel.get(b)), _rate(r.n, r.kernel.get(b)),
                     _times(r.speedup(b)), _fmt_s(r.end_to_end.get(b)),
                     _times(r.e2e_speedup(b))]
        for w in wires:
            sec = r.wire.get(w)
            line += [_fmt_s(sec), _times(r.reference_e2e / sec if r.reference_e2e and sec
                                         else None)]
        body.append(line)
    out = [render_table(table(header, body, right=header[1:]))]
    notes = sorted({f"{r.op}: {n}" for r in rows for n in r.notes})
    out += [f"note: {n}" for n in notes]
    out += [_baseline_line(r, name, sec, backends) for r in rows
            for name, sec in r.baseline.items()]
    out += [f"json: {r.op} n={r.n}: {w} in batches of up to {BENCH_BATCH}: {_fmt_s(r.wire[w])}; "
            f"the json module's parse and write of the same lines: {_fmt_s(sec)}; "
            f"{r.wire[w] / sec:.2f}x its time" for r in rows for w, sec in r.wire_json.items()]
    out += [f"MISMATCH: {r.op} n={r.n} {', '.join(r.mismatch)}" for r in rows if r.mismatch]
    return "\n".join(out)


def _baseline_line(r: Row, name: str, sec: float, backends: list[str]) -> str:
    nbytes = r.baseline_bytes[name]
    if nbytes is not None:
        return (f"baseline: {r.op} n={r.n}: {name}: {_fmt_s(sec)}, {nbytes / sec / 1e9:.2f} GB/s, "
                f"{nbytes / 4 / sec / 1e6:.0f} M u32/s")
    ratios = ", ".join(f"{b} kernel {r.kernel[b] / sec:.2g}x its time" for b in backends
                       if b in r.kernel)
    return f"instead: {r.op} n={r.n}: {name}: {_fmt_s(sec)}" + (f" ({ratios})" if ratios else "")


def as_json(rows: list[Row], device: dict[str, str],
            quality: list[QualityRow] | None = None, profile: str = "crucible") -> dict:
    return {"device": device, "backends": list(BACKENDS), "profile": profile,
            "rows": [asdict(r) | {"speedup": {b: r.speedup(b) for b in r.kernel},
                                  "e2e_speedup": {b: r.e2e_speedup(b) for b in r.end_to_end}}
                     for r in rows],
            "plan_quality": [asdict(q) | {"spec_ratio": q.spec_ratio, "seed_ratio": q.seed_ratio}
                             for q in quality or []]}
