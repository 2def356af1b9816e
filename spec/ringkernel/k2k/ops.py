"""Op `k2k.simulate`: run register, close, unregister, route, unroute, tenant, tick, send,
receive and forward steps on one fresh K2K broker (spec/ringkernel/k2k/broker.py) and report each
step's
answer, every endpoint's queue, the audit events, the stored receipts and the counters.

Steps: {"op": "register", "kernel", "tenant"?, "org_id"?, "engagement_id"?}, {"op": "close",
"kernel"}, {"op": "unregister", "kernel"}, {"op": "route", "destination", "next_hop",
"tenant"?}, {"op": "unroute", "destination", "tenant"?}, {"op": "tenant", "tenant",
"max_messages_per_sec"?}, {"op": "tick", "seconds"}, {"op": "send", "from", "to", "priority"?,
"org_id"?, "engagement_id"?} (a non-zero tag is send_with_audit's), {"op": "receive",
"kernel"}, {"op": "forward", "kernel"}. Message ids are 1, 2, ... in the order messages are
made (RingKernel draws them at random). The spec takes max_pending from 1 to MAX_PENDING_LIMIT
(RingKernel checks none: 0 panics at the first register, E19.22).
"""

from __future__ import annotations

from typing import Any

from ...core import shapes as js
from ...core.errata import NO_ERRATA, SEEDS, erratum
from ...core.errors import InvalidInput, SpecError
from ...core.registry import InvalidCase, declare
from ...core.schema import U8, U32, U64, Field, Json, Utf8, record
from ...core.steps import parse_steps, steps_schema
from ...core.strategies import st
from . import broker as kb

MAX_STEPS = 4096
"""The spec's own bound on the steps of one simulation."""
MAX_KERNEL_NAME = 64
"""The spec's own bound on a kernel id's length (RingKernel's KernelId is any string)."""
MAX_PENDING_LIMIT = 1 << 20
"""The spec's own bound on max_pending (tokio's channel refuses 0 and takes up to 2^61)."""
E19_22 = "E19.22"
REQUIRED = object()
KERNEL = Utf8()

STEP_FIELDS = {"register": ("kernel", "tenant", "org_id", "engagement_id"), "close": ("kernel",),
               "unregister": ("kernel",), "route": ("destination", "next_hop", "tenant"),
               "unroute": ("destination", "tenant"), "tenant": ("tenant", "max_messages_per_sec"),
               "tick": ("seconds",), "send": ("from", "to", "priority", "org_id",
                                              "engagement_id"),
               "receive": ("kernel",), "forward": ("kernel",)}
_NAMES = ("kernel", "destination", "next_hop", "from", "to")
FIELD_TYPES = dict.fromkeys(_NAMES, KERNEL) | dict.fromkeys(
    ("tenant", "org_id", "engagement_id", "max_messages_per_sec"), U64) | {
    "seconds": U32, "priority": U8}
REQUIRED_FIELDS = {"register": ("kernel",), "close": ("kernel",), "unregister": ("kernel",),
                   "route": ("destination", "next_hop"), "unroute": ("destination",),
                   "tenant": ("tenant",), "tick": ("seconds",), "send": ("from", "to"),
                   "receive": ("kernel",), "forward": ("kernel",)}
DEFAULTS = {"tenant": kb.UNSPECIFIED_TENANT, "org_id": 0, "engagement_id": 0, "priority": 0,
            "max_messages_per_sec": kb.STANDARD_MESSAGES_PER_SEC}
STEPS = steps_schema(STEP_FIELDS, {n: t.json_schema() for n, t in FIELD_TYPES.items()},
                     REQUIRED_FIELDS)
STATUSES = ("delivered", "pending", "not_found", "queue_full", "max_hops_exceeded")
ERRORS = ("tenant_mismatch", "quota_exceeded", "tenant_not_registered", "queue_full")
_MESSAGE = js.obj({"id": js.uint(64), "source": js.STRING, "destination": js.STRING,
                   "tenant": js.uint(64), "org_id": js.uint(64), "engagement_id": js.uint(64),
                   "priority": js.uint(8), "hops": js.uint(8)})
_OUTCOME = {"ok": js.BOOLEAN, "status": js.or_null({"enum": list(STATUSES)}),
            "error": js.or_null({"enum": list(ERRORS)}), "message_id": js.or_null(js.uint(64)),
            "hops": js.uint(16)}
ANSWERS = js.array(js.one_of(
    js.obj({"dropped": js.array(js.uint(64))}), js.obj({"registered": js.BOOLEAN}),
    js.obj({"now": js.uint(64)}), js.obj(_OUTCOME), js.obj({"message": js.or_null(_MESSAGE)}),
    js.obj({"message": js.or_null(_MESSAGE), "outcome": js.or_null(js.obj(_OUTCOME))}),
    js.obj()))
"""Answers: register and close {dropped}, tenant {registered}, tick {now}, send an outcome,
receive {message}, forward {message, outcome}, unregister, route and unroute {}."""


def _field(step: dict, name: str, default: Any, path: str) -> Any:
    if name not in step:
        if default is REQUIRED:
            raise InvalidInput(f"{path}: {step['op']} needs {name}")
        return default
    try:
        value = FIELD_TYPES[name].decode(step[name], f"{path}.{name}")
    except SpecError as e:
        raise InvalidInput(e.message) from None
    if name in _NAMES and not 1 <= len(value) <= MAX_KERNEL_NAME:
        raise InvalidInput(f"{path}.{name}: a kernel id of 1 to {MAX_KERNEL_NAME} characters")
    return value


def parsed_steps(steps: Any) -> list[tuple[str, dict]]:
    """Each step as (op, its decoded fields with defaults filled in)."""
    if isinstance(steps, list) and len(steps) > MAX_STEPS:
        raise InvalidInput(f"args.steps: at most {MAX_STEPS} steps")
    out = []
    for i, (op, s) in enumerate(parse_steps(steps, STEP_FIELDS)):
        out.append((op, {n: _field(s, n, REQUIRED if n in REQUIRED_FIELDS[op] else DEFAULTS[n],
                                   f"args.steps[{i}]") for n in STEP_FIELDS[op]}))
    return out


def message_wire(m: kb.K2KMessage | None) -> dict | None:
    if m is None:
        return None
    return {"id": m.id, "source": m.source, "destination": m.destination, "tenant": m.tenant,
            "org_id": m.audit_tag[0], "engagement_id": m.audit_tag[1], "priority": m.priority,
            "hops": m.hops}


def outcome_wire(o: kb.Outcome | None) -> dict | None:
    if o is None:
        return None
    return {"ok": o.ok, "status": o.status, "error": o.error, "message_id": o.message_id,
            "hops": o.hops}


def run_step(b: kb.K2KBroker, op: str, f: dict, errata: frozenset[str] = NO_ERRATA) -> dict:
    """One step against the broker: its answer."""
    if op == "register":
        return {"dropped": kb.register(b, f["kernel"], f["tenant"],
                                       (f["org_id"], f["engagement_id"]))}
    if op == "close":
        return {"dropped": kb.close(b, f["kernel"])}
    if op == "unregister":
        kb.unregister(b, f["kernel"])
    elif op == "route":
        kb.add_route(b, f["tenant"], f["destination"], f["next_hop"])
    elif op == "unroute":
        kb.remove_route(b, f["tenant"], f["destination"])
    elif op == "tenant":
        return {"registered": kb.register_tenant(b, f["tenant"], f["max_messages_per_sec"])}
    elif op == "tick":
        b.now += f["seconds"]
        return {"now": b.now}
    elif op == "send":
        return outcome_wire(kb.send(b, f["from"], f["to"], f["priority"],
                                    (f["org_id"], f["engagement_id"]), errata))
    elif op == "receive":
        return {"message": message_wire(kb.receive(b, f["kernel"]))}
    elif op == "forward":
        m, o = kb.forward(b, f["kernel"], errata)
        return {"message": message_wire(m), "outcome": outcome_wire(o)}
    return {}


def simulate(max_pending: int, delivery_timeout_ms: int, max_hops: int, steps: Any,
             errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run the steps in order on a fresh broker."""
    parsed = parsed_steps(steps)
    if E19_22 in errata:
        if max_pending == 0 and any(op == "register" for op, _ in parsed):
            raise InvalidInput("args.max_pending: 0, and a register makes a channel of 0, "
                               "which panics")
    elif not 1 <= max_pending <= MAX_PENDING_LIMIT:
        raise InvalidInput(f"args.max_pending: a channel holds 1 to {MAX_PENDING_LIMIT} "
                           f"messages, got {max_pending}")
    b = kb.K2KBroker(max_pending, max_hops)
    results = [run_step(b, op, f, errata) for op, f in parsed]
    endpoints = [{"kernel": k, "tenant": ep.tenant, "registered": k in b.kernel_tenant
                  and b.tenants[b.kernel_tenant[k]].endpoints.get(k) is ep, "open": ep.open,
                  "queue": [message_wire(m) for m in ep.queue]} for k, ep in sorted(b.held.items())]
    return {"results": results, "endpoints": endpoints, "audit": b.audit,
            "receipts": b.receipts,
            "stats": {"messages_delivered": b.messages_delivered,
                      "cross_tenant_rejections": b.cross_tenant_rejections,
                      "registered_endpoints": sum(len(s.endpoints) for s in b.tenants.values()),
                      "routes_configured": sum(len(s.routes) for s in b.tenants.values()),
                      "tenant_count": len(b.tenants)},
            "config": {"max_pending": max_pending, "delivery_timeout_ms": delivery_timeout_ms,
                       "max_hops": max_hops}}


# ── generated and hand-picked steps ──────────────────────────────────────────────────────────

KERNELS = ("a", "b", "c")
TENANTS = (0, 1, 2)


def domain() -> st.SearchStrategy:
    """Three kernels, mostly in tenants 0 and 1, small queues and quotas, and mostly sends, so
    that every status and error occurs: each sequence starts by registering tenant 1's quota
    (sometimes tenant 2's) and the kernels, and routes z through one of them in tenant 0."""
    k, t = st.sampled_from(KERNELS), st.sampled_from((0, 0, 1, 1, 2))
    dest = st.sampled_from((*KERNELS, "z", "z"))
    limit = st.sampled_from((1, 2, 3, 100))
    tenant = st.builds(lambda t, n: {"op": "tenant", "tenant": t, "max_messages_per_sec": n},
                       st.sampled_from(TENANTS[1:]), limit)
    send = st.builds(lambda a, z, p: {"op": "send", "from": a, "to": z, "priority": p},
                     st.sampled_from((*KERNELS, *KERNELS, "x")), dest, st.integers(0, 3))
    step = st.one_of(
        st.builds(lambda k, t, o: {"op": "register", "kernel": k, "tenant": t, "org_id": o},
                  k, t, st.integers(0, 2)),
        st.builds(lambda k: {"op": "close", "kernel": k}, k),
        st.builds(lambda k: {"op": "unregister", "kernel": k}, k),
        *[st.builds(lambda d, n, t: {"op": "route", "destination": d, "next_hop": n,
                                     "tenant": t}, st.sampled_from(("z", "z", *KERNELS)), k,
                    st.sampled_from((0, 0, 1)))] * 2,
        st.builds(lambda d, t: {"op": "unroute", "destination": d, "tenant": t}, dest, t),
        tenant, st.builds(lambda s: {"op": "tick", "seconds": s}, st.integers(0, 1)),
        *[send] * 8, *[st.builds(lambda k: {"op": "receive", "kernel": k}, k)] * 2,
        *[st.builds(lambda k: {"op": "forward", "kernel": k}, k)] * 2)
    prefix = st.tuples(limit, st.lists(tenant, max_size=1), st.tuples(*[st.builds(
        lambda k, t: {"op": "register", "kernel": k, "tenant": t}, st.just(k), t)
        for k in KERNELS]), k).map(lambda p: [
            {"op": "tenant", "tenant": 1, "max_messages_per_sec": p[0]}, *p[1], *p[2],
            {"op": "route", "destination": "z", "next_hop": p[3]}])
    steps = st.builds(lambda a, b: a + b, prefix, st.lists(step, min_size=8, max_size=48))
    return st.fixed_dictionaries({"max_pending": st.integers(1, 3), "max_hops": st.integers(0, 3),
                                  "delivery_timeout_ms": st.just(kb.DEFAULT_DELIVERY_TIMEOUT_MS),
                                  "steps": steps})


def _args(steps: list[dict], **config) -> dict:
    return {"max_pending": kb.DEFAULT_MAX_PENDING, "max_hops": kb.DEFAULT_MAX_HOPS,
            "delivery_timeout_ms": kb.DEFAULT_DELIVERY_TIMEOUT_MS, "steps": steps} | config


def _reg(kernel: str, tenant: int = 0, **tag) -> dict:
    return {"op": "register", "kernel": kernel, "tenant": tenant} | tag


def _send(a: str, z: str, **more) -> dict:
    return {"op": "send", "from": a, "to": z} | more


QUEUE_FULL = _args([_reg("a"), _reg("b"), _send("a", "b"), _send("a", "b")], max_pending=1)
"""b's one-message queue takes the first send; the second finds it full."""
RELAY_LOOP = _args([_reg("a"), _reg("r"), {"op": "route", "destination": "d", "next_hop": "r"},
                    _send("a", "d"), {"op": "forward", "kernel": "r"}], max_hops=1)
"""A route to d through r, and r hands d's message on: the route leads back to r."""


def edges() -> list[dict]:
    """Every status and error, a tenant move, quota windows, a closed endpoint, FIFO whatever
    the priority, and both errata's witnesses."""
    return [
        QUEUE_FULL, RELAY_LOOP,
        _args([_reg("a"), _reg("b"), _send("a", "b"), _send("a", "b", priority=9),
               _send("b", "b"), _send("a", "b", priority=1), {"op": "receive", "kernel": "b"},
               {"op": "receive", "kernel": "b"}, {"op": "receive", "kernel": "b"}, _reg("a", 4),
               _reg("b", 0, org_id=1)]),
        _args([{"op": "tenant", "tenant": 1}, _reg("a", 1), _reg("r", 2),
               {"op": "route", "destination": "d", "next_hop": "r", "tenant": 1},
               _send("a", "d"),
               {"op": "route", "destination": "d", "next_hop": "a", "tenant": 1},
               _send("a", "d"), {"op": "forward", "kernel": "a"}]),
        _args([_reg("a", 1, org_id=7, engagement_id=9), _reg("b", 2), _send("a", "b"),
               _send("x", "b", org_id=3), _send("a", "z"), {"op": "tenant", "tenant": 1,
                                                            "max_messages_per_sec": 1},
               _send("a", "z"), _send("a", "a"), {"op": "tick", "seconds": 1},
               _send("a", "a", priority=5), {"op": "receive", "kernel": "a"},
               {"op": "receive", "kernel": "a"}]),
        _args([_reg("a"), _reg("b"), _send("a", "b"), {"op": "close", "kernel": "b"},
               _send("a", "b"), {"op": "unregister", "kernel": "a"}, _send("b", "a"),
               _reg("b", 3), {"op": "route", "destination": "q", "next_hop": "a"},
               _send("x", "q"), {"op": "unroute", "destination": "q"}, _send("x", "q")],
              max_hops=0),
        _args([_reg("a"), _reg("r1"), _reg("r2"),
               {"op": "route", "destination": "d", "next_hop": "r1"}, _send("a", "d"),
               {"op": "route", "destination": "d", "next_hop": "r2"},
               {"op": "forward", "kernel": "r1"}, _reg("d"), {"op": "forward", "kernel": "r2"},
               {"op": "receive", "kernel": "d"}, {"op": "forward", "kernel": "d"}]),
    ]


def _check(args: dict) -> None:
    parsed_steps(args["steps"])


_SEQUENTIAL = "a queue, a routing table and a quota window changed step by step: nothing to " \
              "spread over lanes"
declare(
    "k2k.simulate", chapter=19,
    summary="RingKernel's host K2K broker: tenants, quotas, routes, hops and receipts; each "
            "step's answer, every endpoint's queue, the audit events and the counters.",
    args=record(
        max_pending=Field(U32, "each endpoint channel's capacity", kb.DEFAULT_MAX_PENDING),
        delivery_timeout_ms=Field(U64, "K2KConfig's delivery timeout (never waited on)",
                                  kb.DEFAULT_DELIVERY_TIMEOUT_MS),
        max_hops=Field(U8, "the most hops a routed message may take", kb.DEFAULT_MAX_HOPS),
        steps=Field(Json("[step]", STEPS), "register / close / unregister / route / unroute / "
                                           "tenant / tick / send / receive / forward")),
    result=record(
        results=Json("[per-step answer]", ANSWERS),
        endpoints=Json("[endpoint]", js.array(js.obj({
            "kernel": js.STRING, "tenant": js.uint(64), "registered": js.BOOLEAN,
            "open": js.BOOLEAN, "queue": js.array(_MESSAGE)}))),
        audit=Json("[audit event]", js.array(js.obj(
            {"kind": js.STRING, "level": js.STRING, "source": js.STRING, "org_id": js.uint(64),
             "engagement_id": js.uint(64)},
            {"tenant": js.uint(64), "from_tenant": js.uint(64), "to_tenant": js.uint(64),
             "source_kernel": js.STRING, "destination_kernel": js.STRING}))),
        receipts=Json("[message id]", js.array(js.uint(64))),
        stats=Json("counters", js.obj({k: js.uint(64) for k in (
            "messages_delivered", "cross_tenant_rejections", "registered_endpoints",
            "routes_configured", "tenant_count")})),
        config=Json("the broker's config", js.obj({k: js.uint(64) for k in (
            "max_pending", "delivery_timeout_ms", "max_hops")}))),
    spec=(kb.send, kb.deliver_in, kb.check_quota, kb.forward, kb.register), check=_check,
    domain=domain, edges=edges, errata=(kb.E19_20, kb.E19_21, E19_22),
    invalid=(InvalidCase("an unknown step", lambda: st.just(_args([{"op": "broadcast"}]))),
             InvalidCase("a string for a tenant", lambda: st.just(_args(
                 [{"op": "register", "kernel": "a", "tenant": "one"}]))),
             InvalidCase("a negative capacity", lambda: st.just(_args([], max_pending=-1))),
             InvalidCase("a zero capacity", lambda: st.just(_args([], max_pending=0))),
             InvalidCase("a send without a destination", lambda: st.just(_args(
                 [{"op": "send", "from": "a"}])))),
    not_applicable={"numba": "dictionary lookups and FIFO queues, one step at a time: no "
                             "numeric core",
                    "cupy": _SEQUENTIAL},
)

_RK = SEEDS["ringkernel"]
_OUT = {"ok": True, "status": "delivered", "error": None, "message_id": 1, "hops": 0}
erratum(
    kb.E19_20, "A send that finds the destination's queue full drops the message and still "
               "succeeds",
    seed=_RK, location="crates/ringkernel-core/src/k2k/mod.rs K2KBroker::deliver_in",
    ops=("k2k.simulate",),
    witness={"args": QUEUE_FULL,
             "spec": {"results": [{"dropped": []}, {"dropped": []}, _OUT,
                                  {**_OUT, "ok": False, "status": "queue_full",
                                   "error": "queue_full", "message_id": 2}]},
             "seed": {"results": [{"dropped": []}, {"dropped": []}, _OUT,
                                  {**_OUT, "status": "queue_full", "message_id": 2}]}},
    flag="result",
    detail="try_send's Full error becomes Ok(DeliveryReceipt { status: QueueFull }): the "
           "message is gone, no receipt is kept, the tenant's quota was already charged, and a "
           "caller that only checks the Result (send(...).await?) goes on as if it was "
           "delivered. The spec fails the send with queue_full. NotFound and MaxHopsExceeded "
           "stay receipts in both.",
)
erratum(
    kb.E19_21, "A relay cannot hand a routed message on: its hop count restarts at 0, so a "
               "routing loop is never cut",
    seed=_RK, location="crates/ringkernel-core/src/k2k/mod.rs K2KBroker::send_priority, "
                       "deliver_in",
    ops=("k2k.simulate",),
    witness={"args": RELAY_LOOP,
             "spec": {"results": [{"dropped": []}, {"dropped": []}, {},
                                  {**_OUT, "status": "pending", "hops": 1},
                                  {"message": {"id": 1, "source": "a", "destination": "d",
                                               "tenant": 0, "org_id": 0, "engagement_id": 0,
                                               "priority": 0, "hops": 1},
                                   "outcome": {**_OUT, "status": "max_hops_exceeded",
                                               "hops": 2}}]},
             "seed": {"results": [{"dropped": []}, {"dropped": []}, {},
                                  {**_OUT, "status": "pending", "hops": 1},
                                  {"message": {"id": 1, "source": "a", "destination": "d",
                                               "tenant": 0, "org_id": 0, "engagement_id": 0,
                                               "priority": 0, "hops": 1},
                                   "outcome": {**_OUT, "status": "pending", "message_id": 2,
                                               "hops": 1}}]}},
    flag="result",
    detail="deliver_in, the only code that adds a hop, is private, and the public send makes "
           "a new K2KMessage (new id, hops 0) from an envelope. The next hop of a Pending "
           "message gets the K2KMessage with hops 1, but can pass it on only by sending its "
           "envelope again, so max_hops (and increment_hops' limit of 16) never fires past "
           "the first hop, and a route that leads back to the relay circulates the message "
           "for ever under new ids. The spec's relay hands the same message back to the broker "
           "in its tenant, keeping id and hop count, so the loop ends in MaxHopsExceeded.",
)

EMPTY_ZERO = _args([], max_pending=0)
"""A broker whose channels would hold nothing, and no kernel registered."""

erratum(
    E19_22, "max_pending is not checked: 0 panics at the first register, and any u32 is taken",
    seed=_RK, location="crates/ringkernel-core/src/k2k/mod.rs K2KConfig, "
                       "K2KBroker::register_tenant",
    ops=("k2k.simulate",),
    witness={"args": EMPTY_ZERO, "spec": {"error": "invalid_input"},
             "seed": {"results": [], "config": {"max_pending": 0, "delivery_timeout_ms": 5000,
                                                "max_hops": 8}}},
    also=({"op": "k2k.simulate", "args": _args([_reg("a")], max_pending=MAX_PENDING_LIMIT + 1),
           "spec": {"error": "invalid_input"}, "seed": {"results": [{"dropped": []}]}},),
    flag="result",
    detail="K2KConfig::max_pending_messages is a usize nobody checks: the broker is built with "
           "0, and the first register_tenant calls tokio's mpsc::channel(0), which panics "
           "(\"mpsc bounded channel requires buffer > 0\"); above the spec's bound any size is "
           "taken. The spec refuses a max_pending outside 1 to 2^20 up front.",
)
