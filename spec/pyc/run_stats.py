"""Chapter 12: PyC's `pyc_run_stats` (include/pyc/compiler_api.h): the record every run fills,
its layout, and the counters a sequence of runs of one compiled model leaves in it.

The compile here is PyC's with deterministic_strict on (so the objective mode never moves),
the compile cache, fusion and autotune off, memory reuse on, balanced mode:
1. The passes run (fusion off); a shape that does not infer fails the compile.
2. The speculative plans are built from the module after the passes (speculative.py); with
   speculative plans off the model's confidence is the report's. The phantom graph, when on,
   expects the report's bucket and signature with the report's confidence (phantom.py).
Each run, in order (repeat.py for the fast path, guard.py for the input guard):
1. The fast path decides how the input guard is skipped, if it is; a skipped guard takes the
   last run's bucket and signature, otherwise they are the run's inputs' (a tensor's bytes:
   elements x dtype bytes, or its size_bytes where that is 0).
2. With plans, the run takes the plan selection picks (a hit), else counts a miss and runs the
   module after the passes.
3. Unless skipped, the input guard checks the inputs against the module the run takes: a
   failure is a guard miss, counted as a speculative guard miss too when plans are on (PyC:
   always, E12.21), and fails the run.
4. The run executes: it fails when the module holds an op the CPU executor lacks (const, gelu,
   reduce_sum, layernorm), an input is not f32 or has no data, or an OUTPUT op has no output
   tensor with data and room for its elements. The CUDA backend here finds no GPU: it runs
   the CPU executor and counts a fallback when that succeeds.
5. A successful run is remembered when plans and phantom graph are off; a failed one forgets.
6. The phantom graph observes the run (its failure included).
7. Unless the fast path skips it, the controller runs and the plan is chosen again: PyC counts
   a second miss there when none matches (E12.20).
Timings (compile_ms, run_ms, the stage times) and everything the rails controller decides
from them (shadow mode and reason, rollback) are not deterministic and are left out; so are
the kernel choice and allocator figures, which belong to pyc.kernel.select and pyc.alloc.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.layout import Member, array, f64, i32, struct, u8, u64
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, Field, Int, List, Utf8, record
from ..core.strategies import st
from .fingerprint import MODULE, check_module, wire_op
from .guard import (
    E14_6,
    E14_7,
    MM_4X4,
    REASONS,
    STATS_BASE,
    TensorDesc,
    descs_from_wire,
    elements,
    input_reason,
)
from .ir import DTYPE_BYTES, DType, OpKind, PycModule, module_from_wire, require_verified
from .kernels import BALANCED
from .passes import PASS_NAMES, bucket, run_passes, signature
from .phantom import Phantom, observe
from .repeat import (
    BACKEND,
    CPU,
    CUDA,
    DESCS,
    NOT_CACHED,
    LastRun,
    RunConfig,
    cached_by,
    check_descs,
    remembers,
    skips_controller,
)
from .speculative import E14_20, Plan, select, variants
from .wire import F64, PYC_SEED, Named, bits

E12_20, E12_21 = "E12.20", "E12.21"
MAX_RUNS = 64
"""The spec's own bound on the runs of one sequence."""
BUFFER_BOUND = 1 << 24
"""The spec's own bound on the bytes of one op of the largest variant: a run reads at most
that much of a buffer, whatever its size_bytes says."""
EXECUTABLE = frozenset({OpKind.INPUT, OpKind.MATMUL, OpKind.ADD, OpKind.RELU, OpKind.OUTPUT})
"""Op kinds the CPU executor runs."""
STATUS = ("ok", "runtime_failed")

RUN_STATS = struct("pyc_run_stats", [
    *(Member(n, f64) for n in ("compile_ms", "run_ms")),
    *(Member(n, u64) for n in ("peak_bytes", "total_requested_bytes", "reused_allocations",
                               "rematerialized_tensors", "rematerialized_bytes",
                               "pressure_events")),
    *(Member(n, f64) for n in ("pressure_score", "selected_kernel_score",
                               "selected_kernel_allocator_penalty",
                               "selected_kernel_reuse_bonus", "estimated_utilization")),
    Member("active_mode", i32), Member("rollback_reason", i32), Member("rollback_count", u64),
    Member("shadow_mode", i32), Member("shadow_reason", i32),
    Member("workload_family", array(u8, 32)), Member("hardware_family", array(u8, 32)),
    Member("selected_kernel_count", i32), Member("selected_kernel_candidates", u64),
    Member("selected_kernel_symbol", array(u8, 128)), Member("execution_path", array(u8, 128)),
    *(Member(n, f64) for n in ("dispatch_ms", "graph_exec_ms", "controller_ms",
                               "kernel_select_ms", "cuda_copy_in_ms", "cuda_kernel_ms",
                               "cuda_copy_out_ms", "cuda_sync_ms")),
    Member("deterministic_contract_enforced", i32), Member("deterministic_contract_ok", i32),
    Member("model_fingerprint", u64), Member("deterministic_contract_reason", array(u8, 64)),
    Member("compile_cache_hit", i32), Member("compile_budget_exceeded", i32),
    *(Member(n, u64) for n in ("guard_miss_count", "fallback_count", "graph_break_count",
                               "graph_break_const_count", "graph_break_gelu_count",
                               "graph_break_reduce_sum_count", "graph_break_layernorm_count",
                               "graph_break_unknown_count")),
    Member("first_graph_break_op_id", i32), Member("first_graph_break_op_name", array(u8, 64)),
    Member("compilability_score", f64), Member("autotune_loaded", i32),
    Member("autotune_saved", i32), Member("graph_break_summary", array(u8, 128)),
    Member("speculative_plan_count", u64), Member("speculative_plan_hit", i32),
    Member("speculative_plan_miss_count", u64), Member("speculative_guard_miss_count", u64),
    Member("speculative_confidence", f64), Member("speculative_shape_bucket", array(u8, 64)),
    Member("phantom_graph_enabled", i32), Member("phantom_graph_match", i32),
    *(Member(n, u64) for n in ("phantom_graph_match_count", "phantom_graph_mismatch_count",
                               "phantom_graph_reshape_count")),
    Member("phantom_graph_confidence", f64), Member("phantom_graph_match_score", f64),
    Member("phantom_graph_expected_bucket", array(u8, 64)),
    Member("phantom_graph_expected_signature", array(u8, 128)),
    Member("phantom_graph_observed_signature", array(u8, 128)),
], size=1368, align=8, chapter=12, seed=PYC_SEED,
    doc="x86-64, gcc 12.2 -O3: 68 members; enums and ints are 4 bytes, size_t 8; bytes "
        "196..199, 748..751 and 908..911 are padding.")


@dataclass
class Model:
    """What a sequence of runs reads and writes of a compiled model."""

    cfg: RunConfig
    module: PycModule
    plans: list[Plan]
    confidence: float
    phantom: Phantom | None
    last: LastRun | None = None
    guard_misses: int = 0
    fallbacks: int = 0
    misses: int = 0
    spec_guard_misses: int = 0


def run_bucket(inputs: tuple[TensorDesc, ...]) -> str:
    """A run's bucket: each tensor's elements x dtype bytes, or its size_bytes where that is
    0 (a rank-0 or non-positive shape), summed as size_t."""
    total = 0
    for t in inputs:
        n = 0 if not t.shape or any(d <= 0 for d in t.shape) else elements(t.shape)
        nbytes = n * DTYPE_BYTES[DType(t.dtype)] % 2**64
        total = (total + (nbytes if nbytes else t.size_bytes)) % 2**64
    return bucket(total, len(inputs))


def run_signature(inputs: tuple[TensorDesc, ...]) -> str:
    return signature([(t.dtype, t.shape) for t in inputs])


def executes(m: PycModule, inputs: tuple[TensorDesc, ...], outputs: tuple[TensorDesc, ...],
             errata: frozenset[str] = NO_ERRATA) -> bool:
    """Step 4: the CPU executor runs the module to the end."""
    ins, outs = iter(inputs), iter(outputs)
    for op in m.ops:
        if op.kind not in EXECUTABLE:
            return False
        if op.kind == OpKind.INPUT:
            t = next(ins, None)
            need = elements(op.shape, errata) * 4
            if t is None or not t.data or t.dtype != DType.F32 or not 0 < need <= t.size_bytes:
                return False
        elif op.kind == OpKind.OUTPUT:
            t = next(outs, None)
            need = elements(m.ops[op.inputs[0]].shape, errata) * 4 if op.inputs else 0
            if t is None or not t.data or not 0 < need <= t.size_bytes:
                return False
    return True


def compile_model(m: PycModule, cfg: RunConfig, max_plans: int, horizon: int,
                  errata: frozenset[str] = NO_ERRATA) -> Model | None:
    """Compile steps 1-2; None when the compile fails."""
    try:
        after, report = run_passes(m, dict.fromkeys(PASS_NAMES, True) | {"fusion": False},
                                   errata)
    except InvalidInput:
        return None
    plans = variants(after, max_plans, report.plan_count, report.confidence, BALANCED,
                     errata) if cfg.speculative else []
    if plans is None:
        return None
    ph = Phantom(report.shape_bucket, report.signature, report.confidence,
                 max(horizon, 1)) if cfg.phantom else None
    return Model(cfg, after, plans, report.confidence, ph)


def apply(model: Model, plan: Plan) -> None:
    """A plan taken sets the model's confidence (the stats' speculative_confidence)."""
    model.confidence = plan.confidence


def run(model: Model, inputs: tuple[TensorDesc, ...], outputs: tuple[TensorDesc, ...],
        errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run steps 1-7; the run's deterministic stats."""
    cfg, last = model.cfg, model.last
    how = cached_by(cfg, last, inputs, outputs, errata)  # 1
    cached = how != NOT_CACHED
    b = last.bucket if cached else run_bucket(inputs)
    sig = last.signature if cached else run_signature(inputs)
    module, hit = model.module, False
    if model.plans:  # 2
        i = select(model.plans, BALANCED, sig, b)
        if i is None:
            model.misses += 1
        else:
            module, hit = model.plans[i].module, True
            apply(model, model.plans[i])
    reason, failed = "ok", False
    if not cached:  # 3
        reason = input_reason(module, inputs, errata)
        failed = reason != "ok"
        model.guard_misses += failed
        model.spec_guard_misses += failed and (bool(model.plans) or E12_21 in errata)
    if not failed:  # 4
        failed = not executes(module, inputs, outputs, errata)
        model.fallbacks += not failed and cfg.backend == CUDA
    if not failed and remembers(cfg):  # 5
        model.last = LastRun(inputs, outputs, b, sig)
    elif failed:
        model.last = None
    ph = model.phantom
    step = observe(ph, b, sig, failed) if ph else None  # 6
    stable = skips_controller(cfg, how, failed)
    if not stable and model.plans:  # 7
        j = select(model.plans, BALANCED, sig, b)
        if j is not None:
            apply(model, model.plans[j])
        elif E12_20 in errata:
            model.misses += 1
    return {
        "status": int(failed), "contract_ok": reason == "ok",
        "contract_reason": REASONS.index(reason), "guard_miss_count": model.guard_misses,
        "fallback_count": model.fallbacks, "stable_repeat": stable,
        "speculative_plan_hit": hit, "speculative_plan_miss_count": model.misses,
        "speculative_guard_miss_count": model.spec_guard_misses,
        "speculative_confidence": bits(model.confidence), "speculative_shape_bucket": b,
        "phantom_graph_match": bool(step and step.match),
        "phantom_graph_match_score": bits(step.score if step else 0.0),
        "phantom_graph_match_count": ph.matches if ph else 0,
        "phantom_graph_mismatch_count": ph.mismatches if ph else 0,
        "phantom_graph_reshape_count": ph.reshapes if ph else 0,
        "phantom_graph_confidence": bits(ph.confidence if ph else 0.0),
        "phantom_graph_expected_bucket": ph.bucket if ph else "",
        "phantom_graph_expected_signature": ph.signature if ph else "",
        "phantom_graph_observed_signature": sig if ph else ""}


def run_sequence(m: PycModule, cfg: RunConfig, max_plans: int, horizon: int,
                 runs: list[tuple[tuple[TensorDesc, ...], tuple[TensorDesc, ...]]],
                 errata: frozenset[str] = NO_ERRATA) -> tuple[Model | None, list[dict]]:
    """Compile once, then each run in order."""
    model = compile_model(m, cfg, max_plans, horizon, errata)
    if model is None:
        return None, []
    return model, [run(model, i, o, errata) for i, o in runs]


# ── pyc.run_stats ─────────────────────────────────────────────────────────────────────────────


def check_runs(args: dict) -> None:
    """A verified module whose every op, scaled by 4, stays within 16 MiB; pyc_dtype
    descriptors, at least one each way per run."""
    check_module(args)
    m = module_from_wire(args["module"])
    require_verified(m)
    for i, op in enumerate(m.ops):
        if elements(op.shape) * 4 ** len(op.shape) * 4 > BUFFER_BOUND:
            raise InvalidInput(f"args.module.ops[{i}].shape: scaled by 4, past the spec's "
                               f"bound of {BUFFER_BOUND} bytes per op")
    for k, r in enumerate(args["runs"]):
        try:
            check_descs({"inputs": r["inputs"], "outputs": r["outputs"], "last": None})
        except InvalidInput as e:
            raise InvalidInput(str(e).replace("args.", f"args.runs[{k}].", 1)) from None


def run_stats_op(module: dict, backend: int, speculative: bool, phantom: bool, max_plans: int,
                 horizon: int, fastpath_env: bool, runs: list[dict],
                 errata: frozenset[str] = NO_ERRATA) -> dict:
    cfg = RunConfig(backend, speculative, phantom, False, fastpath_env)
    seq = [(descs_from_wire(r["inputs"]), descs_from_wire(r["outputs"])) for r in runs]
    model, stats = run_sequence(module_from_wire(module), cfg, max_plans, horizon, seq, errata)
    return {"compiled": model is not None, "plan_count": len(model.plans) if model else 0,
            "runs": stats}


def _d(shape: tuple = (2, 2), data: int = 1, dtype: int = 1, size: int | None = None) -> dict:
    n = 1
    for d in shape:
        n *= d
    return {"dtype": dtype, "shape": list(shape), "size_bytes": 4 * n if size is None else size,
            "data": data}


def square(n: int, a: int = 1, b: int = 2, out: int = 3) -> dict:
    """Two f32 [n, n] inputs and an [n, n] output, in buffers a, b and out."""
    return {"inputs": [_d((n, n), a), _d((n, n), b)], "outputs": [_d((n, n), out)]}


MM_2X2 = {"ops": [wire_op("input", "a", [2, 2]), wire_op("input", "b", [2, 2]),
                  wire_op("matmul", "mm", [2, 2], [0, 1]), wire_op("output", "out", [2, 2], [2])]}
"""PyC's own speculative-plan test module."""
SCALAR = {"ops": [wire_op("input", "s", []), wire_op("output", "o", [], [0])]}


def stats_args(runs: list[dict], module: dict = MM_2X2, backend: int = CPU, speculative=True,
               phantom=True, max_plans: int = 3, horizon: int = 1, env: bool = True) -> dict:
    return {"module": module, "backend": BACKEND.names[backend], "speculative": speculative,
            "phantom": phantom, "max_plans": max_plans, "horizon": horizon, "fastpath_env": env,
            "runs": runs}


def stats_edges() -> list[dict]:
    """PyC's own test sequence, a drift with a horizon, the fast path's kinds, the errata."""
    repeat = [square(2)] * 3 + [square(2, a=4)] * 2
    return [stats_args([square(2), square(4), square(3)]),
            stats_args([square(2), square(4), square(4), square(8), square(2)], horizon=2),
            stats_args(repeat, backend=CUDA, speculative=False, phantom=False),
            stats_args(repeat, backend=CPU, speculative=False, phantom=False),
            stats_args(repeat, backend=CUDA, speculative=False, phantom=False, env=False),
            stats_args([square(2), square(3), square(2)], speculative=False, phantom=True),
            stats_args([square(4), {**square(4), "inputs": [_d((4, 4), 1, 2, 0x30000000195),
                                                            _d((4, 4), 2)]}], MM_4X4, CUDA,
                       speculative=False, phantom=False),
            stats_args([square(2), square(3)], speculative=False, phantom=False),
            stats_args([square(2), {**square(2), "outputs": [_d((1,), 3)]}, square(2)]),
            stats_args([square(2), {**square(2), "outputs": [_d((1,), 3)]}, square(2)], MM_2X2,
                       CUDA, speculative=False, phantom=False),
            stats_args([square(2)], {"ops": [*MM_2X2["ops"][:3], wire_op("gelu", "", [2, 2], [2]),
                                             wire_op("output", "", [2, 2], [3])]}),
            stats_args([{"inputs": [_d((), 1)], "outputs": [_d((), 2)]}], SCALAR,
                       speculative=False, phantom=False)]


def stats_domain() -> st.SearchStrategy:
    side = st.sampled_from((1, 2, 3, 4, 8))

    @st.composite
    def one_run(draw) -> dict:
        n = draw(side)
        r = square(n, draw(st.integers(0, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3)))
        if draw(st.integers(0, 5)) == 0:
            r["inputs"][0]["dtype"] = draw(st.sampled_from((2, 4)))
        if draw(st.integers(0, 5)) == 0:
            r["outputs"][0]["size_bytes"] = draw(st.integers(0, 64))
        if draw(st.integers(0, 7)) == 0:
            r["inputs"] = r["inputs"][:1]
        return r

    @st.composite
    def build(draw) -> dict:
        n = draw(st.sampled_from((1, 2, 3)))
        ops = [wire_op("input", "a", [n, n]), wire_op("input", "b", [n, n]),
               wire_op("matmul", "", [n, n], [0, 1])]
        for kind in draw(st.lists(st.sampled_from(("relu", "gelu")), max_size=1)):
            ops.append(wire_op(kind, "", [n, n], [len(ops) - 1]))
        ops.append(wire_op("output", "", [n, n], [len(ops) - 1]))
        backend = draw(st.sampled_from((CPU, CUDA)))
        return stats_args(draw(st.lists(one_run(), max_size=8)), {"ops": ops}, backend,
                          draw(st.booleans()), draw(st.booleans()), draw(st.integers(0, 4)),
                          draw(st.integers(0, 3)), draw(st.booleans())) | {"backend": backend}

    return build()


_RUN = record(
    status=Field(Named(STATUS, "run status"), "ok, or runtime_failed (pyc_status 4)"),
    contract_ok=BOOL, contract_reason=Field(Named(REASONS, "contract_reason"), "as pyc.guard"),
    guard_miss_count=Int(64), fallback_count=Int(64),
    stable_repeat=Field(BOOL, "the controller and kernel reselection were skipped"),
    speculative_plan_hit=BOOL, speculative_plan_miss_count=Int(64),
    speculative_guard_miss_count=Int(64),
    speculative_confidence=Field(F64, "float64 bits"), speculative_shape_bucket=Utf8(),
    phantom_graph_match=BOOL, phantom_graph_match_score=Field(F64, "float64 bits"),
    phantom_graph_match_count=Int(64), phantom_graph_mismatch_count=Int(64),
    phantom_graph_reshape_count=Int(64), phantom_graph_confidence=Field(F64, "float64 bits"),
    phantom_graph_expected_bucket=Utf8(), phantom_graph_expected_signature=Utf8(),
    phantom_graph_observed_signature=Utf8())
_SEQUENTIAL = "each run reads the model state the one before left: one sequential chain"
declare(
    "pyc.run_stats", chapter=12,
    summary="The deterministic pyc_run_stats counters of a sequence of runs of one compiled "
            "model: guards, fast path, speculative plans and the phantom graph.",
    args=record(module=Field(MODULE, "the source module"),
                backend=Field(BACKEND, "cpu, or cuda without a GPU (CPU fallback)"),
                speculative=Field(BOOL, "enable_speculative_plans"),
                phantom=Field(BOOL, "enable_phantom_graph"),
                max_plans=Field(Int(64), "max_speculative_plans", 3),
                horizon=Field(Int(64), "phantom_horizon_steps", 1),
                fastpath_env=Field(BOOL, "PYC_ENABLE_STABLE_REPEAT_FASTPATH on", True),
                runs=Field(List(record(inputs=DESCS, outputs=DESCS), MAX_RUNS),
                           "each run's descriptors; data names a buffer (0: null)")),
    result=record(compiled=Field(BOOL, "the compile succeeded"),
                  plan_count=Field(Int(32), "speculative_plan_count"),
                  runs=Field(List(_RUN), "one stats record per run")),
    spec=(run, compile_model, executes, run_bucket), check=check_runs,
    errata=(E12_20, E12_21, E14_6, E14_7, E14_20), domain=stats_domain, edges=stats_edges,
    invalid=(InvalidCase("a run without inputs", lambda: st.just(
                 stats_args([{"inputs": [], "outputs": [_d()]}]))),
             InvalidCase("a module verify rejects", lambda: st.just(
                 stats_args([], {"ops": []}))),
             InvalidCase("an op past 16 MiB once scaled", lambda: st.just(
                 stats_args([], {"ops": [wire_op("input", "x", [1 << 21])]})))),
    not_applicable={"numba": _SEQUENTIAL, "cupy": _SEQUENTIAL},
)

FAILED_3X3 = {"status": "runtime_failed", "contract_ok": False,
              "contract_reason": "input_shape_mismatch", "guard_miss_count": 1,
              "speculative_guard_miss_count": 1, "speculative_shape_bucket": "tiny:i2:b72"}
"""A run of two 3x3 inputs on PyC's 2x2 test module: no plan, the input guard fails."""
erratum(
    E12_20, "A run no plan matches counts two speculative misses",
    seed=PYC_SEED, location="src/compiler/compiler_api.c pyc_run_model, find_speculative_plan",
    ops=("pyc.run_stats",),
    witness={"args": stats_args([square(3)], phantom=False),
             "spec": {"runs": [STATS_BASE | FAILED_3X3 | {"speculative_plan_miss_count": 1}]},
             "seed": {"runs": [STATS_BASE | FAILED_3X3 | {"speculative_plan_miss_count": 2}]}},
    flag="result",
    detail="pyc_run_model looks the run's shape up among the speculative plans before the "
           "guards and again after the controller; each lookup that finds nothing adds one to "
           "speculative_plan_miss_count, so one unmatched run counts 2 (PyC's own test module, "
           "inputs 3x3: spec_miss=2 after one run). The spec counts a run's miss once.",
)
erratum(
    E12_21, "Input-guard misses count as speculative guard misses with speculative plans off",
    seed=PYC_SEED, location="src/compiler/compiler_api.c pyc_run_model, inputs_match_module",
    ops=("pyc.run_stats",),
    witness={"args": stats_args([square(2), square(3)], speculative=False, phantom=False),
             "spec": {"runs": [STATS_BASE | {"speculative_shape_bucket": "tiny:i2:b32"},
                               STATS_BASE | FAILED_3X3 | {"speculative_guard_miss_count": 0}]},
             "seed": {"runs": [STATS_BASE | {"speculative_shape_bucket": "tiny:i2:b32"},
                               STATS_BASE | FAILED_3X3]}},
    flag="result",
    detail="Every failed input guard adds one to speculative_guard_miss_count, whether or not "
           "the model has speculative plans, so the counter of plan guard misses reads like "
           "guard_miss_count on a model that has none. The spec counts it only with plans.",
)
