"""Chapter 12: vyre's tensor-train contraction step (vyre-primitives tt_contract_step), its
shape checks and its f64 CPU oracle.

1. Shape checks, in vyre's order, each refusing with vyre's own "Fix: ..." text: r_prev > 0,
   then r_next > 0, then r_prev * r_next within u32. Then (the spec's) acc_in holds r_prev
   lanes and core r_prev * r_next, row-major [a][b].
2. Per output lane t in 0..r_next: acc = 0; for a in 0..r_prev in order,
   acc = acc + fmul(acc_in[a], core[a * r_next + t]) mod 2^32; acc_out[t] = acc. Each term is
   truncated on its own before the wrapping sum.
3. fmul is the signed 16.16 multiply (0.6.5, spec/vyre/fixed.py); vyre 0.6.3 reads both
   operands unsigned (E12.300).
4. The CPU oracle is f64: out[b] = sum over a of acc[a] * core[a * r_next + b], in order. It is
   not bit-parity with step 2: for non-negative lanes below 2^15 (so every product and every
   sum is exact in f64) the oracle of the real values v / 2^16 lies above the fixed-point lane
   by at least 0 and at most r_prev * (2^16 - 1) / 2^32 < r_prev / 2^16 (truncation alone).
"""

from __future__ import annotations

from ..core.bits import add
from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import U32, Field, List, record
from ..core.strategies import st
from .fixed import FIXED_ONE, U32_MAX, fmul_words

VYRE = SEEDS["vyre"]
E12_300 = "E12.300"
"""0.6.3's multiply reads 16.16 operands unsigned."""
E12_301 = "E12.301"
"""0.6.5's doc comment still says unsigned."""
MAX_TT_CELLS = 1 << 22
"""The spec's own bound on the core one request carries (4x vyre's chain cap of 2^20)."""


def shape_refusal(r_prev: int, r_next: int) -> str | None:
    """Step 1, vyre's part: the first failing check's "Fix:" text, or None."""
    if r_prev == 0:
        return f"Fix: tt_contract_step requires r_prev > 0, got {r_prev}."
    if r_next == 0:
        return f"Fix: tt_contract_step requires r_next > 0, got {r_next}."
    if r_prev * r_next > U32_MAX:
        return f"Fix: tt_contract_step r_prev*r_next overflows u32: {r_prev}*{r_next}."
    return None


def fmul(x: int, y: int, errata: frozenset[str] = NO_ERRATA) -> int:
    """Step 3: the signed 16.16 multiply; unsigned under E12.300."""
    return fmul_words(x, y, signed=E12_300 not in errata)


def tt_contract_step(acc_in: list[int], core: list[int], r_prev: int, r_next: int,
                     errata: frozenset[str] = NO_ERRATA) -> list[int]:
    """Step 2: every output lane, the wrapping u32 sum of its truncated products in a order."""
    out = []
    for t in range(r_next):
        acc = 0
        for a in range(r_prev):
            acc = add(acc, fmul(acc_in[a], core[a * r_next + t], errata), 32)
        out.append(acc)
    return out


def tt_contract_step_f64(acc_in: list[float], core: list[float], r_prev: int,
                         r_next: int) -> list[float]:
    """Step 4: vyre's f64 oracle (missing elements read as 0)."""
    def at(xs: list[float], i: int) -> float:
        return xs[i] if i < len(xs) else 0.0

    out = []
    for b in range(r_next):
        acc = 0.0
        for a in range(r_prev):
            acc += at(acc_in, a) * at(core, a * r_next + b)
        out.append(acc)
    return out


def check_step(args: dict) -> None:
    """Step 1: vyre's shape checks, then the buffer lengths the shape asks for."""
    r_prev, r_next = args["r_prev"], args["r_next"]
    refusal = shape_refusal(r_prev, r_next)
    if refusal:
        raise InvalidInput(refusal)
    for name, want in (("acc_in", r_prev), ("core", r_prev * r_next)):
        if len(args[name]) != want:
            raise InvalidInput(f"args.{name}: {len(args[name])} items, the shape "
                               f"({r_prev}, {r_next}) needs {want}")


def tt_contract_step_op(acc_in: list[int], core: list[int], r_prev: int, r_next: int,
                        errata: frozenset[str] = NO_ERRATA) -> dict:
    return {"acc_out": tt_contract_step(acc_in, core, r_prev, r_next, errata)}


NEG_ONE = 0xFFFF0000
"""-1.0 in 16.16."""
ONE_AND_HALF = 0x18000
"""1.5 in 16.16 (non-zero low 16 bits)."""


def _step(acc_in: list[int], core: list[int], r_prev: int, r_next: int) -> dict:
    return {"acc_in": acc_in, "core": core, "r_prev": r_prev, "r_next": r_next}


def step_edges() -> list[dict]:
    """The facts sheet's vectors (identity core, [1, 2] x [[1,2,3],[4,5,6]] in 16.16), a
    wrapping sum, and negative lanes."""
    one = FIXED_ONE
    return [_step([3, 5], [one, 0, 0, one], 2, 2),
            _step([1, 2], [one, 2 * one, 3 * one, 4 * one, 5 * one, 6 * one], 2, 3),
            _step([U32_MAX, U32_MAX], [one, one], 2, 1),
            _step([NEG_ONE], [ONE_AND_HALF], 1, 1),
            _step([NEG_ONE, 2 * one], [ONE_AND_HALF, NEG_ONE, 3 * one, U32_MAX], 2, 2)]


def step_domain() -> st.SearchStrategy:
    """Small shapes; lanes are any u32, biased to negatives and 16.16 values near +-1."""
    lane = st.one_of(st.integers(0, U32_MAX), st.integers(0, 4 * FIXED_ONE),
                     st.integers(U32_MAX - 4 * FIXED_ONE, U32_MAX))

    @st.composite
    def build(draw) -> dict:
        r_prev, r_next = draw(st.integers(1, 6)), draw(st.integers(1, 6))
        return _step(draw(st.lists(lane, min_size=r_prev, max_size=r_prev)),
                     draw(st.lists(lane, min_size=r_prev * r_next, max_size=r_prev * r_next)),
                     r_prev, r_next)

    return build()


def step_bench(n: int, rng) -> list[dict]:
    """One step of r_prev = r_next = isqrt(n): n core cells, random u32 lanes."""
    r = max(1, int(n ** 0.5))
    return [_step(rng.integers(0, 1 << 32, r, dtype="u8").tolist(),
                  rng.integers(0, 1 << 32, r * r, dtype="u8").tolist(), r, r)]


declare(
    "vyre.tt_contract_step", chapter=12,
    summary="vyre's tensor-train contraction step: each output lane is the wrapping u32 sum "
            "of the truncated 16.16 products of acc_in with its core column.",
    args=record(acc_in=Field(List(U32, 1 << 20), "the accumulator, r_prev 16.16 lanes"),
                core=Field(List(U32, MAX_TT_CELLS), "the core slice, r_prev x r_next, "
                                                    "row-major"),
                r_prev=Field(U32, "lanes in"), r_next=Field(U32, "lanes out")),
    result=record(acc_out=Field(List(U32), "r_next 16.16 lanes")),
    spec=(tt_contract_step, shape_refusal, fmul, tt_contract_step_f64), check=check_step,
    errata=(E12_300,), domain=step_domain, edges=step_edges, bench=step_bench,
    invalid=(InvalidCase("r_prev = 0", lambda: st.just(_step([], [], 0, 3))),
             InvalidCase("r_next = 0", lambda: st.just(_step([1], [], 1, 0))),
             InvalidCase("r_prev * r_next beyond u32", lambda: st.just(
                 _step([1], [1], 65536, 65537))),
             InvalidCase("acc_in shorter than r_prev", lambda: st.just(
                 _step([1], [1, 2], 2, 1)))),
)

erratum(
    E12_300, "The 16.16 multiply reads negative operands as huge unsigned values",
    seed=VYRE, location="vyre-primitives/src/lib.rs fixed_mul_16_16_expr",
    ops=("vyre.tt_contract_step",),
    witness={"args": _step([NEG_ONE], [ONE_AND_HALF], 1, 1),
             "spec": {"acc_out": [0xFFFE8000]}, "seed": {"acc_out": [0x7FFE8000]}},
    flag="result",
    detail="0.6.3 builds the product from the low word and the unsigned high word (mulhi) of "
           "the 64-bit product, so a negative 16.16 operand counts as about 2^32: -1.0 x 1.5 "
           "gives 0x7FFE8000 (about +32766) instead of -1.5 (0xFFFE8000). A term differs only "
           "when an operand is negative and the other has non-zero low 16 bits, and not "
           "always then: -0.5 x -0.5 is 0x4000 in both (PO12.302). "
           "0.6.5 subtracts the sign corrections from the high word; its doc comment still "
           "says unsigned.",
)

erratum(
    E12_301, "0.6.5's 16.16 multiply is signed; its doc comment says unsigned",
    seed=SEEDS["vyre 0.6.5"], location="vyre-primitives/src/lib.rs fixed_mul_16_16_expr",
    ops=("vyre.tt_contract_step",),
    witness={"documents": "(left * right) >> 16 for unsigned 16.16 lanes",
             "code": "two's-complement operands: the unsigned high word less the sign "
                     "corrections"},
    flag="doc",
    detail="The body comment and the code read operands as signed i32 (PO12.301); the doc "
           "line above them was left from 0.6.3. For operands below 2^31 the two readings "
           "agree (PO12.302).",
)
