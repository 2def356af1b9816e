"""Chapter 19: concurrent ticks of one hybrid logical clock, as a machine over every
interleaving of two threads, each ticking twice; each tick reads the wall clock once (5 or 6).

The spec's tick is linearizable: the clock is one word (physical, logical), a packed word
under one compare-and-swap, or a lock.
1. Read the word.
2. Compute tick's result from it (spec/ringkernel/hlc/clock.py, step 2).
3. CAS the word from the value read to the result; on failure go back to 1.
4. Return the result.

RingKernel (E19.5) keeps physical and logical in two atomics:
1. read P; 2. read L; compute tick's result; 3. CAS P from the P read to the new physical (a
failure goes back to 1); 4. store L; 5. return. Two threads that read one (P, L) with wall <= P
both CAS P to P, both succeed, and both return (P, L + 1).

Invariant: no two ticks return one timestamp. `PackedClock` is the spec's clock for real
threads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ...core.errata import NO_ERRATA, SEEDS, erratum
from ...core.machine import Machine
from .clock import HlcTimestamp, tick

E19_5 = "E19.5"
"""RingKernel's tick: a CAS on physical only, then a plain store of logical."""
WALLS = (5, 6)
"""The wall clock a tick may read (the clock starts at (5, 0))."""
TICKS = 2
"""Ticks per thread."""
START, READ_P, READ_L, CAS, STORE, RETURN = range(6)
INVARIANT = "no two ticks return one timestamp"
STEP_NAMES = ("start", "read P", "read L", "CAS P", "store L", "return")
PACKED_NAMES = ("start", "read word", "", "CAS word", "", "return")


@dataclass(frozen=True)
class Ticker:
    """One thread: ticks still to do, where it is, and what it read, computed and issued."""

    left: int
    pc: int = START
    wall: int = 0
    seen: tuple[int, int] = (0, 0)
    new: tuple[int, int] = (0, 0)
    issued: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class ClockWords:
    """The shared clock (physical, logical) and the threads."""

    physical: int
    logical: int
    threads: tuple[Ticker, ...]


def _next(seen: tuple[int, int], wall: int) -> tuple[int, int]:
    """Step 2: the spec's tick of the clock read."""
    c = tick(HlcTimestamp(*seen, 0), wall).clock
    return c.physical, c.logical


def packed_step(s: ClockWords, t: Ticker) -> tuple[ClockWords, Ticker]:
    """One atomic step of the spec's single-word tick (read, CAS, return)."""
    if t.pc == READ_P:
        seen = (s.physical, s.logical)
        return s, replace(t, pc=CAS, seen=seen, new=_next(seen, t.wall))
    if t.pc == CAS:
        if (s.physical, s.logical) == t.seen:
            return replace(s, physical=t.new[0], logical=t.new[1]), replace(t, pc=RETURN)
        return s, replace(t, pc=READ_P)
    return s, replace(t, pc=START, left=t.left - 1, issued=(*t.issued, t.new))


def split_step(s: ClockWords, t: Ticker) -> tuple[ClockWords, Ticker]:
    """One atomic step of RingKernel's two-atomic tick (E19.5)."""
    if t.pc == READ_P:
        return s, replace(t, pc=READ_L, seen=(s.physical, 0))
    if t.pc == READ_L:
        seen = (t.seen[0], s.logical)
        return s, replace(t, pc=CAS, seen=seen, new=_next(seen, t.wall))
    if t.pc == CAS:
        if s.physical == t.seen[0]:
            return replace(s, physical=t.new[0]), replace(t, pc=STORE)
        return s, replace(t, pc=READ_P)
    if t.pc == STORE:
        return replace(s, logical=t.new[1]), replace(t, pc=RETURN)
    return s, replace(t, pc=START, left=t.left - 1, issued=(*t.issued, t.new))


def unique_ticks(s: ClockWords) -> bool:
    issued = [ts for t in s.threads for ts in t.issued]
    return len(issued) == len(set(issued))


def tick_machine(errata: frozenset[str] = NO_ERRATA, threads: int = 2,
                 ticks: int = TICKS) -> Machine:
    """Two threads ticking one clock from (5, 0): the spec's single word, or RingKernel's two
    atomics under E19.5."""
    step = split_step if E19_5 in errata else packed_step
    names = STEP_NAMES if E19_5 in errata else PACKED_NAMES

    def steps(s: ClockWords) -> Iterator[tuple[str, ClockWords]]:
        for i, t in enumerate(s.threads):
            if t.pc == START:
                for wall in WALLS if t.left else ():
                    yield f"T{i} wall={wall}", _with(s, i, replace(t, pc=READ_P, wall=wall))
                continue
            after, moved = step(s, t)
            yield f"T{i} {names[t.pc]}", _with(after, i, moved)

    def done(s: ClockWords) -> bool:
        return all(t.left == 0 and t.pc == START for t in s.threads)

    name = "RingKernel's two-atomic tick" if E19_5 in errata else "single-word tick"
    return Machine(name, ClockWords(5, 0, tuple(Ticker(ticks) for _ in range(threads))), steps,
                   ((INVARIANT, unique_ticks),), done)


def _with(s: ClockWords, i: int, t: Ticker) -> ClockWords:
    return replace(s, threads=(*s.threads[:i], t, *s.threads[i + 1:]))


class PackedClock:
    """The spec's clock for real threads: one word (physical << 64 | logical) changed only by
    compare-and-swap (emulated with a lock), ticked by the spec's rule."""

    def __init__(self, physical: int, logical: int, node_id: int) -> None:
        self.word = physical << 64 | logical
        self.node_id = node_id
        self._cas_lock = threading.Lock()

    def compare_exchange(self, old: int, new: int) -> bool:
        with self._cas_lock:
            if self.word != old:
                return False
            self.word = new
            return True

    def tick(self, wall: int) -> HlcTimestamp:
        """Steps 1-4; a refused tick (logical overflow) raises OverflowError."""
        while True:
            old = self.word
            r = tick(HlcTimestamp(old >> 64, old & (2**64 - 1), self.node_id), wall)
            if r.outcome:
                raise OverflowError("the logical counter is at 2^64 - 1")
            if self.compare_exchange(old, r.clock.physical << 64 | r.clock.logical):
                return r.clock


erratum(
    E19_5, "Two threads can tick one clock to the same timestamp",
    seed=SEEDS["ringkernel"], location="crates/ringkernel-core/src/hlc.rs, HlcClock::tick",
    ops=("hlc.tick",),
    witness={"machine": "ringkernel.hlc.concurrency.tick_machine", "invariant": INVARIANT},
    flag="model",
    detail="physical and logical are two AtomicU64s; tick compares-and-swaps physical only and "
           "then stores logical. Two threads that read (P, L) with a wall clock <= P both swap "
           "P for P, both succeed, and both return (P, L + 1); a reader can also pair a new P "
           "with a stale L (update has the same shape). RingKernel's tests are single-threaded. "
           "The spec's clock is one word under one compare-and-swap (or a lock).",
)
