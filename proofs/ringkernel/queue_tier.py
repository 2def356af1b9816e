"""Obligation of RingKernel's QueueTier (chapter 4): the smallest tier that holds the
headroom, the product never wrapping (PO4.124)."""

from __future__ import annotations

from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.ringkernel import queue_tier as qt
from ..core.obligation import Property, property_obligation

WORD = 2**64

# ── PO4.124: queue.tier ───────────────────────────────────────────────────────────────────────


def _tiers(case: tuple[int, int]) -> None:
    """The tier is the smallest capacity >= rate * ms // 1000, with upgrade and downgrade."""
    rate, ms = case
    got = qt.tier_op(rate, ms)
    needed = rate * ms // 1000
    caps = {"Small": 256, "Medium": 1024, "Large": 4096, "ExtraLarge": 16384}
    fits = [name for name, c in caps.items() if needed <= c]
    assert got["tier"] == (fits[0] if fits else "ExtraLarge"), (case, got)
    assert got["capacity"] == caps[got["tier"]], got
    order = list(caps)
    i = order.index(got["tier"])
    assert got["upgrade"] == order[min(i + 1, 3)] and got["downgrade"] == order[max(i - 1, 0)]


def _tier_cases() -> list[tuple[int, int]]:
    """Each boundary (needed = capacity and capacity + 1) and products past 2^64."""
    edges = [(c * 1000 + d, 1) for c in (0, 256, 1024, 4096, 16384) for d in (0, 999, 1000)]
    return [*edges, (1 << 62, 4), (1 << 63, 2), (WORD - 1, WORD - 1), (0, WORD - 1),
            (1 << 32, 1 << 32)]


@property_obligation(
    "PO4.124",
    "queue.tier picks the smallest of Small 256, Medium 1024, Large 4096 that holds "
    "rate x headroom_ms // 1000 messages, computed exactly (never wrapping), else "
    "ExtraLarge; upgrade and downgrade stop at the ends.",
    covers=("queue.tier",),
    subject=qt.tier_op,
    mutants=(
        Mutant.edit("strict fit", "a tier must exceed the need", qt.for_throughput,
                    "needed <= cap", "needed < cap"),
        Mutant.edit("wrapping product", "E4.110 always on", qt.needed_capacity,
                    "if E4_110 in errata else product", "if True else product"),
        Mutant.edit("upgrade wraps", "ExtraLarge upgrades to Small", qt.upgrade,
                    "min(tier + 1, len(TIERS) - 1)", "(tier + 1) % len(TIERS)"),
        Mutant.edit("per second", "the headroom is taken in seconds", qt.needed_capacity,
                    "// 1000", "// 1"),
    ),
)
def tier_fits(_subject):
    return [Property("boundaries and huge products", _tiers, cases=_tier_cases),
            Property("generated rates", _tiers, strategy=lambda: st.tuples(
                st.integers(0, WORD - 1), st.integers(0, 5_000)), examples=200)]
