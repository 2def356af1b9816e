"""Chapter 14: what a PyC module computes, in float32, so that a pass can be held to it.

Inputs are bound to the input ops in order; each op's value is a float32 array of its shape.
1. input: the next input tensor (its length must be the product of the shape).
2. matmul: for every (r, c), acc = 0 then, for k = 0, 1, ... in order,
   acc = f32(acc + f32(a[r, k] * b[k, c])): no fused multiply-add, no reordering.
3. add: f32(a + b), elementwise; both inputs have the op's shape.
4. relu: x when x > 0, else +0.0 (NaN gives +0.0).
5. output: a copy of input 0; the module's result is every output, in op order.
const, gelu, reduce_sum and layernorm have no kernel in PyC's CPU executor: a module holding
one cannot run (`invalid_input`).
"""

from __future__ import annotations

import numpy as np

from ..core.errors import InvalidInput
from .ir import OpKind, PycModule, PycOp

RUNNABLE = frozenset({OpKind.INPUT, OpKind.MATMUL, OpKind.ADD, OpKind.RELU, OpKind.OUTPUT})


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def matmul_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Step 2: products and sums rounded to float32, k in increasing order."""
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(a.shape[1]):
        prod = (a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float32)
        acc = (acc + prod).astype(np.float32)
    return acc


def _value(op: PycOp, i: int, vals: list[np.ndarray], feed: list[np.ndarray]) -> np.ndarray:
    args = [vals[j] for j in op.inputs]
    where = f"args.module.ops[{i}]"
    if op.kind == OpKind.INPUT:
        if not feed:
            raise InvalidInput(f"args.inputs: no tensor left for input op {i}")
        x = feed.pop(0)
        if x.size != _size(op.shape):
            raise InvalidInput(f"args.inputs: input op {i} has shape {list(op.shape)}, "
                               f"{_size(op.shape)} values, not {x.size}")
        return x.reshape(op.shape)
    if op.kind == OpKind.MATMUL:
        if len(args) < 2 or args[0].ndim != 2 or args[1].ndim != 2 or \
                args[0].shape[1] != args[1].shape[0]:
            raise InvalidInput(f"{where}: a matmul needs two rank-2 inputs with lhs[1] == rhs[0]")
        return matmul_f32(args[0], args[1])
    if not args:
        raise InvalidInput(f"{where}: {op.kind.name.lower()} needs an input")
    if op.kind == OpKind.ADD:
        if len(args) < 2 or args[0].shape != args[1].shape:
            raise InvalidInput(f"{where}: an add needs two inputs of one shape")
        return (args[0] + args[1]).astype(np.float32)
    if op.kind == OpKind.RELU:
        return np.where(args[0] > 0, args[0], np.float32(0.0)).astype(np.float32)
    return args[0].copy()


def run_module(m: PycModule, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Every output op's value, in op order."""
    feed = [np.asarray(x, dtype=np.float32).ravel() for x in inputs]
    vals: list[np.ndarray] = []
    for i, op in enumerate(m.ops):
        if op.kind not in RUNNABLE:
            raise InvalidInput(f"args.module.ops[{i}]: PyC's CPU executor has no kernel for "
                               f"{op.kind.name.lower()} (a graph break)")
        vals.append(_value(op, i, vals, feed))
    if feed:
        raise InvalidInput(f"args.inputs: {len(feed)} tensors more than the input ops")
    return [vals[i] for i, op in enumerate(m.ops) if op.kind == OpKind.OUTPUT]
