"""Ops `pyc.passes` (the pass pipeline and its report) and `pyc.run` (what a module computes),
with PyC's errata of the pipeline: fusion that drops the epilogue (E14.3) and liveness that
never frees (E14.4)."""

from __future__ import annotations

import struct

import numpy as np

from ..core.errata import NO_ERRATA, erratum
from ..core.registry import declare
from ..core.schema import Bool, Field, Int, List, Utf8, record
from ..core.strategies import st
from .fingerprint import MODULE, check_module, wire_op
from .interp import run_module
from .ir import module_from_wire, module_to_wire, require_verified
from .passes import E14_3, E14_4, PASS_NAMES, run_passes
from .wire import PYC_SEED, bits

_PASSES = record(**{p: Field(Bool(), "run this pass", True) for p in PASS_NAMES})
_BREAKS = record(**{k: Int(32) for k in ("const", "gelu", "reduce_sum", "layernorm", "unknown")})
F32_HEX = Int(32, hex=True)


def passes_op(module: dict, passes: dict, errata: frozenset[str] = NO_ERRATA) -> dict:
    m = module_from_wire(module)
    require_verified(m)
    after, r = run_passes(m, passes, errata)
    return {"module": module_to_wire(after), "passes_run": r.passes_run,
            "transformed_ops": r.transformed_ops, "fused_patterns": r.fused_patterns,
            "inferred_shapes": r.inferred_shapes, "peak_live_values": r.peak_live_values,
            "breaks": r.breaks, "first_break_id": r.first_break_id,
            "first_break_name": r.first_break_name, "compilability": bits(r.compilability),
            "summary": r.summary, "plan_count": r.plan_count, "confidence": bits(r.confidence),
            "shape_bucket": r.shape_bucket, "signature": r.signature}


def _f32(words: list[int]) -> np.ndarray:
    return np.frombuffer(struct.pack(f"<{len(words)}I", *words), dtype=np.float32)


def run_op(module: dict, inputs: list[list[int]], passes: bool,
           errata: frozenset[str] = NO_ERRATA) -> dict:
    m = module_from_wire(module)
    require_verified(m)
    if passes:
        m, _ = run_passes(m, None, errata)
    outs = run_module(m, [_f32(x) for x in inputs])
    return {"outputs": [np.ascontiguousarray(o).ravel().view(np.uint32).tolist() for o in outs]}


def _w(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _hx(x: float) -> str:
    """An f32 as the wire writes it."""
    return f"0x{_w(x):08x}"


MLP = {"ops": [wire_op("input", "x", [2, 2]), wire_op("input", "w", [2, 4]),
               wire_op("matmul", "", [2, 4], [0, 1]), wire_op("relu", "", [2, 4], [2]),
               wire_op("output", "", [2, 4], [3])]}
"""matmul then relu: PyC's own CPU test shape, small."""
MLP_INPUTS = [[_hx(v) for v in (1.0, 2.0, -3.0, -4.0)],
              [_hx(v) for v in (-3.0, -2.0, -1.0, 0.0, 10.5, 11.0, 11.5, 12.0)]]
"""Its inputs, wire form: x = [[1, 2], [-3, -4]], w = [[-3, -2, -1, 0], [10.5, 11, 11.5, 12]],
whose product is the facts sheet's 18 20 22 24 -33 -38 -43 -48."""


def modules_with_inputs() -> st.SearchStrategy:
    """A runnable chain: inputs, a matmul, then add/relu ops, then an output; random values."""
    small = st.integers(1, 3)

    @st.composite
    def build(draw) -> dict:
        m, k, n = draw(small), draw(small), draw(small)
        ops = [wire_op("input", "a", [m, k]), wire_op("input", "b", [k, n]),
               wire_op("input", "bias", [m, n]), wire_op("matmul", "", [m, n], [0, 1])]
        for kind in draw(st.lists(st.sampled_from(["add", "relu"]), max_size=3)):
            last = len(ops) - 1
            ops.append(wire_op(kind, "", [m, n], [last, 2] if kind == "add" else [last]))
        ops.append(wire_op("output", "", [m, n], [len(ops) - 1]))
        vals = st.floats(-8, 8, width=32).map(_w)
        inputs = [draw(st.lists(vals, min_size=s, max_size=s)) for s in (m * k, k * n, m * n)]
        return {"module": {"ops": ops}, "inputs": inputs, "passes": draw(st.booleans())}

    return build()


_NOT_BATCHED = "one module is one ordered pass over its ops: nothing to batch"
declare(
    "pyc.passes", chapter=14,
    summary="PyC's pass pipeline in its fixed order, then the graph-break taxonomy and the "
            "speculative summary.",
    args=record(module=Field(MODULE, "a module verify accepts"),
                passes=Field(_PASSES, "which passes run (all by default)",
                             dict.fromkeys(PASS_NAMES, True))),
    result=record(module=Field(MODULE, "the module after the passes"), passes_run=Int(32),
                  transformed_ops=Int(32), fused_patterns=Int(32), inferred_shapes=Int(32),
                  peak_live_values=Int(32), breaks=_BREAKS,
                  first_break_id=Int(32, signed=True), first_break_name=Utf8(),
                  compilability=Field(Int(64, hex=True), "f64 bits"), summary=Utf8(),
                  plan_count=Int(32), confidence=Field(Int(64, hex=True), "f64 bits"),
                  shape_bucket=Utf8(), signature=Utf8()),
    spec=(run_passes,), check=check_module, errata=(E14_3, E14_4),
    domain=lambda: modules_with_inputs().map(lambda a: {
        "module": a["module"], "passes": dict.fromkeys(PASS_NAMES, True)}),
    edges=lambda: [{"module": MLP, "passes": dict.fromkeys(PASS_NAMES, True)},
                   {"module": MLP, "passes": dict.fromkeys(PASS_NAMES, True) | {"fusion": False}},
                   {"module": {"ops": [wire_op("input", "x", [4]), wire_op("gelu", "", [4], [0]),
                                       wire_op("const", "c", [4]),
                                       wire_op("output", "", [4], [1])]},
                    "passes": dict.fromkeys(PASS_NAMES, True)}],
    not_applicable={"numba": _NOT_BATCHED, "cupy": _NOT_BATCHED},
)
declare(
    "pyc.run", chapter=14,
    summary="Run a module (after the passes, when asked) on float32 inputs: every output's "
            "values, as f32 bit patterns.",
    args=record(module=Field(MODULE, "a runnable module: input, matmul, add, relu, output"),
                inputs=Field(List(List(F32_HEX)), "one tensor per input op, row-major f32 bits"),
                passes=Field(Bool(), "run the pass pipeline first", False)),
    result=record(outputs=Field(List(List(F32_HEX)), "one tensor per output op")),
    spec=(run_module,), check=check_module, errata=(E14_3,), domain=modules_with_inputs,
    edges=lambda: [{"module": MLP, "inputs": MLP_INPUTS, "passes": p} for p in (False, True)],
    not_applicable={"numba": _NOT_BATCHED, "cupy": _NOT_BATCHED},
)

erratum(
    E14_3, "Fusion folds add, relu and gelu into a matmul that stays a matmul",
    seed=PYC_SEED, location="src/compiler/passes/pass_manager.c fuse_module",
    ops=("pyc.run", "pyc.passes"),
    witness={"args": {"module": MLP, "inputs": MLP_INPUTS, "passes": True},
             "spec": {"outputs": [[_hx(v) for v in (18.0, 20.0, 22.0, 24.0, 0, 0, 0, 0)]]},
             "seed": {"outputs": [[_hx(v) for v in (18.0, 20.0, 22.0, 24.0, -33.0, -38.0,
                                                   -43.0, -48.0)]]}},
    flag="result",
    also=({"op": "pyc.passes", "args": {"module": MLP, "passes": dict.fromkeys(PASS_NAMES, True)},
           "spec": {"fused_patterns": 0}, "seed": {"fused_patterns": 1}},),
    detail="fuse_module renames the matmul fused_<a>_<b>, points the consumers of the add, "
           "relu or gelu at it and deletes that op, but the fused op keeps kind MATMUL and its "
           "two inputs: the bias and the activation are gone. With default options on the CPU "
           "backend, matmul then relu returns negative values (PyC's own run gives "
           "18 20 22 24 -33 -38 -43 -48, the witness's). PyC turns fusion off for CUDA "
           "for this reason but not for the CPU. The IR has no kind that means a matmul with "
           "an epilogue, so the spec's fusion rewrites nothing.",
)
erratum(
    E14_4, "Liveness never frees a value that has a reader",
    seed=PYC_SEED, location="src/compiler/passes/pass_manager.c analyze_liveness",
    ops=("pyc.passes",),
    witness={"args": {"module": MLP, "passes": dict.fromkeys(PASS_NAMES, True)
                      | {"fusion": False}},
             "spec": {"peak_live_values": 3}, "seed": {"peak_live_values": 5}},
    flag="result",
    detail="A value is freed when its last use is the op itself or it has none; inputs "
           "always come before their readers, so a value with a reader is never freed and the "
           "peak is about the op count. The spec counts the values defined at or before an op "
           "and still read at or after it.",
)
