"""Properties of the analysis chapters: the iteration detector (ch. 7), the trace graph
(ch. 6), the memory plan (ch. 10) and the Merkle DAG (ch. 9), on hypothesis-generated inputs.
Expected values come from the facts (where the first boundary falls, what a valid plan is) or
from the errata's own witnesses, never from the code under test."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.engine import decode_args, run_reference
from crucible_spec.proofs.memory_plan import (
    SIZES,
    SPANS,
    first_fit_keeps_entry,
    frees_at_death,
    rounds_down,
    sweep,
)
from crucible_spec.spec.build_trace import TraceGraph, build_trace
from crucible_spec.spec.content_hash import content_hash_op
from crucible_spec.spec.dag import dag_from_wire, merkle_hashes
from crucible_spec.spec.dag_ops import dags, diff_op, merkle_op
from crucible_spec.spec.errata import NO_ERRATA, SEEDS, profile_errata
from crucible_spec.spec.iteration_detector import (
    E7_1,
    Detector,
    K,
    periodic_streams,
    run_detector,
    state_wire,
)
from crucible_spec.spec.memory_plan import (
    Plan,
    PlanSlot,
    align256,
    compute_memory_plan,
    greedy_by_size,
    live_lower_bound,
    plan_slots,
    slot_sets,
)
from crucible_spec.spec.merkle_dag import E9_1, E9_2, DagDiffKind, branch_hash, guard_hash
from crucible_spec.spec.plan_validity import plan_violations
from crucible_spec.spec.registry import REGISTRY
from crucible_spec.spec.trace_build_ops import kernels_from_wire, recorded_ops, traces
from crucible_spec.spec.types import NONE32

SEED = profile_errata(SEEDS["crucible"])
PROFILES = st.sampled_from([NO_ERRATA, SEED])
U64 = st.integers(0, 2**64 - 1)

# --- the iteration detector -----------------------------------------------------------------


@given(period=st.lists(U64, min_size=K, max_size=40, unique=True), errata=PROFILES)
def test_three_iterations_give_one_boundary_at_the_kth_op_of_the_third(period, errata):
    boundaries, _ = run_detector(period * 3, errata)
    length = len(period)
    assert boundaries == [{"index": 2 * length + K - 1, "last_completed_len": length,
                           "boundaries_detected": 1}]


@given(period=st.lists(U64, min_size=K, max_size=40, unique=True))
def test_two_iterations_only_confirm_the_signature(period):
    boundaries, d = run_detector(period * 2)
    assert boundaries == [] and d.confirmed


@settings(max_examples=60)
@given(data=st.data(), errata=PROFILES)
def test_batches_through_one_detector_give_the_boundaries_of_one_pass(data, errata):
    stream = data.draw(periodic_streams())["stream"]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6), label="cuts"))
    whole, d_whole = run_detector(stream, errata)
    d, got = Detector(), []
    for start, end in pairwise([0, *cuts, len(stream)]):
        batch, d = run_detector(stream[start:end], errata, d)
        got += [b | {"index": b["index"] + start} for b in batch]
    assert got == whole and state_wire(d) == state_wire(d_whole)


def test_the_kmp_restart_witness_still_tells_the_seed_from_the_spec():
    w = REGISTRY.errata[E7_1].witness
    stream = [int(h, 16) for h in w["args"]["stream"]]
    spec, _ = run_detector(stream)
    seed, _ = run_detector(stream, SEED)
    assert spec == w["spec"]["boundaries"] and seed == w["seed"]["boundaries"] and spec != seed


# --- the trace graph ------------------------------------------------------------------------


def _build(args: dict, errata: frozenset[str]) -> TraceGraph:
    return build_trace(recorded_ops(args["ops"]), kernels_from_wire(args["kernels"]), errata)


@settings(max_examples=40)
@given(args=traces(), errata=PROFILES)
def test_forward_and_reverse_csr_group_the_same_edges(args, errata):
    g = _build(args, errata)
    n = len(g.ops)
    for side in ("src", "dst"):
        grouped, offsets = g.csr(side)
        assert len(offsets) == n + 1 and offsets[0] == 0 and offsets[n] == len(g.edges)
        assert all(a <= b for a, b in pairwise(offsets))
        for i in range(n):
            assert grouped[offsets[i]:offsets[i + 1]] == \
                [e for e in g.edges if getattr(e, side) == i]


@settings(max_examples=40)
@given(args=traces(), errata=PROFILES)
def test_edges_point_forward_and_lifetimes_cover_every_use(args, errata):
    g = _build(args, errata)
    assert all(e.src < e.dst for e in g.edges)
    for i, op in enumerate(g.ops):
        for sid in (op.input_slot_ids or []) + (op.output_slot_ids or []):
            if sid != NONE32:
                assert g.slots[sid].birth_op <= i <= g.slots[sid].death_op, (i, sid)
    for sid, s in enumerate(g.slots):
        if s.is_external:
            assert s.birth_op == 0
        else:
            assert sid in g.ops[s.birth_op].output_slot_ids, "born at its first writer"


@settings(max_examples=40)
@given(args=traces())
def test_the_trace_content_hash_is_the_region_content_hash_of_its_ops(args):
    region = [{"schema_hash": o["schema_hash"], "inputs": o["inputs"],
               "scalar_args": o["scalars"][:5]} for o in args["ops"]]
    assert _build(args, NO_ERRATA).content_hash == content_hash_op(region)["out"]


# --- the memory plan ------------------------------------------------------------------------


@st.composite
def reuse_heavy_slots(draw) -> list[PlanSlot]:
    """Few sizes, short lives, many slots per op: direct reuse, splits and swap-removes."""
    out = []
    for _ in range(draw(st.integers(0, 40))):
        birth = draw(st.integers(0, 12))
        out.append(PlanSlot(draw(st.sampled_from(SIZES)), birth,
                            birth + draw(st.sampled_from(SPANS)),
                            draw(st.integers(0, 9)) == 0))
    return out


def _assert_valid_and_bounded(slots: list[PlanSlot]) -> None:
    plan = compute_memory_plan(slots)
    assert plan_violations(slots, plan) == []
    assert live_lower_bound(slots) <= plan.pool_bytes <= \
        sum(align256(s.nbytes) for s in slots if not s.is_external)
    assert plan.num_external == sum(s.is_external for s in slots)
    greedy = greedy_by_size(slots)
    assert plan_violations(slots, greedy) == []
    assert live_lower_bound(slots) <= greedy.pool_bytes


@settings(max_examples=60)
@given(args=slot_sets())
def test_plans_of_random_slot_sets_are_valid(args):
    _assert_valid_and_bounded(plan_slots(args["slots"]))


@settings(max_examples=60)
@given(slots=reuse_heavy_slots())
def test_plans_of_reuse_heavy_slot_sets_are_valid(slots):
    _assert_valid_and_bounded(slots)


@settings(max_examples=40)
@given(args=traces(max_ops=20), errata=PROFILES)
def test_plans_of_built_traces_are_valid(args, errata):
    g = _build(args, errata)
    _assert_valid_and_bounded([PlanSlot(s.nbytes, s.birth_op, s.death_op, s.is_external)
                               for s in g.slots])


@settings(max_examples=60)
@given(slots=reuse_heavy_slots())
def test_the_mutants_sweep_with_the_spec_parts_is_the_spec_planner(slots):
    ours, spec = sweep(slots), compute_memory_plan(slots)
    assert (ours.offsets, ours.pool_bytes) == (spec.offsets, spec.pool_bytes)


S = PlanSlot
TWO = [S(256, 0, 1), S(300, 1, 2)]
"""Two slots alive together at op 1; the second rounds to 512 bytes."""


def test_plan_violations_accepts_valid_plans():
    assert plan_violations(TWO, Plan([0, 256], 768)) == []
    assert plan_violations([S(256, 0, 1), S(256, 2, 3)], Plan([0, 0], 256)) == []
    assert plan_violations([S(512, 0, 3), S(0, 1, 2)], Plan([0, 256], 512)) == [], \
        "a zero-size slot shares no byte"
    assert plan_violations([S(256, 0, 1), S(9, 0, 5, True)], Plan([0, 0], 256)) == []


def test_plan_violations_name_each_broken_invariant():
    cases = [
        (TWO, Plan([0, 0], 512), "slots 0 and 1 are alive together and share bytes"),
        ([S(256, 0, 1), S(256, 1, 2)], Plan([0, 0], 256), "slots 0 and 1 are alive"),
        (TWO, Plan([0, 300], 1024), "slot 1: offset 300 is not a multiple of 256"),
        (TWO, Plan([0, 256], 512), "slot 1: [256, 768) ends past the pool (512 bytes)"),
        (TWO, Plan([0, 256], 800), "pool_bytes 800 is not a multiple of 256"),
        ([S(256, 0, 1), S(9, 0, 5, True)], Plan([0, 256], 256),
         "external slot 1 has offset 256, not 0"),
        (TWO, Plan([0], 256), "1 offsets for 2 slots"),
    ]
    for slots, plan, message in cases:
        assert any(message in v for v in plan_violations(slots, plan)), (plan, message)


def test_broken_planners_are_caught():
    touching = [S(256, 0, 1), S(256, 1, 2)]
    assert plan_violations(touching, frees_at_death(touching))
    split = [S(1024, 0, 0), S(256, 2, 3), S(256, 2, 3)]
    assert plan_violations(split, first_fit_keeps_entry(split))
    odd = [S(257, 0, 1), S(256, 0, 1)]
    assert plan_violations(odd, rounds_down(odd))


# --- the Merkle DAG -------------------------------------------------------------------------


@settings(max_examples=40)
@given(args=REGISTRY.ops["dag.add_branch"].strategy(), errata=PROFILES)
def test_add_branch_keeps_the_arms_sorted_by_value(args, errata):
    op = REGISTRY.ops["dag.add_branch"]
    out = run_reference(op, decode_args(op, op.args.encode(args)), errata)
    values = [a["value"] for a in out["dag"]["nodes"][out["branch"]]["arms"]]
    assert values == sorted(values)


@given(guard=U64, arms=st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), U64),
                                min_size=1, max_size=5), data=st.data())
def test_the_spec_branch_hash_ignores_the_arm_order(guard, arms, data):
    assert branch_hash(guard, data.draw(st.permutations(arms))) == branch_hash(guard, arms)


@given(dag=dags(), data=st.data())
def test_the_spec_merkle_hashes_ignore_the_arm_order(dag, data):
    d = dag_from_wire(dag)
    shuffled = dag_from_wire(dag)
    for n in shuffled.nodes:
        n.arms = data.draw(st.permutations(n.arms))
    assert merkle_hashes(shuffled) == merkle_hashes(d)


def test_loops_with_different_given_body_hashes_are_not_identical():
    def loop(body_hash: str) -> dict:
        return {"nodes": [{"kind": "loop", "body": 1, "body_content_hash": body_hash,
                           "repeat_count": 2},
                          {"kind": "region", "content_hash": "0x5"}], "root": 0}
    a, b = loop("0x1"), loop("0x2")
    assert merkle_op(a)["merkle"][0] != merkle_op(b)["merkle"][0]
    assert diff_op(a, b)["kind"] != DagDiffKind.IDENTICAL


def test_the_arm_order_witness_still_tells_the_seed_from_the_spec():
    w = REGISTRY.errata[E9_2].witness
    got = {p: merkle_op(w["args"]["dag"], errata)["merkle"]
           for p, errata in (("spec", NO_ERRATA), ("seed", SEED))}
    assert [int(h, 16) for h in w["spec"]["merkle"]] == got["spec"]
    assert [int(h, 16) for h in w["seed"]["merkle"]] == got["seed"]


KINDS, OPS, ARGS = st.integers(0, 255), st.integers(0, 2**32 - 1), st.integers(0, 2**16 - 1)


@given(kind=KINDS, op=OPS, arg=ARGS, dim=st.integers(0, 255))
def test_the_spec_guard_hash_is_the_seeds_below_dim_256(kind, op, arg, dim):
    assert guard_hash(kind, op, arg, dim) == guard_hash(kind, op, arg, dim, SEED)


@given(kind=KINDS, op=OPS, arg=ARGS, dim=st.integers(256, 2**16 - 1))
def test_the_high_byte_of_dim_index_counts_in_the_spec_only(kind, op, arg, dim):
    assert guard_hash(kind, op, arg, dim, SEED) == guard_hash(kind, op, arg, dim & 0xFF, SEED)
    assert guard_hash(kind, op, arg, dim) != guard_hash(kind, op, arg, dim & 0xFF)
    assert guard_hash(kind, op, arg, dim) != guard_hash(kind, op, arg, dim, SEED)


def test_the_guard_witness_still_tells_the_seed_from_the_spec():
    w = REGISTRY.errata[E9_1].witness
    a = w["args"]
    args = (a["kind"], a["op_index"], 0, a["dim_index"])
    assert guard_hash(*args) == int(w["spec"]["out"], 16)
    assert guard_hash(*args, SEED) == int(w["seed"]["out"], 16)
