"""Chapter 4: RingKernel's QueueTier (ringkernel-core queue.rs), as op `queue.tier`.

Four tiers of queue capacity: Small 256, Medium 1024 (the default), Large 4096 and
ExtraLarge 16384. `for_throughput(messages_per_second, headroom_ms)`:
1. needed = messages_per_second * headroom_ms // 1000, the messages that arrive in the
   headroom (exact: the spec's product never wraps; RingKernel's u64 product wraps in its
   release build, E4.110).
2. The smallest tier whose capacity is >= needed; ExtraLarge when none is.
3. upgrade is the next tier up (ExtraLarge stays), downgrade the next one down (Small stays).
"""

from __future__ import annotations

from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.registry import InvalidCase, declare
from ..core.schema import U64, Field, Utf8, record
from ..core.strategies import st

WORD = 1 << 64
TIERS = (("Small", 256), ("Medium", 1024), ("Large", 4096), ("ExtraLarge", 16384))
"""RingKernel's tiers in order, with their capacities."""
E4_110 = "E4.110"


def needed_capacity(messages_per_second: int, headroom_ms: int,
                    errata: frozenset[str] = NO_ERRATA) -> int:
    """Step 1 (E4.110: the product taken mod 2^64)."""
    product = messages_per_second * headroom_ms
    return (product % WORD if E4_110 in errata else product) // 1000


def for_throughput(messages_per_second: int, headroom_ms: int,
                   errata: frozenset[str] = NO_ERRATA) -> int:
    """Step 2: the index of the tier in TIERS."""
    needed = needed_capacity(messages_per_second, headroom_ms, errata)
    return next((i for i, (_, cap) in enumerate(TIERS) if needed <= cap), len(TIERS) - 1)


def upgrade(tier: int) -> int:
    """Step 3, up."""
    return min(tier + 1, len(TIERS) - 1)


def downgrade(tier: int) -> int:
    """Step 3, down."""
    return max(tier - 1, 0)


def tier_op(messages_per_second: int, headroom_ms: int,
            errata: frozenset[str] = NO_ERRATA) -> dict:
    tier = for_throughput(messages_per_second, headroom_ms, errata)
    return {"tier": TIERS[tier][0], "capacity": TIERS[tier][1],
            "upgrade": TIERS[upgrade(tier)][0], "downgrade": TIERS[downgrade(tier)][0]}


def _domain() -> st.SearchStrategy:
    small = st.integers(0, 200_000)
    return st.fixed_dictionaries({
        "messages_per_second": st.one_of(small, st.integers(0, WORD - 1)),
        "headroom_ms": st.one_of(st.integers(0, 2_000), st.integers(0, WORD - 1))})


TIER_NAMES = tuple(name for name, _ in TIERS)

declare(
    "queue.tier", chapter=4,
    summary="RingKernel's QueueTier::for_throughput: the smallest tier (Small 256, Medium "
            "1024, Large 4096, ExtraLarge 16384) that holds the messages of the headroom; its "
            "capacity and the tiers above and below.",
    args=record(messages_per_second=Field(U64, "expected message rate"),
                headroom_ms=Field(U64, "the buffer time wanted, in milliseconds")),
    result=record(tier=Field(Utf8(), f"one of {', '.join(TIER_NAMES)}"),
                  capacity=Field(U64, "the tier's capacity"),
                  upgrade=Field(Utf8(), "the next tier up"),
                  downgrade=Field(Utf8(), "the next tier down")),
    spec=(needed_capacity, for_throughput, upgrade, downgrade), domain=_domain,
    errata=(E4_110,),
    not_applicable={"numba": "one multiplication and three comparisons, once per queue "
                             "created: no loop to compile",
                    "cupy": "one multiplication and three comparisons, once per queue "
                            "created"},
    invalid=(InvalidCase("a negative rate", lambda: st.just(
        {"messages_per_second": -1, "headroom_ms": 100})),
             InvalidCase("a headroom of 2^64", lambda: st.just(
                 {"messages_per_second": 1, "headroom_ms": WORD}))),
    edges=lambda: [
        {"messages_per_second": 2560, "headroom_ms": 100},
        {"messages_per_second": 2570, "headroom_ms": 100},
        {"messages_per_second": 10_000, "headroom_ms": 100},
        {"messages_per_second": 40_969, "headroom_ms": 100},
        {"messages_per_second": 0, "headroom_ms": WORD - 1},
        {"messages_per_second": WORD - 1, "headroom_ms": WORD - 1}],
)

erratum(
    E4_110, "QueueTier::for_throughput multiplies in u64 and wraps: a huge rate picks Small",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/queue.rs "
                                       "QueueTier::for_throughput",
    ops=("queue.tier",),
    witness={"args": {"messages_per_second": 1 << 62, "headroom_ms": 4},
             "spec": {"tier": "ExtraLarge", "capacity": 16384},
             "seed": {"tier": "Small", "capacity": 256}},
    also=({"op": "queue.tier", "args": {"messages_per_second": 1 << 63, "headroom_ms": 2},
           "spec": {"tier": "ExtraLarge"}, "seed": {"tier": "Small", "downgrade": "Small"}},),
    flag="result",
    detail="messages_per_second * target_headroom_ms is a plain u64 product: a debug build "
           "panics on overflow and the release build keeps it mod 2^64, so 2^62 messages a "
           "second over 4 ms gives 0 messages needed and the Small tier (256). The spec's "
           "product is exact, so the largest rates pick ExtraLarge.",
)
