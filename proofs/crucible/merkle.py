"""Chapter 9 obligations: the Merkle step, the guard hash (E9.1), the branch hash (E9.2) and
the documented packing and folds of guards, branches and loops (PO9.60, PO9.61).

Collisions of fmix64 over 64 free bits are beyond z3 in one query (fmix64's bijectivity is
proved stage by stage in PO8.1), so the collision checks here leave one byte free."""

from __future__ import annotations

import z3

from ...spec.core.registry import Mutant
from ...spec.crucible.hashing import PHI, fmix64
from ...spec.crucible.merkle_dag import (
    E9_1,
    E9_2,
    branch_hash,
    chained,
    guard_hash,
    guard_pack,
    loop_hash,
)
from ..core.obligation import Query, z3_obligation

FORMULA_RLIMIT = 200_000
"""The spec's folds are the documented ones term for term, so z3 proves each equality in a few
thousand units. A wrong fold makes z3 search fmix64 and PHI products for a counterexample,
which it rarely finds in seconds; the same claim on fixed words refutes it at once, so the
symbolic search is cut short."""

SEED_E9_1 = frozenset({E9_1})
SEED_E9_2 = frozenset({E9_2})


def _byte_lane(name: str, shift: int) -> tuple[z3.BitVecRef, z3.BitVecRef]:
    """A free byte, and the 64-bit word holding it at bit `shift` (every other bit 0)."""
    b = z3.BitVec(name, 8)
    return b, z3.ZeroExt(56, b) << shift


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
    mutants=(Mutant.edit("or fold", "fmix64(own | next): owns that differ in next's bits "
                         "merge", chained, "fmix64(own ^ next_merkle)",
                         "fmix64(own | next_merkle)"),
             Mutant.edit("and fold", "fmix64(own & next): owns that differ outside next's "
                         "bits merge", chained, "fmix64(own ^ next_merkle)",
                         "fmix64(own & next_merkle)")),
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


@z3_obligation(
    "PO9.2",
    "Guard hash and erratum E9.1: under the seed (E9.1) two guards with equal kind, op and "
    "argument whose dim_index differ only in the high byte hash equal (a witness); under the "
    "spec such guards never collide, and every guard with dim_index < 256 hashes as in the "
    "seed.",
    covers=("dag.guard_hash", "dag.merkle"),
    subject=guard_hash,
    mutants=(Mutant.edit("high byte shifted by 16", "the spec's high part of dim_index is "
                         "dim_index >> 16, always 0 for a u16", guard_hash,
                         "shr(dim_index, 8)", "shr(dim_index, 16)"),
             Mutant.edit("salt test inverted", "the high byte is folded in when it is 0",
                         guard_hash, "select(high == 0,", "select(high != 0,"),
             Mutant.edit("spec fold always", "the high byte is folded in even under E9.1",
                         guard_hash, "    if E9_1 in errata:\n        return h\n", "")),
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
    mutants=(Mutant.edit("array order always", "the arms are taken in array order in every "
                         "profile", branch_hash, "(arms if E9_2 in errata else sorted(arms))",
                         "arms"),
             Mutant.edit("value order always", "the arms are sorted by value even under E9.2",
                         branch_hash, "(arms if E9_2 in errata else sorted(arms))",
                         "sorted(arms)")),
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
              bh(g, [(5, m1), (3, m2)]) != bh(g, [(3, m2), (5, m1)]), rlimit=FORMULA_RLIMIT),
        Query("spec: the witness branch hashes alike in either order",
              z3.BoolVal(bh(guard, [a, b]) != bh(guard, [b, a]))),
    ]


GUARD_KNOWN = (
    ((0, 0, 0, 0), 0x0), ((1, 17, 0, 0), 0xB41629122FDE5309),
    ((3, 0xFFFFFFFF, 0, 0), 0xBF1C99768220DFF3), ((0, 0x1234, 2, 1), 0x6F79A43D67273F5C),
)
"""Guard.hash of (kind, op_index, arg_index, dim_index) in the real code (dim_index < 256,
where the spec and the seed agree)."""


def _documented_pack(kind, op, arg, dim):
    """The documented Guard packing: kind, then op_index at bit 8, arg_index at 40, dim_index
    at 56."""
    return kind | op << 8 | arg << 40 | dim << 56


@z3_obligation(
    "PO9.60",
    "A guard packs as kind | op_index << 8 | arg_index << 40 | dim_index << 56 for every u8 "
    "kind, u32 op_index, u16 arg_index and u16 dim_index (64 bits: dim_index's high byte "
    "falls off), and Guard.hash gives the real code's answers on 4 known guards, on ints and "
    "on bit-vectors.",
    covers=("dag.guard_hash",),
    subject=(guard_pack, guard_hash),
    mutants=(Mutant.edit("arg_index at bit 32", "arg_index is packed at bit 32, over "
                         "op_index", guard_pack, "shl(arg_index, 40)", "shl(arg_index, 32)"),
             Mutant.edit("dim_index at bit 48", "dim_index is packed at bit 48, over "
                         "arg_index", guard_pack, "shl(dim_index, 56)", "shl(dim_index, 48)")),
)
def guard_pinned(subject):
    pack, gh = subject
    fields = _guard(z3.BitVec("dim", 16))
    queries = [Query("guard_pack == documented packing",
                     pack(*fields) != _documented_pack(*fields))]
    for args, out in GUARD_KNOWN:
        bvs = [z3.BitVecVal(a, 64) for a in args]
        queries.append(Query(f"guard hash of {args} = {out:#x}",
                             z3.Or(z3.BoolVal(gh(*args) != out), gh(*bvs) != out)))
    return queries


LOOP_SALT_DOC = 0x4C4F4F504E4F4445
"""'LOOPNODE', the salt of a loop's body content hash."""
FEEDBACK_SALT_DOC = 0x6665656462616B00
"""'feedbak\\0', the salt of a loop's feedback signature."""


FIXED_WORDS = (0xB41629122FDE5309, 1, 2, 0x39137C04FD9F8B5F, 0x33E872BE85A9798F,
               0x078013F8604FA27C)
"""A guard hash, two arm merkles, a body content hash, a feedback signature and a termination
hash, as concrete words."""


def _differ(a, b):
    """a != b as a z3 formula, for terms or plain ints."""
    return a != b if z3.is_expr(a) or z3.is_expr(b) else z3.BoolVal(a != b)


def _documented_branch(guard, arms):
    """fmix64(guard), then per arm in value order: xor fmix64(target merkle), times PHI."""
    h = fmix64(guard)
    for _, merkle in sorted(arms, key=lambda a: a[0]):
        h = (h ^ fmix64(merkle)) * 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF
    return h


@z3_obligation(
    "PO9.61",
    "A node's own hash is its documented fold, for every guard hash, arm merkle, body content, "
    "feedback signature and termination hash: a branch's is fmix64(guard), then per arm in "
    "value order xor fmix64(target merkle) and multiply by PHI; a loop's is "
    "fmix64(body ^ 'LOOPNODE') ^ fmix64(feedback ^ 'feedbak\\0') ^ termination.",
    covers=("dag.merkle",),
    subject=(branch_hash, loop_hash),
    mutants=(Mutant.edit("multiply before xor", "a branch arm multiplies by PHI, then xors "
                         "its merkle", branch_hash, "mul(h ^ fmix64(merkle), PHI_MUL)",
                         "mul(h, PHI_MUL) ^ fmix64(merkle)"),
             Mutant.edit("guard unmixed", "a branch starts from the raw guard hash",
                         branch_hash, "h = fmix64(guard)", "h = guard"),
             Mutant.edit("salts swapped", "a loop salts its body with 'feedbak\\0' and its "
                         "feedback with 'LOOPNODE'", loop_hash,
                         "fmix64(body_content ^ LOOP_SALT) ^ fmix64(feedback ^ FEEDBACK_SALT)",
                         "fmix64(body_content ^ FEEDBACK_SALT) ^ fmix64(feedback ^ LOOP_SALT)")),
)
def own_hashes_documented(subject):
    bh, lh = subject
    queries = []
    for label, words, budget in (("every word", z3.BitVecs("guard m1 m2 body fb term", 64),
                                  FORMULA_RLIMIT), ("fixed words", FIXED_WORDS, None)):
        g, m1, m2, body, fb, term = words
        arms = [(5, m1), (3, m2), (-1, m1)]
        queries += [
            Query(f"branch, {label}: fmix64(guard), then per arm by value xor fmix64(merkle), "
                  "times PHI", _differ(bh(g, arms), _documented_branch(g, arms)), rlimit=budget),
            Query(f"loop, {label}: salted body and feedback, xor termination",
                  _differ(lh(body, fb, term), fmix64(body ^ LOOP_SALT_DOC) ^
                          fmix64(fb ^ FEEDBACK_SALT_DOC) ^ term), rlimit=budget),
        ]
    return queries
