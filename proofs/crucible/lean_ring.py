"""Chapter 4 obligations from the Lean formalization's Ring, MetaLog and Protocol modules, on
the spec's own producer and consumer steps (trace_ring.try_append / drain, meta_log.try_append):
the bulk append's start and count through the u32 wrap, the stale cached tail, and which side
can step in an empty, partial or full ring."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from ...spec.core.registry import Mutant
from ...spec.crucible import meta_log, trace_ring
from ...spec.crucible.types import NONE32
from ..core.obligation import Property, property_obligation

U32 = 1 << 32
CAPACITIES = (1, 2, 4, 8)
HEADS = (0, 5, U32 - 3)
"""Absolute head counters: fresh, small, and three short of the u32 wrap."""


@dataclass(frozen=True)
class LogCase:
    """A MetaLog with `used` slots taken, a cached tail `lag` behind the real one, append n."""

    capacity: int
    head: int
    used: int
    lag: int
    n: int

    def state(self) -> meta_log.MetaLogState:
        tail = (self.head - self.used) % U32
        return meta_log.MetaLogState(self.capacity, self.head, tail, (tail - self.lag) % U32,
                                     slots=[None] * self.capacity)


def log_cases() -> list[LogCase]:
    return [LogCase(c, h, used, lag, n)
            for c, h in product(CAPACITIES, HEADS)
            for used in range(c + 1) for lag in range(c - used + 1) for n in range(c + 2)]


def _check_append(case: LogCase) -> None:
    m = case.state()
    tail, cached = m.tail, m.cached_tail
    start = meta_log.try_append(m, case.n)
    fits = 0 < case.n <= case.capacity - case.used
    assert m.tail == tail, "the producer moved the tail"
    assert m.cached_tail in (cached, tail), "the cached tail is neither kept nor reloaded"
    if fits:
        assert start == case.head, f"start {start}, the old head is {case.head}"
        assert m.head == (case.head + case.n) % U32, "head did not move by n"
        assert (m.head - m.tail) % U32 == case.used + case.n <= case.capacity
    else:
        assert start == NONE32, f"an append of {case.n} into {case.capacity - case.used} free"
        assert m.head == case.head, "a refused append moved the head"


def _check_read_after_write(case: LogCase) -> None:
    m = case.state()
    metas = tuple(("meta", k) for k in range(case.n))
    a = meta_log.Append(case.n, metas)
    while a.pc != "done":
        a = meta_log.append_step(m, a)
    if a.start != NONE32:
        got = [m.slots[(a.start + k) % U32 & (case.capacity - 1)] for k in range(case.n)]
        assert got == list(metas), f"index start + k does not hold the k-th meta: {got}"


def _check_advance_tail(case: LogCase) -> None:
    for k in range(case.used + 1):
        m = case.state()
        meta_log.advance_tail(m, k)
        assert m.tail == (case.head - case.used + k) % U32, "the tail did not move by k"
        assert meta_log.used(m) == case.used - k, f"used {meta_log.used(m)} after releasing {k}"


@property_obligation(
    "PO4.40",
    "MetaLog.try_append through a stale cached tail and the u32 wrap (C = 1..8, every fill, "
    "every lag of the cached tail, n = 0..C+1): an append succeeds exactly when 0 < n <= free "
    "slots by the real tail; it returns the old head and moves the head by n mod 2^32, so "
    "used grows by n and stays <= C; a refused one changes nothing but may reload the cached "
    "tail, which is never ahead of the real tail; the tail is never moved. After an append, "
    "index start + k holds the k-th meta; advance_tail(k) for k <= used moves the tail by k "
    "and leaves used - k.",
    covers=("metalog.simulate",),
    subject=meta_log.try_append,
    mutants=(
        Mutant.edit("no reload", "a stale cached tail is never refreshed",
                    meta_log.append_step, "m.cached_tail = m.tail",
                    "m.cached_tail = m.cached_tail"),
        Mutant.edit("returns new head", "the start is the head after the append",
                    meta_log.append_step, "start=a.h", "start=add(a.h, a.n, m.bits)"),
        Mutant.edit("copy one on", "metas are copied one slot past the start",
                    meta_log.copy_in, "pow2_index(h + j,", "pow2_index(h + j + 1,"),
        Mutant.edit("release one more", "the consumer's release moves the tail one too far",
                    meta_log.advance_tail, "add(m.tail, count,", "add(m.tail, count + 1,"),
        Mutant.edit("strict fit", "used + n < C: the last free slot is never used",
                    meta_log.fits_exact, "+ n <= capacity", "+ n < capacity"),
    ),
)
def metalog_append(subject):
    return [Property("bulk append at every fill, lag and size", _check_append,
                     cases=log_cases),
            Property("index start + k holds the k-th meta", _check_read_after_write,
                     cases=log_cases),
            Property("advance_tail(k) frees exactly k", _check_advance_tail, cases=log_cases)]


@dataclass(frozen=True)
class RingCase:
    capacity: int
    tail: int
    used: int
    lag: int

    def ring(self) -> trace_ring.Ring:
        head = self.tail + self.used
        r = trace_ring.Ring(self.capacity, head, self.tail, self.tail - self.lag)
        for k in range(self.tail, head):
            r.slots[k & (self.capacity - 1)] = ("op", k)
        return r


def ring_cases() -> list[RingCase]:
    return [RingCase(c, t, used, lag) for c in (0, *CAPACITIES) for t in (0, 3, 2 ** 16 - 1)
            for used in range(c + 1) for lag in range(min(c - used, t) + 1)]


def _check_push(case: RingCase) -> None:
    r = case.ring()
    ok = trace_ring.try_append(r, ("op", r.head))
    if case.used < case.capacity:
        assert ok, f"the producer cannot write with {case.used} of {case.capacity} used"
        assert r.head - r.tail == case.used + 1, "a push did not add exactly one"
    else:
        assert not ok and r.head - r.tail == case.capacity, "a push into a full ring"
    assert r.tail - r.cached_tail >= 0, "the cached tail is ahead of the tail"


def _check_pop(case: RingCase) -> None:
    r = case.ring()
    got = trace_ring.drain(r, 1)
    if case.used:
        assert got == [("op", case.tail)], f"popped {got}, the oldest is {case.tail}"
        assert r.head - r.tail == case.used - 1, "a pop did not remove exactly one"
    else:
        assert got == [] and r.tail == case.tail, "a pop from an empty ring"


@property_obligation(
    "PO4.41",
    "TraceRing, from every fill of C = 0..8 at tails 0, 3 and 2^16 - 1 with every stale cached "
    "tail: the producer can push exactly when the ring is not full (even with a stale cached "
    "tail) and a push adds exactly one; the consumer can pop exactly when it is not empty and "
    "a pop takes exactly the oldest item; so some side can always step when C > 0, and "
    "neither can when C = 0.",
    covers=("ring.simulate",),
    subject=trace_ring.try_append,
    mutants=(
        Mutant.edit("full past capacity", "a full ring takes one more op",
                    trace_ring.looks_full, "h - tail >= capacity", "h - tail > capacity"),
        Mutant.edit("drain one short", "count = used - 1: the last item is never popped",
                    trace_ring.drain_step, "min(r.head - t, d.max_count)",
                    "min(r.head - t - 1, d.max_count)"),
    ),
)
def ring_steps(subject):
    return [Property("push from every fill", _check_push, cases=ring_cases),
            Property("pop from every fill", _check_pop, cases=ring_cases)]


def _check_sides(case: RingCase) -> None:
    r = case.ring()
    a = trace_ring.Append(("op", r.head))
    while a.pc != "done":
        tail = r.tail
        a = trace_ring.append_step(r, a)
        assert r.tail == tail, f"the producer's {a.pc} step moved the consumer's tail"
    r = case.ring()
    d = trace_ring.Drain(2)
    while d.pc != "done":
        head, cached = r.head, r.cached_tail
        d = trace_ring.drain_step(r, d)
        assert (r.head, r.cached_tail) == (head, cached), "a consumer step moved producer state"


def _check_log_sides(case: LogCase) -> None:
    m = case.state()
    a = meta_log.Append(case.n)
    while a.pc != "done":
        tail = m.tail
        a = meta_log.append_step(m, a)
        assert m.tail == tail, "a MetaLog producer step moved the consumer's tail"
    m = case.state()
    head, cached = m.head, m.cached_tail
    meta_log.advance_tail(m, case.used)
    assert (m.head, m.cached_tail) == (head, cached), "the consumer moved producer state"


@property_obligation(
    "PO4.42",
    "Each side's atomic steps leave the other side's state alone, from every fill and stale "
    "cached tail: no step of TraceRing's or MetaLog's producer (check, reload, write, publish) "
    "moves the consumer's tail, and no step of the consumer (load, copy, release; MetaLog's "
    "advance_tail) moves the producer's head or cached tail.",
    covers=("ring.simulate", "metalog.simulate"),
    subject=trace_ring.append_step,
    mutants=(
        Mutant.edit("reload backwards", "the reload assigns the cached tail to the tail",
                    trace_ring.append_step, "r.cached_tail = r.tail", "r.tail = r.cached_tail"),
        Mutant.edit("log reload backwards", "MetaLog's reload assigns the tail",
                    meta_log.append_step, "m.cached_tail = m.tail", "m.tail = m.cached_tail"),
    ),
)
def sides_are_separate(subject):
    return [Property("TraceRing steps", _check_sides, cases=ring_cases),
            Property("MetaLog steps", _check_log_sides, cases=log_cases)]
