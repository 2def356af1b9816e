"""Chapter 19: RingKernel's host-side K2K broker (ringkernel-core k2k/mod.rs, k2k/tenant.rs).

A broker holds one sub-broker per tenant (tenant 0, UNSPECIFIED, always exists); each has its
endpoints (kernel -> the sending side of a bounded FIFO channel of max_pending messages), its
indirect routes (destination -> next hop) and each kernel's registration audit tag. Config
defaults: max_pending 1024, delivery_timeout 5000 ms (stated, never waited on here), max_hops 8.
K2KMessage::increment_hops has a hard limit of its own, 16, that the broker never calls.

Sending (K2KBroker::send_priority, deliver_in):
1. the sender's tenant: its registration's, or UNSPECIFIED when it is not registered;
2. the destination's tenant: its registration's, or the sender's when it is not registered;
3. different tenants: count a cross-tenant rejection, write a security audit event with the
   caller's audit tag (not yet stamped), and fail with TenantMismatch;
4. quota (TenantRegistry::check_quota; none for UNSPECIFIED): a tenant missing from the
   registry fails (tenant_not_registered); in the current one-second window a tenant that has
   sent max_messages_per_sec messages fails with quota_exceeded and a warning audit event;
   otherwise the message counts against the window, whatever becomes of it;
5. stamp the tenant, and the sender's registration tag when the caller gave none (0, 0);
   the message gets the next id and 0 hops;
6. the destination has an endpoint in the tenant's sub-broker: a closed one is NotFound, a full
   one QueueFull (the message is dropped), else the message is queued: Delivered, receipt kept;
7. else the tenant's route names a next hop: with hops + 1 over max_hops, MaxHopsExceeded;
   if the next hop's endpoint in the same tenant is open and has room, the message is queued
   there with hops + 1: Pending;
8. else NotFound.
A full queue drops the message, and the spec fails the send (queue_full) where RingKernel
returns the receipt as a success (E19.20). A relay (`forward`) hands a queued message back to
step 6 in its own tenant with its id and hop count, so a routing loop ends at max_hops;
RingKernel has no such path: a relay can only send it again, from step 1, as a new message with
0 hops (E19.21). Receiving pops the oldest message: the priority is kept, never used to order.
The receipts map keeps every Delivered receipt (not Pending ones) and never forgets one.
Engagement budgets (track_usage) and HLC timestamps are not modelled. Where RingKernel leaves
it open: a kernel registered again gets a fresh endpoint and the spec treats the old one as
dropped (RingKernel hands the caller a new receiver; the old one, if kept, still holds its
messages); the quota window is the wall clock's second, here a counter moved by `tick`.
`broker_machine` is the same broker as a protocol machine for exhaustive exploration.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ...core.errata import NO_ERRATA
from ...core.machine import Machine

E19_20 = "E19.20"
E19_21 = "E19.21"
UNSPECIFIED_TENANT = 0
DEFAULT_MAX_PENDING = 1024
"""K2KConfig::default max_pending_messages: each endpoint channel's capacity."""
DEFAULT_DELIVERY_TIMEOUT_MS = 5000
DEFAULT_MAX_HOPS = 8
STANDARD_MESSAGES_PER_SEC = 100_000
"""TenantQuota::standard's max_messages_per_sec."""
NO_TAG = (0, 0)
"""AuditTag::unspecified: (org_id, engagement_id)."""


@dataclass(frozen=True)
class K2KMessage:
    id: int
    source: str
    destination: str
    tenant: int
    audit_tag: tuple[int, int]
    priority: int = 0
    hops: int = 0


@dataclass
class K2KEndpoint:
    """One registration's channel, as the kernel that holds its receiving side sees it."""

    kernel: str
    tenant: int
    queue: deque[K2KMessage] = field(default_factory=deque)
    open: bool = True


@dataclass
class TenantInfo:
    """A registered tenant's quota and its message window."""

    max_messages_per_sec: int
    window_start: int
    messages_this_window: int = 0


@dataclass
class SubBroker:
    endpoints: dict[str, K2KEndpoint] = field(default_factory=dict)
    routes: dict[str, str] = field(default_factory=dict)
    audit_tags: dict[str, tuple[int, int]] = field(default_factory=dict)
    messages_delivered: int = 0


@dataclass
class K2KBroker:
    max_pending: int = DEFAULT_MAX_PENDING
    max_hops: int = DEFAULT_MAX_HOPS
    tenants: dict[int, SubBroker] = field(default_factory=lambda: {UNSPECIFIED_TENANT:
                                                                      SubBroker()})
    kernel_tenant: dict[str, int] = field(default_factory=dict)
    held: dict[str, K2KEndpoint] = field(default_factory=dict)
    """Each kernel's latest endpoint: the one its caller holds and receives from."""
    registry: dict[int, TenantInfo] = field(default_factory=dict)
    receipts: list[int] = field(default_factory=list)
    audit: list[dict] = field(default_factory=list)
    now: int = 0
    next_id: int = 1
    messages_delivered: int = 0
    cross_tenant_rejections: int = 0


@dataclass(frozen=True)
class Outcome:
    """A send's answer: a receipt status (or None before one exists) and the error, if any."""

    status: str | None
    error: str | None = None
    message_id: int | None = None
    hops: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None


def sub_broker(b: K2KBroker, tenant: int) -> SubBroker:
    """The tenant's sub-broker, made on first use."""
    return b.tenants.setdefault(tenant, SubBroker())


def register(b: K2KBroker, kernel: str, tenant: int, tag: tuple[int, int]) -> list[int]:
    """register_tenant: a fresh endpoint replaces the kernel's old one (whose messages are
    lost, answered); a move between tenants clears the kernel from the old sub-broker."""
    old_tenant = b.kernel_tenant.get(kernel)
    if old_tenant is not None and old_tenant != tenant:
        old = b.tenants[old_tenant]
        for table in (old.endpoints, old.audit_tags, old.routes):
            table.pop(kernel, None)
    b.kernel_tenant[kernel] = tenant
    ep = K2KEndpoint(kernel, tenant)
    sub = sub_broker(b, tenant)
    sub.endpoints[kernel] = ep
    sub.audit_tags[kernel] = tag
    old_ep = b.held.get(kernel)
    b.held[kernel] = ep
    return [m.id for m in old_ep.queue] if old_ep is not None else []


def add_route(b: K2KBroker, tenant: int, destination: str, next_hop: str) -> None:
    """add_route_in: the tenant's route to `destination` goes through `next_hop` (unchecked:
    step 7 looks the next hop up in that tenant only)."""
    sub_broker(b, tenant).routes[destination] = next_hop


def remove_route(b: K2KBroker, tenant: int, destination: str) -> None:
    """remove_route_in: a tenant without a sub-broker is left without one."""
    if tenant in b.tenants:
        b.tenants[tenant].routes.pop(destination, None)


def unregister(b: K2KBroker, kernel: str) -> None:
    """The kernel leaves its sub-broker (endpoint, tag, route to it); its receiver stays."""
    tenant = b.kernel_tenant.pop(kernel, None)
    if tenant is not None:
        sub = b.tenants[tenant]
        for table in (sub.endpoints, sub.audit_tags, sub.routes):
            table.pop(kernel, None)


def close(b: K2KBroker, kernel: str) -> list[int]:
    """The kernel drops its endpoint: the queued messages are lost, later sends find it closed."""
    ep = b.held.get(kernel)
    if ep is None or not ep.open:
        return []
    lost = [m.id for m in ep.queue]
    ep.queue.clear()
    ep.open = False
    return lost


def register_tenant(b: K2KBroker, tenant: int, max_messages_per_sec: int) -> bool:
    """TenantRegistry::register: False when the tenant is already there."""
    if tenant in b.registry:
        return False
    b.registry[tenant] = TenantInfo(max_messages_per_sec, b.now)
    return True


def check_quota(b: K2KBroker, tenant: int, tag: tuple[int, int]) -> str | None:
    """Step 4: the error, or None; a new second resets the window first."""
    if tenant == UNSPECIFIED_TENANT:
        return None
    info = b.registry.get(tenant)
    if info is None:
        return "tenant_not_registered"
    if b.now != info.window_start:
        info.window_start, info.messages_this_window = b.now, 0
    if info.messages_this_window >= info.max_messages_per_sec:
        b.audit.append({"kind": "resource_limit_exceeded", "level": "warning",
                        "source": "k2k_tenant_registry", "tenant": tenant,
                        "org_id": tag[0], "engagement_id": tag[1]})
        return "quota_exceeded"
    info.messages_this_window += 1
    return None


def enqueue(b: K2KBroker, sub: SubBroker, ep: K2KEndpoint, m: K2KMessage) -> bool:
    """try_send: False on a full queue; a queued message counts as delivered by the broker."""
    if len(ep.queue) >= b.max_pending:
        return False
    ep.queue.append(m)
    sub.messages_delivered += 1
    b.messages_delivered += 1
    return True


def deliver_in(b: K2KBroker, tenant: int, m: K2KMessage,
               errata: frozenset[str] = NO_ERRATA) -> Outcome:
    """Steps 6-8 inside one tenant's sub-broker."""
    sub = sub_broker(b, tenant)
    ep = sub.endpoints.get(m.destination)
    if ep is not None:  # 6
        if not ep.open:
            return Outcome("not_found", None, m.id, m.hops)
        if not enqueue(b, sub, ep, m):
            return Outcome("queue_full", None if E19_20 in errata else "queue_full", m.id, m.hops)
        b.receipts.append(m.id)
        return Outcome("delivered", None, m.id, m.hops)
    next_hop = sub.routes.get(m.destination)
    if next_hop is not None:  # 7
        hops = m.hops + 1
        if hops > b.max_hops:
            return Outcome("max_hops_exceeded", None, m.id, hops)
        relay = sub.endpoints.get(next_hop)
        if relay is not None and relay.open and enqueue(b, sub, relay, replace(m, hops=hops)):
            return Outcome("pending", None, m.id, hops)
    return Outcome("not_found", None, m.id, m.hops)  # 8


def send(b: K2KBroker, source: str, destination: str, priority: int = 0,
         tag: tuple[int, int] = NO_TAG, errata: frozenset[str] = NO_ERRATA) -> Outcome:
    """Steps 1-8."""
    source_tenant = b.kernel_tenant.get(source, UNSPECIFIED_TENANT)  # 1
    dest_tenant = b.kernel_tenant.get(destination, source_tenant)  # 2
    if source_tenant != dest_tenant:  # 3
        b.cross_tenant_rejections += 1
        b.audit.append({"kind": "security_violation", "level": "security",
                        "source": "k2k_broker", "from_tenant": source_tenant,
                        "to_tenant": dest_tenant, "source_kernel": source,
                        "destination_kernel": destination, "org_id": tag[0],
                        "engagement_id": tag[1]})
        return Outcome(None, "tenant_mismatch")
    error = check_quota(b, source_tenant, tag)  # 4
    if error is not None:
        return Outcome(None, error)
    if tag == NO_TAG:  # 5
        tag = sub_broker(b, source_tenant).audit_tags.get(source, NO_TAG)
    m = K2KMessage(b.next_id, source, destination, source_tenant, tag, priority)
    b.next_id += 1
    return deliver_in(b, source_tenant, m, errata)


def receive(b: K2KBroker, kernel: str) -> K2KMessage | None:
    """try_receive on the kernel's endpoint: the oldest message, or None."""
    ep = b.held.get(kernel)
    if ep is None or not ep.queue:
        return None
    return ep.queue.popleft()


def forward(b: K2KBroker, relay: str,
            errata: frozenset[str] = NO_ERRATA) -> tuple[K2KMessage | None, Outcome | None]:
    """A relay takes its oldest message and hands it on toward its destination: the same
    message in its tenant from step 6 (RingKernel, E19.21: a new send from the relay)."""
    m = receive(b, relay)
    if m is None:
        return None, None
    if E19_21 in errata:
        return m, send(b, relay, m.destination, m.priority, m.audit_tag, errata)
    return m, deliver_in(b, m.tenant, m, errata)


# ── the broker as a protocol machine ─────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Snapshot:
    """A broker state (compared by `key`: queues, registrations, ids, the last step's check)."""

    key: tuple
    broker: K2KBroker = field(compare=False, hash=False)


def snapshot(b: K2KBroker, ok: bool = True) -> Snapshot:
    queues = tuple((k, ep.tenant, ep.open, tuple(ep.queue)) for k, ep in sorted(b.held.items()))
    return Snapshot((queues, tuple(sorted(b.kernel_tenant.items())), b.next_id, ok), b)


def outcome_kept(o: Outcome | None, hops_in: int, max_hops: int) -> bool:
    """A relay or send outcome keeps the hop rule: pending adds one hop within the limit,
    max_hops_exceeded only past it."""
    if o is None or o.status not in ("pending", "max_hops_exceeded"):
        return True
    return o.hops == hops_in + 1 and (o.hops > max_hops) == (o.status == "max_hops_exceeded")


def broker_machine(errata: frozenset[str] = NO_ERRATA, max_messages: int = 3) -> Machine:
    """Kernels a, b in tenant 0 and c in tenant 1 (quota 100), queues of 2, max_hops 2; z is
    routed through b in tenant 0 and y through c (another tenant's kernel) in tenant 0. Steps:
    any send among a, b, c, x, y, z while fewer than `max_messages` messages exist, any
    receive or forward, and moving b to tenant 1."""
    b0 = K2KBroker(max_pending=2, max_hops=2)
    register_tenant(b0, 1, 100)
    for kernel, tenant in (("a", 0), ("b", 0), ("c", 1)):
        register(b0, kernel, tenant, NO_TAG)
    add_route(b0, 0, "z", "b")
    add_route(b0, 0, "y", "c")

    def steps(s: Snapshot) -> Iterator[tuple[str, Snapshot]]:
        for src in ("a", "b", "c", "x"):
            for dst in ("a", "b", "c", "y", "z"):
                if s.broker.next_id <= max_messages:
                    b = copy.deepcopy(s.broker)
                    o = send(b, src, dst, errata=errata)
                    yield f"send {src}->{dst}", snapshot(b, outcome_kept(o, 0, b.max_hops))
        for k in ("a", "b", "c"):
            b = copy.deepcopy(s.broker)
            receive(b, k)
            yield f"receive {k}", snapshot(b)
            b = copy.deepcopy(s.broker)
            m, o = forward(b, k, errata)
            yield f"forward {k}", snapshot(b, outcome_kept(o, m.hops if m else 0, b.max_hops))
        b = copy.deepcopy(s.broker)
        register(b, "b", 1, NO_TAG)
        yield "move b to tenant 1", snapshot(b)

    def queued(s: Snapshot) -> list[tuple[K2KEndpoint, K2KMessage]]:
        return [(ep, m) for ep in s.broker.held.values() for m in ep.queue]

    return Machine("k2k broker", snapshot(b0), steps, (
        ("tenant isolation: a queued message is in an endpoint of its own tenant",
         lambda s: all(m.tenant == ep.tenant for ep, m in queued(s))),
        ("no queue holds more than max_pending",
         lambda s: all(len(ep.queue) <= s.broker.max_pending for ep in s.broker.held.values())),
        ("no message is queued twice",
         lambda s: len({m.id for _, m in queued(s)}) == len(queued(s))),
        ("no message carries more than max_hops hops",
         lambda s: all(m.hops <= s.broker.max_hops for _, m in queued(s))),
        ("each step keeps the hop rule", lambda s: s.key[-1])),
        done=lambda s: False)
