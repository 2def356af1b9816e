"""Chapter 19 obligations of the host K2K broker: what k2k.simulate answers over generated
step sequences agrees with a shadow of the registrations and routes kept from the steps alone
(tenant isolation, the tenant check and its audit event, each message at most once, FIFO per
sender and receiver, the hop limit, bounded queues, and where a receipt says the message is);
the quota; and every interleaving of a small broker explored."""

from __future__ import annotations

from collections import defaultdict

from ...spec.core.registry import Mutant
from ...spec.ringkernel.k2k import broker as kb
from ...spec.ringkernel.k2k.ops import domain, edges, simulate
from ..core.obligation import Property, model_obligation, property_obligation


class Shadow:
    """Registrations and routes as the steps set them, and where each message was seen."""

    def __init__(self, max_hops: int) -> None:
        self.max_hops = max_hops
        self.tenant_of: dict[str, int] = {}
        self.endpoint_tenant: dict[str, int] = {}
        self.incarnation: dict[str, int] = defaultdict(int)
        self.routes: dict[tuple[int, str], str] = {}
        self.seen: dict[int, list[tuple[str, int]]] = defaultdict(list)
        """message id -> (kernel, incarnation) of each pop, queue entry or loss."""
        self.taken: dict[tuple[str, int], list[int]] = defaultdict(list)
        """(kernel, incarnation) -> the ids that came out of it (taken, left or lost), in order."""
        self.put: dict[tuple[str, int], list[int]] = defaultdict(list)
        """(kernel, incarnation) -> the ids its receipts put in, in order."""

    def step(self, op: str, s: dict, answer: dict) -> None:
        k = s.get("kernel")
        for lost in answer.get("dropped", []) if op in ("register", "close") else []:
            self.seen[lost].append((k, self.incarnation[k]))
            self.taken[(k, self.incarnation[k])].append(lost)
        if op == "register":
            t = s.get("tenant", 0)
            old = self.tenant_of.get(k)
            if old is not None and old != t:
                self.routes.pop((old, k), None)
            self.tenant_of[k] = self.endpoint_tenant[k] = t
            self.incarnation[k] += 1
        elif op == "unregister" and k in self.tenant_of:
            self.routes.pop((self.tenant_of.pop(k), k), None)
        elif op == "route":
            self.routes[(s.get("tenant", 0), s["destination"])] = s["next_hop"]
        elif op == "unroute":
            self.routes.pop((s.get("tenant", 0), s["destination"]), None)

    def popped(self, kernel: str, m: dict) -> None:
        assert m["tenant"] == self.endpoint_tenant[kernel], ("isolation", kernel, m)
        where = (kernel, self.incarnation[kernel])
        assert m["hops"] <= self.max_hops, ("hop limit", m)
        self.seen[m["id"]].append(where)
        self.taken[where].append(m["id"])


def _check_outcome(sh: Shadow, o: dict, source: str | None, destination: str, hops_in: int,
                   tenant: int, max_hops: int, made: dict[int, list]) -> None:
    """What a send or relay outcome claims, checked against the shadow (sends from `source`;
    a relay has none and keeps the message's tenant)."""
    if source is not None:
        st = sh.tenant_of.get(source, kb.UNSPECIFIED_TENANT)
        mismatch = st != sh.tenant_of.get(destination, st)
        assert (o["error"] == "tenant_mismatch") == mismatch, ("tenant check", o)
        tenant = st
    assert o["ok"] == (o["error"] is None) and (o["status"] == "queue_full") == (
        o["error"] == "queue_full" or o["status"] == "queue_full"), o
    if o["status"] is None:
        return
    if o["status"] == "max_hops_exceeded":
        assert hops_in + 1 > max_hops and o["hops"] == hops_in + 1, ("hop limit", o)
    if o["status"] == "pending":
        assert o["hops"] == hops_in + 1 <= max_hops, ("hop limit", o)
        assert (tenant, destination) in sh.routes, ("no route", o)
        place = sh.routes[(tenant, destination)]
    elif o["status"] == "delivered":
        assert o["hops"] == hops_in, o
        place = destination
    else:
        return
    assert sh.tenant_of.get(place) == tenant, ("isolation", place, o)
    made[o["message_id"]].append((place, sh.incarnation[place]))
    sh.put[(place, sh.incarnation[place])].append(o["message_id"])


def _holds(args: dict) -> None:
    out = simulate(args["max_pending"], args["delivery_timeout_ms"], args["max_hops"],
                   args["steps"])
    sh, made, mismatches = Shadow(args["max_hops"]), defaultdict(list), 0
    for s, answer in zip(args["steps"], out["results"], strict=True):
        op = s["op"]
        if op == "send":
            mismatches += answer["error"] == "tenant_mismatch"
            _check_outcome(sh, answer, s["from"], s["to"], 0, 0, args["max_hops"], made)
        elif op in ("receive", "forward") and answer["message"] is not None:
            m = answer["message"]
            sh.popped(s["kernel"], m)
            if op == "forward":
                _check_outcome(sh, answer["outcome"], None, m["destination"], m["hops"],
                               m["tenant"], args["max_hops"], made)
        sh.step(op, s, answer)
    violations = [e for e in out["audit"] if e["kind"] == "security_violation"]
    assert len(violations) == mismatches == out["stats"]["cross_tenant_rejections"], "audit"
    for ep in out["endpoints"]:
        assert len(ep["queue"]) <= args["max_pending"], ("queue bound", ep)
        for m in ep["queue"]:
            sh.popped(ep["kernel"], m)
    for where in sh.put.keys() | sh.taken.keys():
        assert sh.taken[where] == sh.put[where], ("FIFO", where, sh.put[where])
    for mid in made.keys() | sh.seen.keys():
        assert sh.seen[mid] == made[mid], ("where the receipts put it", mid, made[mid],
                                           sh.seen[mid])


_ROUTE_VIA_OTHER_TENANT = Mutant.edit(
    "route via another tenant", "the next hop is looked up among every kernel's endpoints",
    kb.deliver_in, "relay = sub.endpoints.get(next_hop)", "relay = b.held.get(next_hop)")
_HOP_OFF_BY_ONE = Mutant.edit(
    "hop limit off by one", "a message may reach max_hops only by staying below it",
    kb.deliver_in, "if hops > b.max_hops:", "if hops >= b.max_hops:")
_ROOM_FOR_ONE_MORE = Mutant.edit(
    "room for one more", "a queue takes max_pending + 1 messages", kb.enqueue,
    "len(ep.queue) >= b.max_pending", "len(ep.queue) > b.max_pending")
_RELAY_KEEPS_A_COPY = Mutant.edit(
    "relay keeps a copy", "forward hands on the message without taking it", kb.forward,
    "m = receive(b, relay)",
    "m = b.held[relay].queue[0] if b.held.get(relay) and b.held[relay].queue else None")


@property_obligation(
    "PO19.20",
    "k2k.simulate over generated steps: a message only ever sits in, or is taken from, an "
    "endpoint of its own tenant; a send fails with tenant_mismatch exactly when the shadow "
    "registrations put sender and destination in different tenants, each with one security "
    "audit event; each endpoint gives out (to receive, forward, the end of the run or a "
    "loss) exactly the messages its delivered and pending receipts put in, in that order, "
    "whatever their priority, so none twice and FIFO per sender; no message carries more "
    "than max_hops hops, pending adds exactly one and max_hops_exceeded comes only past the "
    "limit; and no queue holds more than max_pending.",
    covers=("k2k.simulate",),
    subject=kb.deliver_in,
    mutants=(
        Mutant.edit("no tenant check", "cross-tenant sends go on into the sender's tenant",
                    kb.send, "if source_tenant != dest_tenant:", "if False:"),
        _HOP_OFF_BY_ONE, _ROUTE_VIA_OTHER_TENANT, _ROOM_FOR_ONE_MORE,
        Mutant.edit("LIFO", "receive takes the newest message", kb.receive,
                    "ep.queue.popleft()", "ep.queue.pop()"),
        _RELAY_KEEPS_A_COPY,
        Mutant.edit("silent rejection", "a cross-tenant send writes no audit event", kb.send,
                    "b.audit.append(", "(", 1),
        Mutant.edit("destination's tenant", "an unregistered destination is taken to be in "
                    "tenant 0", kb.send, "b.kernel_tenant.get(destination, source_tenant)",
                    "b.kernel_tenant.get(destination, UNSPECIFIED_TENANT)"),
    ),
)
def broker_invariants(_subject):
    return [Property("the edges and both errata's witnesses", _holds, cases=edges),
            Property("generated step sequences", _holds, strategy=domain, examples=600)]


def _quota_holds(args: dict) -> None:
    """Replays the quota from the steps: per tenant, the sends past the tenant check in the
    current second, the limit, and whether the tenant is registered at all."""
    out = simulate(args["max_pending"], args["delivery_timeout_ms"], args["max_hops"],
                   args["steps"])
    tenant_of: dict[str, int] = {}
    limit: dict[int, int] = {}
    window: dict[int, tuple[int, int]] = {}
    now, exceeded = 0, []
    for s, answer in zip(args["steps"], out["results"], strict=True):
        op = s["op"]
        if op == "register":
            tenant_of[s["kernel"]] = s.get("tenant", 0)
        elif op == "unregister":
            tenant_of.pop(s["kernel"], None)
        elif op == "tick":
            now += s["seconds"]
        elif op == "tenant":
            assert answer["registered"] == (s["tenant"] not in limit), answer
            limit.setdefault(s["tenant"], s.get("max_messages_per_sec",
                                                kb.STANDARD_MESSAGES_PER_SEC))
        elif op == "send" and answer["error"] != "tenant_mismatch":
            t = tenant_of.get(s["from"], kb.UNSPECIFIED_TENANT)
            if t == kb.UNSPECIFIED_TENANT:
                assert answer["error"] not in ("quota_exceeded", "tenant_not_registered")
                continue
            assert (answer["error"] == "tenant_not_registered") == (t not in limit), answer
            if t not in limit:
                continue
            second, used = window.get(t, (now, 0))
            used = used if second == now else 0
            assert (answer["error"] == "quota_exceeded") == (used >= limit[t]), (t, used)
            if answer["error"] == "quota_exceeded":
                exceeded.append(t)
            window[t] = (now, used + (answer["error"] != "quota_exceeded"))
    events = [e["tenant"] for e in out["audit"] if e["kind"] == "resource_limit_exceeded"]
    assert events == exceeded, ("one warning per quota rejection", events, exceeded)


@property_obligation(
    "PO19.21",
    "k2k.simulate's tenant quota over generated steps: UNSPECIFIED is never limited; a "
    "sender in a tenant the registry lacks always fails with tenant_not_registered; a "
    "registered tenant's sends that pass the tenant check are refused with quota_exceeded "
    "exactly when max_messages_per_sec of them already passed in the same second, and each "
    "refusal writes one warning audit event naming the tenant. Every message that passes "
    "counts, whatever its receipt; a tenant registers once.",
    covers=("k2k.simulate",),
    subject=kb.check_quota,
    mutants=(
        Mutant.edit("one extra message", "the limit lets max_messages_per_sec + 1 through",
                    kb.check_quota, "info.messages_this_window >= info.max_messages_per_sec",
                    "info.messages_this_window > info.max_messages_per_sec"),
        Mutant.edit("no new window", "the count never resets", kb.check_quota,
                    "if b.now != info.window_start:", "if False:"),
        Mutant.edit("nothing counts", "the window never counts a message",
                    kb.check_quota, "info.messages_this_window += 1", "pass"),
        Mutant.edit("tenant 0 limited", "UNSPECIFIED goes through the registry", kb.check_quota,
                    "if tenant == UNSPECIFIED_TENANT:", "if False:"),
        Mutant.edit("silent quota", "a refusal writes no audit event", kb.check_quota,
                    "b.audit.append(", "(", 1),
        Mutant.edit("re-register", "registering a tenant again resets its quota",
                    kb.register_tenant, "if tenant in b.registry:", "if False:"),
    ),
)
def quota_invariants(_subject):
    return [Property("the edges and both errata's witnesses", _quota_holds, cases=edges),
            Property("generated step sequences", _quota_holds, strategy=domain, examples=600)]


@model_obligation(
    "PO19.22",
    "The host broker explored over every interleaving: kernels a and b in tenant 0, c in "
    "tenant 1, queues of 2, max_hops 2, z routed through b and y through c (another "
    "tenant's kernel) in tenant 0; any send among a, b, c, x (unregistered), y and z while "
    "fewer than 3 messages exist, any receive or relay, and b moving to tenant 1. In every "
    "reachable state a queued message sits in an endpoint of its own tenant, no queue holds "
    "more than 2, no message is queued twice or carries more than 2 hops, and each step "
    "adds exactly one hop to a pending message and reports max_hops_exceeded only past 2.",
    covers=("k2k.simulate",),
    subject=kb.broker_machine,
    mutants=(_ROUTE_VIA_OTHER_TENANT, _HOP_OFF_BY_ONE, _ROOM_FOR_ONE_MORE, _RELAY_KEEPS_A_COPY),
)
def broker_interleavings(machine):
    return [machine()]
