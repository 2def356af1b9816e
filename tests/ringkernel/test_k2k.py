"""RingKernel's host K2K broker (facts sheet §3.4) through `serve`: every receipt status and
error, tenants, quotas, hops, audit events and receipts, both errata under each profile, and
bad input."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata

load_all()

RK = "ringkernel@1.1.0"


def _ask(args: dict, profile: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": "k2k.simulate", "args": args}), impl, profile)


def _run(steps: list[dict], profile: str = "crucible", **config) -> dict:
    reply = _ask({"steps": steps, **config}, profile)
    assert "result" in reply, reply
    return reply["result"]


def reg(kernel: str, tenant: int = 0, **tag) -> dict:
    return {"op": "register", "kernel": kernel, "tenant": tenant, **tag}


def send(a: str, z: str, **more) -> dict:
    return {"op": "send", "from": a, "to": z, **more}


def op(name: str, **fields) -> dict:
    return {"op": name, **fields}


def ok(status: str, mid: int, hops: int = 0) -> dict:
    return {"ok": True, "status": status, "error": None, "message_id": mid, "hops": hops}


def fail(error: str) -> dict:
    return {"ok": False, "status": None, "error": error, "message_id": None, "hops": 0}


def msg(mid: int, source: str, dest: str, tenant: int = 0, org: int = 0, eng: int = 0,
        priority: int = 0, hops: int = 0) -> dict:
    return {"id": mid, "source": source, "destination": dest, "tenant": tenant, "org_id": org,
            "engagement_id": eng, "priority": priority, "hops": hops}


def test_defaults_are_the_config_defaults():
    r = _run([])
    assert r["config"] == {"max_pending": 1024, "delivery_timeout_ms": 5000, "max_hops": 8}
    assert r["stats"] == {"messages_delivered": 0, "cross_tenant_rejections": 0,
                          "registered_endpoints": 0, "routes_configured": 0, "tenant_count": 1}


def test_delivered_then_received_in_fifo_order_whatever_the_priority():
    r = _run([reg("a"), reg("b"), send("a", "b", priority=1), send("a", "b", priority=200),
              op("receive", kernel="b"), op("receive", kernel="b"), op("receive", kernel="b")])
    assert r["results"][2:4] == [ok("delivered", 1), ok("delivered", 2)]
    assert [x["message"] for x in r["results"][4:]] == [
        msg(1, "a", "b", priority=1), msg(2, "a", "b", priority=200), None]
    assert r["receipts"] == [1, 2] and r["stats"]["messages_delivered"] == 2


def test_queue_full_fails_the_send_in_the_spec_and_succeeds_in_ringkernel():
    steps = [reg("a"), reg("b"), send("a", "b"), send("a", "b")]
    spec = _run(steps, max_pending=1)
    assert spec["results"][3] == {"ok": False, "status": "queue_full", "error": "queue_full",
                                  "message_id": 2, "hops": 0}
    seed = _run(steps, RK, max_pending=1)
    assert seed["results"][3] == ok("queue_full", 2)
    for r in (spec, seed):
        assert r["endpoints"][1]["queue"] == [msg(1, "a", "b")] and r["receipts"] == [1]


def test_a_closed_endpoint_is_not_found_and_loses_its_queue():
    r = _run([reg("a"), reg("b"), send("a", "b"), op("close", kernel="b"), send("a", "b"),
              op("receive", kernel="b")])
    assert r["results"][3] == {"dropped": [1]}
    assert r["results"][4] == ok("not_found", 2)
    assert r["results"][5] == {"message": None}
    assert r["endpoints"][1] == {"kernel": "b", "tenant": 0, "registered": True, "open": False,
                                 "queue": []}


def test_unknown_destination_is_not_found_in_the_senders_tenant():
    r = _run([op("tenant", tenant=3), reg("a", 3), send("a", "nobody")])
    assert r["results"][2] == ok("not_found", 1)
    assert r["audit"] == [] and r["stats"]["cross_tenant_rejections"] == 0


def test_cross_tenant_send_is_rejected_with_an_audit_event_carrying_the_callers_tag():
    r = _run([reg("a", 1, org_id=7, engagement_id=8), reg("b", 2), send("a", "b"),
              send("a", "b", org_id=5, engagement_id=6), send("x", "b")])
    assert r["results"][2:] == [fail("tenant_mismatch")] * 3
    base = {"kind": "security_violation", "level": "security", "source": "k2k_broker",
            "to_tenant": 2, "destination_kernel": "b"}
    assert r["audit"] == [
        {**base, "from_tenant": 1, "source_kernel": "a", "org_id": 0, "engagement_id": 0},
        {**base, "from_tenant": 1, "source_kernel": "a", "org_id": 5, "engagement_id": 6},
        {**base, "from_tenant": 0, "source_kernel": "x", "org_id": 0, "engagement_id": 0}]
    assert r["stats"]["cross_tenant_rejections"] == 3 and r["stats"]["tenant_count"] == 3


def test_the_registration_tag_is_stamped_unless_the_caller_gives_one():
    r = _run([op("tenant", tenant=1), reg("a", 1, org_id=7, engagement_id=8), reg("b", 1),
              send("a", "b"), send("a", "b", engagement_id=2)])
    assert r["endpoints"][1]["queue"] == [msg(1, "a", "b", 1, 7, 8), msg(2, "a", "b", 1, 0, 2)]


def test_quota_per_second_counts_every_message_that_passes_and_resets_on_a_new_second():
    r = _run([op("tenant", tenant=1, max_messages_per_sec=2), reg("a", 1),
              send("a", "nobody"), send("a", "a"), send("a", "a", org_id=4),
              op("tick", seconds=0), send("a", "a"), op("tick", seconds=1), send("a", "a"),
              op("tenant", tenant=1, max_messages_per_sec=9)], max_pending=1)
    res = r["results"]
    assert res[0] == {"registered": True} and res[9] == {"registered": False}
    assert res[2] == ok("not_found", 1) and res[3] == ok("delivered", 2)
    assert res[4] == fail("quota_exceeded") and res[6] == fail("quota_exceeded")
    assert res[5] == {"now": 0} and res[7] == {"now": 1}
    assert res[8] == {"ok": False, "status": "queue_full", "error": "queue_full",
                      "message_id": 3, "hops": 0}
    warn = {"kind": "resource_limit_exceeded", "level": "warning",
            "source": "k2k_tenant_registry", "tenant": 1, "engagement_id": 0}
    assert r["audit"] == [{**warn, "org_id": 4}, {**warn, "org_id": 0}]


def test_a_tenant_missing_from_the_registry_cannot_send_and_tenant_0_is_unlimited():
    r = _run([reg("a", 5), send("a", "a"), op("tenant", tenant=0, max_messages_per_sec=0),
              reg("b"), send("b", "b"), send("b", "b")])
    assert r["results"][1] == fail("tenant_not_registered") and r["audit"] == []
    assert r["results"][4:] == [ok("delivered", 1), ok("delivered", 2)]


def test_indirect_route_is_pending_with_one_hop_and_only_in_the_same_tenant():
    r = _run([op("tenant", tenant=1), reg("a", 1), reg("r", 1), reg("s", 2),
              op("route", destination="d", next_hop="r", tenant=1), send("a", "d"),
              op("route", destination="d", next_hop="s", tenant=1), send("a", "d"),
              op("unroute", destination="d", tenant=1), send("a", "d")])
    assert r["results"][5] == ok("pending", 1, 1)
    assert r["results"][7] == ok("not_found", 2)
    assert r["results"][9] == ok("not_found", 3)
    assert r["endpoints"][1]["queue"] == [msg(1, "a", "d", 1, hops=1)]
    assert r["endpoints"][2]["queue"] == [] and r["receipts"] == []
    assert r["stats"]["messages_delivered"] == 1


def test_max_hops_is_checked_before_the_next_hop():
    r = _run([reg("a"), op("route", destination="d", next_hop="gone"), send("a", "d")],
             max_hops=0)
    assert r["results"][2] == ok("max_hops_exceeded", 1, 1)


def test_a_relay_keeps_the_hop_count_in_the_spec_and_restarts_it_in_ringkernel():
    steps = [reg("a"), reg("r"), op("route", destination="d", next_hop="r"), send("a", "d"),
             op("forward", kernel="r"), op("forward", kernel="r")]
    spec = _run(steps, max_hops=1)
    assert spec["results"][4] == {"message": msg(1, "a", "d", hops=1),
                                  "outcome": ok("max_hops_exceeded", 1, 2)}
    assert spec["results"][5] == {"message": None, "outcome": None}
    seed = _run(steps, RK, max_hops=1)
    assert seed["results"][4]["outcome"] == ok("pending", 2, 1)
    assert seed["results"][5] == {"message": msg(2, "r", "d", hops=1),
                                  "outcome": ok("pending", 3, 1)}


def test_a_relay_delivers_once_the_destination_exists():
    r = _run([reg("a"), reg("r"), op("route", destination="d", next_hop="r"), send("a", "d"),
              reg("d"), op("forward", kernel="r"), op("receive", kernel="d")])
    assert r["results"][5]["outcome"] == ok("delivered", 1, 1)
    assert r["results"][6] == {"message": msg(1, "a", "d", hops=1)}
    assert r["receipts"] == [1] and r["stats"]["messages_delivered"] == 2


def test_moving_a_kernel_to_another_tenant_loses_its_queue_and_its_routes():
    r = _run([reg("a"), reg("b"), send("a", "b"), op("route", destination="b", next_hop="a"),
              reg("b", 1), send("a", "b")])
    assert r["results"][4] == {"dropped": [1]}
    assert r["results"][5] == fail("tenant_mismatch")
    assert r["stats"]["routes_configured"] == 0


def test_unregistered_endpoint_keeps_its_queue_but_gets_no_more():
    r = _run([reg("a"), reg("b"), send("a", "b"), op("unregister", kernel="b"), send("a", "b"),
              op("receive", kernel="b")])
    assert r["results"][4] == ok("not_found", 2)
    assert r["results"][5] == {"message": msg(1, "a", "b")}
    assert r["endpoints"][1]["registered"] is False


@pytest.mark.parametrize("args, field", [
    ({"steps": [{"op": "broadcast"}]}, "args.steps[0]"),
    ({"steps": [{"op": "register", "kernel": "a", "tenant": "one"}]}, "args.steps[0].tenant"),
    ({"steps": [{"op": "send", "from": "a", "to": 5}]}, "args.steps[0].to"),
    ({"steps": [{"op": "send", "from": "a"}]}, "'to'"),
    ({"steps": [{"op": "receive", "kernel": ""}]}, "args.steps[0].kernel"),
    ({"steps": [{"op": "tick", "seconds": -1}]}, "args.steps[0].seconds"),
    ({"steps": [{"op": "register", "kernel": "a", "colour": 1}]}, "colour"),
    ({"steps": [], "max_pending": -1}, "max_pending"),
    ({"steps": [], "max_pending": 0}, "max_pending"),
    ({"steps": [], "max_hops": 256}, "max_hops"),
    ({"steps": {"op": "send"}}, "args.steps"),
])
def test_bad_input_names_the_field(args, field):
    error = _ask(args)["error"]
    assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]


def test_real_max_pending_under_the_seed_profile():
    """E19.22: the real broker at 6c1ecbd answered an empty run with max_pending 0, panicked at
    the first register with it, and took 2^20 + 1."""
    assert _run([], RK, max_pending=0)["config"]["max_pending"] == 0
    assert _ask({"steps": [reg("a")], "max_pending": 0}, RK)["error"]["code"] == "invalid_input"
    assert _run([reg("a")], RK, max_pending=2**20 + 1)["results"] == [{"dropped": []}]
    assert _ask({"steps": [], "max_pending": 0})["error"]["code"] == "invalid_input"
