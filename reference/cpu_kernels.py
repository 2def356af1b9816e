"""Reference for chapter 12's CPU kernels: the spec's scalar loops, one request at a time."""

from __future__ import annotations

from ..spec.cpu_kernels import add
from ..spec.registry import reference


@reference("kernel.add")
def add_op(a, b) -> dict:
    return {"c": add(a, b)}
