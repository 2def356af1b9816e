"""Chapter 14: vyre-self-substrate's tensor-train chain fusion pressure and fusion decision
(tensor_train_chain_fusion.rs, fusion_pressure_via and should_fuse_chain).

1. An empty rank list has pressure 0. Otherwise acc = [1] (an integer lane; the cores carry
   16.16 ones, so fmul(v, FIXED_ONE) = v under either multiply) and exact = 1.
2. For each rank r in order: r = 0 is skipped (no dataflow). Else, in vyre's order, each
   refusing with vyre's "Fix: ..." text:
   a. exact = exact * r must fit u128;
   b. exact must not exceed 4294967295 (the u32 lanes);
   c. cells = len(acc) * r must fit u32;
   d. cells must not exceed 2^20 (MAX_TT_DISPATCH_CELLS);
   e. acc = tt_contract_step(acc, [FIXED_ONE] * cells, len(acc), r).
3. Final step: acc = tt_contract_step(acc, [FIXED_ONE] * len(acc), len(acc), 1); the pressure
   is acc[0], the product of the non-zero ranks. With u32 ranks checks a and c never refuse
   (exact <= 4294967295 before each multiply, and len(acc) divides exact).
4. should_fuse(ranks, thr): false for no ranks; else S / n <= log(thr), where S is the sum of
   log(r) over the non-zero ranks, added left to right from 0 in float64, n counts every rank
   (zeros too), and log is C libm's natural log (Python's math.log); thr <= 0 or NaN is false
   (vyre's ln gives -inf or NaN there).

The decision is vyre's CPU should_fuse_chain (a sum of logs). vyre's dispatched
should_fuse_chain_via takes log(pressure) / n instead (`should_fuse_via` here): the two agree
except where log(thr) falls between the two averages, which rounding puts at most a few ulps
apart (PO14.302); e.g. ranks [3, 8] at thr = 0x4013988e1409212e. The spec means the sum of logs.
"""

from __future__ import annotations

import math

from ..core.bits import select
from ..core.errata import SEEDS, erratum
from ..core.errors import BadRequest, InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, U32, Field, Json, List, record
from ..core.strategies import st
from ..pyc.wire import F64, bits, f64, f64_strategy
from .fixed import FIXED_ONE, U32_MAX
from .tt import tt_contract_step

MAX_TT_DISPATCH_CELLS = 1 << 20
"""Real code: tensor_train_chain_fusion.rs, MAX_TT_DISPATCH_CELLS."""
U128_LIMIT = 1 << 128
MAX_RANKS = 1 << 12
"""The spec's own bound on a rank list's length."""
PASS, U128, LANES, BUFFER, CELLS = range(5)
"""Step 2's outcomes: pass, or which check (a-d) refuses."""


def refusal_text(check: int, exact: int, r_prev: int, r: int) -> str:
    """vyre's "Fix:" text for a refusing check of step 2."""
    cells = r_prev * r
    return {
        U128: "Fix: fusion_pressure_via rank product overflowed u128.",
        LANES: f"Fix: fusion_pressure_via rank product would overflow u32 lanes; "
               f"product={exact}, max={U32_MAX}.",
        BUFFER: f"Fix: fusion_pressure_via buffer size overflows r_prev*r_next: {r_prev} * {r}.",
        CELLS: f"Fix: fusion_pressure_via refuses to allocate {cells} TT core cells for "
               f"r_prev*r_next; max is {MAX_TT_DISPATCH_CELLS}. Shard the chain or lower ranks "
               f"before dispatch.",
    }[check]


def chain_check(exact: int, r_prev: int, r: int):
    """Steps 2a-2d on the new product `exact` (= old exact * r) and len(acc) = r_prev: PASS or
    the refusing check. Written with `select`, so it also runs on z3 integers."""
    cells = r_prev * r
    return select(exact >= U128_LIMIT, U128,
                  select(exact > U32_MAX, LANES,
                         select(cells > U32_MAX, BUFFER,
                                select(cells > MAX_TT_DISPATCH_CELLS, CELLS, PASS))))


def fusion_pressure(ranks: list[int]) -> int:
    """Steps 1-3: the product of the non-zero ranks through the chain of unit-core steps."""
    if not ranks:
        return 0
    acc, exact = [1], 1
    for r in ranks:
        if r == 0:
            continue
        exact *= r
        check = chain_check(exact, len(acc), r)
        if check != PASS:
            raise InvalidInput(refusal_text(check, exact, len(acc), r))
        acc = tt_contract_step(acc, [FIXED_ONE] * (len(acc) * r), len(acc), r)
    return tt_contract_step(acc, [FIXED_ONE] * len(acc), len(acc), 1)[0]


def log_rank_sum(ranks: list[int]) -> float:
    """Step 4's S: log(r) over the non-zero ranks, added left to right from 0.0 as vyre's
    iterator sum does (Python 3.12's sum() would compensate the rounding)."""
    total = 0.0
    for r in ranks:
        if r != 0:
            total += math.log(r)
    return total


def should_fuse(ranks: list[int], threshold: float) -> bool:
    """Step 4: vyre's should_fuse_chain, the average log rank against log(thr)."""
    if not ranks or not threshold > 0:
        return False
    log_sum = log_rank_sum(ranks)
    return log_sum / len(ranks) <= math.log(threshold)


def should_fuse_via(ranks: list[int], threshold: float) -> bool:
    """vyre's should_fuse_chain_via: log of the dispatched pressure over n (not the spec's)."""
    if not ranks or not threshold > 0:
        return False
    return math.log(fusion_pressure(ranks)) / len(ranks) <= math.log(threshold)


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

RANKS = Json("list[u32]", List(U32, MAX_RANKS),
             lambda: st.lists(st.integers(0, 12), max_size=6))
"""Ranks as the op reads them itself, so that any bad rank is invalid_input naming it."""


def ranks_from_wire(ranks) -> list[int]:
    """The rank list; anything but u32 ranks (a float, -1, 10^30) is invalid_input."""
    try:
        return List(U32, MAX_RANKS).decode(ranks, "args.ranks")
    except BadRequest as e:
        raise InvalidInput(e.message) from None


def check_ranks(args: dict) -> None:
    ranks_from_wire(args["ranks"])


def pressure_op(ranks) -> dict:
    return {"pressure": fusion_pressure(ranks_from_wire(ranks))}


def should_fuse_op(ranks, threshold: int) -> dict:
    return {"fuse": should_fuse(ranks_from_wire(ranks), f64(threshold))}


SQRT24_EDGE = 0x4013988E1409212E
"""A threshold where the sum of logs and the log of the product of [3, 8] decide apart."""


def chains() -> st.SearchStrategy:
    """Rank lists whose chain is cheap: small ranks, zeros, ones."""
    return st.lists(st.one_of(st.integers(0, 3), st.integers(4, 40)), max_size=6)


declare(
    "vyre.fusion_pressure", chapter=14,
    summary="vyre's tensor-train chain fusion pressure: the product of the non-zero ranks, "
            "run through unit-core contraction steps, refused in vyre's check order.",
    args=record(ranks=Field(RANKS, "the shared-buffer ranks of the chain, in order")),
    result=record(pressure=Field(U32, "the product of the non-zero ranks; 0 for none")),
    spec=(fusion_pressure, chain_check, refusal_text), check=check_ranks,
    domain=lambda: chains().map(lambda r: {"ranks": r}),
    edges=lambda: [{"ranks": r} for r in ([64], [4, 8], [2, 3, 5, 7], [4, 0, 3], [], [0, 0],
                                          [1024, 1024], [4294967295], [2048, 1024],
                                          [65536, 65537])],
    invalid=(InvalidCase("a rank of -1", lambda: st.just({"ranks": [4, -1]})),
             InvalidCase("a float rank", lambda: st.just({"ranks": [2.5]})),
             InvalidCase("a rank of 10^30", lambda: st.just({"ranks": [10**30]})),
             InvalidCase("beyond the cell cap", lambda: st.just({"ranks": [2048, 1024]}))),
    not_applicable={"numba": "one integer product per request; its steps are "
                             "vyre.tt_contract_step's kernel",
                    "cupy": "one integer product per request; its steps are "
                            "vyre.tt_contract_step's kernel"},
)

declare(
    "vyre.should_fuse", chapter=14,
    summary="vyre's chain fusion decision: the average natural log of the non-zero ranks, over "
            "every rank, against log(threshold).",
    args=record(ranks=Field(RANKS, "the shared-buffer ranks of the chain"),
                threshold=Field(F64, "threshold per link (float64 bits)")),
    result=record(fuse=Field(BOOL, "fuse the chain")),
    spec=(should_fuse, log_rank_sum), check=check_ranks,
    domain=lambda: st.fixed_dictionaries({
        "ranks": chains(), "threshold": st.one_of(f64_strategy(0.0, 64.0),
                                                  st.just(bits(-1.0)), st.just(SQRT24_EDGE))}),
    edges=lambda: [{"ranks": r, "threshold": bits(t)} for r, t in (
        ([8, 8, 8], 16.0), ([8, 8, 8], 4.0), ([], 16.0), ([8], 0.0), ([8], -2.0),
        ([0, 0], 1.0), ([0, 0], 0.5), ([3, 8], f64(SQRT24_EDGE)))],
    invalid=(InvalidCase("a rank of -1", lambda: st.just({"ranks": [-1], "threshold": 0})),),
    not_applicable={"numba": "a few logs per request: no numeric core",
                    "cupy": "one decision per request: nothing to spread over a device"},
)

erratum(
    "E14.300", "The chain's accumulator is documented as 16.16; it carries integers",
    seed=SEEDS["vyre"], location="vyre-primitives/src/math/tensor_train.rs tt_contract_step; "
                                 "tensor_train_chain_fusion.rs fusion_pressure_via",
    ops=("vyre.fusion_pressure",),
    witness={"documents": "acc_in: length-r_prev u32 (16.16)",
             "code": "acc starts as the integer 1 and every lane holds an integer product"},
    flag="doc", also_seeds=("vyre@0.6.5",),
    detail="The cores carry the 16.16 one, so fmul(v, FIXED_ONE) = v keeps the lanes integers "
           "under either multiply (PO14.300); read as 16.16 the pressure would be 2^-16 of "
           "the product. The spec's lanes are integers.",
)
