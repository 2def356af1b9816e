"""Chapter 4: the GPU K2K inbox protocol (ringkernel-cuda-codegen ring_kernel.rs,
k2k_send_envelope and k2k_try_recv_envelope), as an explicit-state machine of SENDERS senders,
each sending MESSAGES messages, and one receiver, over an inbox of CAPACITY slots.

The spec's protocol (a claim-then-publish MPSC ring):
1. claim: a sender takes ticket = head and bumps head, in one atomic step, only while
   head - tail < capacity (the full check);
2. it writes the slot's header (magic and message id), then its payload: two steps;
3. publish: it stores sequence number ticket + 1 in the slot;
4. the receiver waits until the slot of ticket tail carries sequence number tail + 1;
5. it reads the slot (header and payload);
6. only then it frees the slot: tail += 1.

RingKernel, each bug an erratum:
- E4.102: step 1 has no full check (atomicAdd on head), so a sender overwrites unread slots;
- E4.103: the receiver trusts head instead of the sequence number: it takes any slot below
  head whose magic is valid (a stale magic from the previous lap passes) and skips, losing it,
  a slot whose header is not written yet;
- E4.104: the receiver frees the slot (tail += 1) before it reads it.

Invariants: NO_OVERWRITE (a header is never written over a message the receiver has not read)
and NO_TORN_READ (the receiver never reads a slot whose header and payload are of different
messages or not written).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from ...core.errata import NO_ERRATA, SEEDS, erratum
from ...core.machine import Machine

E4_102 = "E4.102"
E4_103 = "E4.103"
E4_104 = "E4.104"
SENDERS = 2
MESSAGES = 2
"""Messages each sender sends."""
CAPACITY = 2
NONE = -1
"""An unwritten header or payload."""
NO_OVERWRITE = "no unread message is overwritten"
NO_TORN_READ = "a reader never sees a half-written slot"
CLAIM, HEADER, PAYLOAD, PUBLISH = "claim", "header", "payload", "publish"
POLL, READ, FREE = "poll", "read", "free"


@dataclass(frozen=True)
class Slot:
    header: int = NONE
    payload: int = NONE
    seq: int = 0
    unread: bool = False
    """A message's header is here and the receiver has not read the slot since."""


@dataclass(frozen=True)
class Sender:
    sent: int = 0
    phase: str = CLAIM
    ticket: int = 0


@dataclass(frozen=True)
class Inbox:
    """The machine's state; `broken` holds the invariants a step has broken."""

    head: int
    tail: int
    slots: tuple[Slot, ...]
    senders: tuple[Sender, ...]
    phase: str = POLL
    ticket: int = 0
    broken: frozenset[str] = frozenset()


def message_id(sender: int, k: int) -> int:
    return sender * MESSAGES + k


def set_slot(s: Inbox, ticket: int, **changes) -> tuple[Slot, ...]:
    i = ticket % len(s.slots)
    return (*s.slots[:i], replace(s.slots[i], **changes), *s.slots[i + 1:])


def slot_of(s: Inbox, ticket: int) -> Slot:
    return s.slots[ticket % len(s.slots)]


def sender_step(s: Inbox, i: int, errata: frozenset[str]) -> Inbox | None:
    """Sender i's next step (steps 1-3), or None while it cannot move."""
    me = s.senders[i]
    if me.sent == MESSAGES:
        return None
    mid = message_id(i, me.sent)
    if me.phase == CLAIM:
        if E4_102 not in errata and s.head - s.tail >= len(s.slots):
            return None
        return with_sender(replace(s, head=s.head + 1), i, replace(me, phase=HEADER,
                                                                   ticket=s.head))
    if me.phase == HEADER:
        broken = s.broken | ({NO_OVERWRITE} if slot_of(s, me.ticket).unread else set())
        return with_sender(replace(s, slots=set_slot(s, me.ticket, header=mid, unread=True),
                                   broken=broken), i, replace(me, phase=PAYLOAD))
    if me.phase == PAYLOAD:
        return with_sender(replace(s, slots=set_slot(s, me.ticket, payload=mid)), i,
                           replace(me, phase=PUBLISH))
    return with_sender(replace(s, slots=set_slot(s, me.ticket, seq=me.ticket + 1)), i,
                       Sender(me.sent + 1))


def with_sender(s: Inbox, i: int, me: Sender) -> Inbox:
    return replace(s, senders=(*s.senders[:i], me, *s.senders[i + 1:]))


def ready(s: Inbox, errata: frozenset[str]) -> bool:
    """Step 4: the slot of ticket tail is published for this lap (RingKernel: head differs
    from tail, E4.103)."""
    if E4_103 in errata:
        return s.head != s.tail
    return slot_of(s, s.tail).seq == s.tail + 1


def receiver_step(s: Inbox, errata: frozenset[str]) -> Inbox | None:
    """The receiver's next step (steps 4-6), or None while it waits."""
    if s.phase == POLL:
        if not ready(s, errata):
            return None
        if E4_103 in errata and slot_of(s, s.tail).header == NONE:
            return replace(s, tail=s.tail + 1)  # an invalid magic: skipped
        if E4_104 in errata:
            return replace(s, tail=s.tail + 1, phase=READ, ticket=s.tail)
        return replace(s, phase=READ, ticket=s.tail)
    if s.phase == READ:
        slot = slot_of(s, s.ticket)
        torn = slot.header == NONE or slot.header != slot.payload
        return replace(s, slots=set_slot(s, s.ticket, unread=False),
                       phase=POLL if E4_104 in errata else FREE,
                       broken=s.broken | ({NO_TORN_READ} if torn else set()))
    return replace(s, tail=s.tail + 1, phase=POLL)


def inbox_machine(errata: frozenset[str] = NO_ERRATA, capacity: int = CAPACITY,
                  senders: int = SENDERS) -> Machine:
    """The protocol with the errata's bugs (none: the spec's)."""
    def steps(s: Inbox) -> Iterator[tuple[str, Inbox]]:
        for i in range(len(s.senders)):
            t = sender_step(s, i, errata)
            me = s.senders[i]
            if t is not None:
                ticket = s.head if me.phase == CLAIM else me.ticket
                yield f"sender {i} {me.phase} (ticket {ticket})", t
        t = receiver_step(s, errata)
        if t is not None:
            yield f"receiver {s.phase} (tail {s.tail})" if s.phase == POLL else \
                f"receiver {s.phase} (ticket {s.ticket})", t

    def done(s: Inbox) -> bool:
        return all(x.sent == MESSAGES for x in s.senders) and s.head == s.tail \
            and s.phase == POLL

    initial = Inbox(0, 0, (Slot(),) * capacity, (Sender(),) * senders)
    return Machine(f"K2K inbox, {senders} senders x {MESSAGES}, capacity {capacity}, errata "
                   f"{sorted(errata) or 'none'}", initial, steps,
                   ((NO_OVERWRITE, lambda s: NO_OVERWRITE not in s.broken),
                    (NO_TORN_READ, lambda s: NO_TORN_READ not in s.broken)), done)


def no_full_check(errata: frozenset[str]) -> Machine:
    """RingKernel's send without the full check (E4.102) and the spec's receive."""
    return inbox_machine(errata & {E4_102})


def head_before_write(errata: frozenset[str]) -> Machine:
    """The spec's send and a receiver that trusts head and the magic (E4.103)."""
    return inbox_machine(errata & {E4_103})


def free_before_read(errata: frozenset[str]) -> Machine:
    """The spec's protocol but for a receiver that frees the slot before reading it (E4.104)."""
    return inbox_machine(errata & {E4_104})


def seed_inbox(errata: frozenset[str]) -> Machine:
    """Every bug the errata turn on at once: RingKernel's protocol under its profile."""
    return inbox_machine(errata & {E4_102, E4_103, E4_104})


_LOCATION = "crates/ringkernel-cuda-codegen/src/ring_kernel.rs "
erratum(
    E4_102, "A GPU K2K send claims a slot without a full check and overwrites unread messages",
    seed=SEEDS["ringkernel"], location=_LOCATION + "k2k_send_envelope",
    ops=(), witness={"machine": "ringkernel.k2k.inbox.no_full_check", "invariant": NO_OVERWRITE},
    flag="model",
    detail="The sender's slot is atomicAdd(head, 1) & mask; tail is never read (the route "
           "carries target_tail 'for checking full' and nothing uses it), so a third message "
           "into a 2-slot inbox lands on the first while it is unread. The spec claims only "
           "while head - tail < capacity; a bounded wait or QueueFull follows. "
           "k2k_delivery.tla's Send checks the queue length, which the GPU code lacks, so its "
           "NoMessageLoss says nothing about the code: chapter 19's model of it, with this "
           "send, loses a message after three sends.",
)
erratum(
    E4_103, "The GPU K2K receiver takes a slot below head before its writer finished",
    seed=SEEDS["ringkernel"], location=_LOCATION + "k2k_try_recv_envelope",
    ops=(), witness={"machine": "ringkernel.k2k.inbox.head_before_write", "invariant":
    NO_TORN_READ},
    flag="model",
    detail="head is bumped when a slot is claimed, before its header and payload are written, "
           "and the receiver only compares head with tail and checks the magic: a slot whose "
           "header is written and payload not yet is read half-written, a stale magic from "
           "the previous lap passes, and a slot whose header is not written yet is skipped "
           "and its message lost. The spec publishes a per-slot sequence number after the "
           "writes and the receiver waits for it.",
)
erratum(
    E4_104, "The GPU K2K receiver frees a slot before it reads it",
    seed=SEEDS["ringkernel"], location=_LOCATION + "k2k_try_recv_envelope",
    ops=(), witness={"machine": "ringkernel.k2k.inbox.free_before_read", "invariant": NO_OVERWRITE},
    flag="model",
    detail="tail += 1 happens before k2k_try_recv_envelope returns the slot's pointer, so even "
           "with a full check a sender may claim the slot again and write over the message "
           "the receiver is about to read. The spec frees the slot after reading it.",
)
