"""Chapter 12: PyC's reason-coded CUDA dispatch (runtime/cuda_backend.c): which path runs a
module and the status and reason string it reports.

The decision reads the environment switches, what the CUDA runtime reports, whether the module
is a native matmul chain, and how each stage that runs turns out. Stage outcomes are inputs
here: a graph stage is "replayed", "captured" or its failure text; a plain stage "ok" or its
failure text. Forced error comes first; then availability. An available runtime (not forced to
fall back) runs a native module: a CUTLASS BF16 or a promoted F32 GEMM when there is no
epilogue and a symbol (graph first, then plain), else cuBLAS (graph first, then plain); a
build without the runtime skips that. Then the simulated path, if simulated availability is
on; then the CPU executor. Reasons are clipped to 127 bytes (PYC_CUDA_REASON_MAX - 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, I32, Field, Optional, Utf8, record
from ..core.strategies import st
from .wire import PYC_SEED, Named

E12_4 = "E12.4"
STATUS = Named(("ok", "fallback", "error"), "dispatch status")
"""pyc_cuda_dispatch_status in ordinal order. Real code: include/pyc/cuda_backend.h."""
OK, FALLBACK, ERROR = range(3)
RUNTIME = Named(("not_built", "detected", "no_device", "error"), "CUDA runtime")
"""What the build and cudaGetDeviceCount report: built without the runtime, a device, none,
or an error code. Real code: cuda_backend.c detect_cuda_available."""
NOT_BUILT, DETECTED, NO_DEVICE, RUNTIME_ERROR = range(4)
DTYPE = Named(("f32", "f16", "bf16"), "matmul dtype")
"""The dtypes the native path runs. Real code: cuda_backend.c."""
F32, F16, BF16 = range(3)
REASON_MAX = 127
"""Bytes a reason keeps (PYC_CUDA_REASON_MAX - 1). Real code: include/pyc/cuda_backend.h."""
GRAPH_OK = ("replayed", "captured")
"""A graph stage's successful outcomes."""
PLAIN_OK = "ok"
"""A plain stage's successful outcome."""


@dataclass(frozen=True)
class Env:
    """The PYC_CUDA_* switches the decision reads (graph replay on by default, others off)."""

    disable: bool = False
    force_error: bool = False
    force_fallback: bool = False
    simulate_available: bool = False
    graph_replay: bool = True
    promoted_gemm: bool = False


@dataclass(frozen=True)
class Situation:
    """The runtime, the module and the outcome of every stage that may run."""

    runtime: int = NOT_BUILT
    runtime_error: int = 0
    native_executable: bool = True
    dtype: int = F32
    add: bool = False
    relu: bool = False
    prepared: bool = True
    cutlass_symbol: str = ""
    promoted_symbol: str = ""
    promoted_graph: str = "captured"
    promoted_plain: str = PLAIN_OK
    native_graph: str = "captured"
    native_plain: str = PLAIN_OK
    simulated_ok: bool = True
    cpu_ok: bool = True


@dataclass(frozen=True)
class Decision:
    """The status, the trace's reason, and the trace's availability and fallback flags."""

    status: int
    reason: str
    cuda_available: bool
    fallback_to_cpu: bool


def clip(reason: str) -> str:
    """A reason as the 128-byte trace field holds it."""
    return reason.encode()[:REASON_MAX].decode("ascii", "ignore")


def availability(env: Env, s: Situation) -> tuple[bool, str]:
    """Whether CUDA is available, and the reason that says why (or why not)."""
    if env.disable:
        return False, "disabled_by_env"
    if env.simulate_available:
        return True, "cuda_simulated_available"
    if s.runtime == DETECTED:
        return True, "cuda_runtime_detected"
    if s.runtime == RUNTIME_ERROR:
        return False, f"cuda_runtime_error_{s.runtime_error}"
    if s.runtime == NO_DEVICE:
        return False, "cuda_runtime_no_device"
    return False, "cuda_runtime_not_built"


def promoted(env: Env, s: Situation) -> tuple[bool, str]:
    """The promoted GEMM (BF16 CUTLASS, or F32 when enabled), only with no epilogue: (ran,
    success reason or failure text; empty when nothing was tried)."""
    symbol = s.cutlass_symbol if s.dtype == BF16 else (
        s.promoted_symbol if s.dtype == F32 and env.promoted_gemm else "")
    if s.add or s.relu or not symbol:
        return False, ""
    replayed, failure = False, ""
    if env.graph_replay:  # 1. the graph, when graph replay is on
        if s.promoted_graph in GRAPH_OK:
            replayed = s.promoted_graph == "replayed"
        else:
            failure = s.promoted_graph
    if (failure or not env.graph_replay) and s.promoted_plain != PLAIN_OK:
        return False, s.promoted_plain  # 2. else the plain pipeline, which failed too
    prefix = "cuda_cutlass_bf16" if s.dtype == BF16 else "cuda_promoted_gemm"
    return True, clip(f"{prefix}{'_graph' if replayed else ''}:{symbol}")


def native(env: Env, s: Situation, errata: frozenset[str] = NO_ERRATA) -> tuple[bool, str]:
    """The native run: (ran, success reason or the failure text, empty when none)."""
    if not s.prepared or (s.add and s.dtype != F32):  # 1. pre-checks fail without a reason
        return False, ""
    ok, promoted_reason = promoted(env, s)  # 2. the promoted GEMM first
    if ok:
        return True, promoted_reason
    name = "cuda_native_cublas" if s.dtype == F32 else "cuda_native_half"
    graph_failed = False
    if env.graph_replay:  # 3. cuBLAS as a graph
        if s.native_graph in GRAPH_OK:
            return True, name + ("_graph_replay" if s.native_graph == "replayed"
                                 else "_graph_capture")
        graph_failed = True
    if s.native_plain == PLAIN_OK:  # 4. cuBLAS plain; E12.4 names it a graph capture
        return True, name + ("_graph_capture" if E12_4 in errata and graph_failed else "")
    if promoted_reason:  # 5. both failures, promoted first
        return False, clip(f"{promoted_reason};{s.native_plain}")
    return False, s.native_plain


def dispatch(env: Env, s: Situation, errata: frozenset[str] = NO_ERRATA) -> Decision:
    """The status and reason of one dispatch."""
    if env.force_error:  # 1. forced error before anything
        return Decision(ERROR, "forced_error", False, False)
    available, why = availability(env, s)  # 2.
    failure = ""
    if available and not env.force_fallback and s.native_executable:
        if s.runtime != NOT_BUILT:  # 3. the native path, in a build with the runtime
            ok, text = native(env, s, errata)
            if ok:
                return Decision(OK, text, True, False)
            failure = text
        if env.simulate_available and s.simulated_ok:  # 4. the simulated path
            return Decision(OK, "cuda_native_simulated", True, False)
    if not s.cpu_ok:  # 5. the CPU executor failed too
        return Decision(ERROR, clip(f"{failure};cpu_fallback_failed") if failure
                        else "cpu_fallback_failed", available, False)
    if env.force_fallback:  # 6. the CPU ran: say why
        reason = "cuda_forced_fallback"
    elif available and not s.native_executable:
        reason = "cuda_native_unsupported_fallback"
    elif available:
        reason = "cuda_native_failed_fallback"
    else:
        reason = why
    return Decision(FALLBACK, reason, available, True)


# ── pyc.dispatch ──────────────────────────────────────────────────────────────────────────────

SUCCESS_WORDS = (*GRAPH_OK, PLAIN_OK)
ENV = record(disable=Field(BOOL, "PYC_CUDA_DISABLE", False),
             force_error=Field(BOOL, "PYC_CUDA_FORCE_ERROR", False),
             force_fallback=Field(BOOL, "PYC_CUDA_FORCE_FALLBACK", False),
             simulate_available=Field(BOOL, "PYC_CUDA_SIMULATE_AVAILABLE", False),
             graph_replay=Field(BOOL, "PYC_CUDA_ENABLE_GRAPH_REPLAY", True),
             promoted_gemm=Field(BOOL, "PYC_CUDA_ENABLE_PROMOTED_GEMM", False))
_D = Situation()
_STAGES = ("promoted_graph", "promoted_plain", "native_graph", "native_plain")


def check_dispatch(args: dict) -> None:
    """Stage outcomes are their success words or an ASCII failure text (no ';'); symbols are
    ASCII and fit; an error runtime carries a non-zero code."""
    for name in _STAGES:
        text, good = args[name], GRAPH_OK if name.endswith("graph") else (PLAIN_OK,)
        if text in good:
            continue
        if text in SUCCESS_WORDS or not text or not text.isascii() or ";" in text \
                or len(text) > REASON_MAX:
            raise InvalidInput(f"args.{name}: expected {' or '.join(good)} or a failure text "
                               f"(1 to {REASON_MAX} ASCII characters, no ';')")
    for name in ("cutlass_symbol", "promoted_symbol"):
        if not args[name].isascii() or len(args[name]) > 127:
            raise InvalidInput(f"args.{name}: at most 127 ASCII characters")
    if (args["runtime"] == RUNTIME_ERROR) != (args["runtime_error"] != 0):
        raise InvalidInput("args.runtime_error: non-zero exactly when runtime is error")


def dispatch_op(env: dict | None, errata: frozenset[str] = NO_ERRATA, **situation) -> dict:
    d = dispatch(Env(**(env or {})), Situation(**situation), errata)
    return {"status": d.status, "reason": d.reason, "cuda_available": d.cuda_available,
            "fallback_to_cpu": d.fallback_to_cpu}


GRAPH_FAIL = "cuda_graph_launch_failed:unspecified launch failure"
"""A graph stage's failure text as the witness and edges use it."""

erratum(
    E12_4, "A plain cuBLAS run after a failed graph attempt is reported as a graph capture",
    seed=PYC_SEED, location="src/compiler/runtime/cuda_backend.c execute_native_cuda_graph_cuda",
    ops=("pyc.dispatch",),
    witness={"args": {"runtime": "detected", "native_graph": GRAPH_FAIL},
             "spec": {"status": "ok", "reason": "cuda_native_cublas"},
             "seed": {"status": "ok", "reason": "cuda_native_cublas_graph_capture"}},
    flag="result",
    detail="When the graph pipeline fails and the plain cuBLAS pipeline then succeeds, the "
           "success name is chosen by graph_replayed (0) and by whether graph replay is "
           "enabled (it is, by default), so the run reports cuda_native_cublas_graph_capture "
           "(or _half_) although no graph ran: the failure is hidden and execution_path "
           "claims a captured graph. The spec reports the plain path's name.",
)


def _case(**kw) -> dict:
    return kw


def dispatch_edges() -> list[dict]:
    """A vector for every reason string the decision can end in (see REASONS)."""
    det = {"runtime": "detected"}
    fail = {"native_graph": GRAPH_FAIL, "native_plain": "cuda_sync_failed:an illegal memory "
                                                      "access was encountered"}
    bf16 = {**det, "dtype": "bf16", "cutlass_symbol": "cutlass_bf16_gemm_128x128"}
    return [
        _case(env={"force_error": True}), _case(env={"disable": True}),
        _case(runtime="error", runtime_error=35), _case(runtime="no_device"), _case(),
        _case(**det, native_graph="replayed"), _case(**det), _case(**det, env={
            "graph_replay": False}),
        _case(**det, dtype="f16", native_graph="replayed"), _case(**det, dtype="f16"),
        _case(**det, dtype="bf16", env={"graph_replay": False}),
        _case(**det, env={"promoted_gemm": True}, promoted_symbol="matmul_cuda_tuned"),
        _case(**det, env={"promoted_gemm": True}, promoted_symbol="matmul_cuda_tuned",
              promoted_graph="replayed"),
        _case(**bf16), _case(**bf16, promoted_graph="replayed"),
        _case(**bf16, promoted_graph="cutlass_graph_launch_failed:x"),
        _case(**bf16, relu=True),
        _case(env={"simulate_available": True}),
        _case(env={"force_fallback": True}, **det),
        _case(**det, native_executable=False),
        _case(**det, **fail), _case(**det, **fail, cpu_ok=False), _case(cpu_ok=False),
        _case(**bf16, promoted_graph="cutlass_graph_launch_failed:x",
              promoted_plain="cutlass_gemm_failed:" + "s" * 100, **fail, cpu_ok=False),
        _case(**det, prepared=False), _case(**det, add=True, dtype="f16", cpu_ok=False),
        _case(env={"simulate_available": True}, simulated_ok=False),
        _case(**det, native_graph=GRAPH_FAIL),
        _case(**det, dtype="f16", native_graph=GRAPH_FAIL),
    ]


def dispatch_domain() -> st.SearchStrategy:
    fail = st.sampled_from(("cuda_copy_out_failed:e", "cutlass_gemm_failed:k", GRAPH_FAIL))
    return st.fixed_dictionaries({
        "env": st.none() | st.fixed_dictionaries({k: st.booleans() for k in ENV.fields}),
        "runtime": st.integers(0, 3), "runtime_error": st.just(0),
        "native_executable": st.booleans(), "dtype": st.integers(0, 2), "add": st.booleans(),
        "relu": st.booleans(), "prepared": st.booleans(),
        "cutlass_symbol": st.sampled_from(("", "cutlass_bf16")),
        "promoted_symbol": st.sampled_from(("", "matmul_cuda_tuned")),
        "promoted_graph": st.sampled_from(GRAPH_OK) | fail,
        "promoted_plain": st.just(PLAIN_OK) | fail,
        "native_graph": st.sampled_from(GRAPH_OK) | fail,
        "native_plain": st.just(PLAIN_OK) | fail, "simulated_ok": st.booleans(),
        "cpu_ok": st.booleans()}).map(
            lambda a: a | {"runtime_error": 2 if a["runtime"] == RUNTIME_ERROR else 0})


def _f(default, doc: str, t=BOOL) -> Field:
    return Field(t, doc, default)


declare(
    "pyc.dispatch", chapter=12,
    summary="PyC's CUDA dispatch decision: the status (ok, fallback, error) and reason string "
            "from the environment switches, the runtime, the module and each stage's outcome.",
    args=record(
        env=Field(Optional(ENV, {}), "the PYC_CUDA_* switches; null: their defaults", None),
        runtime=_f(_D.runtime, "what the CUDA runtime reports", RUNTIME),
        runtime_error=_f(0, "cudaGetDeviceCount's error code when runtime is error", I32),
        native_executable=_f(True, "every op INPUT/MATMUL/ADD/RELU/OUTPUT in a supported dtype"),
        dtype=_f(_D.dtype, "the matmul's dtype", DTYPE),
        add=_f(False, "the chain has an add epilogue"),
        relu=_f(False, "the chain has a relu epilogue"),
        prepared=_f(True, "the native pre-checks pass (operands, sizes, workspace)"),
        cutlass_symbol=_f("", "the BF16 CUTLASS symbol; empty: none", Utf8(c_string=True)),
        promoted_symbol=_f("", "the registry's promoted symbol; empty: none",
                           Utf8(c_string=True)),
        **{name: _f("captured" if name.endswith("graph") else PLAIN_OK,
                    f"{name.replace('_', ' ')} outcome", Utf8(c_string=True))
           for name in _STAGES},
        simulated_ok=_f(True, "the simulated native executor succeeds"),
        cpu_ok=_f(True, "the CPU executor succeeds")),
    result=record(status=Field(STATUS, "pyc_cuda_dispatch_status"),
                  reason=Field(Utf8(), "the trace's reason (execution_path)"),
                  cuda_available=Field(BOOL, "the trace's cuda_available"),
                  fallback_to_cpu=Field(BOOL, "the trace's fallback_to_cpu")),
    spec=(dispatch, native, promoted), errata=(E12_4,), check=check_dispatch,
    domain=dispatch_domain,
    invalid=(
        InvalidCase("an unknown dtype", lambda: st.just({"dtype": "f64"}), "bad_request"),
        InvalidCase("a graph outcome of ok", lambda: st.just({"native_graph": "ok"})),
        InvalidCase("an error runtime without a code", lambda: st.just({"runtime": "error"})),
        InvalidCase("a failure text with ';'", lambda: st.just({"native_plain": "a;b"})),
    ),
    edges=dispatch_edges,
    not_applicable={"numba": "a chain of branches once a run: no numeric core",
                    "cupy": "one decision per run: nothing to spread over a device"},
)
