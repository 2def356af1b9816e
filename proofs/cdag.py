"""Chapter 18 obligations: the Cipher's buffer estimate against the CDAG size formula."""

from __future__ import annotations

import z3

from ..spec.cdag import HEADER_SIZE, META_SIZE, OP_FIXED, PLAN_FIXED, REGION_FIXED, SLOT_SIZE
from ..spec.cipher import estimate_boundary
from ..spec.registry import Mutant
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
