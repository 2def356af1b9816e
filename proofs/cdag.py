"""Chapter 18 obligations: the Cipher's buffer estimate against the CDAG size formula, and
the op_flags byte every op record carries."""

from __future__ import annotations

import z3

from ..spec.cdag import (
    HEADER_SIZE,
    META_SIZE,
    OP_FIXED,
    PLAN_FIXED,
    REGION_FIXED,
    RESERVED_OP_FLAGS,
    SLOT_SIZE,
)
from ..spec.cipher import estimate_boundary
from ..spec.registry import Mutant
from ..spec.types import pack_op_flags, unpack_op_flags
from .obligation import Query, z3_obligation

SEED_OP_RECORD = 40
"""Bytes per op the code's estimate counts (41 are written: E18.5)."""


def _counts() -> tuple[z3.ArithRef, ...]:
    """A region's ops, metas, scalars, index words and plan slots (all >= 0)."""
    return tuple(z3.Ints("n metas scalars ids slots"))


def _size(plan: bool, n, metas, scalars, ids, slots):
    """The encoded size (§16): header, region fields, optional plan, per-op records."""
    head = HEADER_SIZE + REGION_FIXED + ((PLAN_FIXED + SLOT_SIZE * slots) if plan else 0)
    return head + OP_FIXED * n + META_SIZE * metas + 8 * scalars + 4 * ids


def _estimate(plan: bool, n, metas, scalars, ids, slots):
    """Cipher's estimate_serial_size (§24): 64 + 32 + [64 + 40 slots] + 40 per op + 256."""
    head = 64 + 32 + ((64 + SLOT_SIZE * slots) if plan else 0)
    return head + SEED_OP_RECORD * n + META_SIZE * metas + 8 * scalars + 4 * ids + 256


@z3_obligation(
    "PO18.1", "Cipher's buffer holds a region exactly when num_ops <= estimate_boundary "
              "(299 without a plan, 327 with one), whatever its metas, scalars and slots",
    covers=("cipher.simulate",), subject=estimate_boundary,
    mutants=(Mutant("boundary-300", "the boundary counted one op too many",
                    lambda plan: estimate_boundary(plan) + 1),
             Mutant("plan-ignored", "the plan's extra 28 bytes of headroom left out",
                    lambda plan: estimate_boundary(False))),
)
def cipher_boundary(boundary) -> list[Query]:
    out = []
    for plan in (False, True):
        counts = _counts()
        domain = z3.And(*(c >= 0 for c in counts))
        fits = _estimate(plan, *counts) >= _size(plan, *counts)
        out.append(Query(f"{'with' if plan else 'without'} a plan: fits <=> n <= boundary",
                         z3.And(domain, fits != (counts[0] <= boundary(plan)))))
    return out


def _phase_in_three_bits(inference_mode, is_mutable, phase, torch_function):
    return (phase & 7) << 2 | inference_mode | is_mutable << 1 | torch_function << 4


@z3_obligation(
    "PO18.2", "op_flags round-trips: unpacking a packed byte gives back every field (phase & 3), "
              "packing never sets the reserved bits 5-7, and every byte without them is a "
              "packed one",
    covers=("cdag.encode", "cdag.decode", "trace.build"),
    subject=(pack_op_flags, unpack_op_flags),
    mutants=(Mutant("phase-3-bits", "the phase keeps a third bit, into bit 4",
                    (_phase_in_three_bits, unpack_op_flags)),
             Mutant("phase-shift-3", "the phase is read from bits 3-4",
                    (pack_op_flags,
                     lambda f: (f & 1, f >> 1 & 1, f >> 3 & 3, f >> 4 & 1))),),
)
def op_flags_round_trip(subject) -> list[Query]:
    pack, unpack = subject
    bits = z3.BitVecs("inference mutable torch", 8)
    phase, flags = z3.BitVecs("phase flags", 8)
    one_bit = z3.And(*(z3.ULE(b, 1) for b in bits))
    inference, mutable, torch = bits
    packed = pack(inference, mutable, phase, torch)
    fields = (inference, mutable, phase & 3, torch)
    return [
        Query("unpack(pack(fields)) == fields",
              z3.And(one_bit, z3.Not(z3.And(*(a == b for a, b in
                                               zip(unpack(packed), fields, strict=True)))))),
        Query("pack leaves bits 5-7 clear",
              z3.And(one_bit, packed & RESERVED_OP_FLAGS != 0)),
        Query("pack(unpack(b)) == b for every byte without bits 5-7",
              z3.And(flags & RESERVED_OP_FLAGS == 0, pack(*unpack(flags)) != flags)),
    ]
