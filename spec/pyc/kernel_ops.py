"""Chapter 12 ops of PyC's kernel registry: the matmul workload family, and the selection of a
kernel from a catalog (PyC's default one when none is given) under a mode and a co-selection
context, with every candidate's score in `collect` order; erratum E12.2 (wrapping products)."""

from __future__ import annotations

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, I32, U32, U64, Field, List, Optional, Utf8, record
from ..core.strategies import st
from .kernels import (
    BACKEND,
    DBL_MAX,
    E12_2,
    HARDWARE,
    KERNEL_MAX,
    MODE,
    SYMBOL_MAX,
    WORKLOAD,
    Context,
    Kernel,
    collect_order,
    default_catalog,
    joint_score,
    select,
    workload_family,
)
from .wire import F64, PYC_SEED, bits, f64, f64_strategy, finite, non_negative

REG_CLASS_MAX = (1 << 28) - 1
"""The largest register-pressure class the spec takes: PyC multiplies it by 8 in a C int."""


# ── pyc.workload_family ───────────────────────────────────────────────────────────────────────


def workload_family_op(m: int, n: int, k: int, errata: frozenset[str] = NO_ERRATA) -> dict:
    return {"family": workload_family(m, n, k, errata)}


WRAP_ARGS = {"m": 1024, "n": 6148914691236517206, "k": 1024}
"""n · 3 = 2^64 + 2: the seed's wrapped product makes this tall."""

erratum(
    E12_2, "The workload family is computed in wrapping 64-bit arithmetic",
    seed=PYC_SEED, location="src/compiler/compiler_api.c classify_matmul_workload_family",
    ops=("pyc.workload_family",),
    witness={"args": WRAP_ARGS, "spec": {"family": "wide_skinny"},
             "seed": {"family": "tall_skinny"}},
    flag="result",
    detail="m·n·k, n·3, m·3 and min·2 are size_t products, so they wrap for dimensions near "
           "2^64 / 3: n = 6148914691236517206 gives n·3 = 2, and m = 1024 >= 2 classifies the "
           "matmul tall_skinny although n is six quadrillion times m. The spec compares the "
           "exact products.",
)

DIM_EDGES = (0, 1, 511, 512, 513, 1023, 1024, 1536, 2048, 3072, 4096, 2**32, 2**64 - 1)

declare(
    "pyc.workload_family", chapter=12,
    summary="The workload family of an (m x k) @ (k x n) matmul: small, tall_skinny, "
            "wide_skinny, large_square or square, the first rule that holds (any if a "
            "dimension is 0).",
    args=record(m=Field(U64, "rows of the left operand"), n=Field(U64, "columns of the right"),
                k=Field(U64, "the shared dimension")),
    result=record(family=Field(WORKLOAD, "pyc_kernel_workload_family_name")),
    spec=(workload_family,), errata=(E12_2,),
    domain=lambda: st.fixed_dictionaries({d: st.sampled_from(DIM_EDGES) | st.integers(0, 8192)
                                          | st.integers(0, 2**64 - 1) for d in "mnk"}),
    invalid=(
        InvalidCase("a negative dimension", lambda: st.just({"m": -1, "n": 4, "k": 4})),
        InvalidCase("a dimension past u64", lambda: st.just({"m": 2**64, "n": 4, "k": 4})),
        InvalidCase("a dimension as a float", lambda: st.just({"m": 1.5, "n": 4, "k": 4}),
                    "bad_request"),
    ),
    edges=lambda: [
        {"m": m, "n": n, "k": k} for m, n, k in (
            (0, 4, 4), (512, 512, 512), (513, 513, 512), (512, 4096, 4096), (4096, 64, 64),
            (3072, 1024, 512), (1024, 3072, 512), (1024, 3071, 512), (1024, 2048, 512),
            (1024, 2049, 512), (1024, 1024, 511), (2048, 2048, 4096), (600, 700, 800),
            (1023, 2046, 1024), (2**64 - 1, 2**64 - 1, 2**64 - 1))],
    not_applicable={"numba": "six integer comparisons per matmul, done once a compile: "
                             "nothing worth a kernel",
                    "cupy": "six integer comparisons per matmul: nothing to spread over a "
                            "device"},
)


# ── pyc.kernel.select ─────────────────────────────────────────────────────────────────────────

KERNEL = record(
    symbol=Field(Utf8(c_string=True), "the kernel's symbol, at most 127 UTF-8 bytes"),
    priority=Field(I32, "registry priority", 0),
    occupancy=Field(F64, "estimated occupancy (float64 bits)", 0),
    tensor_core=Field(BOOL, "tensor-core eligible", False),
    shared_mem_bytes=Field(U64, "shared memory per block", 0),
    reg_class=Field(I32, "register-pressure class, 0 to 2^28 - 1", 0),
    workload=Field(WORKLOAD, "preferred workload family", 0),
    hardware=Field(HARDWARE, "preferred hardware family", 0),
    best_ms=Field(Optional(F64, 0), "best benchmarked time in ms (float64 bits); null: never "
                                    "benchmarked (PyC's DBL_MAX)", None),
)
CONTEXT = record(
    pressure_score=Field(F64, "the allocator's pressure score (float64 bits, >= 0)", 0),
    pressure_events=Field(U32, "allocator pressure events", 0),
    remat_tensors=Field(U32, "rematerialised tensors", 0),
    reused=Field(U32, "reused allocations", 0),
    total_requested_bytes=Field(U64, "bytes the plan requested", 0),
    peak_bytes=Field(U64, "the plan's peak", 0),
    budget_bytes=Field(U64, "the memory budget; 0: none", 0),
    workload=Field(WORKLOAD, "the matmul's workload family", 0),
    hardware=Field(HARDWARE, "the device's hardware family", 0),
)
_SCORE = record(symbol=Utf8(), score=F64)


def check_select(args: dict) -> None:
    """Symbols fit PyC's 128-byte field; doubles are finite; counts and classes in range."""
    for i, k in enumerate(args["catalog"] or []):
        at = f"args.catalog[{i}]"
        if len(k["symbol"].encode("utf-8")) > SYMBOL_MAX:
            raise InvalidInput(f"{at}.symbol: longer than {SYMBOL_MAX} bytes")
        if not 0 <= k["reg_class"] <= REG_CLASS_MAX:
            raise InvalidInput(f"{at}.reg_class: {k['reg_class']} is outside 0..{REG_CLASS_MAX}")
        finite(k["occupancy"], f"{at}.occupancy")
        if k["best_ms"] is not None:
            finite(k["best_ms"], f"{at}.best_ms")
    if args["context"] is not None:
        non_negative(args["context"]["pressure_score"], "args.context.pressure_score")


def to_kernel(k: dict) -> Kernel:
    best = DBL_MAX if k["best_ms"] is None else f64(k["best_ms"])
    return Kernel(k["symbol"], k["priority"], f64(k["occupancy"]), k["tensor_core"],
                  k["shared_mem_bytes"], k["reg_class"], k["workload"], k["hardware"], best)


def to_context(c: dict | None) -> Context:
    if c is None:
        return Context()
    return Context(f64(c["pressure_score"]), c["pressure_events"], c["remat_tensors"],
                   c["reused"], c["total_requested_bytes"], c["peak_bytes"], c["budget_bytes"],
                   c["workload"], c["hardware"])


def select_op(backend: int, mode: int, catalog: list[dict] | None, context: dict | None
              ) -> dict:
    kernels = default_catalog(backend) if catalog is None else tuple(map(to_kernel, catalog))
    ctx = to_context(context)
    scores = [joint_score(k, mode, ctx) for k in kernels]
    i = select(kernels, mode, ctx)
    chosen = scores[i] if i is not None else None
    return {
        "found": i is not None, "index": -1 if i is None else i,
        "symbol": "" if i is None else kernels[i].symbol,
        "score": bits(chosen.score if chosen else 0.0),
        "utilization": bits(kernels[i].occupancy if i is not None else 0.0),
        "pressure_penalty": bits(chosen.pressure_penalty if chosen else 0.0),
        "allocator_penalty": bits(chosen.allocator_penalty if chosen else 0.0),
        "reuse_bonus": bits(chosen.reuse_bonus if chosen else 0.0),
        "scores": [{"symbol": kernels[j].symbol, "score": bits(scores[j].score)}
                   for j in collect_order(kernels)],
    }


SYMBOLS = ("matmul_cpu_ref", "matmul_cpu_tuned", "matmul_cuda_tuned", "a", "b", "ab", "")


@st.composite
def kernels(draw) -> dict:
    """Kernels from a few symbols and round figures, so exact ties are common."""
    occ = draw(st.sampled_from((0.0, 0.25, 0.5, 0.55, 0.75, 1.0)))
    best = draw(st.none() | st.sampled_from((0.0, 0.01, 0.5, 2.0)) | st.floats(0, 10))
    return {"symbol": draw(st.sampled_from(SYMBOLS) | st.text("abc_", max_size=4)),
            "priority": draw(st.integers(-2, 3)), "occupancy": bits(occ),
            "tensor_core": draw(st.booleans()),
            "shared_mem_bytes": draw(st.sampled_from((0, 1023, 8192, 16384, 49152))),
            "reg_class": draw(st.integers(0, 4)), "workload": draw(st.integers(0, 5)),
            "hardware": draw(st.integers(0, 3)), "best_ms": None if best is None else bits(best)}


def contexts() -> st.SearchStrategy:
    """Co-selection contexts, often empty."""
    small = st.integers(0, 6)
    return st.none() | st.fixed_dictionaries({
        "pressure_score": f64_strategy(0.0, 2.0), "pressure_events": small,
        "remat_tensors": small, "reused": small,
        "total_requested_bytes": st.sampled_from((0, 4096)),
        "peak_bytes": st.sampled_from((0, 1000, 3000)),
        "budget_bytes": st.sampled_from((0, 2000)), "workload": st.integers(0, 5),
        "hardware": st.integers(0, 3)})


def select_domain() -> st.SearchStrategy:
    return st.fixed_dictionaries({
        "backend": st.integers(0, 1), "mode": st.integers(0, 2),
        "catalog": st.none() | st.lists(kernels(), max_size=6), "context": contexts()})


def _k(symbol: str, **kw) -> dict:
    return {"symbol": symbol, **kw}


ONE = "0x3ff0000000000000"
"""1.0 as float64 bits."""


def select_edges() -> list[dict]:
    """The default catalogs under each mode, reuse, pressure, ties, affinities, empty."""
    reuse = {"reused": 1, "total_requested_bytes": 4096}
    tie = [_k("b", priority=1), _k("ab", priority=1), _k("a", priority=1)]
    return [
        {}, {"backend": "cuda"}, {"mode": "utilization_first"}, {"mode": "memory_first"},
        {"context": reuse},
        {"context": {"pressure_score": ONE, "pressure_events": 2, "remat_tensors": 1,
                     "peak_bytes": 3000, "budget_bytes": 2000, **reuse}},
        {"mode": "memory_first", "context": {"pressure_score": ONE, "pressure_events": 3}},
        {"catalog": tie}, {"catalog": [*tie, _k("", priority=1)]}, {"catalog": []},
        {"catalog": [_k("x", priority=1, best_ms="0x3fe0000000000000"), _k("y", priority=1)]},
        {"catalog": [_k("s", workload="small"), _k("t", workload="square")],
         "context": {"workload": "square"}},
        {"catalog": [_k("g", hardware="generic"), _k("h", hardware="hopper"),
                     _k("a", hardware="ada")], "context": {"hardware": "hopper"}},
        {"catalog": [_k("g", hardware="generic"), _k("h", hardware="hopper")],
         "context": {"hardware": "generic"}},
        {"catalog": [_k("g", hardware="generic"), _k("h", hardware="hopper")],
         "context": {"hardware": "ada"}},
    ]


declare(
    "pyc.kernel.select", chapter=12,
    summary="Score every kernel of a catalog (PyC's default matmul_fused pair when none is "
            "given) under a mode and a co-selection context; select the highest score, an "
            "exact tie going to the smaller symbol.",
    args=record(
        backend=Field(BACKEND, "the default catalog's backend", 0),
        mode=Field(MODE, "the objective mode", 0),
        catalog=Field(Optional(List(KERNEL, KERNEL_MAX), []), "kernels in registration "
                      "order; null: PyC's default catalog for the backend", None),
        context=Field(Optional(CONTEXT, {}), "the co-selection context; null: all zero", None)),
    result=record(
        found=Field(BOOL, "false for an empty catalog"),
        index=Field(I32, "the selected kernel's catalog index; -1 when none"),
        symbol=Field(Utf8(), "the selected symbol; empty when none"),
        score=Field(F64, "its joint score"),
        utilization=Field(F64, "its estimated occupancy"),
        pressure_penalty=Field(F64, "its pressure penalty"),
        allocator_penalty=Field(F64, "its allocator penalty"),
        reuse_bonus=Field(F64, "its reuse bonus"),
        scores=Field(List(_SCORE), "every kernel's joint score, by symbol (collect order)")),
    spec=(joint_score, select), check=check_select, domain=select_domain,
    invalid=(
        InvalidCase("an unknown mode", lambda: st.just({"mode": "fastest"}), "bad_request"),
        InvalidCase("a negative register class",
                    lambda: st.just({"catalog": [_k("k", reg_class=-1)]})),
        InvalidCase("a NaN occupancy",
                    lambda: st.just({"catalog": [_k("k", occupancy="0x7ff8000000000000")]})),
        InvalidCase("a symbol of 128 bytes", lambda: st.just({"catalog": [_k("s" * 128)]})),
        InvalidCase("a negative pressure score",
                    lambda: st.just({"context": {"pressure_score": "0xbff0000000000000"}})),
        InvalidCase("a priority as a string", lambda: st.just({"catalog": [_k("k", priority=
                                                                             "high")]}),
                    "bad_request"),
    ),
    edges=select_edges,
    not_applicable={"numba": "a handful of float sums over at most 512 descriptors, done "
                             "once a run: nothing worth a kernel",
                    "cupy": "one selection over a few descriptors: nothing to spread over a "
                            "device"},
)
