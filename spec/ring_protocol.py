"""Chapter 4: the SPSC protocols of TraceRing and MetaLog as atomic-step state machines.

One producer appends, one consumer drains. Each shared-memory access is its own step, in the
order the code performs it:
  producer: 1. compare its head with its cached tail; 2. only when that looks full, reload the
            consumer's tail (acquire) and compare again, dropping the op if still full;
            3. write the slot(s); 4. publish the new head (release).
  consumer: 1. load tail and head (acquire); 2. read each published slot; 3. release the new
            tail.
Ghost fields (absolute indices, what each slot holds, what was published) let the invariants
say: no slot is overwritten before it is consumed, nothing is read before it is published,
items come out in order, 0 <= head - tail <= capacity, and only a finished run has no step.

TraceRing appends one slot per op with 64-bit counters. MetaLog appends n slots at once with
32-bit counters and the check (u32)(h - cached_tail + n) <= capacity; here the counters are
`bits` wide so that small models reach the wrap-around.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from .machine import Machine

BUGS = ("publish before write", "full only past capacity", "release before read",
        "space check ignores n")
"""Plausible bugs a mutant machine may carry; the model-checking obligations catch each."""


@dataclass(frozen=True)
class SpscState:
    """Shared counters, each side's program counter and registers, the slots and the ghosts."""

    head: int = 0
    tail: int = 0
    cached_tail: int = 0
    p_pc: str = "check"
    p_h: int = 0
    op: int = 0
    c_pc: str = "load"
    c_t: int = 0
    c_h: int = 0
    c_j: int = 0
    c_base: int = 0
    slots: tuple = ()
    published: tuple = ()
    consumed: int = 0
    abs_head: int = 0
    abs_tail: int = 0
    error: str | None = None


@dataclass(frozen=True)
class Spsc:
    """A bounded run: op k appends `sizes[k]` slots; counters are `bits` wide."""

    capacity: int
    sizes: tuple[int, ...]
    bits: int = 64
    bug: str | None = None

    def used(self, h: int, t: int) -> int:
        return (h - t) % (1 << self.bits)

    def fits(self, s: SpscState, cached: int) -> bool:
        """The code's space check, in `bits`-wide arithmetic."""
        n = 0 if self.bug == "space check ignores n" else self.sizes[s.op]
        need = (self.used(s.p_h, cached) + n) % (1 << self.bits)
        return need <= self.capacity + (self.bug == "full only past capacity")

    def producer_order(self) -> tuple[str, str]:
        return ("publish", "write") if self.bug == "publish before write" else \
            ("write", "publish")

    def consumer_first(self) -> str:
        """What the consumer does first after loading head: read the slots, or release."""
        return "release" if self.bug == "release before read" else "read"

    # -- producer ------------------------------------------------------------------------

    def producer(self, s: SpscState) -> Iterator[tuple[str, SpscState]]:
        first, second = self.producer_order()
        if s.p_pc == "check":  # 1
            s = replace(s, p_h=s.head)
            yield "P check", replace(s, p_pc=first if self.fits(s, s.cached_tail) else "reload")
        elif s.p_pc == "reload":  # 2
            s = replace(s, cached_tail=s.tail)
            yield "P reload tail", (replace(s, p_pc=first) if self.fits(s, s.tail)
                                    else self.next_op(s))
        elif s.p_pc in ("write", "publish"):  # 3, 4
            s = self.write(s) if s.p_pc == "write" else self.publish(s)
            yield f"P {s.p_pc}", (replace(s, p_pc=second) if s.p_pc == first
                                  else self.next_op(s))

    def write(self, s: SpscState) -> SpscState:
        slots, error = list(s.slots), s.error
        published_first = self.producer_order()[0] == "publish"
        base = s.abs_head - (self.sizes[s.op] if published_first else 0)
        for j in range(self.sizes[s.op]):
            slot = (s.p_h + j) % self.capacity
            held = slots[slot]
            if held is not None and held[0] >= s.abs_tail and error is None:
                error = f"slot {slot} overwritten before item {held[0]} was consumed"
            slots[slot] = (base + j, s.op)
        return replace(s, slots=tuple(slots), error=error)

    def publish(self, s: SpscState) -> SpscState:
        n = self.sizes[s.op]
        return replace(s, head=(s.p_h + n) % (1 << self.bits), abs_head=s.abs_head + n,
                       published=s.published + (s.op,) * n)

    def next_op(self, s: SpscState) -> SpscState:
        return replace(s, op=s.op + 1, p_pc="check" if s.op + 1 < len(self.sizes) else "done")

    # -- consumer ------------------------------------------------------------------------

    def consumer(self, s: SpscState) -> Iterator[tuple[str, SpscState]]:
        first = self.consumer_first()
        count = self.used(s.c_h, s.c_t)
        if s.c_pc == "load" and self.used(s.head, s.tail):  # 1
            yield "C load head", replace(s, c_t=s.tail, c_h=s.head, c_j=0, c_base=s.abs_tail,
                                         c_pc=first)
        elif s.c_pc == "read":  # 2
            s = self.read(s)
            if s.c_j < count:
                yield "C read", s
            else:
                yield "C read", replace(s, c_pc="release" if first == "read" else "load")
        elif s.c_pc == "release":  # 3
            s = replace(s, tail=s.c_h, abs_tail=s.abs_tail + count)
            yield "C release tail", replace(s, c_pc="read" if first == "release" else "load")

    def read(self, s: SpscState) -> SpscState:
        index = s.c_base + s.c_j
        held = s.slots[(s.c_t + s.c_j) % self.capacity]
        error = s.error
        if held is None or held[0] != index:
            error = error or f"item {index} read before it was written and published"
        elif held[1] != s.published[s.consumed]:
            error = error or f"item {index} out of order"
        return replace(s, c_j=s.c_j + 1, consumed=s.consumed + 1, error=error)

    # -- the machine ---------------------------------------------------------------------

    def steps(self, s: SpscState) -> Iterator[tuple[str, SpscState]]:
        if s.error is None:
            yield from self.producer(s)
            yield from self.consumer(s)

    def machine(self, name: str) -> Machine:
        return Machine(
            name=f"{name}: capacity {self.capacity}, appends of {list(self.sizes)}, "
                 f"{self.bits}-bit counters",
            initial=SpscState(slots=(None,) * self.capacity),
            steps=self.steps,
            invariants=(
                ("no overwrite, no early read, in order", lambda s: s.error is None),
                ("0 <= head - tail <= capacity",
                 lambda s: 0 <= s.abs_head - s.abs_tail <= self.capacity
                 and self.used(s.head, s.tail) == s.abs_head - s.abs_tail),
            ),
            done=lambda s: s.p_pc == "done" and s.c_pc == "load" and s.head == s.tail,
        )
