"""Chapter 12: the Program vyre-primitives' tt_contract_step builds: its buffer declarations,
its workgroup, and the trap Program it builds instead for a bad shape.

A Program is vyre IR: storage buffers (name, binding, access, element type, element count),
a workgroup size and a body. The builder never fails on the host; a bad shape becomes a
Program whose body traps with the "Fix:" text.

1. The shape checks of spec/vyre/tt.py step 1, in vyre's order (r_prev = 0, r_next = 0,
   r_prev * r_next beyond u32). If one fails, the trap Program: workgroup [1, 1, 1], one
   buffer `acc_out` at binding 0, ReadWrite and marked as an output (the backend allocates
   it), count 1, and a body that traps with that check's text.
2. Otherwise workgroup [256, 1, 1] and three u32 buffers in binding order:
   `acc_in` (binding 0, ReadOnly, r_prev lanes), `core_slice` (binding 1, ReadOnly,
   r_prev * r_next lanes, row-major [a][b]) and `acc_out` (binding 2, plain ReadWrite,
   r_next lanes). A buffer of n lanes is 4 n bytes.
3. Invocation t = invocation_id.x writes lane t of acc_out when t < r_next (the rule of
   spec/vyre/tt.py step 2); the others do nothing.

Which buffers take a dispatch input follows from step 2: every buffer that is not an output
the backend allocates takes one, in binding order, so the Program takes three (acc_out's
zeroed lanes come from the caller) and the trap Program none. The chain (spec/vyre/fusion.py)
never builds a trap Program: its ranks are non-zero and its cell check keeps
r_prev * r_next within 2^20. Were one dispatched with the chain's three inputs, a backend
that counts inputs would refuse the inputs before the trap could report its text.
"""

from __future__ import annotations

import enum

from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, U32, Array, Enum, Field, List, Optional, Utf8, record
from ..core.strategies import st
from .tt import shape_refusal

WORKGROUP_X = 256
"""Invocations per workgroup along x. Real code: tensor_train.rs, [256, 1, 1]."""
LANE_BYTES = 4
"""Bytes of one u32 lane."""


class BufferAccess(enum.IntEnum):
    """Real code: vyre-spec buffer_access.rs, BufferAccess (declaration order)."""

    READ_ONLY = 0
    READ_WRITE = 1
    UNIFORM = 2
    WRITE_ONLY = 3
    WORKGROUP = 4


def buffer(name: str, binding: int, access: BufferAccess, count: int,
           output: bool = False) -> dict:
    """One storage buffer declaration of u32 lanes."""
    return {"name": name, "binding": binding, "access": access, "count": count,
            "output": output}


def tt_program(r_prev: int, r_next: int) -> dict:
    """Steps 1-2: the Program's workgroup, buffers and trap text (None when it has none)."""
    refusal = shape_refusal(r_prev, r_next)
    if refusal is not None:  # 1. the trap Program
        return {"workgroup_size": [1, 1, 1],
                "buffers": [buffer("acc_out", 0, BufferAccess.READ_WRITE, 1, output=True)],
                "trap": refusal}
    return {"workgroup_size": [WORKGROUP_X, 1, 1],  # 2.
            "buffers": [buffer("acc_in", 0, BufferAccess.READ_ONLY, r_prev),
                        buffer("core_slice", 1, BufferAccess.READ_ONLY, r_prev * r_next),
                        buffer("acc_out", 2, BufferAccess.READ_WRITE, r_next)],
            "trap": None}


def dispatch_inputs_taken(program: dict) -> int:
    """How many dispatch inputs the Program takes: one per buffer not an output."""
    return sum(1 for b in program["buffers"] if not b["output"])


def program_op(r_prev: int, r_next: int) -> dict:
    return tt_program(r_prev, r_next)


def program_edges() -> list[dict]:
    """The facts sheet's (4, 8), each trap, the largest shape within u32 and the first past."""
    return [{"r_prev": a, "r_next": b} for a, b in (
        (4, 8), (1, 1), (2, 3), (0, 3), (0, 0), (1, 0), (65535, 65537), (65536, 65537),
        (4294967295, 1), (1, 4294967295), (4294967295, 2))]


declare(
    "vyre.tt_program", chapter=12,
    summary="The Program vyre's tt_contract_step builds for a shape: workgroup [256, 1, 1] "
            "and buffers acc_in, core_slice, acc_out at bindings 0-2, or a one-buffer "
            "Program that traps with vyre's \"Fix:\" text.",
    args=record(r_prev=Field(U32, "lanes in"), r_next=Field(U32, "lanes out")),
    result=record(
        workgroup_size=Field(Array(U32, 3), "invocations per workgroup, x y z"),
        buffers=Field(List(record(name=Utf8(), binding=U32, access=Enum(BufferAccess),
                                  count=U32, output=BOOL)),
                      "the storage buffers of u32 lanes, in binding order"),
        trap=Field(Optional(Utf8(), ""), "the text the body traps with; null for none")),
    spec=(tt_program, dispatch_inputs_taken),
    domain=lambda: st.fixed_dictionaries({
        "r_prev": st.one_of(st.integers(0, 300), st.integers(0, 2**32 - 1)),
        "r_next": st.one_of(st.integers(0, 300), st.integers(0, 2**32 - 1))}),
    edges=program_edges,
    invalid=(InvalidCase("a shape of -1", lambda: st.just({"r_prev": -1, "r_next": 1})),
             InvalidCase("a shape of 2^32", lambda: st.just({"r_prev": 1, "r_next": 2**32}))),
    not_applicable={"numba": "three declarations per request: no numeric core",
                    "cupy": "three declarations per request: nothing to spread over a device"},
)
