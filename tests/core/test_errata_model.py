"""Model errata: the errata check explores the seed's machine for the named invariant's
shortest counterexample and the spec's machine for none."""

from __future__ import annotations

import dataclasses

import pytest

from crucible_spec import load_all
from crucible_spec.spec.core.errata import erratum
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.witness import check

load_all()

MODEL = sorted(e for e, v in REGISTRY.errata.items() if v.flag == "model")


def test_some_errata_are_model_counterexamples():
    assert len(MODEL) >= 1


@pytest.mark.parametrize("eid", MODEL)
def test_each_model_erratum_is_found_by_the_checker(eid):
    verdict = check(REGISTRY.errata[eid])
    assert verdict.startswith("reproduced: ") and verdict != "reproduced: ", verdict


def test_an_invariant_the_seed_keeps_is_not_reproduced():
    e = REGISTRY.errata[MODEL[0]]
    wrong = dataclasses.replace(e, witness={**e.witness, "invariant": "no such invariant"})
    assert check(wrong).startswith("NOT reproduced")


def test_a_model_witness_names_a_machine_and_an_invariant():
    with pytest.raises(ValueError, match="machine, invariant"):
        erratum("E0.999", "t", seed="ringkernel@1.1.0", location="x", ops=(),
                witness={"machine": "ringkernel.hlc.concurrency.tick_machine"}, flag="model",
                detail="d")
