"""The analysis chapters as properties over seeded hypothesis draws: the iteration detector
(ch. 7), the trace graph (ch. 6), the memory plan (ch. 10) and the Merkle DAG (ch. 9).
Expected values come from the facts (where the first boundary falls, what a valid plan is)
or from the seed profile's own readings, never from the function under check."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import strategies as st

from ...spec.core.errata import NO_ERRATA, SEEDS, profile_errata
from ...spec.core.registry import REGISTRY, Mutant
from ...spec.crucible.build_trace import TraceGraph, build_trace
from ...spec.crucible.content_hash import content_hash_op
from ...spec.crucible.dag import add_branch, dag_from_wire, merkle_hashes
from ...spec.crucible.dag_ops import add_branch_op, dags
from ...spec.crucible.iteration_detector import (
    Detector,
    K,
    check,
    periodic_streams,
    run_detector,
    state_wire,
)
from ...spec.crucible.memory_plan import (
    PlanSlot,
    _coalesce,
    _direct_reuse,
    _first_fit,
    _lowest_fit,
    align256,
    compute_memory_plan,
    greedy_by_size,
    live_lower_bound,
    plan_slots,
    slot_sets,
    sweep,
)
from ...spec.crucible.merkle_dag import branch_hash, guard_hash
from ...spec.crucible.plan_validity import plan_violations
from ...spec.crucible.trace_build_ops import kernels_from_wire, recorded_ops, traces
from ...spec.crucible.types import NONE32
from ..core.obligation import Property, property_obligation
from .memory_plan import SIZES, SPANS

SEED = profile_errata(SEEDS["crucible"])
PROFILES = st.sampled_from([NO_ERRATA, SEED])
U64 = st.integers(0, 2**64 - 1)

# --- the iteration detector (chapter 7) -----------------------------------------------------

PERIODS = st.lists(U64, min_size=K, max_size=40, unique=True)


def _three_iterations(case: tuple[list[int], frozenset[str]]) -> None:
    period, errata = case
    boundaries, _ = run_detector(period * 3, errata)
    length = len(period)
    assert boundaries == [{"index": 2 * length + K - 1, "last_completed_len": length,
                           "boundaries_detected": 1}]


@property_obligation(
    "PO7.70",
    "A period of K or more distinct hashes repeated three times gives exactly one boundary, at "
    "the K-th op of the third repetition, with last_completed_len = the period (both "
    "profiles).",
    covers=("detector.run",),
    subject=run_detector,
    mutants=(Mutant.edit("length off by one", "last_completed_len counts one op too many",
                         check, "max(d.ops_since_boundary - K, 0)",
                         "max(d.ops_since_boundary - K + 1, 0)"),
             Mutant.edit("match one short", "a full match needs K - 1 hashes", check,
                         "if d.match_pos + 1 < K:", "if d.match_pos + 2 < K:")),
)
def three_iterations_one_boundary(_subject):
    return [Property("a period and a profile", _three_iterations,
                     strategy=lambda: st.tuples(PERIODS, PROFILES), examples=200)]


def _two_iterations(period: list[int]) -> None:
    boundaries, d = run_detector(period * 2)
    assert boundaries == [] and d.confirmed


@property_obligation(
    "PO7.71",
    "Two repetitions of a period of K or more distinct hashes only confirm the signature: no "
    "boundary, and the detector is confirmed.",
    covers=("detector.run",),
    subject=run_detector,
    mutants=(Mutant.edit("no confirmation", "the first full match is already a boundary",
                         check, "if not d.confirmed:", "if d.confirmed and not d.confirmed:"),),
)
def two_iterations_confirm(_subject):
    return [Property("a period", _two_iterations, strategy=lambda: PERIODS, examples=200)]


@st.composite
def _stream_cuts(draw) -> tuple[list[int], list[int], frozenset[str]]:
    stream = draw(periodic_streams())["stream"]
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    return stream, cuts, draw(PROFILES)


def _batches(case: tuple[list[int], list[int], frozenset[str]]) -> None:
    stream, cuts, errata = case
    whole, d_whole = run_detector(stream, errata)
    d, got = Detector(), []
    for start, end in pairwise([0, *cuts, len(stream)]):
        batch, d = run_detector(stream[start:end], errata, d)
        got += [b | {"index": b["index"] + start} for b in batch]
    assert got == whole and state_wire(d) == state_wire(d_whole)


@property_obligation(
    "PO7.72",
    "Feeding a stream in batches through one detector gives the boundaries (re-indexed) and "
    "the final state of one pass over the whole stream.",
    covers=("detector.run",),
    subject=run_detector,
    mutants=(Mutant.edit("fresh state per batch", "run_detector ignores the state it is "
                         "given", run_detector, "d = d or Detector()", "d = Detector()"),),
)
def batches_are_one_pass(_subject):
    return [Property("a periodic stream, cuts and a profile", _batches,
                     strategy=_stream_cuts, examples=100)]


# --- the trace graph (chapter 6) ------------------------------------------------------------


def _build(args: dict, errata: frozenset[str]) -> TraceGraph:
    return build_trace(recorded_ops(args["ops"]), kernels_from_wire(args["kernels"]), errata)


def _csr(case: tuple[dict, frozenset[str]]) -> None:
    g = _build(*case)
    n = len(g.ops)
    for side in ("src", "dst"):
        grouped, offsets = g.csr(side)
        assert len(offsets) == n + 1 and offsets[0] == 0 and offsets[n] == len(g.edges)
        assert all(a <= b for a, b in pairwise(offsets))
        for i in range(n):
            assert grouped[offsets[i]:offsets[i + 1]] == \
                [e for e in g.edges if getattr(e, side) == i]


@property_obligation(
    "PO6.70",
    "The forward and the reverse CSR of a built trace group every edge under its source "
    "(destination) op, in creation order, with n + 1 monotone offsets from 0 to the edge count.",
    covers=("trace.build",),
    subject=TraceGraph.csr,
    mutants=(Mutant.edit("offsets not shifted", "each edge is counted at its own op's offset, "
                         "not the next one", TraceGraph.csr,
                         "offsets[getattr(e, by) + 1] += 1", "offsets[getattr(e, by)] += 1"),),
)
def csr_groups_edges(_subject):
    return [Property("a trace and a profile", _csr,
                     strategy=lambda: st.tuples(traces(), PROFILES), examples=40)]


def _lifetimes(case: tuple[dict, frozenset[str]]) -> None:
    g = _build(*case)
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


@property_obligation(
    "PO6.71",
    "In a built trace every edge points forward, every slot's lifetime covers each op that "
    "uses it, an external slot is born at op 0 and an internal one at its first writer.",
    covers=("trace.build",),
    subject=build_trace,
    mutants=(Mutant.edit("read does not extend", "a data-flow read does not extend the slot's "
                         "lifetime", build_trace, "extend(e.slot, i)\n", "None\n"),
             Mutant.edit("external born at first use", "an external slot is born at its "
                         "first reader", build_trace, "new_slot(_nbytes(m), 0, i, True, m)",
                         "new_slot(_nbytes(m), i, i, True, m)")),
)
def lifetimes_cover_uses(_subject):
    return [Property("a trace and a profile", _lifetimes,
                     strategy=lambda: st.tuples(traces(), PROFILES), examples=40)]


def _content_hash(args: dict) -> None:
    region = [{"schema_hash": o["schema_hash"], "inputs": o["inputs"],
               "scalar_args": o["scalars"][:5]} for o in args["ops"]]
    assert _build(args, NO_ERRATA).content_hash == content_hash_op(region)["out"]


@property_obligation(
    "PO6.72",
    "A built trace's content hash is the region content hash of its ops (schema, inputs, the "
    "first five scalars).",
    covers=("trace.build", "dag.content_hash"),
    subject=build_trace,
    mutants=(Mutant.edit("unfinished hash", "build_trace returns the streaming hash without "
                         "fmix64", build_trace, "TraceGraph(ops, edges, slots, fmix64(h))",
                         "TraceGraph(ops, edges, slots, h)"),),
)
def trace_hash_is_content_hash(_subject):
    return [Property("a trace", _content_hash, strategy=traces, examples=40)]


# --- the memory plan (chapter 10) -----------------------------------------------------------


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


def valid_and_bounded(slots: list[PlanSlot]) -> None:
    """The spec's plan, the seed's (E10.1) and the greedy plan are valid; each pool lies
    between the live lower bound and the sum of the rounded sizes; the externals are counted."""
    for errata in (NO_ERRATA, SEED):
        plan = compute_memory_plan(slots, errata)
        assert plan_violations(slots, plan) == []
        assert live_lower_bound(slots) <= plan.pool_bytes <= \
            sum(align256(s.nbytes) for s in slots if not s.is_external)
        assert plan.num_external == sum(s.is_external for s in slots)
    greedy = greedy_by_size(slots)
    assert plan_violations(slots, greedy) == []
    assert live_lower_bound(slots) <= greedy.pool_bytes


def _built_slots(case: tuple[dict, frozenset[str]]) -> None:
    g = _build(*case)
    valid_and_bounded([PlanSlot(s.nbytes, s.birth_op, s.death_op, s.is_external)
                       for s in g.slots])


_FREES_AT_DEATH = Mutant.edit("frees at death", "a slot is freed at its death op, not the op "
                              "after", sweep, "slots[i].death_op + 1",
                              "slots[i].death_op")


@property_obligation(
    "PO10.70",
    "On random slot sets (the plan.compute domain) the spec's plan, the seed's (E10.1) and the "
    "greedy plan are valid, and the pool lies between the live lower bound and the sum of "
    "rounded sizes.",
    covers=("plan.compute", "plan.greedy_by_size"),
    subject=compute_memory_plan,
    mutants=(_FREES_AT_DEATH,
             Mutant.edit("greedy ignores touching lifetimes", "greedy treats slots that meet "
                         "at one op as disjoint", greedy_by_size,
                         "birth <= s.death_op and s.birth_op <= death",
                         "birth < s.death_op and s.birth_op < death")),
)
def random_plans_valid(_subject):
    return [Property("a slot set", lambda args: valid_and_bounded(plan_slots(args["slots"])),
                     strategy=slot_sets, examples=60)]


@property_obligation(
    "PO10.71",
    "On reuse-heavy slot sets (few sizes, short lives) the spec's plan, the seed's and the "
    "greedy plan are valid and bounded as in PO10.70.",
    covers=("plan.compute",),
    subject=compute_memory_plan,
    mutants=(Mutant.edit("first fit keeps the entry", "first fit does not shrink the entry it "
                         "splits", _first_fit, "entry[0] += size", "entry[0] += 0"),
             Mutant.edit("lowest fit keeps the block", "the spec's first fit does not shrink "
                         "the block it splits", _lowest_fit, "entry[0] += size",
                         "entry[0] += 0"),
             Mutant.edit("merge keeps the gap", "a block merged with the one after it keeps "
                         "the gap's bytes too", _coalesce, "end += free.pop(k)[1]",
                         "end += free.pop(k)[1] + 256"),
             Mutant.edit("waste at the start", "direct reuse frees the waste from the slot's "
                         "start, not its end", _direct_reuse,
                         "_release(free, plan.offsets[d] + size, waste, seed)",
                         "_release(free, plan.offsets[d], waste, seed)")),
)
def reuse_heavy_plans_valid(_subject):
    return [Property("a reuse-heavy slot set", valid_and_bounded, strategy=reuse_heavy_slots,
                     examples=100)]


@property_obligation(
    "PO10.72",
    "The slots of a built trace (both profiles) get valid, bounded plans as in PO10.70.",
    covers=("plan.compute", "trace.build"),
    subject=compute_memory_plan,
    mutants=(Mutant.edit("externals planned", "external slots are placed in the pool like "
                         "internal ones", compute_memory_plan,
                         "plan.num_external += 1\n            continue",
                         "plan.num_external += 1"),),
)
def built_trace_plans_valid(_subject):
    return [Property("a trace and a profile", _built_slots,
                     strategy=lambda: st.tuples(traces(max_ops=20), PROFILES), examples=40)]


# --- the Merkle DAG (chapter 9) -------------------------------------------------------------


def _arms_sorted(case: tuple[dict, frozenset[str]]) -> None:
    args, errata = case
    out = add_branch_op(**args, errata=errata)
    values = [a["value"] for a in out["dag"]["nodes"][out["branch"]]["arms"]]
    assert values == sorted(values)


@property_obligation(
    "PO9.70",
    "add_branch keeps a branch's arms sorted by value (both profiles).",
    covers=("dag.add_branch",),
    subject=add_branch,
    mutants=(Mutant.edit("sorted by target", "the arms are sorted by their target node",
                         add_branch, "key=lambda a: a[0]", "key=lambda a: a[1]"),),
)
def add_branch_sorts_arms(_subject):
    return [Property("an add_branch case and a profile", _arms_sorted,
                     strategy=lambda: st.tuples(REGISTRY.ops["dag.add_branch"].strategy(),
                                                PROFILES), examples=40)]


ARMS = st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), U64), min_size=1, max_size=5)


@st.composite
def _arms_and_permutation(draw) -> tuple[int, list, list]:
    arms = draw(ARMS)
    return draw(U64), arms, draw(st.permutations(arms))


def _branch_order(case: tuple[int, list, list]) -> None:
    guard, arms, shuffled = case
    assert branch_hash(guard, shuffled) == branch_hash(guard, arms)


_ARRAY_ORDER = Mutant.edit("array order", "branch_hash takes the arms in array order (the "
                           "seed's reading, E9.2)", branch_hash,
                           "(arms if E9_2 in errata else sorted(arms))", "arms")


@property_obligation(
    "PO9.71",
    "The spec's branch hash does not depend on the order of the arms.",
    covers=("dag.merkle",),
    subject=branch_hash,
    mutants=(_ARRAY_ORDER,),
)
def branch_hash_ignores_order(_subject):
    return [Property("a guard, arms and a permutation", _branch_order,
                     strategy=_arms_and_permutation, examples=200)]


@st.composite
def _dag_and_shuffle(draw) -> tuple[dict, list[list]]:
    dag = draw(dags())
    orders = [draw(st.permutations(range(len(n.arms)))) for n in dag_from_wire(dag).nodes]
    return dag, orders


def _merkle_order(case: tuple[dict, list[list]]) -> None:
    dag, orders = case
    shuffled = dag_from_wire(dag)
    for n, order in zip(shuffled.nodes, orders, strict=True):
        n.arms = [n.arms[k] for k in order]
    assert merkle_hashes(shuffled) == merkle_hashes(dag_from_wire(dag))


@property_obligation(
    "PO9.72",
    "The spec's Merkle hashes of a DAG do not depend on the order of any branch's arms.",
    covers=("dag.merkle",),
    subject=merkle_hashes,
    mutants=(_ARRAY_ORDER,),
)
def merkle_ignores_arm_order(_subject):
    return [Property("a DAG and arm orders", _merkle_order, strategy=_dag_and_shuffle,
                     examples=100)]


KINDS, OPS, ARGS = st.integers(0, 255), st.integers(0, 2**32 - 1), st.integers(0, 2**16 - 1)


def _low_dims(case: tuple[int, int, int, int]) -> None:
    assert guard_hash(*case) == guard_hash(*case, SEED)


@property_obligation(
    "PO9.73",
    "Below dim_index 256 the spec's guard hash is the seed's.",
    covers=("dag.guard_hash",),
    subject=guard_hash,
    mutants=(Mutant.edit("high byte always folded", "the high byte's hash is folded in even "
                         "when it is zero", guard_hash,
                         "select(high == 0, 0, fmix64(high ^ GUARD_HIGH_SALT))",
                         "fmix64(high ^ GUARD_HIGH_SALT)"),),
)
def guard_low_dims_are_the_seeds(_subject):
    return [Property("a guard with dim < 256", _low_dims,
                     strategy=lambda: st.tuples(KINDS, OPS, ARGS, st.integers(0, 255)),
                     examples=200)]


def _high_dims(case: tuple[int, int, int, int]) -> None:
    kind, op, arg, dim = case
    assert guard_hash(kind, op, arg, dim, SEED) == guard_hash(kind, op, arg, dim & 0xFF, SEED)
    assert guard_hash(kind, op, arg, dim) != guard_hash(kind, op, arg, dim & 0xFF)
    assert guard_hash(kind, op, arg, dim) != guard_hash(kind, op, arg, dim, SEED)


@property_obligation(
    "PO9.74",
    "From dim_index 256 up the high byte of dim_index changes the spec's guard hash, and only "
    "the spec's (the seed's drops it, E9.1).",
    covers=("dag.guard_hash",),
    subject=guard_hash,
    mutants=(Mutant.edit("high byte shifted out", "the spec folds dim_index >> 16, not >> 8",
                         guard_hash, "high = shr(dim_index, 8)", "high = shr(dim_index, 16)"),),
)
def guard_high_byte_counts(_subject):
    return [Property("a guard with dim >= 256", _high_dims,
                     strategy=lambda: st.tuples(KINDS, OPS, ARGS, st.integers(256, 2**16 - 1)),
                     examples=200)]
