"""Chapter 19: RingKernel's multi_gpu_k2k.tla (actors on two GPUs, messages over NVLink or
through the host) as an explicit-state machine, with a latency bound that bounds something.

1. a1 lives on g1, a2 and a3 on g2 (the .cfg's DefaultActorGpu); g1 and g2 are NVLinked, and
   two GPUs have NVLink when both are in the clique and they differ (so a2 -> a3 goes through
   the host, as in the .tla).
2. Send(f, t) appends (t, id) to f's send queue.
3. RouteP2P(f) moves the head of f's send queue to the (source GPU, target GPU) peer queue when
   the GPUs have NVLink; RouteHost(f) moves it to the host stage (one interconnect crossing,
   device to host) when they do not.
4. P2PHandoff (one NVLink crossing) and HostHandoff (one crossing, host to device) move the
   head of a peer queue or of the host stage into the receiver's inbox; Deliver(a) takes the
   head of a's inbox.
5. Each message carries its sender and the crossings it has made. Invariants: every sent id is
   in exactly one stage or delivered (DeliverySemantics); per (sender, receiver) nothing is
   delivered before an earlier message (FIFO); a message has crossed at most once between
   NVLinked GPUs and at most twice otherwise (BoundedLatency).

Bounds: the .cfg's (2 GPUs, 3 actors, MAX_MSGS 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ...core.errata import SEEDS, erratum
from ...core.machine import Machine

ACTOR_GPU = (0, 1, 1)
NVLINKED = frozenset({0, 1})
GPUS = 2
MAX_MSGS = 3
PAIRS = tuple((a, b) for a in range(GPUS) for b in range(GPUS))


class Entry(NamedTuple):
    """A message in flight: its receiver, id, sender and interconnect crossings so far."""

    to: int
    id: int
    sender: int
    crossings: int


class MultiGpuModel(NamedTuple):
    send_queue: tuple[tuple[Entry, ...], ...]
    p2p: tuple[tuple[Entry, ...], ...]
    host_stage: tuple[Entry, ...]
    recv_queue: tuple[tuple[Entry, ...], ...]
    delivered: frozenset[Entry]
    next_msg: int


erratum(
    "E19.66", "multi_gpu_k2k.tla's BoundedLatency is TRUE",
    seed=SEEDS["ringkernel"], location="docs/verification/multi_gpu_k2k.tla BoundedLatency",
    ops=(),
    witness={"documents": "NVLink actors never pay the host hop",
             "checks": "TRUE (the body's implication has consequent TRUE)"},
    flag="doc",
    detail="The property is left to RouteHost's guard, so a routing bug would pass. Two actors "
           "on the same GPU have no NVLink (HasNVLink needs two GPUs) and their messages go "
           "through the host. The spec carries each message's sender and crossings and bounds "
           "them: one between NVLinked GPUs, two otherwise (PO19.63).",
)


def has_nvlink(a: int, b: int) -> bool:
    """Both GPUs in the NVLink clique, and different."""
    return a in NVLINKED and b in NVLINKED and a != b


def latency_bound(sender: int, to: int) -> int:
    """Crossings allowed: one over NVLink, two through the host."""
    return 1 if has_nvlink(ACTOR_GPU[sender], ACTOR_GPU[to]) else 2


def _set(seqs: tuple, i: int, new: tuple) -> tuple:
    return tuple(new if j == i else x for j, x in enumerate(seqs))


def route_p2p(s: MultiGpuModel, f: int) -> MultiGpuModel | None:
    """The head of f's send queue onto its GPUs' peer queue, when they have NVLink."""
    e = s.send_queue[f][0]
    sg, dg = ACTOR_GPU[f], ACTOR_GPU[e.to]
    if not has_nvlink(sg, dg):
        return None
    p = PAIRS.index((sg, dg))
    return s._replace(p2p=_set(s.p2p, p, (*s.p2p[p], e)),
                      send_queue=_set(s.send_queue, f, s.send_queue[f][1:]))


def route_host(s: MultiGpuModel, f: int) -> MultiGpuModel | None:
    """The head of f's send queue to the host stage (one crossing), when there is no NVLink."""
    e = s.send_queue[f][0]
    if has_nvlink(ACTOR_GPU[f], ACTOR_GPU[e.to]):
        return None
    return s._replace(host_stage=(*s.host_stage, e._replace(crossings=e.crossings + 1)),
                      send_queue=_set(s.send_queue, f, s.send_queue[f][1:]))


def handoff(s: MultiGpuModel, e: Entry) -> tuple[tuple[Entry, ...], ...]:
    """The receiver's inbox with e appended after one more crossing."""
    return _set(s.recv_queue, e.to, (*s.recv_queue[e.to], e._replace(crossings=e.crossings + 1)))


def multi_gpu_steps(s: MultiGpuModel) -> Iterator[tuple[str, MultiGpuModel]]:
    """Send, RouteP2P, RouteHost, P2PHandoff, HostHandoff and Deliver."""
    n = len(ACTOR_GPU)
    m = s.next_msg
    for f in range(n):
        for t in range(n):
            if f != t and m <= MAX_MSGS:
                yield f"Send(a{f + 1}, a{t + 1})", s._replace(
                    send_queue=_set(s.send_queue, f, (*s.send_queue[f], Entry(t, m, f, 0))),
                    next_msg=m + 1)
    for f in range(n):
        if s.send_queue[f]:
            for label, route in (("RouteP2P", route_p2p), ("RouteHost", route_host)):
                moved = route(s, f)
                if moved is not None:
                    yield f"{label}(a{f + 1})", moved
    for p, q in enumerate(s.p2p):
        if q:
            yield f"P2PHandoff{PAIRS[p]}", s._replace(recv_queue=handoff(s, q[0]),
                                                      p2p=_set(s.p2p, p, q[1:]))
    if s.host_stage:
        yield "HostHandoff", s._replace(recv_queue=handoff(s, s.host_stage[0]),
                                        host_stage=s.host_stage[1:])
    for a in range(n):
        if s.recv_queue[a]:
            yield f"Deliver(a{a + 1})", s._replace(
                delivered=s.delivered | {s.recv_queue[a][0]},
                recv_queue=_set(s.recv_queue, a, s.recv_queue[a][1:]))


def in_flight(s: MultiGpuModel) -> list[Entry]:
    """Every message in a stage (send, peer, host, inbox)."""
    return [e for q in (*s.send_queue, *s.p2p, s.host_stage, *s.recv_queue) for e in q]


def delivery_semantics(s: MultiGpuModel) -> bool:
    """Every sent id is in exactly one stage or delivered."""
    ids = sorted(e.id for e in (*in_flight(s), *s.delivered))
    return ids == list(range(1, s.next_msg))


def fifo(s: MultiGpuModel) -> bool:
    """No message is delivered while an earlier one of its (sender, receiver) is in flight."""
    return not any(w.sender == d.sender and w.to == d.to and w.id < d.id
                   for w in in_flight(s) for d in s.delivered)


def bounded_latency(s: MultiGpuModel) -> bool:
    """No message has crossed more often than its pair's bound."""
    return all(e.crossings <= latency_bound(e.sender, e.to)
               for e in (*in_flight(s), *s.delivered))


def multi_gpu_machine() -> Machine:
    """multi_gpu_k2k.tla at 2 NVLinked GPUs, 3 actors and MAX_MSGS 3."""
    n = len(ACTOR_GPU)
    init = MultiGpuModel(((),) * n, ((),) * len(PAIRS), (), ((),) * n, frozenset(), 1)
    return Machine(
        f"multi_gpu_k2k.tla gpus={GPUS} actors={n} max_msgs={MAX_MSGS}", init, multi_gpu_steps, (
            ("DeliverySemantics", delivery_semantics),
            ("FIFOPerPair", fifo),
            ("BoundedLatency", bounded_latency)),
        done=lambda s: s.next_msg > MAX_MSGS and not in_flight(s))


def tla_view(s: MultiGpuModel) -> tuple:
    """The .tla's variables: stage entries as (to, id), inboxes and delivered as ids."""
    return (tuple(tuple(e[:2] for e in q) for q in s.send_queue),
            tuple(tuple(e[:2] for e in q) for q in s.p2p), tuple(e[:2] for e in s.host_stage),
            tuple(tuple(e.id for e in q) for q in s.recv_queue),
            frozenset(e.id for e in s.delivered), s.next_msg)
