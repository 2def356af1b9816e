"""RingKernel's queues (facts sheet §3.3, §3.4): queue.simulate by hand and against a deque,
the numba kernel against the reference, the GPU layouts' offsets, the message envelope's CRC-32,
the K2K inbox model and the five errata."""

from __future__ import annotations

import json
from collections import deque

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation, decode_args, run_reference
from crucible_spec.proofs.core.model import explore
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.ringkernel import queue as q
from crucible_spec.spec.ringkernel.k2k import inbox as k2k
from crucible_spec.witness import check

load_all()
RK = "ringkernel@1.1.0"
TOP = 2**64


def _ask(op: str, args: dict, impl: str = "reference", profile: str = "crucible") -> dict:
    return answer(json.dumps({"id": 1, "op": op, "args": args}),
                  Implementation(impl, profile_errata(profile)), profile)


def _enq(*messages) -> list[dict]:
    return [{"op": "enqueue", "message": m} for m in messages]


DEQ = {"op": "dequeue"}
OK = {"outcome": "ok"}
EMPTY = {"outcome": "queue_empty"}


def _got(m: int) -> dict:
    return {"outcome": "ok", "message": m}


def _full(c: int) -> dict:
    return {"outcome": "queue_full", "capacity": c}


# ── queue.simulate by hand ────────────────────────────────────────────────────────────────────

@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_capacity_3_is_4_and_the_fifth_and_sixth_enqueues_drop(impl):
    r = _ask("queue.simulate", {"capacity": 3, "steps": [*_enq(1, 2, 3, 4, 5, 6), *[DEQ] * 5,
                                                         *_enq(7)]}, impl)["result"]
    assert r["results"] == [OK] * 4 + [_full(4)] * 2 + [_got(1), _got(2), _got(3), _got(4),
                                                        EMPTY, OK]
    assert (r["capacity"], r["head"], r["tail"]) == (4, 5, 4)
    assert (r["enqueued"], r["dequeued"], r["dropped"], r["depth"], r["max_depth"]) == \
        (5, 4, 2, 1, 4)


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_counters_wrap_past_2_to_the_64(impl):
    steps = [*_enq(1, 2), DEQ, *_enq(3, 4), *[DEQ] * 3]
    r = _ask("queue.simulate", {"capacity": 2, "steps": steps, "start": TOP - 2}, impl)["result"]
    assert r["results"] == [OK, OK, _got(1), OK, _full(2), _got(2), _got(3), EMPTY]
    assert (r["head"], r["tail"], r["dropped"], r["depth"], r["max_depth"]) == (1, 1, 1, 0, 2)


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_a_request_of_0_gives_one_slot(impl):
    r = _ask("queue.simulate", {"capacity": 0, "steps": [DEQ, *_enq(9, 10), DEQ, DEQ]},
             impl)["result"]
    assert r["capacity"] == 1 and r["results"] == [EMPTY, OK, _full(1), _got(9), EMPTY]


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_the_largest_capacity_and_message(impl):
    r = _ask("queue.simulate", {"capacity": 65536, "steps": [*_enq("0xffffffffffffffff"), DEQ]},
             impl)["result"]
    assert r["capacity"] == 65536 and r["results"] == [OK, _got(TOP - 1)]


@pytest.mark.parametrize("args,code,field", [
    ({"capacity": 2**70, "steps": []}, "invalid_input", "args.capacity"),
    ({"capacity": 65537, "steps": []}, "invalid_input", "args.capacity"),
    ({"capacity": "12", "steps": []}, "bad_request", "args.capacity"),
    ({"capacity": 2, "steps": _enq("12")}, "invalid_input", "args.steps[0].message"),
    ({"capacity": 2, "steps": [DEQ, {"op": "push"}]}, "invalid_input", "args.steps[1]"),
    ({"capacity": 2, "steps": [{"op": "enqueue"}]}, "invalid_input", "args.steps[0]"),
    ({"capacity": 2, "steps": [{"op": "dequeue", "message": 1}]}, "invalid_input",
     "args.steps[0]"),
    ({"capacity": 2, "steps": [], "start": -1}, "invalid_input", "args.start"),
])
@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_bad_input_names_the_field(args, code, field, impl):
    err = _ask("queue.simulate", args, impl)["error"]
    assert err["code"] == code and err["message"].startswith(field), err


# ── queue.simulate against a deque (stateful) and numba against the reference ───────────────

class QueueAgainstDeque(RuleBasedStateMachine):
    """The spec's SpscQueue and a plain deque of the rounded capacity, step by step."""

    def __init__(self):
        super().__init__()
        self.queue: q.SpscQueue | None = None

    @precondition(lambda self: self.queue is None)
    @rule(requested=st.integers(0, 9), start=st.one_of(st.integers(TOP - 6, TOP - 1),
                                                       st.integers(0, TOP - 1)))
    def create(self, requested, start):
        self.queue = q.new_queue(requested, start)
        self.cap = max(1, 1 << (max(requested, 1) - 1).bit_length())
        self.model: deque[int] = deque()
        self.dropped = 0

    @precondition(lambda self: self.queue is not None)
    @rule(message=st.integers(0, TOP - 1))
    def enqueue(self, message):
        outcome = q.try_enqueue(self.queue, message)
        if len(self.model) == self.cap:
            self.dropped += 1
            assert outcome == q.QUEUE_FULL
        else:
            self.model.append(message)
            assert outcome == q.OK

    @precondition(lambda self: self.queue is not None)
    @rule()
    def dequeue(self):
        assert q.try_dequeue(self.queue) == (self.model.popleft() if self.model else None)

    @invariant()
    def bounded_and_counted(self):
        if self.queue is None:
            return
        used = (self.queue.head - self.queue.tail) % TOP
        assert 0 <= used <= self.queue.capacity == self.cap
        assert used == len(self.model) and self.queue.dropped == self.dropped
        assert q.is_empty(self.queue) == (not self.model)
        assert q.is_full(self.queue) == (len(self.model) == self.cap)


TestQueueAgainstDeque = QueueAgainstDeque.TestCase
TestQueueAgainstDeque.settings = settings(max_examples=150, stateful_step_count=40,
                                          database=None)


@settings(max_examples=60, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_numba_matches_the_reference_on_generated_batches(data):
    op = REGISTRY.ops["queue.simulate"]
    drawn = data.draw(st.lists(op.strategy(), min_size=1, max_size=8))
    items = [decode_args(op, op.args.encode(a)) for a in drawn]
    want = [op.result.encode(run_reference(op, a)) for a in items]
    got = [op.result.encode(r) for r in Implementation("numba").run_batch(op, items)]
    assert got == want


# ── layouts (§3.3, §3.4; MessageHeader's offsets from message.rs) ────────────────────────────

CONTROL_BLOCK = {"is_active": 0, "should_terminate": 4, "has_terminated": 8, "_pad1": 12,
                 "messages_processed": 16, "messages_in_flight": 24, "input_head": 32,
                 "input_tail": 40, "output_head": 48, "output_tail": 56, "input_capacity": 64,
                 "output_capacity": 68, "input_mask": 72, "output_mask": 76, "hlc_state": 80,
                 "last_error": 96, "error_count": 100, "_reserved": 104}
MESSAGE_HEADER = {"magic": 0, "version": 8, "flags": 12, "message_id": 16,
                  "correlation_id": 24, "source_kernel": 32, "dest_kernel": 40,
                  "message_type": 48, "priority": 56, "_reserved1": 57, "payload_size": 64,
                  "checksum": 72, "_reserved2": 76, "timestamp": 80, "deadline": 104,
                  "_reserved3a": 128, "_reserved3b": 160, "_reserved3c": 192,
                  "_reserved3d": 224}
INBOX = {"head": 0, "tail": 8, "capacity": 16, "mask": 20, "msg_size": 24, "_padding": 28}
ROUTE = {"target_kernel_id": 0, "target_inbox": 8, "target_head": 16, "target_tail": 24,
         "capacity": 32, "mask": 36, "msg_size": 40, "_padding": 44}


@pytest.mark.parametrize("name,size,align,offsets", [
    ("ControlBlock", 128, 128, CONTROL_BLOCK), ("MessageHeader", 256, 64, MESSAGE_HEADER),
    ("K2KInboxHeader", 64, 64, INBOX), ("K2KRouteEntry", 48, 8, ROUTE)])
def test_layout_offsets(name, size, align, offsets):
    s = REGISTRY.layout(name)
    assert (s.size, s.align, s.offsets) == (size, align, offsets)


def test_hlc_state_is_16_bytes_at_a_multiple_of_16_and_the_header_pads_232_to_256():
    cb = REGISTRY.layout("ControlBlock")
    hlc = next(p for p in cb.placed if p.name == "hlc_state")
    assert (hlc.member.ctype.size, hlc.offset % 16, hlc.end) == (16, 0, 96)
    assert REGISTRY.layout("MessageHeader").padding() == [(232, 256)]


# ── the message envelope ──────────────────────────────────────────────────────────────────────

CHECK = "313233343536373839"
"""b"123456789": its CRC-32/IEEE is 0xcbf43926 (the catalogue's check value)."""


def test_encode_writes_magic_version_and_the_crc32_and_decode_gives_it_all_back():
    args = {"payload": CHECK, "message_id": 5, "source_kernel": 1, "dest_kernel": 2,
            "message_type": 7, "priority": 128, "timestamp": [100, 5, 1], "deadline": [9, 0, 0]}
    r = _ask("message.encode", args)["result"]
    env = bytes.fromhex(r["envelope"])
    assert r["checksum"] == "0xcbf43926" and len(env) == 256 + 9
    assert env[:8] == b"NREKGNIR" and env[8:12] == b"\1\0\0\0" and env[72:76] == \
        bytes.fromhex("2639f4cb") and env[56] == 128 and env[64] == 9 and env[256:] == \
        b"123456789"
    d = _ask("message.decode", {"envelope": r["envelope"]})["result"]
    assert d["magic"] == "0x52494e474b45524e" and d["version"] == 1
    assert {k: d[k] for k in args if k != "payload"} == {k: v for k, v in args.items()
                                                         if k != "payload"}
    assert d["payload"] == CHECK and d["checksum"] == "0xcbf43926"


def test_the_host_path_writes_checksum_0_and_never_checks_it():
    r = _ask("message.encode", {"payload": CHECK}, profile=RK)["result"]
    assert r["checksum"] == "0x00000000"
    assert _ask("message.decode", {"envelope": r["envelope"]})["error"]["code"] == \
        "invalid_input"
    assert _ask("message.decode", {"envelope": r["envelope"]}, profile=RK)["result"][
        "payload"] == CHECK


def _tamper(env: str, offset: int, new: bytes) -> str:
    b = bytearray.fromhex(env)
    b[offset:offset + len(new)] = new
    return b.hex()


@pytest.mark.parametrize("offset,new,field", [
    (0, b"X", "args.envelope.magic"), (8, b"\0", "args.envelope.version"),
    (8, b"\2", "args.envelope.version"), (64, b"\x0a", "args.envelope.payload_size"),
    (64, b"\0\0\1\0\0\0\0\0", "args.envelope.payload_size"),
    (256, b"2", "args.envelope.checksum")])
def test_a_bad_envelope_names_the_field(offset, new, field):
    env = _ask("message.encode", {"payload": CHECK})["result"]["envelope"]
    err = _ask("message.decode", {"envelope": _tamper(env, offset, new)})["error"]
    assert err["code"] == "invalid_input" and err["message"].startswith(field), err


def test_version_0_is_accepted_only_by_ringkernel():
    env = _tamper(_ask("message.encode", {"payload": ""})["result"]["envelope"], 8, b"\0")
    assert _ask("message.decode", {"envelope": env}, profile=RK)["result"]["version"] == 0


@pytest.mark.parametrize("args,code,field", [
    ({"payload": "00" * 65537}, "invalid_input", "args.payload"),
    ({"payload": "", "message_id": "12"}, "bad_request", "args.message_id"),
    ({"payload": "", "timestamp": [1, 2]}, "bad_request", "args.timestamp"),
    ({"payload": "abc"}, "bad_request", "args.payload")])
def test_bad_encode_input_names_the_field(args, code, field):
    err = _ask("message.encode", args)["error"]
    assert err["code"] == code and field in err["message"], err


def test_a_payload_of_64_kib_encodes():
    r = _ask("message.encode", {"payload": "ab" * 65536})["result"]
    assert len(r["envelope"]) == 2 * (256 + 65536)


# ── the K2K inbox model and the errata ────────────────────────────────────────────────────────

def test_the_spec_inbox_keeps_both_invariants():
    for m in (k2k.inbox_machine(), k2k.inbox_machine(capacity=1),
              k2k.inbox_machine(senders=3)):
        assert explore(m).violation is None


@pytest.mark.parametrize("builder,invariant,steps", [
    (k2k.no_full_check, k2k.NO_OVERWRITE, 7), (k2k.head_before_write, k2k.NO_TORN_READ, 4),
    (k2k.free_before_read, k2k.NO_OVERWRITE, 8)])
def test_each_seed_bug_breaks_its_invariant(builder, invariant, steps):
    found = explore(builder(profile_errata(RK)))
    assert found.violation == invariant and len(found.trace) == steps
    assert explore(builder(frozenset())).violation is None


def test_a_torn_read_is_four_steps():
    trace = explore(k2k.head_before_write(profile_errata(RK))).trace
    assert trace == ["sender 0 claim (ticket 0)", "sender 0 header (ticket 0)",
                     "receiver poll (tail 0)", "receiver read (ticket 0)"]


@pytest.mark.parametrize("eid", ["E4.100", "E4.101", "E4.102", "E4.103", "E4.104", "E4.106",
                                 "E4.107", "E4.108"])
def test_every_erratum_reproduces(eid):
    assert check(REGISTRY.errata[eid]).startswith("reproduced")


def test_real_queue_capacities_under_the_seed_profile():
    """E4.108: the real SpscQueue at 6c1ecbd (rustc -O) answered these: 2^16 + 1 rounds to
    2^17, and 2^63 + 1 wraps to a queue of 0 that drops every message."""
    steps = [*_enq(7), DEQ]
    r = _ask("queue.simulate", {"capacity": 65537, "steps": steps}, profile=RK)["result"]
    assert (r["capacity"], r["results"]) == (131072, [OK, _got(7)])
    r = _ask("queue.simulate", {"capacity": 2**63 + 1, "steps": steps}, profile=RK)["result"]
    assert (r["capacity"], r["results"], r["dropped"], r["head"]) == (0, [_full(0), EMPTY], 1, 0)
    assert _ask("queue.simulate", {"capacity": 2**63 + 1, "steps": []})["error"]["code"] == \
        "invalid_input"


def test_real_envelopes_under_the_seed_profile():
    """E4.106 and E4.107: the real MessageEnvelope at 6c1ecbd wrote a 64 KiB + 1 payload, and
    read an envelope with two bytes after its 9-byte payload as that payload."""
    r = _ask("message.encode", {"payload": "00" * 65537}, profile=RK)["result"]
    assert (len(r["envelope"]), r["checksum"]) == (2 * (256 + 65537), "0x00000000")
    assert r["envelope"][128:144] == "0100010000000000"
    env = _ask("message.encode", {"payload": "313233343536373839", "message_type": 7,
                                  "source_kernel": 1, "dest_kernel": 2}, profile=RK)["result"]
    r = _ask("message.decode", {"envelope": env["envelope"] + "00ff"}, profile=RK)["result"]
    assert (r["payload_size"], r["payload"]) == (9, "313233343536373839")
    assert _ask("message.decode", {"envelope": env["envelope"] + "00ff"})["error"]["code"] == \
        "invalid_input"
