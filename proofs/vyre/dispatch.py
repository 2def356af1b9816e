"""Obligations of vyre's tensor-train dispatch contract: z3 on the grid over every u32 length
and on the cell check over every pair of u32 lengths (chapter 14); properties on the output
decode (chapter 14) and on the Program's declarations (chapter 12)."""

from __future__ import annotations

import struct
from functools import cache

import z3
from hypothesis import strategies as st

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.vyre.dispatch import (
    CONTEXT,
    cells_check,
    decode_output,
    dispatch_grid,
    dispatch_inputs,
    grid_x,
    le_words,
    output_refusal,
)
from ...spec.vyre.fixed import U32_MAX
from ...spec.vyre.fusion import BUFFER, CELLS, MAX_TT_DISPATCH_CELLS, PASS, chain_check
from ...spec.vyre.program import BufferAccess, dispatch_inputs_taken, tt_program
from ...spec.vyre.tt import shape_refusal
from ..core.obligation import Property, Query, property_obligation, z3_obligation

MAX_GRID_X = 1 << 24
"""ceil((2^32 - 1) / 256): the grid for the largest u32 length."""
CAPPED_GRID_X = MAX_TT_DISPATCH_CELLS // 256
"""The grid for the cell cap: 4096 workgroups."""


@z3_obligation(
    "PO14.310",
    "For every u32 length n the grid max(1, ceil(n / 256)) is the least g >= 1 with "
    "256 g >= n: g >= 1, 256 g >= n, 256 (g - 1) < n when n > 0, and g <= 2^24 (so it fits "
    "u32 and nothing wraps at n = 4294967295); n = 0 gives 1.",
    covers=("vyre.dispatch_grid",), subject=grid_x,
    mutants=(Mutant.edit("no clamp", "n = 0 gives 0 workgroups (the documented ceil)", grid_x,
                         "select(n == 0, 1,", "select(n == 0, 0,"),
             Mutant.edit("always one more", "a full last workgroup still adds one", grid_x,
                         "whole + 1, whole))", "whole + 1, whole + 1))"),
             Mutant.edit("no partial workgroup", "the floor, not the ceiling", grid_x,
                         "whole + 1, whole))", "whole, whole))"),
             Mutant.edit("shift by 7", "128-wide workgroups", grid_x, "shr(n, 8)",
                         "shr(n, 7)")),
)
def grid_covers(grid):
    n = z3.BitVec("n", 32)
    g = grid(n)
    g64, n64 = z3.ZeroExt(32, g), z3.ZeroExt(32, n)
    return [Query("g < 1", z3.ULT(g, 1)),
            Query("256 g < n", z3.ULT(g64 * 256, n64)),
            Query("not the least: n > 0 and 256 (g - 1) >= n",
                  z3.And(n != 0, z3.UGE((g64 - 1) * 256, n64))),
            Query("g > 2^24", z3.UGT(g64, MAX_GRID_X)),
            Query("n = 0 gives other than 1", z3.And(n == 0, g != 1))]


@z3_obligation(
    "PO14.311",
    "For every pair of u32 lengths the cell check refuses in vyre's order: past u32 first "
    "(r_prev * r_next >= 2^32), then past the cap (> 2^20), and passes exactly when "
    "r_prev * r_next <= 2^20; a passing step with r_prev >= 1 has r_next <= 2^20, so at most "
    "4096 workgroups (within a backend's 65535 per dimension) and buffers of at most 4 MiB; "
    "the chain's last step (r_prev = the previous r_next, r_next = 1) is within the cap "
    "though it is not checked.",
    covers=("vyre.dispatch_grid",), subject=cells_check,
    mutants=(Mutant.edit("cap inclusive", "2^20 cells are refused", chain_check,
                         "cells > MAX_TT_DISPATCH_CELLS", "cells >= MAX_TT_DISPATCH_CELLS"),
             Mutant.edit("cap before overflow", "the cap is reported for a product past u32",
                         chain_check, "select(cells > U32_MAX, BUFFER,",
                         "select(cells > U32_MAX + MAX_TT_DISPATCH_CELLS, BUFFER,"),
             Mutant.edit("cells by r_next", "the check reads r_next alone", cells_check,
                         "chain_check(1, r_prev, r_next)", "chain_check(1, 1, r_next)")),
)
def cells_bounded(check):
    a, b = z3.Ints("r_prev r_next")
    u32 = z3.And(a >= 0, a <= U32_MAX, b >= 0, b <= U32_MAX)
    c = check(a, b)
    passes = c == PASS
    small = z3.Int("r")
    return [Query("passes iff cells <= 2^20",
                  z3.And(u32, passes != (a * b <= MAX_TT_DISPATCH_CELLS))),
            Query("past u32 not reported as such", z3.And(u32, a * b > U32_MAX, c != BUFFER)),
            Query("past the cap within u32 not reported as the cap",
                  z3.And(u32, a * b > MAX_TT_DISPATCH_CELLS, a * b <= U32_MAX, c != CELLS)),
            Query("a passing step with r_prev >= 1 has r_next > 2^20",
                  z3.And(u32, a >= 1, passes, b > MAX_TT_DISPATCH_CELLS)),
            Query("the last step's cells past the cap",
                  z3.And(small >= 0, small <= U32_MAX, check(1, small) == PASS,
                         check(small, 1) != PASS)),
            Query("a capped r_next needs more than 4096 workgroups",
                  z3.And(z3.ULE(z3.BitVec("m", 32), MAX_TT_DISPATCH_CELLS),
                         z3.UGT(grid_x(z3.BitVec("m", 32)), CAPPED_GRID_X)))]


def _decode_holds(case: tuple[list[bytes], int]) -> None:
    outputs, r_next = case
    text = output_refusal(outputs, r_next)
    if not outputs:
        assert text == f"Fix: {CONTEXT} expected at least one output buffer, got 0.", case
        return
    if len(outputs[0]) != 4 * r_next:
        assert text == (f"Fix: {CONTEXT} expected {4 * r_next} output bytes, "
                        f"got {len(outputs[0])}."), case
        return
    assert text is None, case
    want = list(struct.unpack(f"<{r_next}I", outputs[0]))
    assert decode_output(outputs, r_next) == want, case


@cache
def _outputs() -> st.SearchStrategy:
    @st.composite
    def build(draw) -> tuple:
        r_next = draw(st.integers(0, 12))
        size = draw(st.one_of(st.just(4 * r_next), st.integers(0, 4 * r_next + 6)))
        first = draw(st.binary(min_size=size, max_size=size))
        rest = draw(st.lists(st.binary(max_size=8), max_size=2))
        return draw(st.sampled_from([[first, *rest], []])), r_next

    return build()


def _round_trip(case: tuple[list[int], list[int], int]) -> None:
    acc, core, r_next = case
    inputs = dispatch_inputs(acc, core, r_next)
    assert [len(b) for b in inputs] == [4 * len(acc), 4 * len(core), 4 * r_next], case
    assert inputs[2] == bytes(4 * r_next), case
    assert decode_output(inputs, len(acc)) == acc, case
    assert decode_output(inputs[1:], len(core)) == core, case


@cache
def _lanes() -> st.SearchStrategy:
    lane = st.integers(0, U32_MAX)
    return st.tuples(st.lists(lane, max_size=6), st.lists(lane, max_size=12),
                     st.integers(0, 6))


@property_obligation(
    "PO14.312",
    "The decode refuses with vyre's text when there is no output buffer or the first holds "
    "other than 4 r_next bytes (fewer or more), else gives the first buffer's little-endian "
    "words and ignores the rest; it reads back the little-endian inputs the step writes, "
    "whose sizes are 4 bytes a lane and whose acc_out is zeros.",
    covers=("vyre.decode_output", "vyre.dispatch_inputs"), subject=decode_output,
    mutants=(Mutant.edit("big-endian", "words read big-endian", decode_output,
                         '"little")', '"big")'),
             Mutant.edit("long output truncated", "a longer first buffer is read in part",
                         output_refusal, "len(outputs[0]) != want", "len(outputs[0]) < want"),
             Mutant.edit("words in the text", "the text counts words, not bytes",
                         output_refusal, "want = LANE_BYTES * r_next", "want = r_next"),
             Mutant.edit("inputs big-endian", "lanes written big-endian", le_words,
                         '"little")', '"big")')),
)
def decode_reads_back(_subject):
    cases = [([bytes.fromhex("090000000c0000000f000000")], 3), ([b"\x78\x56\x34\x12"], 1),
             ([bytes(11)], 3), ([bytes(13)], 3), ([], 3), ([], 0), ([b"", b"\x05"], 0),
             ([bytes(8), b"\xff"], 2)]
    return [Property("edges", _decode_holds, cases=lambda: cases),
            Property("generated outputs", _decode_holds, strategy=_outputs, examples=300),
            Property("inputs read back", _round_trip, strategy=_lanes, examples=200)]


def _program_holds(case: tuple[int, int]) -> None:
    r_prev, r_next = case
    p = tt_program(r_prev, r_next)
    text = shape_refusal(r_prev, r_next)
    if text is not None:
        assert p["trap"] == text and p["workgroup_size"] == [1, 1, 1], case
        assert [(b["name"], b["binding"], b["count"], b["output"]) for b in p["buffers"]] == \
            [("acc_out", 0, 1, True)], case
        assert dispatch_inputs_taken(p) == 0, case
        return
    assert p["trap"] is None and p["workgroup_size"] == [256, 1, 1], case
    got = [(b["name"], b["binding"], b["access"], b["count"], b["output"]) for b in p["buffers"]]
    ro, rw = BufferAccess.READ_ONLY, BufferAccess.READ_WRITE
    assert got == [("acc_in", 0, ro, r_prev, False), ("core_slice", 1, ro, r_prev * r_next, False),
                   ("acc_out", 2, rw, r_next, False)], case
    assert dispatch_inputs_taken(p) == 3, case
    try:
        sizes = dispatch_grid(r_prev, r_next)
    except InvalidInput:
        assert r_prev * r_next > MAX_TT_DISPATCH_CELLS, case
        return
    assert sizes["input_bytes"] == [4 * b["count"] for b in p["buffers"]], case
    assert sizes["output_bytes"] == 4 * p["buffers"][2]["count"], case


@property_obligation(
    "PO12.310",
    "tt_contract_step's Program traps exactly on vyre's shape refusals (one output buffer "
    "acc_out at binding 0, count 1, workgroup [1, 1, 1], no dispatch input); otherwise it "
    "declares acc_in, core_slice, acc_out at bindings 0-2 (ReadOnly, ReadOnly, plain "
    "ReadWrite) with r_prev, r_prev * r_next and r_next lanes, workgroup [256, 1, 1], takes "
    "three dispatch inputs, and each buffer's 4 bytes a lane are the bytes the dispatch sizes.",
    covers=("vyre.tt_program", "vyre.dispatch_grid"), subject=tt_program,
    mutants=(Mutant.edit("core by r_next", "the core declared r_next lanes", tt_program,
                         "r_prev * r_next)", "r_next)"),
             Mutant.edit("trap workgroup 256", "the trap Program keeps the 256 workgroup",
                         tt_program, '"workgroup_size": [1, 1, 1]',
                         '"workgroup_size": [WORKGROUP_X, 1, 1]'),
             Mutant.edit("acc_out an output", "acc_out is backend-allocated, taking no input",
                         tt_program, "buffer(\"acc_out\", 2, BufferAccess.READ_WRITE, r_next)",
                         "buffer(\"acc_out\", 2, BufferAccess.READ_WRITE, r_next, True)"),
             Mutant.edit("output bytes per word", "the decode expects r_next bytes",
                         dispatch_grid, '"output_bytes": LANE_BYTES * r_next',
                         '"output_bytes": r_next')),
)
def program_declares(_subject):
    edges = (0, 1, 2, 255, 256, 1024, 65535, 65536, 65537, U32_MAX)
    return [Property("shapes at the edges", _program_holds,
                     cases=lambda: [(a, b) for a in edges for b in edges]),
            Property("generated shapes", _program_holds, strategy=lambda: st.tuples(
                st.integers(0, 4096), st.integers(0, 4096)), examples=300)]
