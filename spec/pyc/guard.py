"""Chapter 14: PyC's run guards (compiler_api.c, the run's deterministic contract): the
`contract_reason` a run reports before anything executes.

1. Fingerprint guard, when the contract is enforced (deterministic_strict, the default, sets
   it): the module is fingerprinted again. A module with no fingerprint is
   `fingerprint_unavailable` (never, in the spec: every verified module has one); one that
   differs from the fingerprint recorded at compile is `fingerprint_mismatch`.
2. Unless step 1 failed, the input guard runs, except when the input descriptors are exactly
   those of the last successful run (PyC: when their shape hash is that run's, E14.6). The
   inputs are matched to the INPUT ops in op order; for each INPUT op:
   a. no input left is `input_count_mismatch`;
   b. another dtype is `input_dtype_mismatch`;
   c. another rank or dimension is `input_shape_mismatch`;
   d. a required size (elements x dtype bytes) of 0, or size_bytes below it, is
      `input_size_mismatch` (a rank-0 shape holds one element; PyC counts none: E14.7).
   Inputs left after the last INPUT op are `input_count_mismatch`.
3. A failure counts one guard miss and makes the run a runtime error; otherwise `ok`.

The module here is the model's copy: PyC re-hashes its own private copy, so in PyC only memory
corruption trips step 1. Speculative plans and the phantom graph are off; the stable-repeat
fast path (which also skips step 1) is `pyc.repeat` (repeat.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, HASH64, I32, I64, Field, Int, List, Optional, record
from ..core.strategies import st
from .fingerprint import MODULE, PYC_FNV_OFFSET, check_module, fingerprint, wire_op
from .ir import (
    DTYPE_BYTES,
    MAX_DIMS,
    DType,
    OpKind,
    PycModule,
    module_from_wire,
    require_verified,
)
from .wire import PYC_SEED, Named

E14_6 = "E14.6"
E14_7 = "E14.7"
FNV_PRIME = 1099511628211
"""The FNV-1a 64 prime. Real code: compiler_api.c, runtime_input_shape_hash."""
MAX_RUN_INPUTS = 64
"""The spec's own bound on the descriptors one guard call reads."""
REASONS = ("ok", "fingerprint_unavailable", "fingerprint_mismatch", "input_unavailable",
           "input_count_mismatch", "input_dtype_mismatch", "input_shape_mismatch",
           "input_size_mismatch")
"""Every contract_reason PyC writes. Real code: compiler_api.c, pyc_run_model and
inputs_match_module. `input_unavailable` needs a null input array, which a run refuses
before its guards, so only `inputs: null` here reaches it."""
INPUT_GUARD = Named(("ran", "skipped", "not_reached"), "input guard outcome")
RAN, SKIPPED, NOT_REACHED = range(3)


@dataclass(frozen=True)
class TensorDesc:
    """pyc_tensor as the guards read it: data pointer, size_bytes, dtype, shape."""

    dtype: int
    shape: tuple[int, ...]
    size_bytes: int
    data: int = 0


@dataclass(frozen=True)
class GuardResult:
    reason: str
    contract_ok: bool
    guard_miss: int
    input_guard: int


def elements(shape: tuple[int, ...], errata: frozenset[str] = NO_ERRATA) -> int:
    """The product of the dimensions: 1 for rank 0 (PyC: 0, E14.7); 0 if one is <= 0."""
    if not shape and E14_7 in errata:
        return 0
    n = 1
    for d in shape:
        if d <= 0:
            return 0
        n *= d
    return n


def shape_hash(inputs: tuple[TensorDesc, ...]) -> int:
    """PyC's runtime shape hash: FNV-1a 64 over whole words (dtype, size_bytes, rank, dims)."""
    h = PYC_FNV_OFFSET
    for t in inputs:
        for word in (t.dtype, t.size_bytes, len(t.shape), *t.shape):
            h = ((h ^ (word & (2**64 - 1))) * FNV_PRIME) & (2**64 - 1)
    return h


def input_reason(m: PycModule, inputs: tuple[TensorDesc, ...] | None,
                 errata: frozenset[str] = NO_ERRATA) -> str:
    """Step 2: the first input that fails, in INPUT-op order, or `ok`."""
    if inputs is None:
        return "input_unavailable"
    seen = 0
    for op in m.ops:
        if op.kind != OpKind.INPUT:
            continue
        if seen >= len(inputs):  # 2a
            return "input_count_mismatch"
        t = inputs[seen]
        if t.dtype != op.dtype:  # 2b
            return "input_dtype_mismatch"
        if t.shape != op.shape:  # 2c
            return "input_shape_mismatch"
        required = elements(op.shape, errata) * DTYPE_BYTES[op.dtype]
        if required == 0 or t.size_bytes < required:  # 2d
            return "input_size_mismatch"
        seen += 1
    return "ok" if seen == len(inputs) else "input_count_mismatch"


def repeats_last(inputs: tuple[TensorDesc, ...] | None, last: tuple[TensorDesc, ...] | None,
                 errata: frozenset[str] = NO_ERRATA) -> bool:
    """Whether step 2 is skipped: the descriptors equal the last successful run's (E14.6:
    their shape hash, when not 0, equals that run's)."""
    if inputs is None or last is None:
        return False
    if E14_6 in errata:
        return inputs == last or 0 != shape_hash(inputs) == shape_hash(last)
    return inputs == last


def run_guards(m: PycModule, compiled: int, inputs: tuple[TensorDesc, ...] | None,
               last: tuple[TensorDesc, ...] | None = None, enforce: bool = True,
               errata: frozenset[str] = NO_ERRATA) -> GuardResult:
    """Steps 1-3."""
    reason, stage = "ok", NOT_REACHED
    if enforce and fingerprint(m, errata) != compiled:  # 1
        reason = "fingerprint_mismatch"
    elif repeats_last(inputs, last, errata):  # 2
        stage = SKIPPED
    else:
        reason, stage = input_reason(m, inputs, errata), RAN
    return GuardResult(reason, reason == "ok", int(reason != "ok"), stage)  # 3


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

DESC = record(dtype=Field(Int(32, signed=True), "pyc_dtype ordinal"),
              shape=Field(List(I64, MAX_DIMS), "dimensions; the rank is the length"),
              size_bytes=Field(Int(64), "bytes the buffer holds (size_t)"),
              data=Field(Int(64), "the data pointer, compared by the repeat check", 0))
DESCS = Optional(List(DESC, MAX_RUN_INPUTS), [])


def descs_from_wire(items: list[dict] | None) -> tuple[TensorDesc, ...] | None:
    if items is None:
        return None
    return tuple(TensorDesc(t["dtype"], tuple(t["shape"]), t["size_bytes"], t["data"])
                 for t in items)


def guard_op(module: dict, fingerprint: int, inputs: list[dict] | None,
             last: list[dict] | None, enforce: bool,
             errata: frozenset[str] = NO_ERRATA) -> dict:
    m = module_from_wire(module)
    require_verified(m)
    for name, items in (("inputs", inputs), ("last", last)):
        for i, t in enumerate(items or []):
            if t["dtype"] not in tuple(DType):
                raise InvalidInput(f"args.{name}[{i}].dtype: {t['dtype']} is not a pyc_dtype")
    r = run_guards(m, fingerprint, descs_from_wire(inputs), descs_from_wire(last), enforce,
                   errata)
    return vars(r) | {"reason": REASONS.index(r.reason)}


def _desc(dtype: int, shape: list[int], size_bytes: int, data: int = 0) -> dict:
    return {"dtype": dtype, "shape": shape, "size_bytes": size_bytes, "data": data}


X_4X4 = {"ops": [wire_op("input", "x", [4, 4]), wire_op("relu", "", [4, 4], [0]),
                 wire_op("output", "", [4, 4], [1])]}
"""One f32 [4, 4] input, relu, output."""
X_FP = fingerprint(module_from_wire(X_4X4))
F32_4X4 = _desc(1, [4, 4], 64)
F16_COLLIDING = _desc(2, [4, 4], 0x30000000195)
"""An f16 [4, 4] descriptor whose size makes its shape hash the f32 [4, 4] 64-byte one's."""
SCALAR = {"ops": [wire_op("input", "s", []), wire_op("output", "", [], [0])]}
"""A rank-0 f32 input (verify accepts rank 0)."""


def guard_edges() -> list[dict]:
    """Every reason, a skip by repeat, and the two errata's witnesses."""
    def case(module=X_4X4, fp=X_FP, inputs=(F32_4X4,), last=None, enforce=True) -> dict:
        return {"module": module, "fingerprint": fp,
                "inputs": None if inputs is None else list(inputs),
                "last": None if last is None else list(last), "enforce": enforce}

    scalar_fp = fingerprint(module_from_wire(SCALAR))
    return [case(), case(fp=X_FP ^ 1), case(fp=X_FP ^ 1, enforce=False), case(inputs=None),
            case(inputs=()), case(inputs=(F32_4X4, F32_4X4)), case(inputs=(_desc(4, [4, 4], 64),)),
            case(inputs=(_desc(1, [4], 64),)), case(inputs=(_desc(1, [4, 5], 80),)),
            case(inputs=(_desc(1, [4, 4], 63),)), case(last=(F32_4X4,)),
            case(inputs=(_desc(1, [4, 4], 64, 7),), last=(F32_4X4,)),
            case(inputs=(F16_COLLIDING,), last=(F32_4X4,)),
            case(module=SCALAR, fp=scalar_fp, inputs=(_desc(1, [], 4),))]


def guard_domain() -> st.SearchStrategy:
    dims = st.lists(st.integers(1, 4), max_size=2)
    desc = st.builds(_desc, st.sampled_from([1, 2, 4]), dims, st.integers(0, 130),
                     st.integers(0, 1))

    @st.composite
    def build(draw) -> dict:
        ops = [wire_op("input", f"x{i}", draw(dims), dtype=draw(st.sampled_from([1, 2, 4])))
               for i in range(draw(st.integers(0, 3)))]
        ops.append(wire_op("output", "", [1], [0] if ops else []))
        module = {"ops": ops}
        fp = fingerprint(module_from_wire(module))
        return {"module": module, "fingerprint": draw(st.sampled_from([fp, fp ^ 1])),
                "inputs": draw(st.none() | st.lists(desc, max_size=4)),
                "last": draw(st.none() | st.lists(desc, max_size=4)),
                "enforce": draw(st.booleans())}

    return build()


_SKIP = {"module": X_4X4, "fingerprint": X_FP, "enforce": True}
STATS_BASE = {
    "status": "ok", "contract_ok": True, "contract_reason": "ok", "guard_miss_count": 0,
    "fallback_count": 0, "stable_repeat": False, "speculative_plan_hit": False,
    "speculative_plan_miss_count": 0, "speculative_guard_miss_count": 0,
    "speculative_confidence": "0x3ff0000000000000", "speculative_shape_bucket": "",
    "phantom_graph_match": False, "phantom_graph_match_score": "0x0000000000000000",
    "phantom_graph_match_count": 0, "phantom_graph_mismatch_count": 0,
    "phantom_graph_reshape_count": 0, "phantom_graph_confidence": "0x0000000000000000",
    "phantom_graph_expected_bucket": "", "phantom_graph_expected_signature": "",
    "phantom_graph_observed_signature": ""}
"""A pyc.run_stats record of a successful run, speculative plans and phantom graph off, of a
module without graph breaks: the errata's witnesses state what differs from it."""


def _stats_args(module: dict, runs: list[dict], backend: str) -> dict:
    return {"module": module, "backend": backend, "speculative": False, "phantom": False,
            "max_plans": 3, "horizon": 1, "fastpath_env": True, "runs": runs}


def _square4(dtype: int = 1, size: int = 64) -> dict:
    return {"inputs": [{**_desc(dtype, [4, 4], size), "data": 1}, {**F32_4X4, "data": 2}],
            "outputs": [{**F32_4X4, "data": 3}]}


MM_4X4 = {"ops": [wire_op("input", "a", [4, 4]), wire_op("input", "b", [4, 4]),
                  wire_op("matmul", "mm", [4, 4], [0, 1]), wire_op("output", "out", [4, 4], [2])]}
_FAILED = {"status": "runtime_failed", "contract_ok": False, "guard_miss_count": 1}
declare(
    "pyc.guard", chapter=14,
    summary="PyC's run guards: the contract_reason a run reports from the module's fingerprint "
            "and the input descriptors, in INPUT-op order.",
    args=record(module=Field(MODULE, "the compiled module (one verify accepts)"),
                fingerprint=Field(HASH64, "the fingerprint recorded at compile"),
                inputs=Field(DESCS, "the run's input descriptors; null: no input array"),
                last=Field(DESCS, "the last successful run's inputs; null: none", None),
                enforce=Field(BOOL, "the deterministic contract is enforced", True)),
    result=record(reason=Field(Named(REASONS, "contract_reason"), "the contract_reason"),
                  contract_ok=BOOL, guard_miss=Field(I32, "guard misses this run: 0 or 1"),
                  input_guard=Field(INPUT_GUARD, "whether the input guard ran")),
    spec=(run_guards, input_reason, repeats_last, elements, shape_hash), check=check_module,
    errata=(E14_6, E14_7), domain=guard_domain, edges=guard_edges,
    invalid=(InvalidCase("an input of rank 9", lambda: st.just(
                 {**_SKIP, "inputs": [_desc(1, [1] * 9, 4)]})),
             InvalidCase("an input dtype outside pyc_dtype", lambda: st.just(
                 {**_SKIP, "inputs": [_desc(9, [4, 4], 64)]})),
             InvalidCase("a module verify rejects", lambda: st.just(
                 {**_SKIP, "module": {"ops": []}, "inputs": []}))),
    not_applicable={"numba": "a few comparisons per input once a run: no numeric core",
                    "cupy": "one decision per run: nothing to spread over a device"},
)

erratum(
    E14_6, "A run whose input shape hash equals the last successful run's skips the input guard",
    seed=PYC_SEED, location="src/compiler/compiler_api.c pyc_run_model, runtime_shape_cached",
    ops=("pyc.guard", "pyc.repeat", "pyc.run_stats"),
    witness={"args": {**_SKIP, "inputs": [F16_COLLIDING], "last": [F32_4X4]},
             "spec": {"reason": "input_dtype_mismatch", "input_guard": "ran"},
             "seed": {"reason": "ok", "input_guard": "skipped"}},
    flag="result",
    also=({"op": "pyc.repeat",
           "args": {"backend": "cuda", "speculative": False, "phantom": False,
                    "autotune": False, "fastpath_env": True,
                    "last": {"inputs": [{**F32_4X4, "data": 1}],
                             "outputs": [{**F32_4X4, "data": 2}]},
                    "inputs": [{**F16_COLLIDING, "data": 1}],
                    "outputs": [{**F32_4X4, "data": 2}]},
           "spec": {"cached_by": "none", "input_guard": True, "controller": True},
           "seed": {"cached_by": "shape_hash", "input_guard": False, "controller": False}},
          {"op": "pyc.run_stats",
           "args": _stats_args(MM_4X4, [_square4(), _square4(2, 0x30000000195)], "cuda"),
           "spec": {"runs": [
               STATS_BASE | {"fallback_count": 1, "speculative_shape_bucket": "tiny:i2:b128"},
               STATS_BASE | _FAILED | {"contract_reason": "input_dtype_mismatch",
                                       "fallback_count": 1,
                                       "speculative_shape_bucket": "tiny:i2:b96"}]},
           "seed": {"runs": [
               STATS_BASE | {"fallback_count": 1, "speculative_shape_bucket": "tiny:i2:b128"},
               STATS_BASE | {"status": "runtime_failed", "fallback_count": 1,
                             "speculative_shape_bucket": "tiny:i2:b128"}]}}),
    detail="PyC keeps the last successful run's shape hash, FNV-1a 64 over whole 64-bit words "
           "(dtype, size_bytes, rank, dims), and skips inputs_match_module when a run's hash "
           "equals it. One word can undo another: an f16 [4, 4] descriptor of "
           "0x30000000195 bytes hashes like the f32 [4, 4] 64-byte one, so an f16 tensor runs "
           "as f32 (in pyc_run_model it passes the guard with contract ok, reports the last "
           "run's bucket and then fails in the executor); on the CUDA backend a run that "
           "skips the guard this way also skips the controller and kernel reselection "
           "(pyc.repeat). The spec skips the guard only for descriptors equal to "
           "the last run's.",
)
erratum(
    E14_7, "A rank-0 input never passes the size guard",
    seed=PYC_SEED, location="src/compiler/compiler_api.c shape_num_elements",
    ops=("pyc.guard", "pyc.run_stats"),
    witness={"args": {"module": SCALAR, "fingerprint": fingerprint(module_from_wire(SCALAR)),
                      "inputs": [_desc(1, [], 4)], "enforce": True},
             "spec": {"reason": "ok"}, "seed": {"reason": "input_size_mismatch"}},
    flag="result",
    also=({"op": "pyc.run_stats",
           "args": _stats_args(SCALAR, [{"inputs": [{**_desc(1, [], 4), "data": 1}],
                                         "outputs": [{**_desc(1, [], 4), "data": 2}]}], "cpu"),
           "spec": {"runs": [STATS_BASE | {"speculative_shape_bucket": "tiny:i1:b4"}]},
           "seed": {"runs": [STATS_BASE | _FAILED | {
               "contract_reason": "input_size_mismatch", "speculative_guard_miss_count": 1,
               "speculative_shape_bucket": "tiny:i1:b4"}]}},),
    detail="verify accepts rank 0, but shape_num_elements answers 0 for it, so the required "
           "size is 0 and the guard reports input_size_mismatch whatever the buffer: a module "
           "with a scalar input compiles and never runs. The spec counts one element.",
)
