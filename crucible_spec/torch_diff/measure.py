"""Measure how far torch's answer is from the spec's for each kernel with a torch equivalent.

1. Cases: the op's edges, then its bench inputs at every size of SIZES whose work is at most
   WORK_LIMIT steps, one per seed.
2. The spec's answer comes from the op's numba kernel (bit-exact with the spec's loops, which the
   tests check), else from the reference.
3. Per case, the largest per-element ulp distance over the result's tensors; per op, the
   largest over its cases, where it was, and whether the op's envelope covers it. Only an op
   whose torch order is "same" must be covered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..conformance.diff import tensor_envelope
from ..engine import Implementation
from ..spec.f32_tensor import F32Tensor
from ..spec.registry import REGISTRY, Op
from . import SAME, TorchEquivalent, largest_ulps

SIZES = (4, 16, 64, 256, 1024, 4096, 65536)
WORK_LIMIT = 20_000_000


@dataclass(frozen=True)
class Measurement:
    """One op: cases run, the largest distance (ulps) and the case it came from."""

    op: str
    cases: int
    largest: float
    at: str
    envelope: int
    order: str

    @property
    def covered(self) -> bool:
        return self.largest <= self.envelope

    @property
    def must_cover(self) -> bool:
        return self.order == SAME


def cases(op: Op, seeds: int) -> list[tuple[str, dict]]:
    """Step 1: (label, decoded args) pairs."""
    out = [(f"edge {i}", op.args.decode(e, "args")) for i, e in enumerate(op.edges() if op.edges
                                                                          else [])]
    for n in SIZES:
        if op.bench is None or (op.work is not None and op.work(n) > WORK_LIMIT):
            continue
        for seed in range(seeds):
            out += [(f"bench n={n} seed={seed}", it)
                    for it in op.bench(n, np.random.default_rng(seed))]
    return out


def _tensors(op: Op, result: dict) -> dict[str, np.ndarray]:
    return {k: np.asarray(v, dtype=np.float32) for k, v in result.items()
            if isinstance(op.result.fields[k].type, F32Tensor)}


def measure(eq: TorchEquivalent, seeds: int = 2) -> Measurement:
    """Steps 2-3 for one op."""
    op = REGISTRY.ops[eq.op]
    impl = Implementation("numba")
    worst, where, count = 0.0, "-", 0
    for label, args in cases(op, seeds):
        if op.check is not None:
            try:
                op.check(args)
            except Exception:
                continue
        spec = impl.run_batch(op, [args])[0]
        d = largest_ulps(_tensors(op, spec), eq.call(**args))
        count += 1
        if d > worst:
            worst, where = d, label
    return Measurement(op.name, count, worst, where, tensor_envelope(op).ulps, eq.order)
