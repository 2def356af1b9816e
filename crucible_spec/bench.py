"""`crucible-spec bench`: reference vs numba vs cupy on the same inputs at several sizes.

For each op with a bench generator: the reference runs item by item; each fast backend is
timed kernel-only (columns in, columns out: best of `repeat`) and end to end (Python values
in and out, as `serve` pays). Every fast result is checked against the reference wherever the
reference ran. Sizes above `ref_max` skip the reference, and say so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from .engine import Implementation, run_reference
from .spec.registry import BACKENDS, REGISTRY, Op


@dataclass
class Row:
    """One op at one size: seconds per implementation, and notes on anything skipped."""

    op: str
    n: int
    reference: float | None
    kernel: dict[str, float] = field(default_factory=dict)
    end_to_end: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    mismatch: list[str] = field(default_factory=list)

    def speedup(self, backend: str) -> float | None:
        k = self.kernel.get(backend)
        return self.reference / k if self.reference and k else None


def best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bench_op(op: Op, n: int, backends: list[str], ref_max: int, repeat: int,
             seed: int) -> Row:
    items = op.bench(n, np.random.default_rng(seed))
    row = Row(op.name, n, None)
    expected = None
    if n <= ref_max:
        start = time.perf_counter()
        expected = [op.result.encode(run_reference(op, a)) for a in items]
        row.reference = time.perf_counter() - start
    else:
        row.notes.append(f"reference skipped above {ref_max} items")
    for b in backends:
        impl = Implementation(b)
        route = impl.route(op)
        if route.how != "kernel":
            row.notes.append(f"{b}: {route.reason}")
            continue
        kern = REGISTRY.kernels[b][op.name]
        kern(**op.args.columns(items[:2]))  # compile / warm up outside the timing
        columns = op.args.columns(items)
        row.kernel[b] = best_of(lambda k=kern, c=columns: k(**c), repeat)
        start = time.perf_counter()
        got = impl.run_batch(op, items)
        row.end_to_end[b] = time.perf_counter() - start
        if expected is not None and [op.result.encode(r) for r in got] != expected:
            row.mismatch.append(b)
    return row


def run(ops: list[Op], sizes: list[int], backends: list[str], ref_max: int, repeat: int,
        seed: int, progress: Callable[[str], None] | None = None) -> list[Row]:
    rows = []
    for op in ops:
        for n in sizes:
            if progress:
                progress(f"{op.name} n={n}")
            rows.append(bench_op(op, n, backends, ref_max, repeat, seed))
    return rows


def _fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{x * 1e3:.3f} ms" if x < 1 else f"{x:.2f} s"


def _rate(n: int, s: float | None) -> str:
    return "-" if not s else f"{n / s / 1e6:.1f} M/s"


def render(rows: list[Row], backends: list[str]) -> str:
    header = ["op", "n", "reference"]
    for b in backends:
        header += [f"{b} kernel", f"{b} rate", f"{b} x ref", f"{b} end-to-end"]
    body = []
    for r in rows:
        line = [r.op, str(r.n), _fmt_s(r.reference)]
        for b in backends:
            sp = r.speedup(b)
            line += [_fmt_s(r.kernel.get(b)), _rate(r.n, r.kernel.get(b)),
                     "-" if sp is None else f"{sp:.0f}x", _fmt_s(r.end_to_end.get(b))]
        body.append(line)
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header))]
    out = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                     enumerate(zip(x, widths, strict=True))) for x in [header, *body]]
    notes = sorted({f"{r.op}: {n}" for r in rows for n in r.notes})
    out += [f"note: {n}" for n in notes]
    out += [f"MISMATCH: {r.op} n={r.n} {', '.join(r.mismatch)}" for r in rows if r.mismatch]
    return "\n".join(out)


def as_json(rows: list[Row], device: dict[str, str]) -> dict:
    return {"device": device, "backends": list(BACKENDS),
            "rows": [asdict(r) | {"speedup": {b: r.speedup(b) for b in r.kernel}}
                     for r in rows]}
