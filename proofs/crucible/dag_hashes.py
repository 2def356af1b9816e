"""Chapters 8 and 9 obligations that pin the DAG's hashes to their documented formulas, built
here from the hash primitives (wymix, fmix64, the FNV prime) and the constants the real code
uses: the content hash's fold order over ops, inputs and scalars, kDimMix, the feedback
signature and the loop-termination hash."""

from __future__ import annotations

import dataclasses

import z3
from hypothesis import strategies as st

from ...spec.core.errata import NO_ERRATA, SEEDS, profile_errata
from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible.content_hash import (
    compute_content_hash,
    dims_fold,
    fold_op,
    mix,
    packed_meta,
    regions,
    trace_ops_from_wire,
)
from ...spec.crucible.hashing import check_kdimmix_index, fmix64, kdimmix, wymix
from ...spec.crucible.merkle_dag import feedback_signature, loopterm_hash
from ...spec.crucible.trace_entry import TraceOp
from ..core.obligation import Property, Query, property_obligation, z3_obligation

M64 = (1 << 64) - 1
CHAIN_SEED = 0x9E3779B97F4A7C15
SCALAR_PRIME = 0x100000001B3
KDIM_MIX = (0x9E3779B97F4A7C15, 0x3C6EF372FE94F82A, 0xDAA66D2C7DDF743F, 0x78DDE6E5FD29F054,
            0x1715609F7C746C69, 0xB54CDA58FBBEE87E, 0x538454127B096493, 0xF1BBCDCBFA53E0A8,
            0x8FF34785799E5CBD, 0x2E2AC13EF8E8D8D2, 0xCC623AF8783354E7, 0x6A99B4B1F77DD0FC,
            0x08D12E6B76C84D11, 0xA708A824F612C926, 0x454021DE755D453B, 0xE3779B97F4A7C150)
"""kDimMix as the real code's table lists it."""


def _kdimmix_entry(i: int) -> None:
    if i < len(KDIM_MIX):
        check_kdimmix_index(i)
        assert kdimmix(i) == KDIM_MIX[i], f"{kdimmix(i):#x}"
        return
    try:
        check_kdimmix_index(i)
    except InvalidInput:
        return
    raise AssertionError(f"index {i} past the table is accepted")


@property_obligation(
    "PO8.20",
    "kdimmix(i) is the real code's kDimMix[i] for i in 0..15, and an index of 16 or more is "
    "rejected.",
    covers=("hash.kdimmix",),
    subject=kdimmix,
    mutants=(Mutant.edit("index not shifted", "kDimMix[i] = i·PHI", kdimmix, "mul(i + 1, PHI)",
                         "mul(i, PHI)"),
             Mutant.edit("one entry too many", "index 16 is accepted", check_kdimmix_index,
                         "index >= KDIMMIX_COUNT", "index > KDIMMIX_COUNT")),
)
def kdimmix_table(_fn):
    return [Property("indices 0..31", _kdimmix_entry, cases=lambda: range(32))]


def _u(x: int, bits: int) -> int:
    return x & ((1 << bits) - 1)


def _mix(h: int, x: int, errata: frozenset[str]) -> int:
    """wymix; in the spec a zero operand is mixed as the chain seed (E8.3: as itself)."""
    return wymix(h, x) if "E8.3" in errata else wymix(h or CHAIN_SEED, x or CHAIN_SEED)


def _input_fold(h: int, m: dict, errata: frozenset[str]) -> int:
    dims = 0
    for d in range(m["ndim"]):
        dims ^= (_u(m["sizes"][d], 64) * KDIM_MIX[d]) & M64
        dims ^= (_u(m["strides"][d], 64) * KDIM_MIX[d + 8]) & M64
    width = 64 if "E8.4" in errata else 8
    packed = _u(m["dtype"], width) | _u(m["device_type"], width) << 8 | \
        _u(m["device_idx"], 8) << 16
    return _mix(h ^ dims, packed & M64, errata)


def content_by_formula(ops: list[TraceOp], errata: frozenset[str]) -> int:
    """The documented chain: from the seed, per op its schema, its inputs in order, then up
    to 5 scalars FNV-style; fmix64 at the end."""
    h = CHAIN_SEED
    for op in ops:
        h = _mix(h, op.schema_hash, errata)
        for m in op.inputs:
            h = _input_fold(h, m, errata)
        scalars = [] if op.scalar_args is None else op.scalar_args[:min(op.num_scalar_args, 5)]
        for s in scalars:
            h = ((h ^ _u(s, 64)) * SCALAR_PRIME) & M64
    return fmix64(h)


CONTENT_PROFILES = {"default": NO_ERRATA, SEEDS["crucible"]: profile_errata(SEEDS["crucible"])}


def _content_is_formula(errata: frozenset[str]):
    def check(region: dict) -> None:
        ops = trace_ops_from_wire(region["ops"])
        got, want = compute_content_hash(ops, errata), content_by_formula(ops, errata)
        assert got == want, f"{got:#x} != formula {want:#x}"

    return check


def _swaps(ops: list[TraceOp]) -> list[list[TraceOp]]:
    """The region with its first two ops swapped, and with each op's first two inputs swapped."""
    out = [[ops[1], ops[0], *ops[2:]]] if len(ops) >= 2 else []
    for i, op in enumerate(ops):
        if len(op.inputs) >= 2:
            inputs = [op.inputs[1], op.inputs[0], *op.inputs[2:]]
            out.append([*ops[:i], dataclasses.replace(op, inputs=inputs), *ops[i + 1:]])
    return out


def _order_matters(region: dict) -> None:
    """Swapping two ops or two inputs changes the hash exactly when the formula says so."""
    ops = trace_ops_from_wire(region["ops"])
    h, want = compute_content_hash(ops), content_by_formula(ops, NO_ERRATA)
    for swapped in _swaps(ops):
        differs = content_by_formula(swapped, NO_ERRATA) != want
        assert (compute_content_hash(swapped) != h) == differs, "the order is not the fold's"


@property_obligation(
    "PO9.20",
    "compute_content_hash folds, from PHI, each op in order: wymix with its schema hash, "
    "then each input in order (sizes and strides weighed by kDimMix and XOR-folded into the "
    "chain, then wymix with dtype | device_type << 8 | device_idx << 16), then up to 5 "
    "scalars as (h ^ s)·FNV prime; fmix64 last; with zero operands mixed as PHI (default) or "
    "as themselves and dtypes sign-extended (the seed's profile).",
    covers=("dag.content_hash",),
    subject=compute_content_hash,
    mutants=(
        Mutant.edit("ops folded in reverse", "the region's ops are folded last to first",
                    compute_content_hash, "for op in ops:", "for op in reversed(ops):"),
        Mutant.edit("inputs folded in reverse", "an op's inputs are folded last to first",
                    fold_op, "for m in op.inputs:", "for m in reversed(op.inputs):"),
        Mutant.edit("device index dropped", "the packed meta leaves out device_idx",
                    packed_meta, 'to_unsigned(m["device_idx"], 8) << 16', "0", occurrence=2),
        Mutant.edit("strides weighed as sizes", "strides use kDimMix[d], not kDimMix[d + 8]",
                    dims_fold, "KDIMMIX[d + MAX_DIMS]", "KDIMMIX[d]"),
        Mutant.edit("scalar multiplied first", "a scalar is XORed after the multiply",
                    fold_op, "mul(h ^ to_unsigned(s, 64), FNV_PRIME)",
                    "mul(h, FNV_PRIME) ^ to_unsigned(s, 64)"),
        Mutant.edit("zero operand kept", "a zero schema hash or packed meta is mixed as 0, "
                    "erasing the chain (E8.3 in the default profile)", mix,
                    "wymix(h or PHI, x or PHI)", "wymix(h or PHI, x)"),
    ),
)
def content_hash_fold(_fn):
    props = [Property(f"regions, profile {name}", _content_is_formula(errata),
                      strategy=regions, examples=60)
             for name, errata in CONTENT_PROFILES.items()]
    edge = [{"ops": []}, {"ops": [{"schema_hash": "0x0"}]},
            {"ops": [{"schema_hash": "0x1"}, {"schema_hash": "0x0"}]}]
    props.append(Property("empty, zero-schema and zero-chain regions",
                          _content_is_formula(NO_ERRATA), cases=lambda: edge))
    props.append(Property("swapping ops or inputs changes the hash", _order_matters,
                          strategy=regions, examples=60))
    return props


FEEDBACK_START = 0x6665656462616B73
TERM_SALT_FACTS = 0x7465726D696E6174
EPS_SALT_FACTS = 0x65707369006C6F6E


def feedback_by_formula(edges: list[tuple[int, int]]) -> int:
    """fmix64 chained from 'feedbaks' over each edge's output << 16 | input, then the count."""
    if not edges:
        return 0
    h = FEEDBACK_START
    for out, inp in edges:
        h = fmix64(h ^ (out << 16 | inp))
    return fmix64(h ^ len(edges))


def _feedback_is_formula(edges: list[tuple[int, int]]) -> None:
    got, want = feedback_signature(edges), feedback_by_formula(edges)
    assert got == want, f"{got:#x} != formula {want:#x}"


_U16 = st.integers(0, 0xFFFF)


@property_obligation(
    "PO9.21",
    "For every list of up to 8 feedback edges of u16 indices, feedback_signature is 0 without "
    "edges, else fmix64 chained from 'feedbaks' over output << 16 | input, edge by edge in "
    "order, then over the count.",
    covers=("dag.feedback_signature",),
    subject=feedback_signature,
    mutants=(Mutant.edit("count not mixed", "the final fmix64 leaves out the edge count",
                         feedback_signature, "fmix64(h ^ len(edges))", "fmix64(h)"),
             Mutant.edit("indices swapped", "input_idx goes to the high half",
                         feedback_signature, "output_idx << 16 | input_idx",
                         "input_idx << 16 | output_idx", occurrence=2)),
)
def feedback_signature_formula(_fn):
    return [Property("edge lists", _feedback_is_formula, examples=300,
                     strategy=lambda: st.lists(st.tuples(_U16, _U16), max_size=8))]


@z3_obligation(
    "PO9.22",
    "For every u8 kind, u32 repeat count and u32 epsilon bits, loopterm_hash is "
    "fmix64((kind | repeat << 8) ^ 'terminat') XOR fmix64(epsilon ^ 'epsi\\0lon').",
    covers=("dag.loopterm_hash",),
    subject=loopterm_hash,
    mutants=(Mutant.edit("repeat shifted by 16", "the repeat count starts at bit 16",
                         loopterm_hash, "repeat_count << 8", "repeat_count << 16"),
             Mutant.edit("one salt", "epsilon is salted like the kind",
                         loopterm_hash, "epsilon_bits ^ EPS_SALT", "epsilon_bits ^ TERM_SALT")),
)
def loopterm_formula(fn):
    kind, repeat, eps = z3.BitVec("kind", 8), z3.BitVec("repeat", 32), z3.BitVec("eps", 32)
    k64, r64, e64 = z3.ZeroExt(56, kind), z3.ZeroExt(32, repeat), z3.ZeroExt(32, eps)
    want = fmix64((k64 | r64 << 8) ^ TERM_SALT_FACTS) ^ fmix64(e64 ^ EPS_SALT_FACTS)
    return [Query("loopterm_hash == formula", fn(k64, r64, e64) != want)]
