"""Chapter 9 obligations: the Merkle step, the guard hash (E9.1) and the branch hash (E9.2).

Collisions of fmix64 over 64 free bits are beyond z3 in one query (fmix64's bijectivity is
proved stage by stage in PO8.1), so the collision checks here leave one byte free."""

from __future__ import annotations

import z3

from ..spec.errata import NO_ERRATA
from ..spec.hashing import PHI, fmix64
from ..spec.merkle_dag import E9_1, E9_2, branch_hash, chained, guard_hash
from ..spec.registry import Mutant
from .obligation import Query, z3_obligation

SEED_E9_1 = frozenset({E9_1})
SEED_E9_2 = frozenset({E9_2})


def _byte_lane(name: str, shift: int) -> tuple[z3.BitVecRef, z3.BitVecRef]:
    """A free byte, and the 64-bit word holding it at bit `shift` (every other bit 0)."""
    b = z3.BitVec(name, 8)
    return b, z3.ZeroExt(56, b) << shift


def _or_fold(own, next_merkle):
    return own if next_merkle is None else fmix64(own | next_merkle)


def _and_fold(own, next_merkle):
    return own if next_merkle is None else fmix64(own & next_merkle)


@z3_obligation(
    "PO9.1",
    "The Merkle step is injective in a node's own hash: with no continuation the merkle is "
    "the own hash itself (every 64-bit word); with a fixed continuation (PHI) two distinct "
    "own hashes that are zero outside their low byte, or outside their high byte, never give "
    "one merkle. "
    "The step is fmix64(own ^ next), so the full claim is PO8.1 (fmix64 is a bijection) "
    "composed with XOR by the continuation.",
    covers=("dag.merkle",),
    subject=chained,
    mutants=(Mutant("or fold", "fmix64(own | next): owns that differ in next's bits merge",
                    _or_fold),
             Mutant("and fold", "fmix64(own & next): owns that differ outside next's bits "
                    "merge", _and_fold)),
)
def merkle_step_injective(step):
    c = z3.BitVec("c", 64)
    queries = [Query("no continuation: merkle == own", step(c, None) != c)]
    for lane, shift in (("low", 0), ("high", 56)):
        b1, c1 = _byte_lane("b1", shift)
        b2, c2 = _byte_lane("b2", shift)
        queries.append(Query(f"continuation PHI: owns differing in the {lane} byte differ",
                             z3.And(b1 != b2, step(c1, PHI) == step(c2, PHI))))
    return queries


def _guard(dim: z3.BitVecRef) -> tuple:
    """kind, op_index, arg_index (free, in their widths) and `dim`, as 64-bit words."""
    return (z3.ZeroExt(56, z3.BitVec("kind", 8)), z3.ZeroExt(32, z3.BitVec("op_index", 32)),
            z3.ZeroExt(48, z3.BitVec("arg_index", 16)), z3.ZeroExt(48, dim))


def _seed_packing_always(kind, op_index, arg_index, dim_index, errata=NO_ERRATA):
    return guard_hash(kind, op_index, arg_index, dim_index, SEED_E9_1)


def _spec_fold_always(kind, op_index, arg_index, dim_index, errata=NO_ERRATA):
    return guard_hash(kind, op_index, arg_index, dim_index)


@z3_obligation(
    "PO9.2",
    "Guard hash and erratum E9.1: under the seed (E9.1) two guards with equal kind, op and "
    "argument whose dim_index differ only in the high byte hash equal (a witness); under the "
    "spec such guards never collide, and every guard with dim_index < 256 hashes as in the "
    "seed.",
    covers=("dag.guard_hash", "dag.merkle"),
    subject=guard_hash,
    mutants=(Mutant("seed packing always", "the high byte of dim_index is dropped in every "
                    "profile", _seed_packing_always),
             Mutant("spec fold always", "the high byte is folded in even under E9.1",
                    _spec_fold_always)),
)
def guard_high_byte(gh):
    # collisions are stated as h1 ^ h2 == 0: z3 then cancels the shared fmix64 of the packing
    lo, hi1, hi2 = z3.BitVecs("lo hi1 hi2", 8)
    kind, op, arg, d1 = _guard(z3.Concat(hi1, lo))
    d2 = z3.ZeroExt(48, z3.Concat(hi2, lo))
    low = z3.ZeroExt(56, lo)
    return [
        Query("E9.1: the seed's hash ignores the high byte",
              z3.And(hi1 != hi2, gh(kind, op, arg, d1, SEED_E9_1) ^
                     gh(kind, op, arg, d2, SEED_E9_1) == 0), expect="sat"),
        Query("spec: the high byte always changes the hash",
              z3.And(hi1 != hi2, gh(kind, op, arg, d1) ^ gh(kind, op, arg, d2) == 0)),
        Query("spec == seed below dim 256",
              gh(kind, op, arg, low) != gh(kind, op, arg, low, SEED_E9_1)),
    ]


def _value_order_always(guard, arms, errata=NO_ERRATA):
    return branch_hash(guard, arms)


WITNESS_GUARD = (1, 0, 0, 0)
"""The guard of erratum E9.2's witness: kind 1 (SCALAR_VALUE) on op 0."""
WITNESS_ARMS = ((5, 1), (3, 2))
"""Its arms as (value, target merkle): the targets are regions of content 1 and 2."""


@z3_obligation(
    "PO9.3",
    "Branch hash and erratum E9.2: under the seed (E9.2) the erratum's witness branch (guard "
    "kind 1 on op 0; arms 5 -> merkle 1, 3 -> merkle 2) hashes differently with its arms in "
    "the other order (a concrete witness: z3 cannot search fmix64 and the PHI products for "
    "one in seconds); under the spec two arms of distinct values give one hash in either "
    "order, for every guard hash and every pair of arm merkles.",
    covers=("dag.merkle",),
    subject=branch_hash,
    mutants=(Mutant("value order always", "arms are sorted by value even under E9.2",
                    _value_order_always),),
)
def branch_arm_order(bh):
    g, m1, m2 = z3.BitVecs("guard m1 m2", 64)
    guard = guard_hash(*WITNESS_GUARD)
    a, b = WITNESS_ARMS
    return [
        Query("E9.2: the seed's hash depends on the arm order",
              z3.BoolVal(bh(guard, [a, b], SEED_E9_2) != bh(guard, [b, a], SEED_E9_2)),
              expect="sat"),
        Query("spec: either order, one hash",
              bh(g, [(5, m1), (3, m2)]) != bh(g, [(3, m2), (5, m1)])),
    ]
