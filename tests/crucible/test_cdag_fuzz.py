"""Fuzzing the CDAG readers with mutated encodings (byte flips, truncations, insertions,
changed counts) of the golden files: the obligations PO18.74 and PO18.75 (every input either
decodes to a node that encodes back to the same bytes or is rejected with InvalidInput naming
an offset) over 10,000 and 2,000 cases, and numba against the reference."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crucible_spec.conformance.golden import golden
from crucible_spec.conformance.golden_cdag import BRANCH_80
from crucible_spec.engine import Implementation
from crucible_spec.proofs.core.evidence import check_property
from crucible_spec.proofs.core.obligation import Property
from crucible_spec.proofs.crucible.properties_formats import BRANCH_FUZZ, REGION_FUZZ, mutated
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.cdag import (
    CdagBranch,
    CdagPlan,
    CdagRegion,
    decode_branch,
    decode_region,
    encode_branch,
    encode_region,
)
from crucible_spec.spec.crucible.tensor_meta import TENSOR_META
from crucible_spec.spec.crucible.tensor_slot import TENSOR_SLOT
from crucible_spec.spec.crucible.trace_entry import TraceOp

COUNTS = ("num_ops", "num_inputs", "num_outputs", "num_scalar_args", "num_slots", "num_arms")


def _random_region(rng: random.Random) -> CdagRegion:
    """A small region with every kind of part (seeded, so the pool is fixed)."""
    def meta() -> dict:
        m = TENSOR_META.default_values()
        m["ndim"] = rng.randrange(9)
        m["sizes"] = [rng.randrange(1 << 20) for _ in range(8)]
        m["requires_grad"] = rng.random() < 0.5
        return m

    ops = []
    for _ in range(rng.randrange(1, 4)):
        nin, nout, nsa = rng.randrange(3), rng.randrange(3), rng.randrange(3)
        ops.append(TraceOp(
            schema_hash=rng.getrandbits(64), shape_hash=rng.getrandbits(64),
            inputs=[meta() for _ in range(nin)], outputs=[meta() for _ in range(nout)],
            scalar_args=[rng.getrandbits(63) for _ in range(nsa)] if rng.random() < 0.7
            else None, num_scalar_args=nsa, grad_enabled=rng.random() < 0.5,
            is_mutable=rng.random() < 0.5, training_phase=rng.randrange(4),
            kernel_id=rng.randrange(256),
            input_slot_ids=[rng.getrandbits(32) for _ in range(nin)] if nin else None))
    plan = None
    if rng.random() < 0.6:
        slots = [TENSOR_SLOT.default_values() | {"nbytes": 256 * k, "is_external": k % 2 == 1}
                 for k in range(rng.randrange(3))]
        plan = CdagPlan(pool_bytes=4096, num_external=1, slots=slots)
    return CdagRegion(ops, rng.getrandbits(64), rng.getrandbits(64), ops[0].schema_hash,
                      rng.getrandbits(32), rng.getrandbits(32), plan)


def _pool() -> list[tuple[bytes, list[int]]]:
    """Base files and the offsets of their count fields."""
    rng = random.Random(18)
    regions = [bytes.fromhex(r["hex"]) for r in golden()["cdag"]["regions"]]
    regions += [encode_region(_random_region(rng)) for _ in range(6)]
    out = []
    for data in regions:
        spans: list = []
        encode_region(decode_region(data), spans)
        out.append((data, [at for at, _, name in spans if name.rsplit(".", 1)[-1] in COUNTS]))
    return out


def _branch_pool() -> list[tuple[bytes, list[int]]]:
    guard = decode_branch(bytes.fromhex(BRANCH_80)).guard
    b = encode_branch(CdagBranch(guard, [(-7, 1), (0, 2), (9, 3)], 5, 6))
    return [(bytes.fromhex(BRANCH_80), [44]), (b, [44])]


POOL = _pool()
BRANCHES = _branch_pool()


def _campaign(po: Property, pool: list[tuple[bytes, list[int]]], n: int) -> None:
    """The obligation's check over n mutations of the files of `pool`."""
    found = check_property(replace(po, strategy=lambda: mutated(st.sampled_from(pool)),
                                   examples=n))
    assert found.counterexample is None, found.counterexample


@pytest.mark.slow(seconds=40)
def test_mutated_regions_decode_canonically_or_are_rejected():
    """PO18.74 over 10,000 mutations of the golden and seeded regions."""
    _campaign(REGION_FUZZ, POOL, 10_000)


@pytest.mark.slow
def test_mutated_branches_decode_canonically_or_are_rejected():
    """PO18.75 over 2,000 mutations of the 80-byte golden branch and a 3-arm one."""
    _campaign(BRANCH_FUZZ, BRANCHES, 2_000)


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(mutated(st.sampled_from(POOL)))
def test_numba_gives_the_reference_outcome_on_mutated_regions(data):
    def answer(impl: str):
        try:
            return Implementation(impl).call("cdag.decode", {"hex": data.hex()})
        except SpecError as e:
            return e.code, e.message

    assert answer("numba") == answer("reference")


@settings(max_examples=300, suppress_health_check=list(HealthCheck), deadline=None)
@given(mutated(st.sampled_from(POOL)))
def test_numba_gives_the_seed_reader_outcome_on_mutated_regions(data):
    seed = profile_errata("crucible@8d2680a2")

    def answer(impl: str):
        try:
            return Implementation(impl, seed).call("cdag.decode", {"hex": data.hex()})
        except SpecError as e:
            return e.code, e.message

    assert Implementation("numba", seed).route(REGISTRY.ops["cdag.decode"]).how == "kernel"
    assert answer("numba") == answer("reference")
