"""Reference for chapter 12's CPU kernels: the spec's scalar loops, one request at a time."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.cpu_kernels import (
    add,
    fill,
    gelu,
    index_select,
    mul,
    relu,
    relu_bwd,
    sigmoid,
    silu,
    sub,
    transpose_2d,
)


@reference("kernel.add")
def add_op(a, b) -> dict:
    return {"c": add(a, b)}


@reference("kernel.sub")
def sub_op(a, b) -> dict:
    return {"c": sub(a, b)}


@reference("kernel.mul")
def mul_op(a, b) -> dict:
    return {"c": mul(a, b)}


@reference("kernel.relu")
def relu_op(a) -> dict:
    return {"c": relu(a)}


@reference("kernel.relu_bwd")
def relu_bwd_op(grad, input) -> dict:
    return {"c": relu_bwd(grad, input)}


@reference("kernel.gelu")
def gelu_op(a) -> dict:
    return {"c": gelu(a)}


@reference("kernel.sigmoid")
def sigmoid_op(a) -> dict:
    return {"c": sigmoid(a)}


@reference("kernel.silu")
def silu_op(a) -> dict:
    return {"c": silu(a)}


@reference("kernel.fill")
def fill_op(shape, value) -> dict:
    return {"c": fill(shape, value)}


@reference("kernel.transpose_2d")
def transpose_2d_op(x) -> dict:
    return {"y": transpose_2d(x)}


@reference("kernel.index_select")
def index_select_op(x, idx) -> dict:
    return {"y": index_select(x, idx)}
