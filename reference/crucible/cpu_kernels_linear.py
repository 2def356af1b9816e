"""Reference for chapter 12's linear CPU kernels: the spec's scalar loops, one request at a
time."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.cpu_kernels_linear import conv2d, mm, sdpa


@reference("kernel.mm")
def mm_op(a, b) -> dict:
    return {"c": mm(a, b)}


@reference("kernel.conv2d")
def conv2d_op(x, w) -> dict:
    return {"y": conv2d(x, w)}


@reference("kernel.sdpa")
def sdpa_op(q, k, v) -> dict:
    return {"y": sdpa(q, k, v)}
