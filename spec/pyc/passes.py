"""Chapter 14: PyC's pass pipeline (passes/pass_manager.c), in its fixed order.

1. canonicalize: an op with an empty name becomes `op_<index>` (one transformed op each).
2. shape inference: output, add, relu, gelu and layernorm copy input 0's shape and dtype;
   matmul needs two rank-2 inputs with lhs[1] == rhs[0] and gives [lhs0, rhs1] in lhs's dtype.
   A violation fails the pipeline.
3. layout propagation: nothing but its count.
4. fusion. PyC folds a matmul and the add, relu or gelu right after it that reads it into one
   op that stays a MATMUL: the bias and the activation are lost (E14.3). The IR has no op that
   means "matmul, then an epilogue", so the spec's fusion finds the same pairs and rewrites
   nothing: a pass must not change what a module computes (`pyc_interp` checks it).
5. liveness: the most values alive at once, a value living from its op to its last use. PyC
   frees only values nobody reads, so its count grows with every op (E14.4).
6. allocation and 7. lowering: counts only.
Then, always: the graph-break taxonomy and the speculative summary of the inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from .ir import DTYPE_BYTES, MAX_NAME, OpKind, PycModule, PycOp

E14_3, E14_4 = "E14.3", "E14.4"
PASS_NAMES = ("canonicalize", "shape_inference", "layout_propagation", "fusion", "liveness",
              "allocation", "lowering")
"""pyc_pass_config's flags, in the order the passes run (all on by default)."""
SUPPORTED = frozenset({OpKind.INPUT, OpKind.MATMUL, OpKind.ADD, OpKind.RELU, OpKind.OUTPUT})
"""Kinds the compiler can run; any other op is a graph break."""
SIGNATURE_MAX = 127
"""Characters of the phantom shape signature; a longer one is left empty. Real code:
include/pyc/pass_manager.h, phantom_shape_signature[128]."""


@dataclass
class PassReport:
    """pyc_pass_report, the parts the spec states."""

    passes_run: int = 0
    transformed_ops: int = 0
    fused_patterns: int = 0
    inferred_shapes: int = 0
    peak_live_values: int = 0
    breaks: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("const", "gelu", "reduce_sum", "layernorm", "unknown"), 0))
    first_break_id: int = -1
    first_break_name: str = "none"
    compilability: float = 0.0
    summary: str = ""
    plan_count: int = 0
    confidence: float = 0.0
    shape_bucket: str = ""
    signature: str = ""


def canonicalize(ops: list[PycOp], r: PassReport) -> None:
    for i, op in enumerate(ops):
        if not op.name:
            ops[i] = replace(op, name=f"op_{i}")
            r.transformed_ops += 1


def infer_shapes(ops: list[PycOp], r: PassReport) -> None:
    copies = {OpKind.OUTPUT, OpKind.ADD, OpKind.RELU, OpKind.GELU, OpKind.LAYERNORM}
    for i, op in enumerate(ops):
        if op.kind in copies and op.inputs:
            src = ops[op.inputs[0]]
            ops[i] = replace(op, shape=src.shape, dtype=src.dtype)
            r.inferred_shapes += 1
        elif op.kind == OpKind.MATMUL:
            lhs = ops[op.inputs[0]] if op.inputs else None
            rhs = ops[op.inputs[1]] if len(op.inputs) > 1 else None
            if lhs is None or rhs is None or len(lhs.shape) != 2 or len(rhs.shape) != 2 \
                    or lhs.shape[1] != rhs.shape[0]:
                raise InvalidInput(f"args.module.ops[{i}]: shape inference fails: a matmul "
                                   "needs two rank-2 inputs with lhs[1] == rhs[0]")
            ops[i] = replace(op, shape=(lhs.shape[0], rhs.shape[1]), dtype=lhs.dtype)
            r.inferred_shapes += 1


def fusable(ops: list[PycOp], i: int) -> bool:
    """Op i is a matmul and op i + 1 an add, relu or gelu whose first input is op i."""
    nxt = ops[i + 1]
    return (ops[i].kind == OpKind.MATMUL and nxt.kind in (OpKind.ADD, OpKind.RELU, OpKind.GELU)
            and bool(nxt.inputs) and nxt.inputs[0] == i)


def fuse(ops: list[PycOp], r: PassReport, errata: frozenset[str]) -> None:
    """Under E14.3, PyC's rewrite; otherwise the pairs are left as they are."""
    i = 0
    while i + 1 < len(ops):
        if not (E14_3 in errata and fusable(ops, i)):
            i += 1
            continue
        name = f"fused_{ops[i].name}_{ops[i + 1].name}"[:MAX_NAME - 1]
        ops[i] = replace(ops[i], name=name)
        del ops[i + 1]
        ops[:] = [replace(op, inputs=tuple(i if j == i + 1 else j - 1 if j > i + 1 else j
                                           for j in op.inputs)) for op in ops]
        r.fused_patterns += 1
        r.transformed_ops += 1


def peak_live(ops: list[PycOp], errata: frozenset[str] = NO_ERRATA) -> int:
    """The most values alive at one op; under E14.4 PyC's count, which frees only unread
    values."""
    last_use = [-1] * len(ops)
    for i, op in enumerate(ops):
        for j in op.inputs:
            last_use[j] = i
    if E14_4 in errata:
        live = peak = 0
        for i in range(len(ops)):
            live += 1
            peak = max(peak, live)
            if last_use[i] in (i, -1):
                live -= 1
        return peak
    return max(sum(1 for v in range(i + 1) if v == i or last_use[v] >= i)
               for i in range(len(ops)))


def graph_breaks(ops: list[PycOp], r: PassReport) -> None:
    """Count every op the compiler cannot run, by kind, and note the first."""
    first_reason = "none"
    for i, op in enumerate(ops):
        if op.kind in SUPPORTED:
            continue
        reason = op.kind.name.lower() if op.kind.name.lower() in r.breaks else "unknown"
        r.breaks[reason] += 1
        if r.first_break_id < 0:
            first_reason, r.first_break_id = reason, i
            r.first_break_name = op.name or "unnamed"
    n, total = len(ops), sum(r.breaks.values())
    r.compilability = (n - total) / n if n else 0.0
    b = r.breaks
    r.summary = (f"breaks={total} first={first_reason}@{r.first_break_id} c={b['const']} "
                 f"g={b['gelu']} r={b['reduce_sum']} l={b['layernorm']} u={b['unknown']}")


def bucket(total_bytes: int, inputs: int) -> str:
    """`<class>:i<inputs>:b<bytes>`; 0 bytes lands in small, as in PyC."""
    klass = ("tiny" if 0 < total_bytes <= 256 else "small" if total_bytes <= 4096
             else "medium" if total_bytes <= 65536 else "large")
    return f"{klass}:i{inputs}:b{total_bytes}"


def signature(shapes: list[tuple[int, tuple[int, ...]]]) -> str:
    """`<dtype>:r<rank>x<d0>x<d1>...` per (dtype, shape), joined by `;`; empty past 127
    characters."""
    sig = ";".join(f"{dtype}:r{len(shape)}" + "".join(f"x{d}" for d in shape)
                   for dtype, shape in shapes)
    return sig if len(sig) <= SIGNATURE_MAX else ""


def module_bucket(ops: tuple[PycOp, ...] | list[PycOp]) -> str:
    """The bucket of a module's INPUT ops: elements x dtype bytes each, a rank-0 input none."""
    inputs = [op for op in ops if op.kind == OpKind.INPUT]
    total = 0
    for op in inputs:
        elems = 1
        for d in op.shape:
            elems *= d
        total += elems * DTYPE_BYTES[op.dtype] if op.shape else 0
    return bucket(total, len(inputs))


def module_signature(ops: tuple[PycOp, ...] | list[PycOp]) -> str:
    """The signature of a module's INPUT ops."""
    return signature([(int(op.dtype), op.shape) for op in ops if op.kind == OpKind.INPUT])


def speculative(ops: list[PycOp], r: PassReport) -> None:
    r.shape_bucket = module_bucket(ops)
    r.signature = module_signature(ops)
    total_breaks = sum(r.breaks.values())
    c = r.compilability * (0.65 if total_breaks else 1.0)
    c *= 0.95 if r.peak_live_values > 8 else 1.0
    r.confidence = min(max(c, 0.0), 1.0)
    r.plan_count = 3 if not total_breaks else 2 if r.compilability >= 0.75 else 1


def run_passes(m: PycModule, enabled: dict[str, bool] | None = None,
               errata: frozenset[str] = NO_ERRATA) -> tuple[PycModule, PassReport]:
    """The pipeline over a verified module: the module after it, and the report."""
    on = {p: True for p in PASS_NAMES} | (enabled or {})
    ops, r = list(m.ops), PassReport()
    steps = {"canonicalize": lambda: canonicalize(ops, r),
             "shape_inference": lambda: infer_shapes(ops, r),
             "fusion": lambda: fuse(ops, r, errata),
             "liveness": lambda: setattr(r, "peak_live_values", peak_live(ops, errata))}
    for name in PASS_NAMES:
        if on[name]:
            steps.get(name, lambda: None)()
            r.passes_run += 1
    graph_breaks(ops, r)
    speculative(ops, r)
    return PycModule(tuple(ops)), r
