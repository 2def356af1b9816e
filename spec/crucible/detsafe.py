"""Chapter 11: DetSafe, same(inputs) => same(outputs), for a recorded region replayed in its pool.

The seed's yellowpaper states it as an axiom: the DAG fixes the order, the memory plan fixes
the addresses, Philox fixes the random state. Here it is a check over the spec's own pieces
(trace build, memory plan, pool, replay engine, context, CPU kernels), on a small program of
float32 [s, s] tensors:

1. Record: run the program eagerly, every output in a fresh storage at a fresh data pointer;
   keep each op's output bytes and the recorded ops (trace.build's wire form).
2. Compile: build the trace graph of the recorded ops, plan its slots, and make the region
   replay reads (guards, slot ids, plan).
3. Replay: activate the region in a CrucibleContext over a pool whose bytes are arbitrary,
   register the inputs' pointers, and for each op advance with its recorded guards, read its
   inputs through the slot table and write its output at its slot's handle; keep each op's
   output bytes. Replay a second time in the same pool, dirty from the first.
4. DetSafe: both replays match every op and give every op's output bytes exactly as recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.errata import NO_ERRATA
from . import context as cx
from . import pool_allocator as pool_
from .build_trace import build_trace
from .cpu_kernels import add, mul, relu, sigmoid, sub, transpose_2d
from .cpu_kernels_linear import mm
from .cpu_kernels_norm import softmax
from .memory_plan import compute_memory_plan
from .pipeline import plan_slots_of
from .replay_engine import ReplayStatus
from .replay_region import Guard, ReplayRegion, replay_region_of
from .trace_build_ops import recorded_ops
from .types import NONE32, ScalarType

KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "add": add, "sub": sub, "mul": mul, "mm": mm, "relu": relu, "sigmoid": sigmoid,
    "transpose_2d": lambda x: transpose_2d(x[None])[0], "softmax": softmax}
"""The kernels a program may call; each maps [s, s] float32 operands to an [s, s] result."""
ARITY = {"add": 2, "sub": 2, "mul": 2, "mm": 2}
INPUT_PTR, OUTPUT_PTR = 0x1000_0000, 0x2000_0000
"""Where the recording puts the inputs' and the outputs' storages (4 KiB apart)."""


@dataclass(frozen=True)
class ProgramOp:
    """One call: the kernel and its operands (tensor indices: inputs first, then outputs)."""

    kernel: str
    operands: tuple[int, ...]


@dataclass(frozen=True)
class Program:
    """Float32 [size, size] inputs and the calls over them, in order."""

    size: int
    inputs: tuple[bytes, ...]
    ops: tuple[ProgramOp, ...]


def schema_of(kernel: str) -> int:
    """A program's schema hash for a kernel (its place in KERNELS, from 0x100)."""
    return 0x100 + list(KERNELS).index(kernel)


def _tensor(size: int, raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.float32).reshape(size, size).copy()


def _meta(size: int, ptr: int) -> dict:
    return {"ndim": 2, "sizes": [size, size], "strides": [size, 1],
            "dtype": int(ScalarType.Float), "device_idx": 0, "data_ptr": hex(ptr)}


def _ptr(p: Program, t: int) -> int:
    k = len(p.inputs)
    return INPUT_PTR + t * 0x1000 if t < k else OUTPUT_PTR + (t - k) * 0x1000


def record(p: Program) -> tuple[list[bytes], list[dict]]:
    """Step 1: each op's output bytes, run eagerly, and the recorded ops."""
    values = [_tensor(p.size, raw) for raw in p.inputs]
    outputs, ops = [], []
    for op in p.ops:
        out = np.ascontiguousarray(KERNELS[op.kernel](*(values[t] for t in op.operands)),
                                   dtype=np.float32)
        ops.append({"schema_hash": hex(schema_of(op.kernel)), "shape_hash": hex(p.size),
                    "inputs": [_meta(p.size, _ptr(p, t)) for t in op.operands],
                    "outputs": [_meta(p.size, _ptr(p, len(values)))]})
        values.append(out)
        outputs.append(out.tobytes())
    return outputs, ops


def compile_region(ops: list[dict], errata: frozenset[str] = NO_ERRATA) -> ReplayRegion:
    """Step 2: the region of the recorded ops, with its memory plan."""
    graph = build_trace(recorded_ops(ops), None, errata)
    return replay_region_of(0, graph, compute_memory_plan(plan_slots_of(graph), errata))


def _read(c: cx.CrucibleContext, pool: bytearray, inputs: dict[int, bytes], sid: int,
          size: int) -> np.ndarray:
    h = pool_.slot_ptr(c.pool, sid)
    if h.kind == "external":
        return _tensor(size, inputs[h.value])
    n = size * size * 4
    return _tensor(size, bytes(pool[h.value:h.value + n]))


def replay_pass(c: cx.CrucibleContext, pool: bytearray, p: Program, recorded: list[dict],
                errata: frozenset[str] = NO_ERRATA) -> list[bytes] | None:
    """One pass of step 3: each op's output bytes, or None when an advance does not match."""
    inputs = {_ptr(p, t): raw for t, raw in enumerate(p.inputs)}
    outputs = []
    for i, (op, rec) in enumerate(zip(p.ops, recorded, strict=True)):
        got = Guard(int(rec["schema_hash"], 16), int(rec["shape_hash"], 16))
        last = i == len(p.ops) - 1
        if cx.advance(c, got, errata) != (ReplayStatus.COMPLETE if last else ReplayStatus.MATCH):
            return None
        ids = c.engine.ops[c.engine.current]
        args = [_read(c, pool, inputs, sid, p.size) for sid in ids.input_slot_ids]
        out = np.ascontiguousarray(KERNELS[op.kernel](*args), dtype=np.float32).tobytes()
        h = pool_.slot_ptr(c.pool, ids.output_slot_ids[0])
        pool[h.value:h.value + len(out)] = out
        outputs.append(out)
    return outputs


def replay(p: Program, garbage: bytes, passes: int = 2, errata: frozenset[str] = NO_ERRATA
           ) -> tuple[list[bytes], list[list[bytes] | None]]:
    """Steps 1-3: the recorded outputs and each replay pass's, the pool first filled by
    repeating `garbage` (non-empty)."""
    recorded_out, ops = record(p)
    region = compile_region(ops, errata)
    c = activate(region)
    reps = -(-region.plan.pool_bytes // len(garbage))
    pool = bytearray((garbage * reps)[:region.plan.pool_bytes])
    return recorded_out, [replay_pass(c, pool, p, ops, errata) for _ in range(passes)]


def activate(region: ReplayRegion) -> cx.CrucibleContext:
    """The start of step 3: a context with the region active and its inputs registered."""
    c = cx.CrucibleContext()
    assert cx.activate(c, region)
    for sid, slot in enumerate(region.plan.slots):
        if slot.is_external:
            cx.register_external(c, sid, _external_ptr(region, sid))
    return c


def _external_ptr(region: ReplayRegion, sid: int) -> int:
    """The data pointer an external slot was recorded with (the first op reading it)."""
    for op in region.ops:
        for j, s in enumerate(op.input_slot_ids or []):
            if s == sid and s != NONE32:
                return op.input_ptrs[j]
    raise AssertionError(f"external slot {sid} is read by no op")


def det_safe(p: Program, garbage: bytes, errata: frozenset[str] = NO_ERRATA) -> bool:
    """Step 4: two replays, each as recorded."""
    recorded_out, passes = replay(p, garbage, 2, errata)
    return all(out == recorded_out for out in passes)
