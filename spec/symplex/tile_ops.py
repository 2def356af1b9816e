"""Chapter 13 ops: SympleX's hardware targets (`symplex.target`), one tile's roofline cost
(`symplex.tile_cost`) and the tile search (`symplex.tile_search`), with SympleX's errata.

1. Arguments are decoded; a non-integer extent is `bad_request`; an extent outside
   1..MAX_EXTENT, a tile extent of 0, or a stage count outside 1..MAX_STAGES is
   `invalid_input`; each names the field.
2. The target comes from spec/symplex/hardware_target.py, the cost and the search from
   spec/symplex/tile_search.py; doubles travel as bit patterns.
"""

from __future__ import annotations

from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, U32, U64, Array, Field, Int, Optional, record
from ..core.strategies import st
from ..pyc.wire import F64, Named, bits
from .hardware_target import E13_400, E13_405, E13_406, TARGETS, ridge, target
from .tile_search import E13_401, E13_402, E13_403, E13_404, Problem, tile_cost, tile_search

SEED = SEEDS["symplex"]
MAX_EXTENT = 1 << 20
"""The spec's largest M, N or K: every flop and byte count then fits an int64."""
MAX_STAGES = 8
MAX_TILE = 1024
DTYPES = Named(("f16", "bf16"), "tensor-core dtype")
DTYPE_BYTES = (2, 2)
BOUND = Named(("compute", "memory"), "binding roofline term")


class TargetName(Named):
    """A target name; an unknown one is `invalid_input` naming the field (the names are listed
    in the schema's description, not as an enum the schema check would call malformed)."""

    def json_schema(self, result: bool = False) -> dict:
        out = super().json_schema(result)
        return out if result else {"type": "string", "description": out["description"]}


EXTENT = Int(64)
STAGES = Field(Optional(Int(32), 0), "pipeline stages; null: the target's", None)
TILE = Array(U32, 3)
TARGET = Field(TargetName(TARGETS, "hardware target"), "the target")


def problem(target_name: int, m: int, n: int, k: int, dtype: int, stages: int | None,
            errata: frozenset[str]) -> tuple:
    """Step 1: the target and the problem, or `invalid_input` naming the field."""
    for name, v in (("m", m), ("n", n), ("k", k)):
        if not 1 <= v <= MAX_EXTENT:
            raise InvalidInput(f"args.{name}: {v} is not in 1..{MAX_EXTENT}")
    if stages is not None and not 1 <= stages <= MAX_STAGES:
        raise InvalidInput(f"args.stages: {stages} is not in 1..{MAX_STAGES}")
    t = target(TARGETS[target_name], errata)
    return t, Problem(m, n, k, DTYPE_BYTES[dtype], t.stages if stages is None else stages)


def target_op(name: int, errata: frozenset[str] = NO_ERRATA) -> dict:
    t = target(TARGETS[name], errata)
    return {"sms": t.sms, "tensor_cores_per_sm": t.tensor_cores_per_sm, "mma": list(t.mma),
            "hbm_bytes_per_s": bits(float(t.hbm_bytes_per_s)), "sram_per_sm": t.sram_per_sm,
            "max_warps": t.max_warps, "regfile_bytes": t.regfile_bytes, "stages": t.stages,
            "tma": t.tma, "peak_flops": bits(float(t.peak_flops)), "ridge": bits(ridge(t)),
            "bytes_per_element": t.bytes_per_element, "memory_alignment": t.memory_alignment}


def _cost_fields(c) -> dict:
    return {"footprint_bytes": c.footprint, "flops": c.flops, "bytes_moved": c.bytes,
            "predicted_seconds": bits(c.seconds), "bound": int(not c.compute_bound)}


def tile_cost_op(target: int, m: int, n: int, k: int, tile: list[int], dtype: int = 0,
                 stages: int | None = None, errata: frozenset[str] = NO_ERRATA) -> dict:
    t, p = problem(target, m, n, k, dtype, stages, errata)
    for i, v in enumerate(tile):
        if not 1 <= v <= MAX_TILE:
            raise InvalidInput(f"args.tile[{i}]: {v} is not in 1..{MAX_TILE}")
    c = tile_cost(t, p, tuple(tile), errata=errata)
    return _cost_fields(c) | {"fits": c.footprint <= t.sram_per_sm,
                              "aligned": all(v % s == 0 for v, s in zip(tile, t.mma,
                                                                        strict=True))}


def tile_search_op(target: int, m: int, n: int, k: int, dtype: int = 0,
                   stages: int | None = None, errata: frozenset[str] = NO_ERRATA) -> dict:
    t, p = problem(target, m, n, k, dtype, stages, errata)
    r = tile_search(t, p, errata)
    return {"tile": list(r.best.tile), **_cost_fields(r.best),
            "candidates_evaluated": r.candidates, "ranked": r.ranked,
            "speedup_vs_naive": bits(r.speedup_vs_naive)}


# ── declarations ──────────────────────────────────────────────────────────────────────────

PROBLEM = {"m": Field(EXTENT, "rows of A and C"), "n": Field(EXTENT, "columns of B and C"),
           "k": Field(EXTENT, "the contraction extent")}
DTYPE = Field(DTYPES, "element type (2 bytes; the dense FP16/BF16 tensor peak)", 0)
COST = {"footprint_bytes": Field(U64, "shared-memory bytes of the tile's stages"),
        "flops": Field(U64, "floating-point operations executed"),
        "bytes_moved": Field(U64, "HBM bytes moved"),
        "predicted_seconds": Field(F64, "the roofline time (bit pattern)"),
        "bound": Field(BOUND, "which roofline term is larger")}
H100 = TARGETS.index("h100")


def _args(name="h100", m=4096, n=4096, k=4096, **kw) -> dict:
    return {"target": name, "m": m, "n": n, "k": k, **kw}


def search_edges() -> list[dict]:
    """The facts' faithful vectors (4096^3 per target), small, skinny and odd problems, deep
    pipelines and bf16."""
    out = [_args(n) for n in TARGETS]
    out += [_args(m=1, n=1, k=1), _args(m=16, n=8, k=16), _args(m=8192, n=64, k=1024),
            _args(m=100, n=300, k=70), _args(stages=1), _args(stages=8), _args(dtype="bf16"),
            _args("b200", m=1 << 20, n=1 << 20, k=1 << 20), _args("generic", m=17, n=9, k=33)]
    return out


def cost_edges() -> list[dict]:
    """E13.401's tile, the one-MMA tile, an unaligned tile and an over-full one."""
    return [_args(tile=[64, 64, 64]), _args(tile=[16, 8, 16]), _args(tile=[20, 8, 16]),
            _args(tile=[256, 256, 64]), _args("b200", tile=[128, 128, 32], stages=3),
            _args("generic", m=1, n=1, k=1, tile=[1024, 1024, 1024])]


def _problems(tiles: bool):
    @st.composite
    def build(draw) -> dict:
        args = {"target": draw(st.integers(0, len(TARGETS) - 1)),
                **{d: draw(st.integers(1, 2048) | st.integers(1, MAX_EXTENT)) for d in "mnk"},
                "dtype": draw(st.integers(0, len(DTYPES.names) - 1)),
                "stages": draw(st.none() | st.integers(1, MAX_STAGES))}
        if tiles:
            args["tile"] = [draw(st.integers(1, 32)) * s for s in (16, 8, 16)]
        return args
    return build()


def _invalid(op_args: dict) -> tuple[InvalidCase, ...]:
    return (InvalidCase("m = 0", lambda: st.just({**op_args, "m": 0})),
            InvalidCase("k, a float", lambda: st.just({**op_args, "k": 64.5}), "bad_request"),
            InvalidCase("n = 10^30", lambda: st.just({**op_args, "n": 10**30})),
            InvalidCase("n above 2^20", lambda: st.just({**op_args, "n": MAX_EXTENT + 1})),
            InvalidCase("an unknown target", lambda: st.just({**op_args, "target": "a100"})),
            InvalidCase("stages = 0", lambda: st.just({**op_args, "stages": 0})))


declare(
    "symplex.target", chapter=13,
    summary="A SympleX hardware target's constants: SMs, tensor cores, MMA shape, bandwidth, "
            "shared memory, dense FP16/BF16 peak and roofline knee.",
    args=record(name=TARGET),
    result=record(sms=U32, tensor_cores_per_sm=U32, mma=Field(TILE, "MMA m, n, k"),
                  hbm_bytes_per_s=Field(F64, "HBM bandwidth, B/s"),
                  sram_per_sm=Field(U32, "shared memory per SM, bytes"), max_warps=U32,
                  regfile_bytes=U32, stages=Field(U32, "default pipeline stages"), tma=BOOL,
                  peak_flops=Field(F64, "dense FP16/BF16 tensor peak, FLOP/s"),
                  ridge=Field(F64, "peak / bandwidth, FLOP per byte"),
                  bytes_per_element=U32, memory_alignment=U32),
    spec=(target,), errata=(E13_400, E13_405, E13_406),
    domain=lambda: st.fixed_dictionaries({"name": st.integers(0, len(TARGETS) - 1)}),
    edges=lambda: [{"name": n} for n in TARGETS],
    invalid=(InvalidCase("an unknown target", lambda: st.just({"name": "a100"})),),
    not_applicable={"numba": "a table lookup", "cupy": "a table lookup"},
)
declare(
    "symplex.tile_cost", chapter=13,
    summary="One matmul tile's roofline cost on a target: footprint, flops, bytes moved and "
            "time = max(flops/peak, bytes/bandwidth).",
    args=record(target=TARGET, **PROBLEM, tile=Field(TILE, "tm, tn, tk"), dtype=DTYPE,
                stages=STAGES),
    result=record(**COST, fits=Field(BOOL, "the footprint fits one SM's shared memory"),
                  aligned=Field(BOOL, "each extent is a multiple of the MMA's")),
    spec=(tile_cost,), errata=(E13_401, E13_402, E13_404),
    domain=lambda: _problems(True), edges=cost_edges,
    invalid=(*_invalid(_args(tile=[16, 8, 16])),
             InvalidCase("a tile extent of 0", lambda: st.just(_args(tile=[16, 0, 16])))),
    not_applicable={"cupy": "a few dozen integer operations per tile: nothing to spread over "
                            "a device"},
)
declare(
    "symplex.tile_search", chapter=13,
    summary="SympleX's 3-phase tile search: the roofline-best aligned tile that fits shared "
            "memory for a problem's M, N, K.",
    args=record(target=TARGET, **PROBLEM, dtype=DTYPE, stages=STAGES),
    result=record(tile=Field(TILE, "the best tm, tn, tk"), **COST,
                  candidates_evaluated=Field(U32, "aligned tiles that fit"),
                  ranked=Field(U32, "candidates the final ranking saw"),
                  speedup_vs_naive=Field(F64, "the one-MMA tile's time / the best time")),
    spec=(tile_search,), errata=(E13_401, E13_402, E13_403, E13_404),
    domain=lambda: _problems(False), edges=search_edges, invalid=_invalid(_args()),
    not_applicable={"numba": "the scoring is symplex.tile_cost's kernel; a search is one "
                             "ranked pass over at most a few thousand tiles",
                    "cupy": "one search per call: nothing to spread over a device"},
)

_FACTS = _args()
"""The facts' problem; SympleX ignores it (E13.402)."""

erratum(
    E13_400, "The dense FP16 peak is four times the hardware's",
    seed=SEED, location="hardware_target.h, the peak_fp16 formula", ops=("symplex.target",),
    witness={"args": {"name": "h100"},
             "spec": {"peak_flops": f"0x{bits(989.4e12):016x}"},
             "seed": {"peak_flops": f"0x{bits(3957.71904e12):016x}"}},
    flag="result",
    detail="SympleX computes SMs x tensor cores x (m n k of one MMA) x 2 x 1.83 GHz, as if a "
           "tensor core finished a whole m16n8k16 MMA each clock. Hopper's does 512 FMA per "
           "clock, a quarter of one: H100 3957.7 TFLOPS against the datasheet's 989.4 dense "
           "(B200 19188.9, Generic 2518.5), and ridge points of 1181.4, 2398.6 and 1259.3 "
           "FLOP/B that no tile reaches. The spec takes the vendor's dense peak.",
)
erratum(
    E13_401, "The tile footprint counts the tile's volume, not its three operand tiles",
    seed=SEED, location="optimizer, enumeration: 3 * tm * tn * tk * bpe * 2 <= SRAM",
    ops=("symplex.tile_cost", "symplex.tile_search"),
    witness={"args": _args(tile=[64, 64, 64]),
             "spec": {"footprint_bytes": 49152, "fits": True},
             "seed": {"footprint_bytes": 3145728, "fits": False}},
    also=({"op": "symplex.tile_search", "args": _FACTS,
           "spec": {"candidates_evaluated": 5001}, "seed": {"candidates_evaluated": 44}},),
    flag="result",
    detail="Shared memory holds an A (tm x tk), a B (tk x tn) and a C (tm x tn) tile per "
           "stage: (tm tk + tk tn + tm tn) x bpe x stages. SympleX keeps a tile only if "
           "3 tm tn tk bpe 2 fits, so on H100 only 44 tiles survive (25 on B200) and none "
           "larger than 9 MMAs.",
)
erratum(
    E13_402, "The search ignores the problem's M, N and K",
    seed=SEED, location="optimizer, optimize(ispace): only the number of loop dimensions",
    ops=("symplex.tile_search", "symplex.tile_cost"),
    witness={"args": _FACTS,
             "spec": {"tile": [192, 256, 16], "bound": "memory"},
             "seed": {"tile": [16, 8, 64], "candidates_evaluated": 44}},
    also=({"op": "symplex.tile_cost", "args": _args(tile=[16, 8, 64]),
           "spec": {"flops": 137438953472}, "seed": {"flops": 16384}},),
    flag="result",
    detail="optimize() reads only how many loop dimensions there are: every matmul gets the "
           "same tile, enumerated up to 1024 whatever the problem, and scored on its own "
           "2 tm tn tk flops and one load of its three tiles. speedup_vs_naive then compares "
           "one tile's latency with another's and comes out below 1 (0.362 on H100, 0.633 "
           "on B200, 0.588 on Generic). The spec scores the whole problem's padded grid.",
)
erratum(
    E13_403, "Heuristic phases prune the roofline's best tile before the final ranking",
    seed=SEED, location="optimizer, phases 1 and 2 (roofline filter, symmetry score)",
    ops=("symplex.tile_search",),
    witness={"args": _FACTS, "spec": {"ranked": 5001}, "seed": {"ranked": 20}},
    flag="result",
    detail="Phase 1 keeps compute-bound tiles, else the 200 of highest intensity (with its "
           "knees no tile is compute-bound, so nothing is dropped); phase 2 sorts by "
           "0.35 SRAM use + 0.45 tensor-core use + 0.20 coalescing and phase 3 times only the "
           "first 20. On H100 the chosen (16, 8, 64) is 20th of 20. The spec ranks every "
           "candidate by the roofline time.",
)
erratum(
    E13_404, "The time blends the two roofline terms",
    seed=SEED, location="optimizer, phase 3 latency",
    ops=("symplex.tile_cost", "symplex.tile_search"),
    witness={"args": _args(tile=[16, 8, 64]),
             "spec": {"predicted_seconds": f"0x{bits(25803358208 / 3.35e12):016x}"},
             "seed": {"predicted_seconds": f"0x{bits(8.45038874183479e-10):016x}"}},
    also=({"op": "symplex.tile_search", "args": _FACTS,
           "spec": {"predicted_seconds": "0x3f39f304fe5dd0b9"},
           "seed": {"predicted_seconds": "0x3e0d090a61232faf"}},),
    flag="result",
    detail="SympleX's latency is 0.85 x max(compute, memory) + 0.15 x min, the 0.85 only "
           "with more than one stage: neither a roofline (max) nor a serial sum. The spec's "
           "time is max(flops / peak, bytes / bandwidth).",
)
erratum(
    E13_405, "B200's table: 160 SMs, 8 tensor cores per SM, 304 KiB shared memory",
    seed=SEED, location="hardware_target.h, B200", ops=("symplex.target",),
    witness={"args": {"name": "b200"},
             "spec": {"sms": 148, "tensor_cores_per_sm": 4, "sram_per_sm": 233472,
                      "mma": [16, 8, 16]},
             "seed": {"sms": 160, "tensor_cores_per_sm": 8, "sram_per_sm": 311296,
                      "mma": [16, 8, 32]}},
    flag="result",
    detail="B200 enables 148 SMs (74 per die), each with 4 tensor cores, 228 KB of shared "
           "memory and a 256 KiB register file; the f16 warp MMA stays m16n8k16 (k = 32 is "
           "the 8-bit shape). SympleX's 160 / 8 / 304 KiB / 512 KiB / 16x8x32 feed its peak.",
)
erratum(
    E13_406, "H100 holds 48 warps per SM",
    seed=SEED, location="hardware_target.h, H100", ops=("symplex.target",),
    witness={"args": {"name": "h100"}, "spec": {"max_warps": 64}, "seed": {"max_warps": 48}},
    flag="result",
    detail="Compute capability 9.0 keeps 2048 threads (64 warps) resident per SM; 48 is "
           "Ampere GA10x's and Ada's limit. The occupancy ratio SympleX derives from it "
           "stays 1, so the search is unaffected.",
)
