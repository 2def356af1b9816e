"""The Lean SwissTable, Graph, SymbolTable and MemoryPlan modules' statements, checked against
the spec's own table, graph passes, symbol calls and memory planner."""

from __future__ import annotations

import copy

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.spec.core.errors import InvalidInput
from crucible_spec.spec.crucible import swiss_table as sw
from crucible_spec.spec.crucible.graph import NodeKind
from crucible_spec.spec.crucible.graph_ir import (
    IrGraph,
    eliminate_dead_nodes,
    graph_from_wire,
    replace_all_uses,
    require_acyclic,
    topological_sort,
)
from crucible_spec.spec.crucible.graph_ir_ops import dce_op, graphs, toposort_op
from crucible_spec.spec.crucible.memory_plan import (
    Plan,
    PlanSlot,
    compute_memory_plan,
    live_lower_bound,
)
from crucible_spec.spec.crucible.plan_validity import plan_violations
from crucible_spec.spec.crucible.symbol_ops import ADD, SET_HINT, SIZE_LIKE, TIGHTEN, run_call
from crucible_spec.spec.crucible.symbol_table import (
    HAS_HINT,
    IS_BACKED,
    IS_SIZE_LIKE,
    NO_HINT,
    SymbolEntry,
    SymKind,
    add,
    is_nonnegative,
    is_positive,
    range_contains,
    tighten_range,
)

FEW = settings(derandomize=True, max_examples=20, deadline=None)
U64 = st.integers(0, 2**64 - 1)
I64 = st.integers(-(2**63), 2**63 - 1)
EMPTY_BYTE = 0x80
"""The empty control byte, 128: the one value with bit 7 set."""
G = 16
"""Slots per group in the default build."""


def top7(h: int) -> int:
    """The tag of a 64-bit hash written out: its top seven bits."""
    return h >> 57


def round256(n: int) -> int:
    """n rounded up to a whole number of 256-byte units, by division."""
    return -(-n // 256) * 256


# ── SwissTable ───────────────────────────────────────────────────────────────────────────────

def crowded_hashes(max_size: int = 40) -> st.SearchStrategy:
    """Hashes sharing a few tags and home groups, mixed with arbitrary ones, some repeated."""
    near = st.builds(lambda t, low: t << 57 | low, st.integers(0, 3), st.integers(0, 48))
    return st.lists(near | U64, max_size=max_size)


def tables() -> st.SearchStrategy:
    return st.builds(sw.build, crowded_hashes(), st.sampled_from([0, 16, 32, 64]))


def test_every_tag_is_below_128_for_every_hash():
    h = z3.BitVec("h", 64)
    s = z3.Solver()
    s.add(z3.Not(z3.ULT(sw.h2_tag(h), 128)))
    assert s.check() == z3.unsat


@FEW
@given(U64)
def test_a_tag_never_equals_the_empty_byte(h):
    tag = sw.h2_tag(h)
    assert tag == top7(h) and tag != EMPTY_BYTE and tag < 128 <= EMPTY_BYTE


def test_an_empty_table_is_all_empty_bytes_of_value_128():
    t = sw.SwissTable(64)
    assert sw.K_EMPTY == 128
    assert list(t.ctrl) == [128] * 64 and t.slots == [None] * 64 and t.count == 0


@FEW
@given(tables())
def test_a_byte_is_128_or_more_exactly_when_its_slot_is_empty(t):
    for c, s in zip(t.ctrl, t.slots, strict=True):
        assert (c >= 128) == (s is None)


@FEW
@given(tables())
def test_empty_bytes_hold_nothing_and_tagged_bytes_hold_a_hash(t):
    for c, s in zip(t.ctrl, t.slots, strict=True):
        if c == EMPTY_BYTE:
            assert s is None
        else:
            assert s is not None and c == top7(s)


def valid_groups() -> st.SearchStrategy:
    """Sixteen control bytes, each empty or a tag."""
    byte = st.just(EMPTY_BYTE) | st.integers(0, 127)
    return st.lists(byte, min_size=G, max_size=G).map(bytes)


@FEW
@given(valid_groups(), st.integers(0, 127))
def test_the_simd_match_reports_exactly_the_bytes_equal_to_the_tag(ctrl, h2):
    m = sw.group_match(ctrl, h2, sw.SIMD)
    assert [m >> i & 1 for i in range(G)] == [int(c == h2) for c in ctrl]


@FEW
@given(valid_groups(), st.sampled_from([sw.SIMD, sw.SWAR]))
def test_match_empty_reports_exactly_the_empty_bytes(ctrl, path):
    m = sw.match_empty(ctrl, path)
    assert [m >> i & 1 for i in range(G)] == [int(c == EMPTY_BYTE) for c in ctrl]


@FEW
@given(st.lists(st.integers(0, 255), min_size=G, max_size=G).map(bytes), st.integers(0, 127),
       st.sampled_from([sw.SIMD, sw.SWAR]))
def test_no_byte_is_both_matched_and_empty(ctrl, h2, path):
    assert sw.group_match(ctrl, h2, path) & sw.match_empty(ctrl, path) == 0


POW2_CAPS = st.integers(4, 20).map(lambda k: 1 << k)


@FEW
@given(U64, POW2_CAPS)
def test_the_home_slot_lies_inside_the_table(h, cap):
    base = sw.probe_base(h, 0, cap)
    assert 0 <= base < cap and base % G == 0


@FEW
@given(U64, st.integers(0, 2**20), POW2_CAPS)
def test_the_bitmask_index_is_the_index_modulo_the_capacity(h, p, cap):
    assert sw.probe_base(h, p, cap) == (G * h + G * (p * (p + 1) // 2)) % cap


@FEW
@given(U64, st.integers(0, 2**32), POW2_CAPS)
def test_every_probed_group_lies_inside_the_table(h, p, cap):
    base = sw.probe_base(h, p, cap)
    assert base >= 0 and base + G <= cap


@FEW
@given(st.integers(4, 12), st.data())
def test_with_one_empty_byte_every_probe_sequence_meets_it(k, data):
    cap = 1 << k
    hole = data.draw(st.integers(0, cap - 1))
    t = sw.SwissTable(cap)
    for i in range(cap):
        if i != hole:
            t.slots[i] = (i + 1) << 3
            t.ctrl[i] = top7(t.slots[i])
    t.count = cap - 1
    h = data.draw(U64.filter(lambda x: x not in t.slots))
    steps = [p for p in range(cap // G) if sw.probe_base(h, p, cap) <= hole <
             sw.probe_base(h, p, cap) + G]
    assert steps, "the empty byte is on no step"
    assert sw.lookup(t, h) == (-1, steps[0] + 1)


@FEW
@given(tables())
def test_rehash_doubles_a_power_of_two_capacity(t):
    grown = sw.rehash(t)
    assert grown.capacity == 2 * t.capacity
    assert grown.capacity & (grown.capacity - 1) == 0 and grown.count == t.count


def _insert_fresh(data) -> tuple[sw.SwissTable, sw.SwissTable, int, int]:
    """A built table, a copy of it before, the fresh hash inserted with no grow check, and the
    slot it went to."""
    t = data.draw(tables())
    h = data.draw(U64.filter(lambda x: x not in t.slots))
    before = copy.deepcopy(t)
    slot, _ = sw.probe(t, h, insert=True)
    assert before.ctrl[slot] == EMPTY_BYTE and before.slots[slot] is None
    return before, t, h, slot


@FEW
@given(st.data())
def test_insert_keeps_the_capacity(data):
    before, t, _, _ = _insert_fresh(data)
    assert t.capacity == before.capacity and len(t.ctrl) == len(t.slots) == before.capacity


@FEW
@given(st.data())
def test_insert_adds_one_to_the_count(data):
    before, t, _, _ = _insert_fresh(data)
    assert t.count == before.count + 1


@FEW
@given(st.data())
def test_insert_puts_the_hash_in_its_slot(data):
    _, t, h, slot = _insert_fresh(data)
    assert t.slots[slot] == h


@FEW
@given(st.data())
def test_insert_tags_its_slot_with_the_hash_tag(data):
    _, t, h, slot = _insert_fresh(data)
    assert t.ctrl[slot] == top7(h)


@FEW
@given(st.data())
def test_insert_leaves_the_other_slots(data):
    before, t, _, slot = _insert_fresh(data)
    assert [s for i, s in enumerate(t.slots) if i != slot] == \
        [s for i, s in enumerate(before.slots) if i != slot]


@FEW
@given(st.data())
def test_insert_leaves_the_other_control_bytes(data):
    before, t, _, slot = _insert_fresh(data)
    assert [c for i, c in enumerate(t.ctrl) if i != slot] == \
        [c for i, c in enumerate(before.ctrl) if i != slot]


@FEW
@given(st.data())
def test_an_inserted_hash_is_found_in_its_slot(data):
    _, t, h, slot = _insert_fresh(data)
    assert sw.lookup(t, h)[0] == slot


@FEW
@given(st.data())
def test_insert_keeps_empty_bytes_and_empty_slots_together(data):
    _, t, _, _ = _insert_fresh(data)
    assert all((c == EMPTY_BYTE) == (s is None) for c, s in zip(t.ctrl, t.slots, strict=True))


# ── Graph ────────────────────────────────────────────────────────────────────────────────────

def _dce(wire: dict) -> tuple[IrGraph, IrGraph]:
    before = graph_from_wire(wire)
    after = graph_from_wire(wire)
    eliminate_dead_nodes(after)
    return before, after


@FEW
@given(graphs())
def test_dce_keeps_the_graph_outputs(wire):
    _, after = _dce(wire)
    assert after.outputs == wire["outputs"]


@FEW
@given(graphs())
def test_dce_keeps_every_node(wire):
    _, after = _dce(wire)
    assert [n.id for n in after.nodes] == list(range(len(wire["nodes"])))


@FEW
@given(graphs())
def test_dce_never_revives_a_dead_node(wire):
    _, after = _dce(wire)
    for n, w in zip(after.nodes, wire["nodes"], strict=True):
        if w.get("dead", False):
            assert n.dead
        if not n.dead:
            assert not w.get("dead", False)


@FEW
@given(graphs())
def test_dce_keeps_live_mutations(wire):
    _, after = _dce(wire)
    for n, w in zip(after.nodes, wire["nodes"], strict=True):
        if w["kind"] == NodeKind.MUTATION and not w.get("dead", False):
            assert not n.dead


@FEW
@given(graphs())
def test_dce_kills_no_node_that_is_still_used(wire):
    _, after = _dce(wire)
    live = [n for n in after.nodes if not n.dead]
    for n in after.nodes:
        uses = sum(m.inputs.count(n.id) for m in live) + after.outputs.count(n.id)
        if uses and not wire["nodes"][n.id].get("dead", False):
            assert not n.dead, n.id


@FEW
@given(graphs(), st.data())
def test_a_live_self_loop_has_no_topological_order(wire, data):
    g = graph_from_wire(wire)
    live = [n.id for n in g.live()]
    if not live:
        return
    k = data.draw(st.sampled_from(live))
    g.nodes[k].inputs.append(k)
    assert topological_sort(g)[k] is None
    with pytest.raises(InvalidInput):
        require_acyclic(g)


@FEW
@given(graphs(), st.data())
def test_two_live_nodes_reading_each_other_have_no_topological_order(wire, data):
    g = graph_from_wire(wire)
    live = [n.id for n in g.live()]
    if len(live) < 2:
        return
    a, b = data.draw(st.lists(st.sampled_from(live), min_size=2, max_size=2, unique=True))
    g.nodes[a].inputs.append(b)
    g.nodes[b].inputs.append(a)
    order = topological_sort(g)
    assert order[a] is None and order[b] is None
    with pytest.raises(InvalidInput):
        require_acyclic(g)


@FEW
@given(graphs(), st.integers(0, 9), st.integers(0, 9))
def test_rauw_keeps_every_node(wire, old, new):
    g = graph_from_wire(wire)
    if not g.nodes:
        return
    replace_all_uses(g, old % len(g.nodes), new % len(g.nodes))
    assert [n.id for n in g.nodes] == list(range(len(wire["nodes"])))


@FEW
@given(graphs(), st.integers(0, 9))
def test_rauw_of_a_node_by_itself_changes_nothing(wire, k):
    g = graph_from_wire(wire)
    if not g.nodes:
        return
    before = copy.deepcopy(g)
    replace_all_uses(g, k % len(g.nodes), k % len(g.nodes))
    assert g.nodes == before.nodes and g.outputs == before.outputs


def test_an_empty_graph_has_no_live_node():
    assert IrGraph([], []).live() == []
    assert dce_op({"nodes": [], "outputs": []})["num_live"] == 0


@FEW
@given(graphs())
def test_a_graph_of_dead_nodes_has_no_live_node(wire):
    dead = {"nodes": [dict(n, dead=True) for n in wire["nodes"]], "outputs": []}
    assert graph_from_wire(dead).live() == []
    assert dce_op(dead)["num_live"] == 0 and toposort_op(dead)["order"] == []


# ── SymbolTable ──────────────────────────────────────────────────────────────────────────────

INT_KINDS = st.sampled_from([SymKind.SIZE, SymKind.UNBACKED_INT])


@st.composite
def int_ranges(draw) -> tuple[int, int]:
    lo, hi = sorted(draw(st.lists(I64, min_size=2, max_size=2)))
    return lo, hi


def _entry(kind: SymKind, lo: int, hi: int) -> SymbolEntry:
    return SymbolEntry(range_lower=lo, range_upper=hi, kind=kind)


@FEW
@given(INT_KINDS, int_ranges(), I64, I64)
def test_tighten_never_widens(kind, r, lo, hi):
    e = _entry(kind, *r)
    tighten_range(e, lo, hi)
    assert r[0] <= e.range_lower and e.range_upper <= r[1]


@FEW
@given(INT_KINDS, int_ranges(), I64, I64)
def test_tighten_lands_inside_the_requested_bounds(kind, r, lo, hi):
    e = _entry(kind, *r)
    tighten_range(e, lo, hi)
    assert lo <= e.range_lower and e.range_upper <= hi


@FEW
@given(INT_KINDS, int_ranges(), I64, I64)
def test_tighten_to_an_overlapping_range_stays_a_range(kind, r, lo, hi):
    e = _entry(kind, *r)
    tighten_range(e, lo, hi)
    if max(r[0], lo) <= min(r[1], hi):
        assert e.range_lower <= e.range_upper


@FEW
@given(INT_KINDS, int_ranges(), st.integers(0, 2**62), st.integers(0, 2**62))
def test_tighten_to_enclosing_bounds_changes_nothing(kind, r, below, above):
    e = _entry(kind, *r)
    tighten_range(e, max(r[0] - below, -(2**63)), min(r[1] + above, 2**63 - 1))
    assert (e.range_lower, e.range_upper) == r


@FEW
@given(int_ranges(), I64, I64)
def test_range_contains_is_the_enclosure(r, lo, hi):
    assert range_contains(_entry(SymKind.UNBACKED_INT, *r), lo, hi) == (r[0] >= lo and
                                                                      r[1] <= hi)


@FEW
@given(int_ranges())
def test_positive_and_nonnegative_read_the_lower_bound(r):
    e = _entry(SymKind.UNBACKED_INT, *r)
    assert is_positive(e) == (r[0] > 0) and is_nonnegative(e) == (r[0] >= 0)
    assert not is_positive(e) or is_nonnegative(e)


def test_positive_and_nonnegative_at_the_boundary():
    assert [(is_positive(e), is_nonnegative(e)) for e in
            (_entry(SymKind.SIZE, lo, 9) for lo in (-1, 0, 1))] == \
        [(False, False), (False, True), (True, True)]


def _call(call: int, **kw) -> dict:
    return {"call": call, "id": 0, "kind": SymKind.SIZE, "expr_flags": 0, "backed": True,
            "value": 0, "lo": 0, "hi": 0} | kw


def tables_of_symbols() -> st.SearchStrategy:
    one = st.builds(lambda k, f, b: (k, f, b), st.sampled_from(list(SymKind)),
                    st.integers(0, 0xFFFF), st.booleans())
    return st.lists(one, min_size=1, max_size=6).map(
        lambda adds: _fill(adds))


def _fill(adds) -> list[SymbolEntry]:
    table: list[SymbolEntry] = []
    for k, f, b in adds:
        add(table, k, f, b)
    return table


@FEW
@given(tables_of_symbols(), st.sampled_from(list(SymKind)), st.integers(0, 0xFFFF),
       st.booleans())
def test_add_appends_one_entry_and_returns_its_index(table, kind, flags, backed):
    n = len(table)
    assert add(table, kind, flags, backed) == n and len(table) == n + 1


@FEW
@given(tables_of_symbols(), st.sampled_from(list(SymKind)), st.integers(0, 0xFFFF),
       st.booleans())
def test_add_keeps_the_earlier_entries(table, kind, flags, backed):
    before = copy.deepcopy(table)
    add(table, kind, flags, backed)
    assert table[:-1] == before


DEFAULTS = {SymKind.SIZE: (2, 2**63 - 1), SymKind.UNBACKED_INT: (-(2**63) + 1, 2**63 - 1),
            SymKind.FLOAT: (-0x10000000000000, 0x7FF0000000000000),
            SymKind.UNBACKED_FLOAT: (-0x10000000000000, 0x7FF0000000000000)}
"""The entry add makes: default range by kind (float kinds: the bits of -inf and +inf)."""


@FEW
@given(tables_of_symbols(), st.sampled_from(list(SymKind)), st.integers(0, 0xFFFF),
       st.booleans())
def test_the_added_entry_is_the_one_asked_for(table, kind, flags, backed):
    sid = add(table, kind, flags, backed)
    lo, hi = DEFAULTS[kind]
    assert table[sid] == SymbolEntry(NO_HINT, lo, hi, kind, IS_BACKED if backed else 0, flags)


@FEW
@given(tables_of_symbols(), st.data(), I64)
def test_set_hint_stores_the_hint_sets_the_flag_and_keeps_the_size(table, data, value):
    sid = data.draw(st.integers(0, len(table) - 1))
    n = len(table)
    assert run_call(table, 0, _call(SET_HINT, id=sid, value=value)) == -1
    assert len(table) == n and table[sid].hint == value and table[sid].sym_flags & HAS_HINT


@FEW
@given(tables_of_symbols(), st.data())
def test_set_size_like_sets_the_flag_and_keeps_the_size(table, data):
    sid = data.draw(st.integers(0, len(table) - 1))
    n = len(table)
    run_call(table, 0, _call(SIZE_LIKE, id=sid))
    assert len(table) == n and table[sid].sym_flags & IS_SIZE_LIKE


@FEW
@given(tables_of_symbols(), st.data(), I64, I64)
def test_tighten_range_keeps_the_size(table, data, lo, hi):
    sid = data.draw(st.integers(0, len(table) - 1))
    n = len(table)
    run_call(table, 0, _call(TIGHTEN, id=sid, lo=lo, hi=hi))
    assert len(table) == n


def test_run_call_add_returns_the_next_id():
    table: list[SymbolEntry] = []
    assert [run_call(table, i, _call(ADD, kind=k)) for i, k in enumerate(SymKind)] == [0, 1, 2, 3]


# ── MemoryPlan ───────────────────────────────────────────────────────────────────────────────

SIZES = st.integers(0, 5000) | st.sampled_from([0, 1, 256, 257, 512])


@st.composite
def all_live_slots(draw) -> list[PlanSlot]:
    """Slots whose births do not decrease with the index and which all die after the last
    birth: every two are alive together, and the list order is the birth order."""
    n = draw(st.integers(1, 10))
    births = sorted(draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)))
    return [PlanSlot(draw(SIZES), b, draw(st.integers(births[-1], 9))) for b in births]


def _prefix_offsets(slots: list[PlanSlot]) -> list[int]:
    out, at = [], 0
    for s in slots:
        out.append(at)
        at += round256(s.nbytes)
    return out


@FEW
@given(all_live_slots())
def test_slots_alive_together_are_laid_end_to_end(slots):
    plan = compute_memory_plan(slots)
    assert plan.offsets == _prefix_offsets(slots)
    assert plan.pool_bytes == sum(round256(s.nbytes) for s in slots)


@FEW
@given(all_live_slots())
def test_end_to_end_slots_each_end_before_the_next_starts(slots):
    plan = compute_memory_plan(slots)
    for i in range(len(slots)):
        for j in range(i + 1, len(slots)):
            assert plan.offsets[i] + round256(slots[i].nbytes) <= plan.offsets[j]


@FEW
@given(all_live_slots())
def test_end_to_end_slots_end_inside_the_total(slots):
    plan = compute_memory_plan(slots)
    total = sum(round256(s.nbytes) for s in slots)
    assert all(o + round256(s.nbytes) <= total for o, s in zip(plan.offsets, slots, strict=True))


@FEW
@given(all_live_slots())
def test_end_to_end_slots_get_their_own_rounded_size(slots):
    plan = compute_memory_plan(slots)
    ends = [*plan.offsets[1:], plan.pool_bytes]
    assert [e - o for o, e in zip(plan.offsets, ends, strict=True)] == \
        [round256(s.nbytes) for s in slots]


@FEW
@given(all_live_slots())
def test_end_to_end_offsets_never_fall_below_an_earlier_start(slots):
    plan = compute_memory_plan(slots)
    assert plan.offsets[0] >= 0
    for i in range(len(slots)):
        assert all(plan.offsets[j] >= plan.offsets[i] for j in range(i, len(slots)))


@st.composite
def any_slots(draw) -> list[PlanSlot]:
    out = []
    for _ in range(draw(st.integers(0, 10))):
        b = draw(st.integers(0, 8))
        out.append(PlanSlot(draw(SIZES), b, draw(st.integers(b, 9))))
    return out


@FEW
@given(any_slots())
def test_the_concatenation_plan_is_valid(slots):
    plan = Plan(_prefix_offsets(slots), sum(round256(s.nbytes) for s in slots))
    assert plan_violations(slots, plan) == []


@st.composite
def sequential_slots(draw) -> list[PlanSlot]:
    """Slots no two of which are alive at one op, listed in a shuffled order."""
    out, op = [], 0
    for _ in range(draw(st.integers(1, 8))):
        op += draw(st.integers(0, 2))
        end = op + draw(st.integers(0, 2))
        out.append(PlanSlot(draw(SIZES), op, end))
        op = end + 1
    return draw(st.permutations(out))


@FEW
@given(sequential_slots())
def test_slots_never_alive_together_need_only_the_largest(slots):
    plan = compute_memory_plan(slots)
    assert plan_violations(slots, plan) == []
    assert plan.pool_bytes == max(round256(s.nbytes) for s in slots)


@FEW
@given(any_slots())
def test_the_live_bound_is_at_least_every_slot(slots):
    bound = live_lower_bound(slots)
    assert all(round256(s.nbytes) <= bound for s in slots)


@FEW
@given(any_slots(), any_slots())
def test_the_live_bound_never_drops_when_slots_are_added(slots, more):
    assert live_lower_bound(slots + more) >= live_lower_bound(slots)


@FEW
@given(sequential_slots())
def test_the_live_bound_of_sequential_slots_is_the_largest(slots):
    assert live_lower_bound(slots) == max(round256(s.nbytes) for s in slots)


@FEW
@given(any_slots())
def test_the_live_bound_starts_from_zero_and_never_goes_below_it(slots):
    assert live_lower_bound([]) == 0
    assert live_lower_bound(slots) >= 0
