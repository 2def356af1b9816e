"""Chapter 14: PyC's speculative plans (compiler_api.c): the shape variants a compile prepares
and the plan a run picks.

Variants, when speculative plans are on (after the passes, on the compiled module):
1. The count: max_speculative_plans; if 0, the pass report's plan count; if that is 0 too,
   3; never more than 3.
2. Variant i (i = 0, 1, 2) scales every dimension of every INPUT op by 1, 2, 4 (a dimension
   past 2^63 - 1 cannot be scaled); CONST ops keep theirs. Unless the factor is 1, every
   other op's shape is inferred again in op order: a matmul needs two rank-2 inputs with
   lhs[1] == rhs[0] and gives [lhs0, rhs1] in lhs's dtype; any other op with an input copies
   input 0's shape and dtype.
3. Its bucket and signature are its INPUT ops' (passes.py: `module_bucket`,
   `module_signature`).
4. Its confidence is the report's confidence, times 0.95 for i = 1 and 0.85 for i = 2 (one
   float64 product; the first variant keeps it as it is).
5. Every variant carries the compile's objective mode.
A variant whose shapes do not agree (a matmul fed by a CONST, which is not scaled) is left out
and the others are kept; PyC fails the whole compile (E14.20).

Selection, for a run's mode, shape signature and shape bucket:
1. the first plan with the run's signature and mode; 2. else the first with its signature;
3. else the first with its bucket and mode; 4. else the first with its bucket; else none.
An empty signature skips steps 1-2 and an empty bucket steps 3-4.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, Field, Int, List, Utf8, record
from ..core.strategies import st
from .fingerprint import MODULE, check_module, wire_op
from .ir import DTYPE_BYTES, OpKind, PycModule, PycOp, module_from_wire, require_verified
from .kernels import BALANCED, MODE
from .passes import SIGNATURE_MAX, module_bucket, module_signature
from .wire import F64, PYC_SEED, bits, f64, f64_strategy, finite

E14_20 = "E14.20"
PLAN_MAX = 3
"""Plans a model holds. Real code: compiler_api.c, PYC_SPECULATIVE_PLAN_MAX."""
SCALES = (1, 2, 4)
"""The factor of each variant's INPUT dimensions."""
DISCOUNTS = (None, 0.95, 0.85)
"""What each variant's confidence is multiplied by (the first: nothing)."""
BUCKET_MAX = 63
"""Characters a plan's bucket keeps (char[64])."""
I64_MAX = 2**63 - 1
BYTES_BOUND = 2**48
"""The spec's own bound on one op's bytes in the largest variant."""
NONE = 4294967295
"""No plan."""


@dataclass(frozen=True)
class Plan:
    """A speculative plan: its variant's scale, module, bucket, signature, confidence, mode."""

    scale: int
    module: PycModule
    bucket: str
    signature: str
    confidence: float
    mode: int


def plan_count(max_plans: int, report_plans: int) -> int:
    """Step 1."""
    return min(max_plans or report_plans or PLAN_MAX, PLAN_MAX)


def infer_variant(ops: list[PycOp]) -> bool:
    """Step 2's inference, in op order; False when a matmul's shapes do not agree."""
    for i, op in enumerate(ops):
        if op.kind in (OpKind.INPUT, OpKind.CONST):
            continue
        if op.kind == OpKind.MATMUL:
            if len(op.inputs) < 2:
                return False
            lhs, rhs = ops[op.inputs[0]], ops[op.inputs[1]]
            if len(lhs.shape) != 2 or len(rhs.shape) != 2 or lhs.shape[1] != rhs.shape[0]:
                return False
            ops[i] = replace(op, shape=(lhs.shape[0], rhs.shape[1]), dtype=lhs.dtype)
        elif op.inputs:
            src = ops[op.inputs[0]]
            ops[i] = replace(op, shape=src.shape, dtype=src.dtype)
    return True


def scaled(m: PycModule, factor: int) -> PycModule | None:
    """Step 2: the variant of `m` at `factor`, or None when it cannot be built."""
    if factor == 1:
        return m
    ops = list(m.ops)
    for i, op in enumerate(ops):
        if op.kind != OpKind.INPUT:
            continue
        if any(d > I64_MAX // factor for d in op.shape):
            return None
        ops[i] = replace(op, shape=tuple(d * factor for d in op.shape))
    return PycModule(tuple(ops)) if infer_variant(ops) else None


def variants(m: PycModule, max_plans: int, report_plans: int, confidence: float, mode: int,
             errata: frozenset[str] = NO_ERRATA) -> list[Plan] | None:
    """Steps 1-5: the plans, in variant order; None when the compile fails (E14.20)."""
    plans = []
    for i in range(plan_count(max_plans, report_plans)):
        v = scaled(m, SCALES[i])
        if v is None:
            if E14_20 in errata:
                return None
            continue
        conf = confidence if DISCOUNTS[i] is None else confidence * DISCOUNTS[i]  # 4
        plans.append(Plan(SCALES[i], v, module_bucket(v.ops), module_signature(v.ops), conf,
                          mode))
    return plans


def select(plans: list[Plan] | list[dict], mode: int, signature: str, bucket: str) -> int | None:
    """Selection steps 1-4: the index of the plan a run takes, or None."""
    def get(p, key: str):
        return p[key] if isinstance(p, dict) else getattr(p, key)

    rules = []
    if signature:
        rules += [lambda p: get(p, "signature") == signature and get(p, "mode") == mode,
                  lambda p: get(p, "signature") == signature]
    if bucket:
        rules += [lambda p: get(p, "mode") == mode and get(p, "bucket") == bucket,
                  lambda p: get(p, "bucket") == bucket]
    for rule in rules:
        for i, p in enumerate(plans):
            if rule(p):
                return i
    return None


# ── pyc.speculative.plans ─────────────────────────────────────────────────────────────────────


def check_plans(args: dict) -> None:
    """A verified module whose largest variant keeps every op below 2^48 bytes."""
    check_module(args)
    m = module_from_wire(args["module"])
    require_verified(m)
    finite(args["confidence"], "args.confidence")
    for i, op in enumerate(m.ops):
        elems = 1
        for d in op.shape:
            elems *= d * SCALES[-1]
        if elems * max(DTYPE_BYTES[op.dtype], 1) >= BYTES_BOUND:
            raise InvalidInput(f"args.module.ops[{i}].shape: scaled by 4, {elems} elements "
                               f"pass the spec's bound of {BYTES_BOUND} bytes per op")


def plans_op(module: dict, max_plans: int, report_plans: int, confidence: int, mode: int,
             errata: frozenset[str] = NO_ERRATA) -> dict:
    plans = variants(module_from_wire(module), max_plans, report_plans, f64(confidence), mode,
                     errata)
    return {"compiles": plans is not None,
            "plans": [{"scale": p.scale, "bucket": p.bucket, "signature": p.signature,
                       "confidence": bits(p.confidence), "mode": p.mode} for p in plans or ()]}


MM = {"ops": [wire_op("input", "a", [2, 3]), wire_op("input", "b", [3, 4]),
              wire_op("matmul", "op_2", [2, 4], [0, 1]), wire_op("output", "op_3", [2, 4], [2])]}
"""The facts sheet's golden module after the passes (fusion off): buckets tiny:i2:b72,
small:i2:b288, small:i2:b1152."""
CONST_MM = {"ops": [wire_op("input", "a", [2, 3]), wire_op("const", "w", [3, 4]),
                    wire_op("matmul", "op_2", [2, 4], [0, 1]),
                    wire_op("output", "op_3", [2, 4], [2])]}
"""A matmul of an input and a CONST: its scaled variants cannot be built."""
SCALAR = {"ops": [wire_op("input", "s", []), wire_op("output", "o", [], [0])]}


def plans_args(module: dict, max_plans: int = 0, report_plans: int = 3,
               confidence: float = 1.0, mode: int = BALANCED) -> dict:
    return {"module": module, "max_plans": max_plans, "report_plans": report_plans,
            "confidence": bits(confidence), "mode": MODE.names[mode]}


def plans_edges() -> list[dict]:
    """Every count rule, the discounts, a scalar input, and E14.20's witness."""
    return [plans_args(MM), plans_args(MM, 2, 3, 0.7, 1), plans_args(MM, 0, 0, 0.3),
            plans_args(MM, 7, 1, 0.1, 2), plans_args(MM, 0, 1), plans_args(SCALAR),
            plans_args(CONST_MM, 0, 2, 0.4875), plans_args(CONST_MM, 1, 2)]


def plans_domain() -> st.SearchStrategy:
    dims = st.integers(1, 6)

    @st.composite
    def build(draw) -> dict:
        m, k, n = draw(dims), draw(dims), draw(dims)
        second = draw(st.sampled_from(("input", "input", "const")))
        ops = [wire_op("input", "a", [m, k], dtype=draw(st.sampled_from((1, 2, 4)))),
               wire_op(second, "b", [k, n]), wire_op("matmul", "mm", [m, n], [0, 1])]
        for kind in draw(st.lists(st.sampled_from(("relu", "gelu", "output")), max_size=3)):
            ops.append(wire_op(kind, "", [m, n], [len(ops) - 1]))
        ops += [wire_op("input", f"x{i}", draw(st.lists(dims, max_size=3)))
                for i in range(draw(st.integers(0, 2)))]
        return plans_args({"ops": ops}, draw(st.integers(0, 5)), draw(st.integers(0, 3)),
                          f64(draw(f64_strategy(0.0, 1.0)))) | {"mode": draw(st.integers(0, 2))}

    return build()


_PLAN = record(scale=Field(Int(32), "the factor of the INPUT dimensions: 1, 2 or 4"),
               bucket=Utf8(), signature=Field(Utf8(), "empty past 127 characters"),
               confidence=Field(F64, "float64 bits"), mode=MODE)
_ONE_MODULE = "the variants of one module, at most three: nothing to batch"
declare(
    "pyc.speculative.plans", chapter=14,
    summary="The speculative plans a compile prepares: the module's INPUT dimensions scaled by "
            "1, 2 and 4, each with its shape bucket, signature and discounted confidence.",
    args=record(module=Field(MODULE, "the module after the passes"),
                max_plans=Field(Int(64), "max_speculative_plans; 0: the report's count", 0),
                report_plans=Field(Int(32), "the pass report's speculative_plan_count", 3),
                confidence=Field(F64, "the pass report's speculative_confidence (float64 "
                                      "bits)", bits(1.0)),
                mode=Field(MODE, "the compile's objective mode", BALANCED)),
    result=record(compiles=Field(BOOL, "the compile goes on (PyC: false when a variant "
                                       "fails, E14.20)"),
                  plans=Field(List(_PLAN, PLAN_MAX), "in variant order")),
    spec=(variants, scaled, infer_variant, plan_count), check=check_plans, errata=(E14_20,),
    domain=plans_domain, edges=plans_edges,
    invalid=(InvalidCase("a module verify rejects", lambda: st.just(
                 plans_args({"ops": [wire_op("input", "x", [0])]}))),
             InvalidCase("dimensions past the bound once scaled", lambda: st.just(
                 plans_args({"ops": [wire_op("input", "x", [2**23, 2**23])]}))),
             InvalidCase("a NaN confidence", lambda: st.just(
                 {**plans_args(MM), "confidence": bits(float("nan"))}))),
    not_applicable={"numba": _ONE_MODULE, "cupy": _ONE_MODULE},
)

erratum(
    E14_20, "A variant that cannot be built fails the whole compile",
    seed=PYC_SEED, location="src/compiler/compiler_api.c initialize_speculative_plans",
    ops=("pyc.speculative.plans", "pyc.run_stats"),
    witness={"args": plans_args(CONST_MM, 0, 2, 0.4875),
             "spec": {"compiles": True, "plans": [{
                 "scale": 1, "bucket": "tiny:i1:b24", "signature": "1:r2x2x3",
                 "confidence": "0x3fdf333333333333", "mode": "balanced"}]},
             "seed": {"compiles": False, "plans": []}},
    flag="result",
    also=({"op": "pyc.run_stats",
           "args": {"module": CONST_MM, "backend": "cpu", "speculative": True, "phantom": False,
                    "max_plans": 0, "horizon": 1, "fastpath_env": True, "runs": []},
           "spec": {"compiled": True, "plan_count": 1},
           "seed": {"compiled": False, "plan_count": 0}},),
    detail="initialize_speculative_plans returns -1 as soon as one scaled variant fails, and "
           "pyc_compile_model then answers COMPILE_FAILED. CONST ops are not scaled, so a "
           "matmul of an INPUT and a CONST has no variant at scale 2 (lhs[1] is 6, rhs[0] 3): a "
           "module that compiles with speculative plans off does not compile with them on "
           "(the default count for one graph break is 2). The spec leaves that variant out.",
)


# ── pyc.speculative.select ────────────────────────────────────────────────────────────────────

_TEXT = Utf8(c_string=True)


def check_select(args: dict) -> None:
    """Plans hold buckets of at most 63 and signatures of at most 127 bytes (PyC's arrays);
    a run's are held to the same."""
    items = [("args", args)] + [(f"args.plans[{i}]", p) for i, p in enumerate(args["plans"])]
    for where, item in items:
        for key, most in (("bucket", BUCKET_MAX), ("signature", SIGNATURE_MAX)):
            if len(item[key].encode()) > most:
                raise InvalidInput(f"{where}.{key}: longer than {most} bytes")


def select_op(plans: list[dict], mode: int, signature: str, bucket: str) -> dict:
    i = select(plans, mode, signature, bucket)
    return {"plan": NONE if i is None else i}


def _p(mode: int, sig: str, bucket: str) -> dict:
    return {"mode": MODE.names[mode], "signature": sig, "bucket": bucket}


SIG_A, SIG_B = "1:r2x2x3;1:r2x3x4", "1:r2x4x6;1:r2x6x8"
PLANS_AB = [_p(1, SIG_A, "tiny:i2:b72"), _p(0, SIG_A, "tiny:i2:b72"),
            _p(0, SIG_B, "small:i2:b288"), _p(1, "", "small:i2:b288")]


def select_edges() -> list[dict]:
    """Each rule winning, an empty signature, an empty bucket, and no plan."""
    def case(mode, sig, bucket, plans=PLANS_AB[:3]) -> dict:
        return {"plans": plans, "mode": MODE.names[mode], "signature": sig, "bucket": bucket}

    return [case(0, SIG_A, "x"), case(2, SIG_A, "x"), case(1, "1:r1x9", "small:i2:b288"),
            case(2, "1:r1x9", "small:i2:b288"), case(0, "", "tiny:i2:b72"),
            case(0, SIG_B, ""), case(0, "", ""), case(0, "1:r1x9", "large:i1:b99999"),
            case(1, "", "small:i2:b288", PLANS_AB[2:] + PLANS_AB[:1]), case(0, SIG_A, "", []),
            case(0, "", "small:i2:b288", PLANS_AB[1:])]


def select_domain() -> st.SearchStrategy:
    sigs = st.sampled_from(("", SIG_A, SIG_B, "1:r0"))
    buckets = st.sampled_from(("", "tiny:i2:b72", "small:i2:b288", "small:i1:b0"))
    modes = st.integers(0, 2)
    plan = st.fixed_dictionaries({"mode": modes, "signature": sigs, "bucket": buckets})
    return st.fixed_dictionaries({"plans": st.lists(plan, max_size=PLAN_MAX), "mode": modes,
                                  "signature": sigs, "bucket": buckets})


_FEW = "at most three plans compared as strings: no numeric core"
declare(
    "pyc.speculative.select", chapter=14,
    summary="The speculative plan a run takes: by signature and mode, then signature, then "
            "bucket and mode, then bucket; the first in plan order at each step.",
    args=record(plans=Field(List(record(mode=MODE, signature=_TEXT, bucket=_TEXT), PLAN_MAX),
                            "the model's plans, in order"),
                mode=Field(MODE, "the run's objective mode"),
                signature=Field(_TEXT, "the run's shape signature; empty: none"),
                bucket=Field(_TEXT, "the run's shape bucket; empty: none")),
    result=record(plan=Field(Int(32), "the plan's index; 4294967295: none")),
    spec=(select,), check=check_select, domain=select_domain, edges=select_edges,
    invalid=(InvalidCase("a signature past 127 bytes", lambda: st.just(
                 {"plans": [], "mode": "balanced", "signature": "x" * 128, "bucket": ""})),
             InvalidCase("a plan's bucket past 63 bytes", lambda: st.just(
                 {"plans": [_p(0, "", "b" * 64)], "mode": "balanced", "signature": "",
                  "bucket": ""})),
             InvalidCase("four plans", lambda: st.just(
                 {"plans": PLANS_AB, "mode": "balanced", "signature": "", "bucket": ""}))),
    not_applicable={"numba": _FEW, "cupy": _FEW},
)
