"""Chapter 18: RegionCache, the foreground's last 8 activated or diverged regions, searched
most recent first for an alternate that matches where replay diverged."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA
from .replay_region import Guard, ReplayRegion, guard_key

CAP = 8
"""Regions the cache holds. Real code: `RegionCache.h`."""
MASK = CAP - 1
"""CAP - 1. Real code: `RegionCache.h`."""


@dataclass
class RegionCache:
    """Structure of arrays: region, content hash and visible op count per slot; head and
    count. An entry of a region without a plan has num_ops 0, invisible to find_alternate.
    The capacity is 8 (CAP); proofs explore smaller powers of two."""

    capacity: int = CAP
    regions: list[ReplayRegion | None] = field(default_factory=list)
    content_hashes: list[int] = field(default_factory=list)
    num_ops: list[int] = field(default_factory=list)
    head: int = 0
    count: int = 0

    def __post_init__(self) -> None:
        assert self.capacity > 0 and self.capacity & (self.capacity - 1) == 0
        n = self.capacity
        self.regions, self.content_hashes, self.num_ops = [None] * n, [0] * n, [0] * n


def mru(c: RegionCache) -> list[int]:
    """Slot indices, most recently inserted first."""
    return [(c.head - 1 - i) & (c.capacity - 1) for i in range(c.count)]


def find(c: RegionCache, content_hash: int) -> ReplayRegion | None:
    for idx in mru(c):
        if c.content_hashes[idx] == content_hash:
            return c.regions[idx]
    return None


def insert(c: RegionCache, r: ReplayRegion) -> bool:
    """insert(r); whether it was written (False: a region of that content hash is cached)."""
    if find(c, r.content_hash) is not None:  # 1. dedup by content hash
        return False
    idx = c.head & (c.capacity - 1)  # 2. the oldest slot once full (FIFO)
    c.regions[idx], c.content_hashes[idx] = r, r.content_hash
    c.num_ops[idx] = r.num_ops if r.plan is not None else 0
    c.head += 1  # 3
    c.count = min(c.count + 1, c.capacity)
    return True


def notify_plan_ready(c: RegionCache, r: ReplayRegion) -> None:
    """The entry of r (by identity) takes its op count once r has a plan."""
    for idx in mru(c):
        if c.regions[idx] is r:
            c.num_ops[idx] = r.num_ops if r.plan is not None else 0
            return


def find_alternate(c: RegionCache, pos: int, got: Guard, exclude: ReplayRegion | None,
                   errata: frozenset[str] = NO_ERRATA) -> ReplayRegion | None:
    """The most recent entry, other than `exclude`, whose op at pos has the guard `got`."""
    for idx in mru(c):
        r = c.regions[idx]
        if r is exclude or pos >= c.num_ops[idx]:
            continue
        if guard_key(r.ops[pos].guard, errata) == guard_key(got, errata):
            return r
    return None


def unique_hashes(c: RegionCache) -> bool:
    """Invariant: no two live entries share a content hash."""
    live = [c.content_hashes[idx] for idx in mru(c)]
    return len(live) == len(set(live))
