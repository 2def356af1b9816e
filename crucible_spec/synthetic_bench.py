"""Bench inputs of the whole-trace ops from synthetic traces: `n` is the number of ops in the
one trace each generator returns (a transformer's iterations, the last one cut short)."""

from __future__ import annotations

import numpy as np

from .gc_pause import gc_paused
from .spec.crucible.ckernel import CKernelId
from .spec.crucible.crtrace import LoadedTrace
from .spec.crucible.trace_ring import MAX_SCALARS
from .spec.crucible.vessel import schema_hash
from .synthetic import schema_stream, synthetic_trace

SHAPE = "transformer"
KERNELS = (("aten::mm", CKernelId.GEMM_MM), ("aten::addmm", CKernelId.GEMM_ADDMM),
           ("aten::native_layer_norm", CKernelId.LAYER_NORM), ("aten::relu", CKernelId.ACT_RELU),
           ("aten::gelu", CKernelId.ACT_GELU), ("aten::_log_softmax", CKernelId.ACT_LOG_SOFTMAX))
"""CKernel registrations the trace.build bench passes (op name, CKernelId)."""


def hex64(x: int) -> str:
    return f"0x{x:016x}"


def meta_wire(m: dict) -> dict:
    """A TensorMeta's wire form (to_wire of TENSOR_META, made directly: it is the hot loop of
    the bench inputs)."""
    return m | {"data_ptr": hex64(m["data_ptr"]), "grad_fn_hash": hex64(m["grad_fn_hash"])}


def op_metas(t: LoadedTrace, i: int) -> tuple[list[dict], list[dict]]:
    """Op i's input and output metas (none for an op without tensors)."""
    e, s = t.entries[i], t.meta_starts[i]
    n_in, n = e["num_inputs"], e["num_inputs"] + e["num_outputs"]
    metas = [meta_wire(m) for m in t.metas[s:s + n]] if n else []
    return metas[:n_in], metas[n_in:]


def build_ops_wire(t: LoadedTrace) -> list[dict]:
    """The trace's ops in the wire form of `trace.build` (ring entry fields and metas)."""
    out = []
    for i, e in enumerate(t.entries):
        inputs, outputs = op_metas(t, i)
        out.append({"schema_hash": hex64(e["schema_hash"]), "shape_hash": hex64(e["shape_hash"]),
                    "inputs": inputs, "outputs": outputs,
                    "scalars": e["scalar_values"][:min(e["num_scalar_args"], MAX_SCALARS)],
                    "op_flags": e["op_flags"], "grad_enabled": e["grad_enabled"],
                    "scope_hash": hex64(t.scope_hashes[i]),
                    "callsite_hash": hex64(t.callsite_hashes[i])})
    return out


def content_ops_wire(t: LoadedTrace) -> list[dict]:
    """The trace's ops as a region's trace ops (the wire form of `dag.content_hash`)."""
    out = []
    for i, e in enumerate(t.entries):
        inputs, outputs = op_metas(t, i)
        n = min(e["num_scalar_args"], MAX_SCALARS)
        out.append({"schema_hash": hex64(e["schema_hash"]), "shape_hash": hex64(e["shape_hash"]),
                    "scope_hash": hex64(t.scope_hashes[i]), "inputs": inputs,
                    "outputs": outputs, "scalar_args": e["scalar_values"][:n] if n else None,
                    "grad_enabled": e["grad_enabled"]})
    return out


def bench_seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 1 << 31))


def detector_bench(n: int, rng: np.random.Generator) -> list[dict]:
    """One schema-hash stream of n ops."""
    return [{"stream": schema_stream(n, SHAPE, bench_seed(rng))}]


def build_bench(n: int, rng: np.random.Generator) -> list[dict]:
    """One trace of n ops, each iteration with fresh storages (so slots grow with n), and a
    few CKernel registrations."""
    t = synthetic_trace(n, SHAPE, bench_seed(rng), fresh_storages=True)
    with gc_paused():
        ops = build_ops_wire(t)
    return [{"ops": ops,
             "kernels": [[hex64(schema_hash(name)), int(k)] for name, k in KERNELS]}]


def content_bench(n: int, rng: np.random.Generator) -> list[dict]:
    """One region of n ops."""
    t = synthetic_trace(n, SHAPE, bench_seed(rng))
    with gc_paused():
        return [{"ops": content_ops_wire(t)}]
