"""Chapter 18 obligations: the Cipher's buffer estimate against the encoder's real output,
and the op_flags byte every op record carries."""

from __future__ import annotations

from collections.abc import Iterator

import z3

from ...spec.core.registry import Mutant
from ...spec.crucible.cdag import (
    RESERVED_OP_FLAGS,
    CdagPlan,
    CdagRegion,
    serial_estimate,
)
from ...spec.crucible.cipher import E18_5, Cipher, estimate_boundary
from ...spec.crucible.tensor_meta import TENSOR_META
from ...spec.crucible.tensor_slot import TENSOR_SLOT
from ...spec.crucible.trace_entry import TraceOp
from ...spec.crucible.types import pack_op_flags, unpack_op_flags
from ..core.obligation import Property, Query, property_obligation, z3_obligation

META = TENSOR_META.unpack(bytes(TENSOR_META.size))
SLOT = TENSOR_SLOT.unpack(bytes(TENSOR_SLOT.size))
OP_COUNTS = (0, 1, 2, 298, 299, 300, 301, 326, 327, 328, 329)
"""Region sizes around both boundaries the erratum names (299/300, 327/328)."""


def _op(k: int, shape: int) -> TraceOp:
    """Op k of a region in one of three body shapes: bare; k % 3 inputs, k % 2 outputs and
    k % 4 null scalars; or 2 inputs, 1 output, 5 scalars and every index array."""
    if shape == 0:
        return TraceOp(schema_hash=k + 1)
    if shape == 1:
        return TraceOp(schema_hash=k + 1, inputs=[META] * (k % 3), outputs=[META] * (k % 2),
                       num_scalar_args=k % 4)
    return TraceOp(schema_hash=k + 1, inputs=[META] * 2, outputs=[META],
                   scalar_args=[k, -k, 7, 0, 1], num_scalar_args=5,
                   input_trace_indices=[k, k + 1], input_slot_ids=[1, 2], output_slot_ids=[3])


def regions(counts: tuple[int, ...] = OP_COUNTS) -> Iterator[CdagRegion]:
    """Regions of each op count, each body shape, without a plan and with plans of 0 and 3
    slots."""
    plans = (None, CdagPlan(), CdagPlan(pool_bytes=4096, slots=[SLOT] * 3))
    for n in counts:
        for shape in range(3):
            for plan in plans:
                yield CdagRegion([_op(k, shape) for k in range(n)], content_hash=0x1234,
                                 plan=plan)


def _stores_up_to_the_boundary(region: CdagRegion) -> None:
    has_plan = region.plan is not None
    stored = Cipher.open({}).store(region, frozenset({E18_5})) != 0
    assert stored == (len(region.ops) <= estimate_boundary(has_plan)), \
        f"{len(region.ops)} ops, plan {has_plan}: stored {stored}, " \
        f"boundary {estimate_boundary(has_plan)}"


@property_obligation(
    "PO18.1", "Under the code's buffer (E18.5) Cipher.store writes a region exactly when "
              "num_ops <= estimate_boundary (299 without a plan, 327 with one), whatever its "
              "metas, scalars, index arrays and plan slots (the encoder's real output against "
              "serial_estimate).",
    covers=("cipher.simulate",), subject=estimate_boundary,
    mutants=(
        Mutant.edit("41 bytes per op", "the estimate counts the op_flags byte (the boundary "
                    "left at 299)", serial_estimate, "size += 40 +", "size += 41 +"),
        Mutant.edit("boundary-300", "the boundary counted one op too many", estimate_boundary,
                    "- 21", "- 20"),
        Mutant.edit("plan-ignored", "the plan's extra 28 bytes of headroom left out",
                    estimate_boundary, "(64 - 36 if has_plan else 0)", "0"),
        Mutant.edit("full buffer overflows", "a region of exactly the estimate is refused",
                    Cipher.store, "len(data) > serial_estimate(region)",
                    "len(data) >= serial_estimate(region)"),
        Mutant.edit("plan header as written", "the estimate's plan header counts 36 bytes",
                    serial_estimate, "size += 64 + SLOT_SIZE", "size += 36 + SLOT_SIZE"),
    ),
)
def cipher_boundary(_subject) -> list[Property]:
    return [Property("store succeeds exactly up to the boundary", _stores_up_to_the_boundary,
                     cases=regions)]


@z3_obligation(
    "PO18.2", "op_flags round-trips: unpacking a packed byte gives back every field (phase & 3), "
              "packing never sets the reserved bits 5-7, and every byte without them is a "
              "packed one",
    covers=("cdag.encode", "cdag.decode", "trace.build"),
    subject=(pack_op_flags, unpack_op_flags),
    mutants=(Mutant.edit("phase-3-bits", "the phase keeps a third bit, into bit 4",
                         pack_op_flags, "(phase & 3)", "(phase & 7)"),
             Mutant.edit("phase-shift-3", "the phase is read from bits 3-4", unpack_op_flags,
                         "flags >> OP_FLAG_PHASE_SHIFT & 3", "flags >> 3 & 3")),
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
