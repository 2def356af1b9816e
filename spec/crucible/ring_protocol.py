"""Chapter 4: the SPSC protocols of TraceRing and MetaLog as machines whose atomic steps are
the spec's own.

One producer appends, one consumer drains. The producer runs `append_step` of trace_ring or
meta_log, one shared-memory access per step (check the cached tail, reload the tail, write the
slots, publish head). The TraceRing consumer runs trace_ring's `drain_step`; the MetaLog
consumer (the background thread reading the metas of drained ops) is `read_step` below, written
with meta_log's counter functions. Every decision (the space check, the slot index, the drain
split, head and tail arithmetic) is therefore the spec's, and a bug planted there changes what
is explored.

Ghost fields (what was published, how many items were read and released) let the invariants
say: no slot is overwritten before it is consumed, nothing is read before it is published,
items come out in order, 0 <= head - tail <= capacity, and only a finished run has no step.
MetaLog counters are `bits` wide so that small models reach the wrap-around.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..core.bits import pow2_index
from ..core.errata import NO_ERRATA
from ..core.machine import Machine
from . import meta_log, trace_ring


@dataclass(frozen=True)
class SpscState:
    """Shared counters and slots, each side's step in progress, and the ghosts."""

    head: int
    tail: int
    cached_tail: int
    slots: tuple
    op: int = 0
    producer: Any = None
    consumer: Any = None
    published: tuple = ()
    read: int = 0
    released: int = 0
    error: str | None = None


@dataclass(frozen=True)
class Read:
    """A MetaLog consumer's read in progress: its next step, the tail and count it read,
    the metas copied."""

    pc: str = "load"
    t: int = 0
    count: int = 0
    items: tuple = ()


def metas_at(m: meta_log.MetaLogState, t: int, count: int) -> tuple:
    """The metas of indices t, t + 1, ..., t + count - 1, from their slots."""
    return tuple(m.slots[pow2_index(t + j, m.capacity)] for j in range(count))


def read_step(m: meta_log.MetaLogState, r: Read) -> Read:
    """1. read tail and head (acquire): every published meta; 2. copy them from their slots;
    3. release them (advance_tail)."""
    if r.pc == "load":
        return replace(r, t=m.tail, count=meta_log.used(m), pc="copy")
    if r.pc == "copy":
        r = replace(r, items=metas_at(m, r.t, r.count))
        return replace(r, pc="release")
    meta_log.advance_tail(m, r.count)
    return replace(r, pc="done")


@dataclass(frozen=True)
class Spsc:
    """A bounded run over one buffer: `thaw` makes the spec's object from a state's shared
    part; `start(k)` is op k's append; `append(obj, a)` and `drain(obj, d)` are the spec's
    steps; `items(a)` what an append publishes; counters wrap at 2^bits."""

    name: str
    capacity: int
    ops: int
    thaw: Callable[[SpscState], Any]
    start: Callable[[int], Any]
    append: Callable[[Any, Any], Any]
    items: Callable[[Any], tuple]
    new_drain: Callable[[], Any]
    drain: Callable[[Any, Any], Any]
    bits: int = 64
    notes: tuple[str, ...] = ()

    def used(self, s: SpscState) -> int:
        return (s.head - s.tail) % (1 << self.bits)

    def run(self, s: SpscState, step: Callable[[Any, Any], Any], pending: Any
            ) -> tuple[Any, Any, str | None]:
        """Run one spec step on a copy of the shared state: (step state, object, error)."""
        obj = self.thaw(s)
        try:
            return step(obj, pending), obj, None
        except Exception as e:  # a spec step that fails is a violation
            return pending, obj, f"{pending.pc} raised {type(e).__name__}: {e}"

    def shared(self, s: SpscState, obj: Any) -> SpscState:
        return replace(s, head=obj.head, tail=obj.tail, cached_tail=obj.cached_tail,
                       slots=tuple(obj.slots))

    # -- producer ------------------------------------------------------------------------

    def producer(self, s: SpscState) -> Iterator[tuple[str, SpscState]]:
        if s.producer is None and s.op == self.ops:
            return
        a = s.producer if s.producer is not None else self.start(s.op)
        after, obj, error = self.run(s, self.append, a)
        t = self.shared(s, obj)
        error = error or self.overwritten(s, t)
        if t.head != s.head:
            t = replace(t, published=s.published + self.items(a))
        if after.pc == "done":
            t = replace(t, op=s.op + 1, producer=None)
        else:
            t = replace(t, producer=after)
        yield f"P op {s.op} {a.pc}", replace(t, error=error)

    def overwritten(self, s: SpscState, t: SpscState) -> str | None:
        """A slot that held a published item the consumer has not released was changed."""
        pending = s.published[s.released:]
        for slot, (held, now) in enumerate(zip(s.slots, t.slots, strict=True)):
            if held != now and held in pending:
                return f"slot {slot} overwritten before item {held} was consumed"
        return None

    # -- consumer ------------------------------------------------------------------------

    def consumer(self, s: SpscState) -> Iterator[tuple[str, SpscState]]:
        d = s.consumer if s.consumer is not None else self.new_drain()
        after, obj, error = self.run(s, self.drain, d)
        if s.consumer is None and error is None and after.count == 0:
            return  # polling an empty buffer changes nothing: the consumer waits
        t = replace(self.shared(s, obj), consumer=None if after.pc == "done" else after)
        if after.items != d.items:
            expected = s.published[s.read:s.read + after.count]
            if after.items != expected:
                error = error or f"copied {list(after.items)} where {list(expected)} " \
                                 f"were published (read early or out of order)"
            t = replace(t, read=s.read + after.count)
        if t.tail != s.tail:
            t = replace(t, released=s.released + d.count)
        yield f"C {d.pc}", replace(t, error=error)

    # -- the machine ---------------------------------------------------------------------

    def steps(self, s: SpscState) -> Iterator[tuple[str, SpscState]]:
        if s.error is None:
            yield from self.producer(s)
            yield from self.consumer(s)

    def bounded(self, s: SpscState) -> bool:
        """0 <= head - tail <= capacity, and head - tail counts the items in between."""
        pending = len(s.published) - s.released
        return 0 <= pending <= self.capacity and self.used(s) == pending

    def done(self, s: SpscState) -> bool:
        return s.op == self.ops and s.producer is None and s.consumer is None and \
            s.head == s.tail and s.released == len(s.published)

    def machine(self) -> Machine:
        return Machine(
            name=", ".join((self.name, f"capacity {self.capacity}", *self.notes)),
            initial=SpscState(0, 0, 0, (None,) * self.capacity),
            steps=self.steps,
            invariants=(("no overwrite, no early read, in order", lambda s: s.error is None),
                        ("0 <= head - tail <= capacity", self.bounded)),
            done=self.done,
        )


def trace_ring_model(capacity: int, ops: int, max_count: int) -> Spsc:
    """TraceRing: op k appends item k; the consumer drains up to `max_count` at a time."""
    return Spsc(
        "TraceRing", capacity, ops,
        thaw=lambda s: trace_ring.Ring(capacity, s.head, s.tail, s.cached_tail, list(s.slots)),
        start=trace_ring.Append, append=trace_ring.append_step, items=lambda a: (a.item,),
        new_drain=lambda: trace_ring.Drain(max_count), drain=trace_ring.drain_step,
        notes=(f"{ops} appends", f"drains of up to {max_count}"))


def meta_log_model(capacity: int, sizes: tuple[int, ...], bits: int,
                   errata: frozenset[str] = NO_ERRATA) -> Spsc:
    """MetaLog: op k appends sizes[k] metas (k, j) at once with `bits`-wide counters, under
    the space check of the profile `errata`; the consumer reads everything published."""
    return Spsc(
        "MetaLog", capacity, len(sizes),
        thaw=lambda s: meta_log.MetaLogState(capacity, s.head, s.tail, s.cached_tail, bits,
                                             list(s.slots)),
        start=lambda k: meta_log.Append(sizes[k], tuple((k, j) for j in range(sizes[k]))),
        append=lambda m, a: meta_log.append_step(m, a, errata), items=lambda a: a.metas,
        new_drain=Read, drain=read_step, bits=bits,
        notes=(f"appends of {list(sizes)}", f"{bits}-bit counters",
               f"errata {sorted(errata)}" if errata else "the spec's check"))
