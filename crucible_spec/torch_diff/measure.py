"""Measure how far torch's answer is from the spec's for each kernel with a torch equivalent.

1. Cases: the op's edges, then its bench inputs at every size of SIZES whose work is at most
   WORK_LIMIT steps, one per seed.
2. The spec's answer comes from the op's numba kernel (bit-exact with the spec's loops, which the
   tests check), else from the reference.
3. A case torch refuses (it raises) or whose inputs hold a NaN or an infinity is counted
   apart. Per case, the largest per-element ulp
   distance over the result's tensors; per op, the
   largest over its cases, where it was, and whether the op's envelope covers it. Only an op
   whose torch order is "same" must be covered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..conformance.diff import tensor_envelope
from ..engine import Implementation
from ..spec.core.f32_tensor import F32Tensor
from ..spec.core.registry import REGISTRY, Op
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
    enveloped: float = 0.0
    """The largest distance as the op's envelope counts it (its floor applied)."""
    refused: int = 0
    """Cases left out: torch refuses them (batch_norm with eps = 0), or an input holds a NaN or
    an infinity (torch's rules for those are its own: relu keeps a NaN, max pooling
    propagates one)."""

    @property
    def covered(self) -> bool:
        return self.enveloped <= self.envelope

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
    env = tensor_envelope(op)
    worst, where, count, refused, enveloped = 0.0, "-", 0, 0, 0.0
    for label, args in cases(op, seeds):
        if op.check is not None:
            try:
                op.check(args)
            except Exception:
                continue
        if not all(np.all(np.isfinite(v)) for v in args.values() if isinstance(v, np.ndarray)):
            refused += 1
            continue
        try:
            theirs = eq.call(**args)
        except (RuntimeError, ValueError):
            refused += 1
            continue
        spec = impl.run_batch(op, [args])[0]
        mine = _tensors(op, spec)
        d = largest_ulps(mine, theirs)
        enveloped = max([enveloped, *(float(np.max(env.distances(v, theirs[k])))
                                      for k, v in mine.items() if v.size)])
        count += 1
        if d > worst:
            worst, where = d, label
    return Measurement(op.name, count, worst, where, env.ulps, eq.order, enveloped, refused)
