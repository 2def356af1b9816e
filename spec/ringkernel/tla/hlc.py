"""Chapter 19: RingKernel's hlc.tla as an explicit-state machine, with the invariants it names
stated so that they check something.

1. Each node holds an HLC (physical, logical); a shared wall clock runs from 0 to MAX_PHYSICAL.
2. AdvanceWall moves the wall clock by one.
3. Tick(n): (wall, 0) when the wall is ahead of the clock, else (physical, logical + 1); the
   event is appended to the emitted events (at most MAX_EVENTS).
4. Receive(s, r, ts), for any emitted event of s and r != s (re-delivery allowed): p is the
   largest of the wall, the local and the received physical; the logical counter is one more
   than the larger logical of the sides whose physical is p, or 0 when the wall wins
   (HlcClock::update). A logical counter above MAX_EVENTS disables the step, as in the .tla.
5. Invariants: the physical part of a clock never moves back, and a stepping node's clock
   strictly grows (both on the last step, which the state keeps); every received timestamp is
   below the receiver's clock (CausalOrdering); each node's events strictly increase.

Bounds: the .cfg's, 2 nodes, MAX_PHYSICAL 3, MAX_EVENTS 4; these keep every rule branch (wall
wins, local wins, message wins, tie) and re-delivery. The .tla's four variables then take
4,581,712 distinct states, 16,697,238 generated counting as TLC does (its report: ~4.6M /
~16.7M); with the last step kept the machine has 10,307,138. Python explores it at
MAX_EVENTS 3 (`hlc_machine(errata, 3)`: 240,184 states, 112,516 once `tla_view` projects the
last step away); at 4, a compiled search over packed states (fast/numba/ringkernel/tla.py)
built from `tick` and `receive` themselves explores the .tla's variables and checks the step
invariants on each step. Under E19.1 (RingKernel's GPU message loop's receive rule)
CausalOrdering breaks in two steps: Tick(n1), then n2 receives (0, 1) and moves only to
(0, 1).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ...core.errata import NO_ERRATA, SEEDS, erratum
from ...core.machine import Machine
from ..hlc.clock import E19_1

NODES = 2
MAX_PHYSICAL = 3
MAX_EVENTS = 4

Ts = tuple[int, int]
"""An HlcTimestamp without node_id: (physical, logical), ordered lexicographically."""


class Step(NamedTuple):
    """The last step's node and its clock before and after (None for AdvanceWall)."""

    node: int
    before: Ts
    after: Ts


class HlcModel(NamedTuple):
    clocks: tuple[Ts, ...]
    wall: int
    events: tuple[tuple[int, Ts], ...]
    received: frozenset[tuple[int, int, Ts]]
    last: Step | None


GPU_RECEIVE = E19_1
"""The GPU message loop's receive rule: neither the message's logical counter nor the wall
is read."""


erratum(
    "E19.64", "hlc.tla's PhysicalTimeMonotonic is a bound (phys <= MaxPhysical), not "
              "monotonicity",
    seed=SEEDS["ringkernel"], location="docs/verification/hlc.tla PhysicalTimeMonotonic",
    ops=(),
    witness={"documents": "the physical component of each node's clock only moves forward",
             "checks": "every clock's physical component is at most MaxPhysical"},
    flag="doc",
    detail="A state predicate cannot say that something only moves forward; it needs the "
           "previous value. The spec keeps the last step's clock before and after and checks "
           "that the physical part never decreases and the stepping clock strictly grows.",
)

erratum(
    "E19.65", "The README's \"24K+ combined\" states and hlc.cfg's \"under 10^4\" disagree "
              "with TLC's 4.6M distinct states for hlc.tla alone",
    seed=SEEDS["ringkernel"], location="README.md; docs/verification/hlc.cfg comment; "
                                       "docs/verification/v1.1-tlc-report.md",
    ops=(),
    witness={"documents": "24K+ states across the six specs; hlc under 10^4",
             "checks": "hlc.tla: 4,581,712 distinct / 16,697,238 generated states at the "
                       ".cfg's bounds (TLC: about 4.6M / 16.7M); the other five 19,360 "
                       "distinct in all"},
    flag="doc",
    detail="The .cfg says each extra event doubles the hlc state space; each multiplies it "
           "by about 40 (2,744, 112,516 and 4,581,712 distinct states at MaxEvents 2, 3 "
           "and 4). The spec's hlc machine, searched compiled at the .cfg's bounds, has exactly "
           "4,581,712 distinct states; the other five models reproduce TLC's distinct "
           "counts exactly (241, 725, 3,452, 12,261, 2,681).",
)


def tick(c: Ts, wall: int) -> Ts:
    """HlcClock::tick: the wall when it is ahead, else one more logical step."""
    return (wall, 0) if wall > c[0] else (c[0], c[1] + 1)


def receive(c: Ts, ts: Ts, wall: int, errata: frozenset[str] = NO_ERRATA) -> Ts:
    """HlcClock::update (the GPU loop's rule under E19.1)."""
    if GPU_RECEIVE in errata:
        p, logical = (ts[0], 0) if ts[0] > c[0] else c
        return (p, logical + 1)
    p = max(wall, c[0], ts[0])
    if p == c[0] == ts[0]:
        return (p, max(c[1], ts[1]) + 1)
    if p == c[0]:
        return (p, c[1] + 1)
    if p == ts[0]:
        return (p, ts[1] + 1)
    return (p, 0)


def _set(clocks: tuple[Ts, ...], n: int, new: Ts) -> tuple[Ts, ...]:
    return tuple(new if i == n else c for i, c in enumerate(clocks))


def hlc_steps(s: HlcModel, errata: frozenset[str], max_events: int = MAX_EVENTS
              ) -> Iterator[tuple[str, HlcModel]]:
    """AdvanceWall, Tick(n) and Receive(s, r, ts) of every emitted event."""
    if s.wall < MAX_PHYSICAL:
        yield "AdvanceWall", s._replace(wall=s.wall + 1, last=None)
    for n, c in enumerate(s.clocks):
        new = tick(c, s.wall)
        if len(s.events) < max_events and new[1] <= max_events:
            yield f"Tick(n{n + 1})", s._replace(clocks=_set(s.clocks, n, new),
                                                events=(*s.events, (n, new)),
                                                last=Step(n, c, new))
    for sender, ts in s.events:
        for r in range(NODES):
            new = receive(s.clocks[r], ts, s.wall, errata)
            if r != sender and new[1] <= max_events:
                yield f"Receive(n{sender + 1}, n{r + 1}, {ts})", s._replace(
                    clocks=_set(s.clocks, r, new), received=s.received | {(sender, r, ts)},
                    last=Step(r, s.clocks[r], new))


def causal_ordering(s: HlcModel) -> bool:
    """Every delivered timestamp is below the receiver's clock."""
    return all(ts < s.clocks[r] for _, r, ts in s.received)


def per_node_monotonic(s: HlcModel) -> bool:
    """Each node's emitted events strictly increase."""
    return all(a[1] < b[1] for i, a in enumerate(s.events) for b in s.events[i + 1:]
               if a[0] == b[0])


def hlc_machine(errata: frozenset[str] = NO_ERRATA, max_events: int = MAX_EVENTS) -> Machine:
    """hlc.tla at 2 nodes, MAX_PHYSICAL 3 and `max_events` (the .cfg's 4 by default)."""
    init = HlcModel(((0, 0),) * NODES, 0, (), frozenset(), None)
    return Machine(
        f"hlc.tla nodes={NODES} max_physical={MAX_PHYSICAL} max_events={max_events}",
        init, lambda s: hlc_steps(s, errata, max_events), (
            ("CausalOrdering", causal_ordering),
            ("PhysicalTimeMonotonic",
             lambda s: s.last is None or s.last.after[0] >= s.last.before[0]),
            ("StepStrictlyAdvances", lambda s: s.last is None or s.last.after > s.last.before),
            ("PerNodeMonotonic", per_node_monotonic),
            ("EventCountsBounded", lambda s: len(s.events) <= max_events),
            ("PhysicalAtMostWall",
             lambda s: all(c[0] <= s.wall for c in s.clocks))),
        done=lambda s: s.wall == MAX_PHYSICAL)


def tla_view(s: HlcModel) -> tuple:
    """The .tla's variables (clocks, wall, events, received), without the last step."""
    return s.clocks, s.wall, s.events, s.received
