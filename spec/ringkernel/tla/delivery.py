"""Chapter 19: RingKernel's k2k_delivery.tla as an explicit-state machine, over the inbox the
GPU really has (a ring of QUEUE_CAP slots with free-running head and tail counters).

1. Each message id 1..MAX_MSGS is sent once, from an actor to another.
2. Send(f, t): when head - tail < QUEUE_CAP the message goes into slot head & mask and head
   moves on (accepted); otherwise it is dropped (back-pressure, never accepted).
3. Deliver(a): when head != tail the slot at tail & mask is delivered and tail moves on.
4. Invariants: every accepted message is in its inbox or delivered (NoMessageLoss); per
   (sender, receiver) a message is delivered only after every earlier one (FIFOPerSender); no
   message is delivered twice (the deliveries are counted, so a repeat shows);
   head - tail <= QUEUE_CAP; delivered ones were accepted; dropped ones were not.

Bounds: the .cfg's (2 actors, MAX_MSGS 4, QUEUE_CAP 2). Under E4.102 (the GPU inbox has no
full check) the sender overwrites the oldest unread message and NoMessageLoss breaks after three
sends.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ...core.errata import NO_ERRATA, SEEDS, erratum
from ...core.machine import Machine
from ..k2k.inbox import E4_102

ACTORS = 2
MAX_MSGS = 4
QUEUE_CAP = 2

Msg = tuple[int, int, int]
"""(from, to, id)."""


class Inbox(NamedTuple):
    """K2KInboxHeader's counters and its slots, each (from, id) or None."""

    head: int
    tail: int
    slots: tuple[tuple[int, int] | None, ...]


class K2kModel(NamedTuple):
    inboxes: tuple[Inbox, ...]
    accepted: frozenset[Msg]
    delivered: frozenset[Msg]
    deliveries: int
    dropped: frozenset[Msg]
    next_msg: int


NO_FULL_CHECK = E4_102
"""The GPU inbox's send without a full check."""


erratum(
    "E19.70", "k2k_delivery.tla's NoDuplicateDelivery is trivial: delivered is a set of unique "
              "ids",
    seed=SEEDS["ringkernel"], location="docs/verification/k2k_delivery.tla NoDuplicateDelivery",
    ops=(),
    witness={"documents": "no message is delivered more than once",
             "checks": "no two triples of the delivered set share an id, which fresh ids "
                       "give by construction; a second delivery of a triple leaves the set "
                       "unchanged"},
    flag="doc",
    detail="A set cannot hold a delivery twice, so re-delivering a message is invisible. The "
           "spec counts deliveries and requires the count to equal the set's size.",
)


def contents(q: Inbox) -> tuple[tuple[int, int], ...]:
    """The unread messages, oldest first."""
    return tuple(q.slots[i % QUEUE_CAP] for i in range(q.tail, q.head))  # type: ignore[misc]


def send(q: Inbox, entry: tuple[int, int], errata: frozenset[str] = NO_ERRATA
         ) -> Inbox | None:
    """Claim slot head & mask and write it; None (dropped) when the inbox is full."""
    if q.head - q.tail >= QUEUE_CAP and NO_FULL_CHECK not in errata:
        return None
    slot = q.head % QUEUE_CAP
    return Inbox(q.head + 1, q.tail, tuple(entry if i == slot else e
                                           for i, e in enumerate(q.slots)))


def take(q: Inbox) -> tuple[tuple[int, int], Inbox] | None:
    """The slot at tail & mask and the inbox with tail moved on; None when empty."""
    if q.head == q.tail:
        return None
    return q.slots[q.tail % QUEUE_CAP], q._replace(tail=q.tail + 1)  # type: ignore[return-value]


def _set(qs: tuple[Inbox, ...], a: int, q: Inbox) -> tuple[Inbox, ...]:
    return tuple(q if i == a else x for i, x in enumerate(qs))


def k2k_steps(s: K2kModel, errata: frozenset[str]) -> Iterator[tuple[str, K2kModel]]:
    """Send(f, t) of the next id and Deliver(a)."""
    m = s.next_msg
    for f in range(ACTORS):
        for t in range(ACTORS):
            if f == t or m > MAX_MSGS:
                continue
            q = send(s.inboxes[t], (f, m), errata)
            label = f"Send(a{f + 1}, a{t + 1}, {m})"
            if q is None:
                yield label, s._replace(dropped=s.dropped | {(f, t, m)}, next_msg=m + 1)
            else:
                yield label, s._replace(inboxes=_set(s.inboxes, t, q),
                                        accepted=s.accepted | {(f, t, m)}, next_msg=m + 1)
    for a in range(ACTORS):
        got = take(s.inboxes[a])
        if got is not None:
            (f, msg), q = got
            yield f"Deliver(a{a + 1})", s._replace(
                inboxes=_set(s.inboxes, a, q), delivered=s.delivered | {(f, a, msg)},
                deliveries=s.deliveries + 1)


def no_message_loss(s: K2kModel) -> bool:
    """Every accepted message is unread in its inbox or delivered."""
    return all(m in s.delivered or (m[0], m[2]) in contents(s.inboxes[m[1]])
               for m in s.accepted)


def fifo_per_sender(s: K2kModel) -> bool:
    """A message is delivered only after every earlier accepted one of the same pair."""
    return all(earlier in s.delivered for m in s.delivered for earlier in s.accepted
               if earlier[:2] == m[:2] and earlier[2] < m[2])


def k2k_machine(errata: frozenset[str] = NO_ERRATA) -> Machine:
    """k2k_delivery.tla at 2 actors, MAX_MSGS 4 and QUEUE_CAP 2."""
    empty = Inbox(0, 0, (None,) * QUEUE_CAP)
    init = K2kModel((empty,) * ACTORS, frozenset(), frozenset(), 0, frozenset(), 1)
    return Machine(
        f"k2k_delivery.tla actors={ACTORS} max_msgs={MAX_MSGS} queue_cap={QUEUE_CAP}",
        init, lambda s: k2k_steps(s, errata), (
            ("NoMessageLoss", no_message_loss),
            ("FIFOPerSender", fifo_per_sender),
            ("NoDuplicateDelivery", lambda s: s.deliveries == len(s.delivered)),
            ("QueueBoundOK", lambda s: all(q.head - q.tail <= QUEUE_CAP for q in s.inboxes)),
            ("DeliveredImpliesAccepted", lambda s: s.delivered <= s.accepted),
            ("DropAcceptedDisjoint", lambda s: not s.dropped & s.accepted)),
        done=lambda s: s.next_msg > MAX_MSGS and all(q.head == q.tail for q in s.inboxes))


def tla_view(s: K2kModel) -> tuple:
    """The .tla's variables: each queue's contents, accepted, delivered, dropped, next_msg."""
    return (tuple(contents(q) for q in s.inboxes), s.accepted, s.delivered, s.dropped,
            s.next_msg)
