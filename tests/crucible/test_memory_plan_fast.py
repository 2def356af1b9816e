"""The numba planner against the spec's planner (chapter 10): the treap free list must hand out
exactly the block the spec's address-ordered scan returns, on random and adversarial lifetimes
(many small holes then a big request, equal births, zero sizes, externals), and the seed's
list (E10.1) must still give the seed's answers. The treap is also checked operation by
operation against a sorted list of blocks."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.fast.numba.crucible import free_tree
from crucible_spec.fast.numba.crucible.memory_plan import _stable_order, plan_arrays, slot_columns
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.crucible.memory_plan import E10_1, PlanSlot, compute_memory_plan, plan_slots

ERRATA = st.sampled_from([frozenset(), frozenset({E10_1})])
SIZES = st.integers(0, 5000) | st.sampled_from([0, 1, 255, 256, 257, 512, 1 << 20])


def _arrays(slots: list[PlanSlot]) -> list[np.ndarray]:
    return [np.array([getattr(s, f) for s in slots], dtype=t) for f, t in
            (("nbytes", np.uint64), ("birth_op", np.int64), ("death_op", np.int64),
             ("is_external", np.bool_))]


def _same_as_spec(slots: list[PlanSlot], errata: frozenset[str]) -> None:
    offsets, pool = plan_arrays(*_arrays(slots), errata)
    plan = compute_memory_plan(slots, errata)
    assert (offsets.tolist(), pool) == (plan.offsets, plan.pool_bytes)


@st.composite
def lifetimes(draw, max_slots: int = 120, max_op: int = 12) -> list[PlanSlot]:
    """Slots crowded into few ops, so births, deaths and sizes collide often."""
    out = []
    for _ in range(draw(st.integers(0, max_slots))):
        birth = draw(st.integers(0, max_op))
        out.append(PlanSlot(draw(SIZES), birth, draw(st.integers(birth, max_op)),
                            draw(st.integers(0, 5)) == 0))
    return out


@st.composite
def holes_then_big(draw) -> list[PlanSlot]:
    """Small holes kept apart by live separators, then requests larger than any one hole,
    some fitting a hole merged with its neighbours once a separator dies."""
    out = []
    for _ in range(draw(st.integers(1, 150))):  # past 64 holes the numba list is a tree
        out.append(PlanSlot(draw(st.integers(1, 3)) * 256, 0, 0))
        out.append(PlanSlot(256, 0, draw(st.integers(1, 4))))
    for _ in range(draw(st.integers(1, 60))):
        birth = draw(st.integers(2, 6))
        out.append(PlanSlot(draw(st.integers(1, 12)) * 256, birth, birth + draw(st.integers(0, 2)),
                            draw(st.integers(0, 6)) == 0))
    return draw(st.permutations(out))


@settings(max_examples=300, deadline=None)
@given(lifetimes(), ERRATA)
def test_numba_plans_as_the_spec_on_crowded_lifetimes(slots, errata):
    _same_as_spec(slots, errata)


@settings(max_examples=200, deadline=None)
@given(holes_then_big(), ERRATA)
def test_numba_plans_as_the_spec_on_holes_then_big_requests(slots, errata):
    _same_as_spec(slots, errata)


def test_many_holes_then_a_request_only_the_merged_block_fits():
    """2,000 single-block holes below one run of 8 adjacent freed blocks: a 2,048-byte slot
    skips every hole and lands at the run's start, worked out by hand."""
    n = 2000
    slots = [PlanSlot(256, 0, 0), PlanSlot(256, 0, 5)] * n + [PlanSlot(256, 0, 0)] * 8
    slots.append(PlanSlot(2048, 2, 2))
    offsets, pool = plan_arrays(*_arrays(slots))
    assert offsets[-1] == 2 * n * 256 and pool == (2 * n + 8) * 256
    _same_as_spec(slots, frozenset())


def test_a_request_past_every_hole_grows_the_block_that_ends_the_pool():
    """Holes of 256 bytes everywhere and a free 512-byte block at the end: 1,024 bytes start
    at that block and the pool grows by 512."""
    slots = [PlanSlot(256, 0, 0), PlanSlot(256, 0, 5)] * 50 + [PlanSlot(512, 0, 0)]
    slots.append(PlanSlot(1024, 2, 2))
    offsets, pool = plan_arrays(*_arrays(slots))
    assert offsets[-1] == 100 * 256 and pool == 100 * 256 + 1024
    _same_as_spec(slots, frozenset())


class _Model:
    """The spec's free list: sorted [offset, size] blocks, merged on free."""

    def __init__(self) -> None:
        self.blocks: list[list[int]] = []

    def free(self, offset: int, size: int) -> None:
        self.blocks.append([offset, size])
        self.blocks.sort()
        merged: list[list[int]] = []
        for b in self.blocks:
            if merged and merged[-1][0] + merged[-1][1] == b[0]:
                merged[-1][1] += b[1]
            else:
                merged.append(b)
        self.blocks = merged

    def take(self, size: int) -> int | None:
        for k, (offset, room) in enumerate(self.blocks):
            if room >= size:
                self.blocks[k] = [offset + size, room - size]
                if room == size:
                    self.blocks.pop(k)
                return offset
        return None


def _tree_blocks(link, val, state) -> list[list[int]]:
    """The tree's blocks in order, checking the max sizes and the heap order on the way."""
    out: list[list[int]] = []

    def walk(v: int) -> int:
        if v < 0:
            return 0
        left, right = walk(int(link[v, 0])), None
        out.append([int(val[v, 0]), int(val[v, 1])])
        right = walk(int(link[v, 1]))
        assert int(val[v, 2]) == max(left, right, int(val[v, 1]))
        for c in link[v]:
            assert c < 0 or val[c, 3] <= val[v, 3]
        return int(val[v, 2])

    walk(int(state[0]))
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 63), st.integers(1, 8)), max_size=150))
def test_the_tree_follows_a_sorted_merged_list(steps):
    """Frees of unit blocks not yet free and first-fit takes, against the model."""
    tree = free_tree.new_tree(70)
    link, val, state, spare, path = tree
    model = _Model()
    free_now = set()
    for is_free, unit, size in steps:
        if is_free:
            if unit in free_now:
                continue
            free_now.add(unit)
            model.free(unit * 256, 256)
            free_tree.free(link, val, state, spare, path, np.uint64(unit * 256), np.uint64(256))
        else:
            want = model.take(size * 256)
            depth = free_tree.first_fit(link, val, state, path, np.uint64(size * 256))
            assert (depth > 0) == (want is not None)
            if depth:
                got = free_tree.take(link, val, state, spare, path, depth, np.uint64(size * 256))
                assert got == want
                free_now -= {want // 256 + k for k in range(size)}
        assert _tree_blocks(link, val, state) == model.blocks


WIRE_VALUES = st.one_of(st.integers(-2, 1 << 33), st.sampled_from(
    [True, False, 0, 1, (1 << 64) - 1, 1 << 64, 0xFFFFFFFD, 0xFFFFFFFE, "0x10", "0X1f", "0x",
     "12", None, 1.0, [], {}]))
SLOT_KEYS = ("nbytes", "birth_op", "death_op", "is_external", "device_type", "device_idx", "x")


@st.composite
def wire_slots(draw) -> list:
    """Slot lists as a client might send them: mostly valid, some fields missing, extra,
    out of range, of the wrong type, hex, or a lifetime the other way round."""
    base = draw(lifetimes(max_slots=8))
    out = [{"nbytes": s.nbytes, "birth_op": s.birth_op, "death_op": s.death_op,
            "is_external": s.is_external} for s in base]
    for _ in range(draw(st.integers(0, 2))):
        if out:
            slot = out[draw(st.integers(0, len(out) - 1))]
            key = draw(st.sampled_from(SLOT_KEYS))
            if draw(st.booleans()):
                slot.pop(key, None)
            else:
                slot[key] = draw(WIRE_VALUES)
    return out


@settings(max_examples=400, deadline=None)
@given(wire_slots())
def test_columnar_slot_decoding_accepts_only_what_plan_slots_accepts(slots):
    """slot_columns (the fast path of a wire request) either declines or gives exactly the
    arrays of the slots `plan_slots` decodes."""
    columns = slot_columns(slots)
    try:
        parsed = plan_slots(slots)
    except SpecError:
        assert columns is None
        return
    if columns is not None:
        assert [c.tolist() for c in columns] == [a.tolist() for a in _arrays(parsed)]
        assert [c.dtype for c in columns] == [a.dtype for a in _arrays(parsed)]


def test_a_plain_slot_list_takes_the_columnar_path():
    slots = [{"nbytes": 300, "birth_op": 0, "death_op": 2, "is_external": False},
             {"nbytes": "0x100", "birth_op": 1, "death_op": 1}]
    assert [c.tolist() for c in slot_columns(slots)] == [[300, 256], [0, 1], [2, 1],
                                                          [False, False]]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40) | st.integers(0, 2**32), min_size=1, max_size=300),
       st.data())
def test_the_counting_sort_orders_as_a_stable_mergesort(keys, data):
    key = np.array(keys, dtype=np.int64)
    idx = np.array(sorted(data.draw(st.sets(st.integers(0, key.size - 1), min_size=1))),
                   dtype=np.int64)
    assert _stable_order(key, idx).tolist() == idx[np.argsort(key[idx], kind="mergesort")
                                                   ].tolist()
