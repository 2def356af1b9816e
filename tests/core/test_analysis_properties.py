"""The analysis chapters on fixed cases: the errata witnesses of the iteration detector (ch. 7)
and the Merkle DAG (ch. 9), the plan validity checker (ch. 10) and the planner mutants of
PO10.1. The properties over generated inputs are property obligations PO6.70-PO6.72,
PO7.70-PO7.72, PO9.70-PO9.74 and PO10.70-PO10.72 (checked with their mutants by test_prove)."""

from __future__ import annotations

from crucible_spec.proofs.core.patch import edited
from crucible_spec.proofs.crucible.memory_plan import (
    FREES_AT_DEATH,
    LOWEST_SPLIT_KEEPS_START,
    ROUNDS_DOWN,
    SPLIT_KEEPS_START,
)
from crucible_spec.spec.core.errata import NO_ERRATA, SEEDS, profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.dag_ops import diff_op, merkle_op
from crucible_spec.spec.crucible.iteration_detector import E7_1, run_detector
from crucible_spec.spec.crucible.memory_plan import Plan, PlanSlot, compute_memory_plan
from crucible_spec.spec.crucible.merkle_dag import E9_1, E9_2, DagDiffKind, guard_hash
from crucible_spec.spec.crucible.plan_validity import plan_violations

SEED = profile_errata(SEEDS["crucible"])


def test_the_kmp_restart_witness_still_tells_the_seed_from_the_spec():
    w = REGISTRY.errata[E7_1].witness
    stream = [int(h, 16) for h in w["args"]["stream"]]
    spec, _ = run_detector(stream)
    seed, _ = run_detector(stream, SEED)
    assert spec == w["spec"]["boundaries"] and seed == w["seed"]["boundaries"] and spec != seed


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
    split = [S(1024, 0, 0), S(256, 2, 3), S(256, 2, 3)]
    cases = [(FREES_AT_DEATH, [S(256, 0, 1), S(256, 1, 2)], NO_ERRATA),
             (LOWEST_SPLIT_KEEPS_START, split, NO_ERRATA),
             (SPLIT_KEEPS_START, split, SEED),
             (ROUNDS_DOWN, [S(257, 0, 1), S(256, 0, 1)], NO_ERRATA)]
    for m, slots, errata in cases:
        assert plan_violations(slots, compute_memory_plan(slots, errata)) == []
        with edited(m.target, m.old, m.new, m.occurrence):
            plan = compute_memory_plan(slots, errata)
        assert plan_violations(slots, plan), m.name


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


def test_the_guard_witness_still_tells_the_seed_from_the_spec():
    w = REGISTRY.errata[E9_1].witness
    a = w["args"]
    args = (a["kind"], a["op_index"], 0, a["dim_index"])
    assert guard_hash(*args) == int(w["spec"]["out"], 16)
    assert guard_hash(*args, SEED) == int(w["seed"]["out"], 16)
