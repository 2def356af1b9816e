"""Obligations of RingKernel's queues (chapter 4): the GPU K2K inbox protocol keeps its two
invariants (PO4.110), queue.simulate is a bounded FIFO that counts every drop (PO4.111), and a
message envelope round-trips through encode and decode with its CRC-32 (PO4.112)."""

from __future__ import annotations

import zlib
from collections import deque

from hypothesis import strategies as st

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.ringkernel import message as msg
from ...spec.ringkernel import queue as q
from ...spec.ringkernel.k2k import inbox as k2k
from ..core.obligation import Property, model_obligation, property_obligation

# ── PO4.110: the K2K inbox protocol ───────────────────────────────────────────────────────────


@model_obligation(
    "PO4.110",
    "The spec's K2K inbox protocol (claim with a full check, write header then payload, "
    "publish a sequence number; the receiver waits for it, reads, then frees) never writes "
    "over an unread message and never lets the receiver read a half-written slot, in every "
    "interleaving of 2 senders x 2 messages over 1, 2 and 3 slots and of 3 senders over 2.",
    covers=("k2k.inbox.inbox_machine",),
    subject=k2k.inbox_machine,
    mutants=(
        Mutant.edit("no full check", "a sender claims a slot whatever tail is",
                    k2k.sender_step, "E4_102 not in errata and s.head - s.tail >= len(s.slots)",
                    "False"),
        Mutant.edit("publish before write", "the receiver takes any slot below head",
                    k2k.ready, "return slot_of(s, s.tail).seq == s.tail + 1",
                    "return s.head != s.tail"),
        Mutant.edit("free before read", "the receiver frees the slot as it takes it",
                    k2k.receiver_step, "return replace(s, phase=READ, ticket=s.tail)",
                    "return replace(s, tail=s.tail + 1, phase=READ, ticket=s.tail)"),
        Mutant.edit("publish at the header", "the sequence number is stored with the header",
                    k2k.sender_step, "header=mid, unread=True", "header=mid, unread=True, "
                    "seq=me.ticket + 1"),
    ),
)
def inbox_invariants(machine):
    return [machine(), machine(capacity=1), machine(capacity=3), machine(senders=3)]


# ── PO4.111: queue.simulate against a deque ───────────────────────────────────────────────────


def _against_deque(args: dict) -> None:
    """Each outcome and the final counters as a bounded deque of the rounded capacity says."""
    out = q.simulate_op(args["capacity"], args["steps"], args["start"])
    cap = 1
    while cap < args["capacity"]:
        cap *= 2
    model: deque[int] = deque()
    dropped = depth_max = 0
    for step, got in zip(args["steps"], out["results"], strict=True):
        if step["op"] == "enqueue" and len(model) == cap:
            dropped += 1
            assert got == {"outcome": "queue_full", "capacity": cap}, (step, got)
        elif step["op"] == "enqueue":
            model.append(step["message"])
            depth_max = max(depth_max, len(model))
            assert got == {"outcome": "ok"}, (step, got)
        elif model:
            assert got == {"outcome": "ok", "message": model.popleft()}, (step, got)
        else:
            assert got == {"outcome": "queue_empty"}, (step, got)
    enq = sum(s["op"] == "enqueue" for s in args["steps"]) - dropped
    assert out["capacity"] == cap and out["dropped"] == dropped, out
    assert out["depth"] == len(model) == (out["head"] - out["tail"]) % 2**64, out
    assert out["head"] == (args["start"] + enq) % 2**64 and out["max_depth"] == depth_max, out


def _bounds(_case) -> None:
    """Requests of 0 and 1 give 1; 2^16 is the largest; 2^16 + 1 is refused."""
    assert [q.round_capacity(n) for n in (0, 1, 2, 3, 5, 1 << 16)] == [1, 1, 2, 4, 8, 1 << 16]
    try:
        q.round_capacity((1 << 16) + 1)
    except InvalidInput:
        return
    raise AssertionError("a request over the bound was accepted")


def _queue_cases() -> st.SearchStrategy:
    step = st.one_of(st.builds(lambda m: {"op": "enqueue", "message": m},
                               st.integers(0, 2**64 - 1)), st.just({"op": "dequeue"}))
    return st.fixed_dictionaries({"capacity": st.integers(0, 9),
                                  "steps": st.lists(step, max_size=40),
                                  "start": st.one_of(st.integers(2**64 - 12, 2**64 - 1),
                                                     st.integers(0, 2**64 - 1))})


@property_obligation(
    "PO4.111",
    "queue.simulate is a FIFO of the next power of two of the requested capacity: an enqueue "
    "into a full queue is refused and counted as dropped, a dequeue from an empty one is "
    "queue_empty, every other dequeue gives the oldest message, depth = head - tail, and the "
    "counters wrap past 2^64 without effect on any of it.",
    covers=("queue.simulate",),
    subject=q.simulate_op,
    mutants=(
        Mutant.edit("full one late", "the full check lets one more in", q.is_full,
                    "depth(q) >= q.capacity", "depth(q) > q.capacity"),
        Mutant.edit("drop not counted", "a refused enqueue leaves dropped alone", q.try_enqueue,
                    "q.dropped += 1", "pass"),
        Mutant.edit("no wrap", "head is not taken mod 2^64", q.try_enqueue,
                    "q.head = (q.head + 1) % WORD", "q.head = q.head + 1"),
        Mutant.edit("capacity as asked", "the capacity is not rounded up", q.round_capacity,
                    "else 1 << (requested - 1).bit_length()", "else requested", occurrence=2),
        Mutant.edit("depth from the start", "max_depth counts head, not head - tail",
                    q.try_enqueue, "max(q.max_depth, depth(q))", "max(q.max_depth, q.head)"),
    ),
)
def queue_is_a_bounded_fifo(_subject):
    return [Property("capacity rounding and its bound", _bounds, cases=lambda: [None]),
            Property("generated steps, counters near 2^64", _against_deque,
                     strategy=_queue_cases, examples=400)]


# ── PO4.112: the message envelope ─────────────────────────────────────────────────────────────


def _round_trip(args: dict) -> None:
    """decode(encode(fields, payload)) gives them back, with the payload's zlib CRC-32."""
    payload = args.pop("payload")
    env = msg.encode(args, payload)
    header, got = msg.decode(env)
    assert got == payload and len(env) == 256 + len(payload)
    assert header["checksum"] == zlib.crc32(payload) and header["magic"] == msg.MAGIC
    assert all(header[k] == v for k, v in args.items()), (header, args)
    if payload:
        flipped = env[:256] + bytes([env[256] ^ 1]) + env[257:]
        try:
            msg.decode(flipped)
        except InvalidInput:
            return
        raise AssertionError("a flipped payload bit was accepted")


def _fields() -> st.SearchStrategy:
    word = st.integers(0, 2**64 - 1)
    hlc = st.lists(word, min_size=3, max_size=3)
    return st.fixed_dictionaries({
        "payload": st.binary(max_size=200), "flags": st.integers(0, 2**32 - 1),
        "message_id": word, "correlation_id": word, "source_kernel": word, "dest_kernel": word,
        "message_type": word, "priority": st.integers(0, 255), "timestamp": hlc,
        "deadline": hlc})


def _refusals(_case) -> None:
    """A 64 KiB payload encodes, one byte more does not; a wrong version or magic is refused."""
    assert len(msg.encode({}, bytes(msg.MAX_PAYLOAD))) == 256 + msg.MAX_PAYLOAD
    env = msg.encode({}, b"x")
    for bad in (bytes(msg.MAX_PAYLOAD + 1), env[:8] + b"\0" + env[9:],
                env[:8] + b"\2" + env[9:], env[:8] + b"\0" * 4 + env[12:], env[:255]):
        try:
            msg.encode({}, bad) if len(bad) > msg.MAX_PAYLOAD else msg.decode(bad)
        except InvalidInput:
            continue
        raise AssertionError(f"accepted {bad[:16].hex()}...")


@property_obligation(
    "PO4.112",
    "A message envelope round-trips: decode(encode(header fields, payload)) gives the fields "
    "and payload back, the checksum is the payload's CRC-32, and one flipped payload bit, a "
    "version other than 1, a bad magic, a short header or a payload over 64 KiB is refused.",
    covers=("message.encode", "message.decode"),
    subject=msg.decode,
    mutants=(
        Mutant.edit("checksum 0", "encode writes checksum 0 (E4.100 always on)", msg.checksum,
                    "if E4_100 in errata", "if True"),
        Mutant.edit("checksum unchecked", "decode skips the CRC", msg.decode,
                    "E4_100 not in errata and h[", "False and h["),
        Mutant.edit("version 0", "decode accepts version 0 (E4.101 always on)", msg.decode,
                    "E4_101 not in errata", "False"),
        Mutant.edit("payload over", "encode accepts 64 KiB + 1", msg.encode,
                    "len(payload) > MAX_PAYLOAD", "len(payload) > MAX_PAYLOAD + 1"),
    ),
)
def envelope_round_trips(_subject):
    return [Property("refusals", _refusals, cases=lambda: [None]),
            Property("generated headers and payloads", _round_trip, strategy=_fields,
                     examples=300)]
