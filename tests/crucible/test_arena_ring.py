"""Arena, TraceRing and MetaLog simulators against simple models, on random sequences."""

from __future__ import annotations

from collections import deque
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from crucible_spec.engine import Implementation
from crucible_spec.spec.crucible import meta_log, trace_ring
from crucible_spec.spec.crucible.arena import arena_simulate

REF = Implementation("reference")


@given(st.sampled_from([64, 256, 4096]),
       st.lists(st.tuples(st.integers(0, 3000), st.sampled_from([1, 8, 16, 64, 512])),
                max_size=40),
       st.lists(st.integers(1, 1 << 40), max_size=5))
def test_arena_allocations_are_aligned_inside_and_disjoint(block_size, reqs, bases):
    out = arena_simulate(block_size, [{"size": s, "align": a} for s, a in reqs], bases)
    blocks = [(int(b["base"], 16), b["size"]) for b in out["blocks"]]
    spans: dict[int, list[tuple[int, int]]] = {}
    for (size, align), a in zip(reqs, out["allocations"], strict=True):
        address = int(a["address"], 16)
        base, length = blocks[a["block"]]
        assert address % align == 0
        assert base <= address and address + size <= base + length
        spans.setdefault(a["block"], []).append((address, address + size))
    for runs in spans.values():
        for (_, end), (start, _) in pairwise(runs):
            assert end <= start
    if reqs:
        last = out["allocations"][-1]
        assert out["total_allocated"] == (len(blocks) - 1) * block_size + last["offset"] + \
            reqs[-1][0]


ring_steps = st.lists(st.one_of(st.tuples(st.just("append"), st.integers(0, 2**32 - 1)),
                                st.tuples(st.just("drain"), st.integers(0, 5))), max_size=60)


@given(st.sampled_from([1, 2, 4, 8]), ring_steps)
def test_ring_is_a_bounded_fifo_that_drops_when_full(capacity, steps):
    r = trace_ring.Ring(capacity)
    model: deque = deque()
    for kind, value in steps:
        if kind == "append":
            ok = trace_ring.try_append(r, value)
            assert ok == (len(model) < capacity)
            if ok:
                model.append(value)
        else:
            got = trace_ring.drain(r, value)
            assert got == [model.popleft() for _ in range(min(value, len(model)))]
        assert 0 <= r.head - r.tail == len(model) <= capacity


@given(st.sampled_from([1, 2, 4, 8, 16]),
       st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=40))
def test_metalog_appends_exactly_what_fits_at_the_running_head(capacity, steps):
    m = meta_log.MetaLogState(capacity)
    used = 0
    for n, consume in steps:
        start = meta_log.try_append(m, n)
        if n and used + n <= capacity:
            assert start == m.head - n
            used += n
        else:
            assert start == meta_log.NONE32
        take = min(consume, used)
        m.tail = (m.tail + take) % 2**32
        used -= take


def test_metalog_contiguous_runs():
    m = meta_log.MetaLogState(8)
    assert meta_log.try_contiguous(m, 6, 2) == 6
    assert meta_log.try_contiguous(m, 6, 3) is None
    assert meta_log.try_contiguous(m, 14, 2) == 6
    assert meta_log.try_contiguous(m, 3, 0) is None


def test_simulators_over_the_wire():
    out = REF.call("ring.simulate", {"capacity": 2, "steps": [
        {"op": "append", "scope_hash": "0x5"}, {"op": "append"}, {"op": "append"},
        {"op": "drain", "max": 1}, {"op": "append"}, {"op": "drain", "max": 9}]})
    assert [r.get("ok", r.get("count")) for r in out["results"]] == [True, True, False, 1,
                                                                     True, 2]
    assert out["results"][3]["items"][0]["scope_hash"] == "0x0000000000000005"
    assert (out["head"], out["tail"]) == (3, 3)
