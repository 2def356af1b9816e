"""Chapter 14: the dispatch contract of one tensor-train step (vyre-self-substrate's
dispatch_tt_step_with_scratch_into, dispatch_buffers.rs and the OptimizerDispatcher trait):
what fusion_pressure_via hands a dispatcher and how it reads the answer.

1. Cells: before every chain step but the last, cells = r_prev * r_next must fit u32, then
   must not exceed 2^20 (MAX_TT_DISPATCH_CELLS), each refusing with vyre's BadInputs text
   (checks c and d of spec/vyre/fusion.py step 2). The last step (r_next = 1) has no check:
   its r_prev cells passed the check as the previous step's r_next (PO14.311).
2. Program: tt_contract_step(r_prev, r_next) (spec/vyre/program.py).
3. Inputs, one per buffer in binding order: acc_in's lanes, then the core's, as little-endian
   u32 words (4 bytes a lane), then 4 r_next zero bytes for acc_out. The step writes the
   lanes it is handed and checks none against r_prev or the cells; the chain hands exactly
   r_prev and r_prev * r_next.
4. Grid: [max(1, ceil(r_next / 256)), 1, 1], whatever the Program's workgroup ([256, 1, 1],
   or [1, 1, 1] for the trap Program of r_prev = 0 or r_next = 0); so r_next = 0 gives one
   workgroup (E14.310), r_next = 4294967295 gives 2^24, and a step that passes step 1 with
   r_prev >= 1 has r_next <= 2^20, so at most 4096 workgroups.
5. Decode: no output buffer refuses ("... expected at least one output buffer, got 0.");
   the first output must hold exactly 4 r_next bytes, neither fewer nor more ("... expected
   {4 r_next} output bytes, got {len}."); its words are read little-endian; further outputs
   are ignored. Both are BackendError texts. vyre's two other decode texts cannot arise:
   4 r_next bytes never overflow a 64-bit size, and the exact length leaves nothing short.

A DispatchError displays as "dispatcher input mismatch: " (BadInputs), "dispatcher backend
error: " (BackendError) or "dispatcher rejected program: " (Rejected) before its text; the
wire carries the text alone, as spec/vyre/fusion.py does.
"""

from __future__ import annotations

from ..core.bits import select, shr
from ..core.errata import SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BYTES, U32, U64, Array, Bytes, Field, List, record
from ..core.strategies import st
from .fixed import U32_MAX
from .fusion import MAX_TT_DISPATCH_CELLS, PASS, chain_check, refusal_text
from .program import LANE_BYTES, WORKGROUP_X, tt_program

CONTEXT = "fusion_pressure_via TT"
"""The decode's context in vyre's texts. Real code: tensor_train_chain_fusion.rs."""
MAX_OUTPUTS = 8
"""The spec's own bound on the output buffers one request carries."""
MAX_OUTPUT_BYTES = LANE_BYTES * (MAX_TT_DISPATCH_CELLS + 1)
"""The spec's own bound on one output buffer's bytes (past the largest lawful acc_out)."""


def grid_x(n):
    """Step 4: max(1, ceil(n / 256)) for a u32 n, as n >> 8 plus one for a partial
    workgroup (never n + 255, which wraps near 2^32). Runs on ints and z3 bit-vectors."""
    whole = shr(n, 8)
    return select(n == 0, 1, select((n & (WORKGROUP_X - 1)) != 0, whole + 1, whole))


def cells_check(r_prev, r_next):
    """Step 1: PASS, or which check refuses (the chain's checks c and d with nothing
    multiplied yet)."""
    return chain_check(1, r_prev, r_next)


def dispatch_grid(r_prev: int, r_next: int) -> dict:
    """Steps 1, 3 and 4: the step's sizes, or vyre's refusal."""
    check = cells_check(r_prev, r_next)
    if check != PASS:  # 1.
        raise InvalidInput(refusal_text(check, 1, r_prev, r_next))
    cells = r_prev * r_next
    return {"workgroup_size": tt_program(r_prev, r_next)["workgroup_size"],
            "grid": [grid_x(r_next), 1, 1],
            "cells": cells,
            "input_bytes": [LANE_BYTES * r_prev, LANE_BYTES * cells, LANE_BYTES * r_next],
            "output_bytes": LANE_BYTES * r_next}


def le_words(words: list[int]) -> bytes:
    """Step 3: u32 words as little-endian bytes."""
    return b"".join(w.to_bytes(LANE_BYTES, "little") for w in words)


def dispatch_inputs(acc_in: list[int], core: list[int], r_next: int) -> list[bytes]:
    """Step 3: the three inputs, in binding order."""
    return [le_words(acc_in), le_words(core), bytes(LANE_BYTES * r_next)]


def output_refusal(outputs: list[bytes], r_next: int) -> str | None:
    """Step 5's checks: vyre's text, or None when the first output fits."""
    if not outputs:
        return f"Fix: {CONTEXT} expected at least one output buffer, got {len(outputs)}."
    want = LANE_BYTES * r_next
    if len(outputs[0]) != want:
        return f"Fix: {CONTEXT} expected {want} output bytes, got {len(outputs[0])}."
    return None


def decode_output(outputs: list[bytes], r_next: int) -> list[int]:
    """Step 5: the first output's little-endian words (its length already checked)."""
    data = outputs[0]
    return [int.from_bytes(data[i:i + LANE_BYTES], "little")
            for i in range(0, LANE_BYTES * r_next, LANE_BYTES)]


def check_outputs(args: dict) -> None:
    refusal = output_refusal(args["outputs"], args["r_next"])
    if refusal:
        raise InvalidInput(refusal)


def check_inputs(args: dict) -> None:
    """The lanes one step carries: at most the cell cap each (the spec's bound)."""
    for name in ("acc_in", "core"):
        if len(args[name]) > MAX_TT_DISPATCH_CELLS:
            raise InvalidInput(f"args.{name}: {len(args[name])} lanes exceed the cell cap "
                               f"{MAX_TT_DISPATCH_CELLS}")
    if args["r_next"] > MAX_TT_DISPATCH_CELLS:
        raise InvalidInput(f"args.r_next: {args['r_next']} exceeds the cell cap "
                           f"{MAX_TT_DISPATCH_CELLS}")


def grid_op(r_prev: int, r_next: int) -> dict:
    return dispatch_grid(r_prev, r_next)


def inputs_op(acc_in: list[int], core: list[int], r_next: int) -> dict:
    return {"inputs": dispatch_inputs(acc_in, core, r_next)}


def decode_op(outputs: list[bytes], r_next: int) -> dict:
    return {"words": decode_output(outputs, r_next)}


# ── domains ───────────────────────────────────────────────────────────────────────────────────

EDGE_LENGTHS = (0, 1, 255, 256, 257, 1024, MAX_TT_DISPATCH_CELLS, MAX_TT_DISPATCH_CELLS + 1,
                4294967040, 4294967041, U32_MAX)
"""Lengths at the workgroup, the cell cap and the top of u32."""


def grid_domain() -> st.SearchStrategy:
    """Passing steps: r_prev >= 1 and cells within the cap, or r_prev = 0 (no cells)."""
    @st.composite
    def build(draw) -> dict:
        r_prev = draw(st.one_of(st.just(0), st.integers(1, 64), st.integers(1, 4096)))
        cap = MAX_TT_DISPATCH_CELLS // max(r_prev, 1)
        r_next = draw(st.one_of(st.integers(0, 600), st.integers(0, cap)) if r_prev else
                      st.integers(0, U32_MAX))
        return {"r_prev": r_prev, "r_next": r_next}

    return build()


def grid_edges() -> list[dict]:
    return [{"r_prev": a, "r_next": b} for a, b in (
        (1, 0), (1, 1), (1, 255), (1, 256), (1, 257), (4, 8), (1024, 1024),
        (1, MAX_TT_DISPATCH_CELLS), (0, U32_MAX), (0, 4294967041), (0, 0),
        (2048, 1024), (1, MAX_TT_DISPATCH_CELLS + 1), (65536, 65537), (U32_MAX, 1),
        (U32_MAX, U32_MAX))]


def lanes() -> st.SearchStrategy:
    """u32 lanes, small ones and a few marked patterns among them."""
    return st.one_of(st.integers(0, U32_MAX), st.integers(0, 255),
                     st.sampled_from([0x12345678, 0x80000000, U32_MAX]))


def decode_domain() -> st.SearchStrategy:
    """Outputs whose first buffer fits r_next, and sometimes further buffers."""
    @st.composite
    def build(draw) -> dict:
        r_next = draw(st.integers(0, 40))
        first = le_words(draw(st.lists(lanes(), min_size=r_next, max_size=r_next)))
        rest = draw(st.lists(st.binary(max_size=12), max_size=2))
        return {"outputs": [first, *rest], "r_next": r_next}

    return build()


def _decode(outputs: list[str], r_next: int) -> dict:
    return {"outputs": outputs, "r_next": r_next}


def decode_edges() -> list[dict]:
    """The facts sheet's [9, 12, 15], a word read little-endian, an ignored extra output,
    r_next = 0 with an empty buffer, and every refusal."""
    return [_decode(["090000000c0000000f000000"], 3), _decode(["78563412"], 1),
            _decode(["ffffffff00000080", "ff"], 2), _decode([""], 0),
            _decode(["090000000c0000000f0000"], 3), _decode(["090000000c0000000f00000000"], 3),
            _decode([], 3), _decode([], 0), _decode(["", "05000000"], 1),
            _decode(["00"], 0), _decode(["00000000"], U32_MAX)]


def inputs_domain() -> st.SearchStrategy:
    @st.composite
    def build(draw) -> dict:
        r_prev, r_next = draw(st.integers(1, 8)), draw(st.integers(1, 8))
        return {"acc_in": draw(st.lists(lanes(), min_size=r_prev, max_size=r_prev)),
                "core": draw(st.lists(lanes(), min_size=r_prev * r_next,
                                      max_size=r_prev * r_next)),
                "r_next": r_next}

    return build()


def decode_bench(n: int, rng) -> list[dict]:
    """n outputs of 1-64 random words each."""
    sizes = rng.integers(1, 65, n)
    return [{"outputs": [rng.integers(0, 256, 4 * int(k), dtype="u1").tobytes()],
             "r_next": int(k)} for k in sizes]


declare(
    "vyre.dispatch_grid", chapter=14,
    summary="The sizes of one tensor-train dispatch: the Program's workgroup, grid "
            "[max(1, ceil(r_next / 256)), 1, 1], the core's cells and each buffer's bytes, "
            "or vyre's refusal past u32 or the 2^20 cell cap.",
    args=record(r_prev=Field(U32, "lanes in"), r_next=Field(U32, "lanes out")),
    result=record(workgroup_size=Field(Array(U32, 3), "the Program's invocations per "
                                                      "workgroup, x y z"),
                  grid=Field(Array(U32, 3), "workgroups, x y z"),
                  cells=Field(U32, "the core's lanes, r_prev * r_next"),
                  input_bytes=Field(Array(U64, 3), "bytes of acc_in, core_slice, acc_out"),
                  output_bytes=Field(U64, "the bytes the first output must hold")),
    spec=(dispatch_grid, grid_x, cells_check), domain=grid_domain, edges=grid_edges,
    invalid=(InvalidCase("cells past the cap", lambda: st.just({"r_prev": 2048,
                                                                  "r_next": 1024})),
             InvalidCase("cells past u32", lambda: st.just({"r_prev": 65536,
                                                              "r_next": 65537})),
             InvalidCase("a length of 2^32", lambda: st.just({"r_prev": 1,
                                                               "r_next": 2**32}))),
    not_applicable={"numba": "a few integer operations per request: no numeric core",
                    "cupy": "a few integer operations per request: nothing to spread over a "
                            "device"},
)

declare(
    "vyre.dispatch_inputs", chapter=14,
    summary="The three dispatch inputs of a tensor-train step, in binding order: acc_in's and "
            "the core's lanes as little-endian u32 words, then 4 r_next zero bytes.",
    args=record(acc_in=Field(List(U32), "the accumulator lanes"),
                core=Field(List(U32), "the core slice lanes, row-major"),
                r_next=Field(U32, "lanes out")),
    result=record(inputs=Field(List(BYTES), "acc_in, core_slice, acc_out bytes")),
    spec=(dispatch_inputs, le_words), check=check_inputs, domain=inputs_domain,
    edges=lambda: [{"acc_in": [1, 2], "core": [1, 2, 3, 4, 5, 6], "r_next": 3},
                   {"acc_in": [0x12345678], "core": [0x10000], "r_next": 1},
                   {"acc_in": [], "core": [], "r_next": 0}],
    invalid=(InvalidCase("r_next past the cap", lambda: st.just(
        {"acc_in": [1], "core": [1], "r_next": MAX_TT_DISPATCH_CELLS + 1})),),
    not_applicable={"numba": "a byte copy per request: numpy's tobytes is the kernel",
                    "cupy": "a byte copy per request: nothing to spread over a device"},
)

declare(
    "vyre.decode_output", chapter=14,
    summary="A tensor-train step's answer read back: the first output buffer's little-endian "
            "u32 words when it holds exactly 4 r_next bytes, else vyre's \"Fix:\" text.",
    args=record(outputs=Field(List(Bytes(MAX_OUTPUT_BYTES), MAX_OUTPUTS),
                              "the dispatcher's output buffers, in order"),
                r_next=Field(U32, "the words expected")),
    result=record(words=Field(List(U32), "r_next u32 words")),
    spec=(decode_output, output_refusal), check=check_outputs, domain=decode_domain,
    edges=decode_edges, bench=decode_bench,
    invalid=(InvalidCase("no output buffer", lambda: st.just(_decode([], 2))),
             InvalidCase("a short output", lambda: st.just(_decode(["0900"], 1))),
             InvalidCase("a long output", lambda: st.just(_decode(["0900000000"], 1)))),
    not_applicable={"cupy": "a little-endian read of bytes already on the host: a device "
                            "round trip costs more than the read"},
)

erratum(
    "E14.310", "The dispatch grid is documented as ceil(n / 256); it is never below 1",
    seed=SEEDS["vyre"], location="vyre-self-substrate/src/hardware/dispatch_buffers.rs "
                                 "ceil_div_u32; optimizer/dispatcher.rs OptimizerDispatcher",
    ops=("vyre.dispatch_grid",),
    witness={"documents": "ceil_div_u32 computes ceil(n / d); parallel passes compute "
                          "Some([ceil(work / wg_x), 1, 1]): 0 workgroups for r_next = 0",
             "code": "n.div_ceil(d).max(1): 1 workgroup for r_next = 0"},
    flag="doc", also_seeds=(SEEDS["vyre 0.6.5"],),
    detail="The clamp is deliberate code, so the spec follows it (step 4): r_next = 0 "
           "dispatches one workgroup of the trap Program. The chain never dispatches "
           "r_next = 0 (zero ranks are skipped). 0.6.3 and 0.6.5 agree.",
)

erratum(
    "E14.311", "fusion_pressure_via reserves scratch for the largest rank before its checks",
    seed=SEEDS["vyre"], location="vyre-self-substrate/src/math/tensor_train_chain_fusion.rs "
                                 "fusion_pressure_via_with_scratch, reserve_vec_capacity",
    ops=("vyre.fusion_pressure",),
    witness={"args": {"ranks": [4294967295]},
             "spec": "Fix: fusion_pressure_via refuses to allocate 4294967295 TT core cells for "
                     "r_prev*r_next; max is 1048576. Shard the chain or lower ranks before "
                     "dispatch.",
             "seed": "that refusal where the host grants 2 x 16 GiB of address space; with "
                     "less (an 8 GB address-space limit), BackendError \"Fix: tensor-train "
                     "accumulator scratch could not reserve scratch capacity for 4294967295 "
                     "item(s): memory allocation failed because the memory allocator returned "
                     "an error. Split the dispatch window before retrying.\""},
    flag="ub", also_seeds=(SEEDS["vyre 0.6.5"],),
    detail="Before any rank is checked, the accumulator and the step output each reserve "
           "max(non-zero rank) u32 lanes, so the answer to a chain the checks refuse depends "
           "on the host's memory: [8, 1073741824] (spec: the u32-lanes refusal, product "
           "8589934592) gets \"Fix: tensor-train output scratch could not reserve scratch "
           "capacity for 1073741824 item(s): ...\" under the same limit. vyre's own test "
           "says an oversized core \"must be rejected before allocation or dispatch\"; the "
           "spec checks first and never reserves more than the cell cap allows.",
)
