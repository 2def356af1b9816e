"""Chapters 3 to 5 pinned at their boundaries: the arena's request and block-base domain at
2^64, the SPSC model's own bookkeeping (bounds, overwrite detection, failing steps, a run that
can finish), a trace op's wire round trip, and the int64 and 2^64 limits of a storage span."""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from ...spec.core.errors import InvalidInput
from ...spec.core.layout_ops import from_wire
from ...spec.core.registry import Mutant
from ...spec.crucible import arena, ring_protocol, trace_entry, trace_ring
from ...spec.crucible.ring_protocol import Spsc, SpscState, trace_ring_model
from ...spec.crucible.tensor_meta import TENSOR_META, check_storage_args
from ...spec.crucible.trace_entry import TraceOp, trace_op_from_wire, trace_op_to_wire
from ...spec.crucible.types import ScalarType
from ..core.obligation import Property, property_obligation

TOP = 1 << 64


def accepted(check, args: dict) -> bool:
    """Whether a domain check lets `args` through (it raises InvalidInput when not)."""
    try:
        check(args)
    except InvalidInput:
        return False
    return True


REQUESTS = (  # (size, align, accepted): size + align must stay below 2^64
    (TOP - 17, 16, True), (TOP - 16, 16, False), (TOP - 1, 1, False), (TOP - 2, 1, True),
    (TOP + 5, 16, False), (0, 16, True),
)
BASES = (  # (block_size, base, accepted): base + block_size + 1 < 2^64 and base != 0
    (16, TOP - 17, False), (16, TOP - 18, True), (16, TOP - 19, True), (16, 0, False),
    (16, 4096, True), (1, TOP - 3, True), (1, TOP - 2, False),
)


def _request(case: tuple[int, int, bool]) -> None:
    size, align, ok = case
    assert accepted(arena.arena_requests, [{"size": size, "align": align}]) is ok, case


SHAPES = (  # (request, accepted): a dict of size and an optional align, nothing else
    ({"size": 8}, True), ({"size": 8, "align": 4}, True), ({"size": 8, "bogus": 1}, False),
    ({"align": 8}, False), (5, False), ([8, 16], False), ({"size": 8, "align": 3}, False),
)


def _shape(case) -> None:
    request, ok = case
    assert accepted(arena.arena_requests, [request]) is ok, case


def _base(case: tuple[int, int, bool]) -> None:
    block_size, base, ok = case
    args = {"block_size": block_size, "requests": [], "bases": [base]}
    assert accepted(arena.check_arena_args, args) is ok, case


@property_obligation(
    "PO3.120",
    "The arena's domain: a request is {size, align?} with size + align < 2^64, and a block "
    "base must be non-zero with base + block_size + 1 < 2^64.",
    covers=("arena.arena_requests", "arena.check_arena_args"),
    subject=arena.check_arena_args,
    mutants=(Mutant.edit("request limit 2^65", "size + align is checked against 2^65",
                         arena.arena_requests, "size + align >= 1 << 64",
                         "size + align >= 1 << 65"),
             Mutant.edit("request shape needs every fault", "a request is rejected only when "
                         "it is not a dict, has other keys and lacks a size",
                         arena.arena_requests, "not isinstance(r, dict) or set(r)",
                         "not isinstance(r, dict) and set(r)"),
             Mutant.edit("base limit inclusive", "a block ending exactly at 2^64 - 1 is "
                         "rejected one base too late", arena.check_arena_args,
                         '+ 1 >= 1 << 64', '+ 1 > 1 << 64'),
             Mutant.edit("base limit without the 1", "the byte past the block is not counted",
                         arena.check_arena_args, '+ 1 >= 1 << 64', '+ 0 >= 1 << 64'),
             Mutant.edit("base limit off by one", "two bytes past the block are counted",
                         arena.check_arena_args, '+ 1 >= 1 << 64', '+ 2 >= 1 << 64'),
             Mutant.edit("base zero needs overflow", "a zero base is rejected only when the "
                         "block also overflows", arena.check_arena_args,
                         '>= 1 << 64 or b == 0', '>= 1 << 64 and b == 0')),
)
def arena_domain(_subject):
    return [Property("requests at 2^64", _request, cases=lambda: REQUESTS),
            Property("request shapes", _shape, cases=lambda: SHAPES),
            Property("block bases at 2^64", _base, cases=lambda: BASES)]


B1, B2 = (2 << 32) + 16, (3 << 32) + 16
ARENA_RUNS = (  # (block_size, requests as (size, align), bases, [(block, offset)], block sizes)
    (64, [(60, 16), (60, 16), (100, 8)], [4096], [(0, 0), (1, 0), (2, 0)], [64, 76, 108]),
    (64, [(8, 16), (8, 16), (40, 16)], [4100], [(0, 12), (0, 28), (1, 0)], [64, 64]),
    (64, [(1, 1), (1, 64)], [4096, B1 + 8], [(0, 0), (1, 40)], [64, 65]),
    (256, [(16, 8), (16, 32), (0, 4)], [4104], [(0, 0), (0, 24), (0, 40)], [256]),
)


def _arena_run(case) -> None:
    block_size, requests, bases, where, sizes = case
    out = arena.arena_simulate(block_size, [{"size": n, "align": a} for n, a in requests],
                               bases)
    assert [(x["block"], x["offset"]) for x in out["allocations"]] == where, out
    assert [b["size"] for b in out["blocks"]] == sizes, out


@property_obligation(
    "PO3.121",
    "Arena runs worked by hand: a request goes at the next address of its alignment in the "
    "current block when it ends by the block's end, else at the first aligned address of a "
    "new block of max(block_size, size + align) bytes.",
    covers=("arena.arena_alloc", "arena.arena_simulate"),
    subject=arena.arena_alloc,
    mutants=(Mutant.edit("new block starts at 1", "the first allocation of a new block is "
                         "aligned from offset 1", arena.arena_alloc,
                         "place(next_base, 0, align)", "place(next_base, 1, align)"),
             Mutant.edit("new block of block_size", "a new block is always block_size bytes",
                         arena.arena_alloc, "new_size = new_block_size(size, align, "
                         "a.block_size)", "new_size = a.block_size")),
)
def arena_runs(_subject):
    return [Property("hand-worked runs", _arena_run, cases=lambda: ARENA_RUNS)]


def _state(head: int, tail: int, published: tuple, released: int, slots: tuple) -> SpscState:
    return SpscState(head, tail, tail, slots, published=published, released=released)


BOUNDED = (  # (head, tail, published, released, bounded) for capacity 2
    (0, 0, (), 0, True), (2, 0, (0, 1), 0, True), (3, 1, (0, 1, 2), 1, True),
    (3, 0, (0, 1, 2), 0, False), (1, 0, (), 0, False), (0, 0, (0,), 0, False),
)


def _bounded(case) -> None:
    head, tail, published, released, ok = case
    model = trace_ring_model(2, 3, 1)
    assert model.bounded(_state(head, tail, published, released, (None, None))) is ok, case


OVERWRITES = (  # (slots before, slots after, published, released, overwritten)
    ((0, None), (2, None), (0,), 0, True), ((0, None), (2, None), (0,), 1, False),
    ((0, 1), (0, 3), (0, 1), 0, True), ((None, None), (0, None), (), 0, False),
    ((0, 1), (0, 1), (0, 1), 0, False),
)


def _overwrite(case) -> None:
    before, after, published, released, bad = case
    model = trace_ring_model(2, 3, 1)
    s = _state(len(published), released, published, released, before)
    found = model.overwritten(s, replace(s, slots=after))
    assert (found is not None) is bad, (case, found)


def _failing_step(_case: None) -> None:
    model = trace_ring_model(2, 1, 1)
    pending = trace_ring.Append(0)

    def boom(_obj, _a):
        raise RuntimeError("boom")

    after, obj, error = model.run(model.machine().initial, boom, pending)
    assert after is pending and isinstance(obj, trace_ring.Ring), (after, obj)
    assert error == "check raised RuntimeError: boom", error


def reachable(model: Spsc, limit: int = 5000) -> list[SpscState]:
    """Every state of the model's machine, breadth first."""
    m = model.machine()
    seen, queue = {m.initial}, deque([m.initial])
    while queue and len(seen) < limit:
        for _label, t in m.steps(queue.popleft()):
            if t not in seen:
                seen.add(t)
                queue.append(t)
    return list(seen)


def _can_finish(case: tuple[int, int, int]) -> None:
    capacity, ops, max_count = case
    model = trace_ring_model(capacity, ops, max_count)
    assert (model.capacity, model.ops) == (capacity, ops), model
    states = reachable(model)
    assert any(model.done(s) for s in states), f"{model.name}: no run finishes"
    for s in states:
        assert s.error is not None or model.done(s) or any(True for _ in model.steps(s)), s


@property_obligation(
    "PO4.120",
    "The SPSC model's bookkeeping: bounded holds exactly when 0 <= pending <= capacity and "
    "head - tail counts the pending items; a changed slot holding a pending item is an "
    "overwrite; a failing step keeps its state and reports its pc; and a TraceRing run of "
    "the given capacity and op count can always go on until every op is appended and drained.",
    covers=("ring_protocol.Spsc", "ring_protocol.trace_ring_model"),
    subject=ring_protocol.Spsc,
    mutants=(Mutant.edit("bounded needs one half", "bounded holds when either half does",
                         Spsc.bounded, "self.capacity and self.used(s)",
                         "self.capacity or self.used(s)"),
             Mutant.edit("consumer kept when done", "a finished drain stays as the consumer "
                         "and an unfinished one is dropped", Spsc.consumer,
                         'after.pc == "done"', 'after.pc != "done"'),
             Mutant.edit("overwrite reads the new slots", "the slots before and after the "
                         "step are swapped", Spsc.overwritten, "zip(s.slots, t.slots",
                         "zip(t.slots, s.slots"),
             Mutant.edit("failing step returns the object", "the step state and the object "
                         "are swapped on an exception", Spsc.run,
                         "return pending, obj, f", "return obj, pending, f"),
             Mutant.edit("capacity and ops swapped", "the model takes the op count as its "
                         "capacity", trace_ring_model, '"TraceRing", capacity, ops',
                         '"TraceRing", ops, capacity')),
)
def spsc_bookkeeping(_subject):
    return [Property("bounded, capacity 2", _bounded, cases=lambda: BOUNDED),
            Property("overwrites", _overwrite, cases=lambda: OVERWRITES),
            Property("a failing step", _failing_step, cases=lambda: (None,)),
            Property("runs finish", _can_finish, cases=lambda: ((2, 3, 1), (1, 2, 2)))]


def _sample_op() -> TraceOp:
    meta = from_wire(TENSOR_META, {"ndim": 1, "sizes": [3] + [0] * 7}, "meta")
    return TraceOp(schema_hash=0x11, shape_hash=0x22, scope_hash=0x33, callsite_hash=0x44,
                   inputs=[meta], outputs=[meta, meta], scalar_args=[7, -1],
                   num_scalar_args=2, grad_enabled=True, kernel_id=3,
                   input_trace_indices=[0], input_slot_ids=[1], output_slot_ids=[2, 3])


def _round_trip(_case: None) -> None:
    op = _sample_op()
    wire = trace_op_to_wire(op)
    assert wire["schema_hash"] == "0x0000000000000011", wire
    assert wire["inputs"][0]["sizes"][:2] == [3, 0], wire["inputs"]
    assert trace_op_from_wire(wire, "op") == op
    assert trace_op_from_wire({}, "op") == TraceOp(), "a missing field is not its default"


ID_COUNTS = (  # (id list given, accepted) for an op with no inputs or outputs
    ([], True), ([1], False), (None, True), ("x", False), (5, False),
)


def _id_lists(case) -> None:
    ids, ok = case
    obj = {"schema_hash": "0x1", "input_slot_ids": ids}
    assert accepted(lambda o: trace_op_from_wire(o, "op"), obj) is ok, case


@property_obligation(
    "PO4.121",
    "A trace op survives its wire form (hashes as 0x-prefixed 16-digit hex under their own "
    "names), a missing field takes its default, and an id array must be a list with one id "
    "per tensor.",
    covers=("trace_entry.trace_op_to_wire", "trace_entry.trace_op_from_wire"),
    subject=trace_entry.trace_op_from_wire,
    mutants=(Mutant.edit("hash keys and values swapped", "the hashes are keyed by their "
                         "values", trace_op_to_wire, "{name: HASH64.encode(getattr(op, name))",
                         "{HASH64.encode(getattr(op, name)): name"),
             Mutant.edit("metas swapped with their layout", "an input is written with the "
                         "meta as the layout", trace_op_to_wire,
                         "to_wire(TENSOR_META, m) for m in op.inputs",
                         "to_wire(m, TENSOR_META) for m in op.inputs"),
             Mutant.edit("kernel id defaults to 1", "a missing kernel_id reads as 1",
                         trace_op_from_wire, '"kernel_id", 0, path', '"kernel_id", 1, path'),
             Mutant.edit("id list needs both faults", "an id list of the wrong length is "
                         "rejected only when it is not a list", trace_op_from_wire,
                         "not isinstance(ids, list) or len(ids) != n",
                         "not isinstance(ids, list) and len(ids) != n")),
)
def trace_op_wire(_subject):
    return [Property("round trip", _round_trip, cases=lambda: (None,)),
            Property("id list lengths", _id_lists, cases=lambda: ID_COUNTS)]


I63 = 1 << 63
STORAGE = (  # (sizes, strides, accepted) with 8-byte elements
    ([2], [I63 - 1], False),  # span 2^63 * 8 bytes: past 2^64
    ([2], [(1 << 61) - 1], False),  # span exactly 2^61 elements = 2^64 bytes
    ([2], [(1 << 61) - 2], True),
    ([2], [I63], False),  # the extent itself overflows int64
    ([2, 2], [1 << 62, 1 << 62], False),  # the sum of positive extents overflows
    ([2, 1], [(1 << 60), 0], True),
    ([2, 2, 2], [5, -(1 << 62), -(1 << 62) - 1], False),  # negative sum overflows
    ([2, 2], [-(1 << 62), -(1 << 62)], False),
    ([2], [-(1 << 60)], True),
    ([2], [(1 << 60) + (1 << 59)], True),
)
STORAGE_BYTE = (  # (sizes, strides, accepted) with 1-byte elements: the int64 limits alone
    ([2], [I63 - 1], True),  # high == INT64_MAX is allowed
    ([0], [5], True), ([2, 0], [1, 1], True), ([-1], [1], False),  # size 0 is a size
    ([2, 1], [I63 - 1, 0], True),  # a size-1 dimension adds nothing
    ([2, 1, 1], [I63 - 1, 5, -5], True),
    ([2], [I63], False),
    ([2, 2], [I63 - 1, 1], False),
    ([2], [-I63], True),  # low == INT64_MIN is allowed
    ([2, 2], [1, -I63], True),  # a positive extent leaves low alone
    ([2, 2, 2], [5, -(1 << 62), -(1 << 62) - 1], False),  # low one below INT64_MIN
    ([3], [(1 << 62) + (1 << 61)], False),
    ([2], [(1 << 62) + (1 << 61)], True),
)


def _storage(dtype: ScalarType):
    def check(case) -> None:
        sizes, strides, ok = case
        args = {"sizes": sizes, "strides": strides, "dtype": int(dtype)}
        assert accepted(check_storage_args, args) is ok, case
    return check


@property_obligation(
    "PO5.120",
    "The storage-span domain: each dimension's extent (size - 1) * stride, the sum of the "
    "positive extents and the sum of the negative ones stay within int64 (the limits "
    "themselves allowed), and the span in bytes stays below 2^64.",
    covers=("tensor_meta.check_storage_args",),
    subject=check_storage_args,
    mutants=(Mutant.edit("sizes and strides swapped", "each size is read as the stride",
                         check_storage_args, "zip(sizes, strides, strict=True)",
                         "zip(strides, sizes, strict=True)"),
             Mutant.edit("extent two short", "the extent is (size - 2) * stride",
                         check_storage_args, "max(size - 1, 0)", "max(size - 2, 0)"),
             Mutant.edit("high floor 1", "every dimension adds at least 1 to the high sum",
                         check_storage_args, "high + max(extent, 0)", "high + max(extent, 1)"),
             Mutant.edit("high subtracts", "the positive extents are subtracted",
                         check_storage_args, "high + max(extent, 0)", "high - max(extent, 0)"),
             Mutant.edit("low ceiling 1", "a positive extent adds 1 to the low sum",
                         check_storage_args, "low + min(extent, 0)", "low + min(extent, 1)"),
             Mutant.edit("overflow needs all three", "the three overflow tests are and-ed",
                         check_storage_args, "I64_MAX or high > I64_MAX or low",
                         "I64_MAX and high > I64_MAX and low"),
             Mutant.edit("size 0 rejected", "a zero size counts as negative",
                         check_storage_args, "any(s < 0 for s in sizes)",
                         "any(s <= 0 for s in sizes)"),
             Mutant.edit("high limit exclusive", "high == INT64_MAX is rejected",
                         check_storage_args, "high > I64_MAX", "high >= I64_MAX"),
             Mutant.edit("span limit inclusive", "a span of exactly 2^64 bytes is allowed",
                         check_storage_args, ">= 1 << 64", "> 1 << 64")),
)
def storage_domain(_subject):
    return [Property("8-byte elements", _storage(ScalarType.Double), cases=lambda: STORAGE),
            Property("1-byte elements", _storage(ScalarType.Byte), cases=lambda: STORAGE_BYTE)]
