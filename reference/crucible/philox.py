"""Reference for chapter 17: the spec's Philox functions, one request at a time."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.philox import generate, op_key, philox_block
from ...spec.crucible.philox_ops import box_muller_op, to_uniform_op


@reference("philox.block")
def block_op(ctr: list[int], key: list[int]) -> dict:
    return {"out": philox_block(ctr, key)}


@reference("philox.offset")
def offset_op(offset: int, key: int) -> dict:
    return {"out": generate(offset, key)}


@reference("philox.op_key")
def op_key_op(master_counter: int, op_index: int, content_hash: int) -> dict:
    return {"out": op_key(master_counter, op_index, content_hash)}


reference("philox.to_uniform")(to_uniform_op)
reference("philox.box_muller")(box_muller_op)
