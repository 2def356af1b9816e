"""Chapter 13: the cost of a tensor term for extraction, on the roofline's two terms.

1. Every op node is one kernel: it reads each operand tensor once from memory and writes its
   result once. bytes = (elements of every operand + elements of the result) x dtype bytes (a
   constant operand is one element); symbols and constants are already in memory and cost 0.
2. flops: matmul 2mkn; a fused matmul adds one flop per result element for its epilogue;
   every other op FLOPS_PER_ELEMENT[op] per element of its widest operand or result.
3. A node costs flops + KNEE x bytes, in flop-times at peak (one unit is 1/989 ps): the time
   its flops take plus the time its bytes take, an integer. The roofline's max of the two is
   within a factor 2 of that sum, and the sum keeps every saved byte and flop visible.
4. A term costs the sum over its nodes as a tree (a subterm used twice is computed twice).

KNEE is the roofline's ridge point for an H100 with corrected numbers (facts §2.5: SympleX's
own peak is about 4x the dense rate): 989 dense TFLOP/s over 3,350 GB/s of HBM is 295.2
FLOP/B, rounded down.
"""

from __future__ import annotations

import math

from ..tensor_expr import DTYPE_BYTES, Const, Op, Sym, Term, Ty, check_term

PEAK_FLOPS = 989e12
"""H100 SXM dense fp16/bf16 tensor-core FLOP/s."""
HBM_BYTES = 3.35e12
"""H100 SXM HBM3 bytes/s."""
KNEE = int(PEAK_FLOPS / HBM_BYTES)
"""295: the flops one byte of traffic costs as much time as."""
FLOPS_PER_ELEMENT = {"layernorm": 8, "rmsnorm": 6, "softmax": 5, "gelu": 8, "sigmoid": 4,
                     "silu": 5, "tanh": 4, "exp": 2, "sqrt": 2, "rsqrt": 2, "transpose": 0}
"""Flops per element for the ops that are not one flop per element."""


def elements(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def node_bytes(operands: list[Ty], result: Ty) -> int:
    """Step 1: operand bytes read plus result bytes written."""
    width = DTYPE_BYTES[result.dtype or "f32"]
    return width * (sum(elements(t.shape) for t in operands) + elements(result.shape))


def node_flops(op: str, operands: list[Ty], result: Ty) -> int:
    """Step 2."""
    if op in ("matmul", "fused_matmul_relu", "fused_matmul_add"):
        (m, k), n = operands[0].shape, operands[1].shape[1]
        return 2 * m * k * n + (m * n if op != "matmul" else 0)
    widest = max(elements(t.shape) for t in (*operands, result))
    return FLOPS_PER_ELEMENT.get(op, 1) * widest


def node_cost(op: str, operands: list[Ty], result: Ty) -> int:
    """Step 3: one kernel, in flop-times."""
    return node_flops(op, operands, result) + KNEE * node_bytes(operands, result)


def term_cost(t: Term) -> int:
    """Step 4: the sum of the node costs of the term as a tree."""
    if isinstance(t, Sym | Const):
        return 0
    assert isinstance(t, Op)
    return node_cost(t.op, [check_term(a) for a in t.args], check_term(t)) + \
        sum(term_cost(a) for a in t.args)


def cost_breakdown(t: Term) -> dict:
    """Bytes, flops and cost of the term as a tree."""
    if isinstance(t, Sym | Const):
        return {"bytes": 0, "flops": 0, "cost": 0}
    operands, result = [check_term(a) for a in t.args], check_term(t)
    parts = [cost_breakdown(a) for a in t.args]
    return {"bytes": node_bytes(operands, result) + sum(p["bytes"] for p in parts),
            "flops": node_flops(t.op, operands, result) + sum(p["flops"] for p in parts),
            "cost": node_cost(t.op, operands, result) + sum(p["cost"] for p in parts)}
