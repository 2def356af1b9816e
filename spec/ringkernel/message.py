"""Chapter 4: RingKernel's GPU-side layouts (ControlBlock, MessageHeader, K2KInboxHeader,
K2KRouteEntry) and the message envelope as ops `message.encode` and `message.decode`.

Encode:
1. the payload is at most MAX_PAYLOAD (64 KiB) (RingKernel writes any length: E4.106);
2. the header gets MAGIC, VERSION, the caller's fields, payload_size, and checksum =
   CRC-32/IEEE of the payload (RingKernel's host path writes 0: E4.100);
3. the envelope is the 256-byte header followed by the payload; the header's 24 bytes after
   its last member are zero (RingKernel copies them from uninitialised memory: E4.105).
Decode:
1. the envelope holds at least the 256-byte header;
2. magic is MAGIC and version is VERSION (RingKernel accepts any version <= 1: E4.101);
3. payload_size is at most MAX_PAYLOAD and is the number of bytes after the header
   (RingKernel takes that many and ignores any bytes after them: E4.107);
4. the checksum is CRC-32/IEEE of the payload (RingKernel never checks it on the host: E4.100).
Reserved bytes are written as zero and ignored when read.

HlcTimestamp {physical, logical, node_id} and HlcState {physical, logical} are declared here as
u64 arrays (3 and 2 words) in the order of their fields. HlcState's alignment of 16 is not
declared: it lands at offset 80 either way, and the control block's own 128 governs its size.
"""

from __future__ import annotations

import zlib

from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.errors import InvalidInput
from ..core.layout import Member, array, pad, ptr, struct, u8, u32, u64
from ..core.registry import InvalidCase, declare
from ..core.schema import BITS32, BYTES, HASH64, U8, U32, U64, Array, Field, record
from ..core.strategies import st

RINGKERNEL = SEEDS["ringkernel"]
"""The seed whose structs these are."""

E4_100 = "E4.100"
E4_101 = "E4.101"
E4_105 = "E4.105"
E4_106 = "E4.106"
E4_107 = "E4.107"
MAGIC = 0x52494E474B45524E
"""b"RINGKERN" read as a big-endian u64 (MessageHeader::MAGIC)."""
VERSION = 1
MAX_PAYLOAD = 64 * 1024
PRIORITY_NORMAL = 1
"""MessageHeader::new's priority: Priority::Normal as u8 (the `priority` module's NORMAL is 64)."""
HLC = array(u64, 3)
"""HlcTimestamp: physical, logical, node_id."""

CONTROL_BLOCK = struct("ControlBlock", [
    Member("is_active", u32), Member("should_terminate", u32), Member("has_terminated", u32),
    Member("_pad1", u32),
    Member("messages_processed", u64), Member("messages_in_flight", u64),
    Member("input_head", u64), Member("input_tail", u64),
    Member("output_head", u64), Member("output_tail", u64),
    Member("input_capacity", u32), Member("output_capacity", u32),
    Member("input_mask", u32), Member("output_mask", u32),
    Member("hlc_state", array(u64, 2), doc="HlcState {physical, logical}: 16 bytes, align "
           "16 in RingKernel, at 80, a multiple of 16"),
    Member("last_error", u32), Member("error_count", u32),
    Member("_reserved", pad(24)),
], size=128, align=128, alignas=128, chapter=4, seed=RINGKERNEL,
    doc="RingKernel's kernel control block in GPU memory (128 bytes, one 128-byte line).")

MESSAGE_HEADER = struct("MessageHeader", [
    Member("magic", u64, default=MAGIC), Member("version", u32, default=VERSION),
    Member("flags", u32), Member("message_id", u64), Member("correlation_id", u64),
    Member("source_kernel", u64), Member("dest_kernel", u64, doc="0 = host"),
    Member("message_type", u64), Member("priority", u8, default=PRIORITY_NORMAL),
    Member("_reserved1", pad(7)), Member("payload_size", u64),
    Member("checksum", u32, doc="CRC-32 of the payload"), Member("_reserved2", u32),
    Member("timestamp", HLC), Member("deadline", HLC, doc="all zero: no deadline"),
    Member("_reserved3a", pad(32)), Member("_reserved3b", pad(32)),
    Member("_reserved3c", pad(32)), Member("_reserved3d", pad(8)),
], size=256, align=64, alignas=64, chapter=4, seed=RINGKERNEL,
    doc="RingKernel's message envelope header: 232 bytes of members, padded to 256.")

K2K_INBOX_HEADER = struct("K2KInboxHeader", [
    Member("head", u64, doc="senders' claim counter"), Member("tail", u64),
    Member("capacity", u32), Member("mask", u32), Member("msg_size", u32),
    Member("_padding", u32),
], size=64, align=64, alignas=64, chapter=4, seed=RINGKERNEL,
    doc="The header at the start of a GPU K2K inbox; slots of msg_size bytes follow it.")

K2K_ROUTE_ENTRY = struct("K2KRouteEntry", [
    Member("target_kernel_id", u64, doc="0 = unused"), Member("target_inbox", ptr),
    Member("target_head", ptr), Member("target_tail", ptr),
    Member("capacity", u32), Member("mask", u32), Member("msg_size", u32),
    Member("_padding", u32),
], size=48, align=8, chapter=4, seed=RINGKERNEL,
   doc="One route of a kernel's K2K routing table.")

HEADER_SIZE = MESSAGE_HEADER.size


def checksum(payload: bytes, errata: frozenset[str] = NO_ERRATA) -> int:
    """CRC-32/IEEE of the payload (RingKernel's host path: 0, E4.100)."""
    return 0 if E4_100 in errata else zlib.crc32(payload)


def encode(fields: dict, payload: bytes, errata: frozenset[str] = NO_ERRATA) -> bytes:
    """Encode steps 1-3; `fields` are the caller's header members."""
    if len(payload) > MAX_PAYLOAD and E4_106 not in errata:
        raise InvalidInput(f"args.payload: {len(payload)} bytes exceed the {MAX_PAYLOAD}-byte "
                           f"limit")
    values = MESSAGE_HEADER.default_values() | fields
    values |= {"magic": MAGIC, "version": VERSION, "payload_size": len(payload),
               "checksum": checksum(payload, errata)}
    return MESSAGE_HEADER.pack(values) + payload


def decode(envelope: bytes, errata: frozenset[str] = NO_ERRATA) -> tuple[dict, bytes]:
    """Decode steps 1-4: the header's members and the payload."""
    if len(envelope) < HEADER_SIZE:
        raise InvalidInput(f"args.envelope: {len(envelope)} bytes is shorter than the "
                           f"{HEADER_SIZE}-byte header")
    h = MESSAGE_HEADER.unpack(envelope[:HEADER_SIZE])
    payload = envelope[HEADER_SIZE:]
    if h["magic"] != MAGIC:
        raise InvalidInput(f"args.envelope.magic: 0x{h['magic']:016x} is not RINGKERN")
    if h["version"] > VERSION or (h["version"] != VERSION and E4_101 not in errata):
        raise InvalidInput(f"args.envelope.version: {h['version']} is not {VERSION}")
    if h["payload_size"] > MAX_PAYLOAD:
        raise InvalidInput(f"args.envelope.payload_size: {h['payload_size']} exceeds "
                           f"{MAX_PAYLOAD}")
    if h["payload_size"] != len(payload) and not (E4_107 in errata
                                                  and h["payload_size"] < len(payload)):
        raise InvalidInput(f"args.envelope.payload_size: {h['payload_size']} but "
                           f"{len(payload)} bytes follow the header")
    payload = payload[:h["payload_size"]]
    if E4_100 not in errata and h["checksum"] != checksum(payload):
        raise InvalidInput(f"args.envelope.checksum: 0x{h['checksum']:08x}, the payload's "
                           f"CRC-32 is 0x{checksum(payload):08x}")
    return h, payload


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

HLC_WIRE = Array(U64, 3)
CALLER = {"flags": U32, "message_id": U64, "correlation_id": U64, "source_kernel": U64,
          "dest_kernel": U64, "message_type": U64, "priority": U8, "timestamp": HLC_WIRE,
          "deadline": HLC_WIRE}
"""The header members the caller chooses."""
_DEFAULTS = {"priority": PRIORITY_NORMAL, "timestamp": [0, 0, 0], "deadline": [0, 0, 0]}


def encode_op(payload: bytes, errata: frozenset[str] = NO_ERRATA, **fields) -> dict:
    envelope = encode(fields, payload, errata)
    return {"envelope": envelope, "checksum": MESSAGE_HEADER.unpack(
        envelope[:HEADER_SIZE])["checksum"]}


def decode_op(envelope: bytes, errata: frozenset[str] = NO_ERRATA) -> dict:
    h, payload = decode(envelope, errata)
    return {n: h[n] for n in (*CALLER, "magic", "version", "payload_size", "checksum")} | {
        "payload": payload}


CHECK_PAYLOAD = b"123456789"
"""The CRC-32 check string: its CRC-32/IEEE is 0xcbf43926."""
WITNESS_FIELDS = {"message_type": 7, "source_kernel": 1, "dest_kernel": 2}


def _envelope(version: int = VERSION, crc: int | None = None,
              payload: bytes = CHECK_PAYLOAD) -> str:
    """An envelope with the given version and checksum (default: the right one)."""
    values = MESSAGE_HEADER.default_values() | WITNESS_FIELDS | {
        "version": version, "payload_size": len(payload),
        "checksum": zlib.crc32(payload) if crc is None else crc}
    return (MESSAGE_HEADER.pack(values) + payload).hex()


def _encode_domain() -> st.SearchStrategy:
    word = st.integers(0, 2**64 - 1)
    return st.fixed_dictionaries({"payload": st.binary(max_size=300)}, optional={
        "flags": st.integers(0, 2**32 - 1), "message_id": word, "correlation_id": word,
        "source_kernel": word, "dest_kernel": word, "message_type": word,
        "priority": st.integers(0, 255), "timestamp": st.lists(word, min_size=3, max_size=3),
        "deadline": st.lists(word, min_size=3, max_size=3)}).map(
        lambda a: {k: a.get(k, _DEFAULTS.get(k, 0)) for k in ("payload", *CALLER)})


def _decode_domain() -> st.SearchStrategy:
    @st.composite
    def build(draw) -> dict:
        payload = draw(st.binary(max_size=64))
        crc = draw(st.sampled_from([None, 0, 1]))
        return {"envelope": bytes.fromhex(_envelope(draw(st.sampled_from([0, 1, 1, 2])),
                                                    crc, payload))}

    return build()


TRAILING = _envelope(crc=0) + "00ff"
"""A host envelope (checksum 0) with two bytes after its payload."""
BIG = {"payload": "00" * (MAX_PAYLOAD + 1)}
"""A payload one byte over MAX_PAYLOAD."""


declare(
    "message.encode", chapter=4,
    summary="RingKernel's message envelope: a 256-byte MessageHeader (MAGIC, VERSION, the "
            "caller's fields, payload size and CRC-32) followed by the payload.",
    args=record(payload=Field(BYTES, f"at most {MAX_PAYLOAD} bytes"),
                flags=Field(U32, "", 0), message_id=Field(U64, "", 0),
                correlation_id=Field(U64, "0 = none", 0), source_kernel=Field(U64, "", 0),
                dest_kernel=Field(U64, "0 = host", 0), message_type=Field(U64, "", 0),
                priority=Field(U8, "Priority ordinal", PRIORITY_NORMAL),
                timestamp=Field(HLC_WIRE, "HlcTimestamp [physical, logical, node_id]",
                                [0, 0, 0]),
                deadline=Field(HLC_WIRE, "HlcTimestamp; all zero: none", [0, 0, 0])),
    result=record(envelope=Field(BYTES, "header then payload"),
                  checksum=Field(BITS32, "the header's checksum")),
    spec=(encode, checksum), domain=_encode_domain, errata=(E4_100, E4_105, E4_106),
    invalid=(InvalidCase("a payload of 64 KiB + 1", lambda: st.just(
                 {"payload": "00" * (MAX_PAYLOAD + 1)})),
             InvalidCase("a message id given as a decimal string", lambda: st.just(
                 {"payload": "", "message_id": "12"}), "bad_request")),
    not_applicable={"numba": "one CRC-32 and a 256-byte header per message: zlib's work",
                    "cupy": "one CRC-32 and a 256-byte header per message: zlib's work"},
    edges=lambda: [{"payload": CHECK_PAYLOAD.hex(), **WITNESS_FIELDS}, {"payload": ""},
                   {"payload": "ab" * MAX_PAYLOAD, "priority": 255,
                    "timestamp": [2**64 - 1, 1, 2], "deadline": [3, 4, 5]}],
)

declare(
    "message.decode", chapter=4,
    summary="Read a RingKernel message envelope: MAGIC, VERSION, the payload size and its "
            "CRC-32 checked; the header's members and the payload.",
    args=record(envelope=Field(BYTES, "a MessageHeader followed by the payload")),
    result=record(**CALLER, magic=HASH64, version=U32, payload_size=U64, checksum=BITS32,
                  payload=BYTES),
    spec=(decode, checksum), domain=_decode_domain, errata=(E4_100, E4_101, E4_107),
    invalid=(InvalidCase("an envelope shorter than the header", lambda: st.just(
                 {"envelope": "00" * 255})),
             InvalidCase("a wrong checksum", lambda: st.just({"envelope": _envelope(crc=1)})),
             InvalidCase("version 2", lambda: st.just({"envelope": _envelope(2)}))),
    not_applicable={"numba": "one CRC-32 and a 256-byte header per message: zlib's work",
                    "cupy": "one CRC-32 and a 256-byte header per message: zlib's work"},
    edges=lambda: [{"envelope": _envelope()}, {"envelope": _envelope(crc=0)},
                   {"envelope": _envelope(0)}, {"envelope": _envelope(payload=b"")},
                   {"envelope": TRAILING}],
)

erratum(
    E4_100, "The host path writes checksum 0 and never checks it",
    seed=SEEDS["ringkernel"],
    location="crates/ringkernel-core/src/message.rs MessageHeader::new and validate",
    ops=("message.encode", "message.decode"),
    witness={"args": {"payload": CHECK_PAYLOAD.hex(), **WITNESS_FIELDS},
             "spec": {"checksum": "0xcbf43926"}, "seed": {"checksum": "0x00000000"}},
    also=({"op": "message.decode", "args": {"envelope": _envelope(crc=0)},
           "spec": {"error": "invalid_input"}, "seed": {"checksum": "0x00000000"}},),
    flag="result",
    detail="MessageHeader::new and Default set checksum 0 and validate reads only magic, "
           "version and payload_size, so a host envelope carries no checksum and a corrupt "
           "payload passes. Only the generated GPU k2k_send_envelope fills it, and with "
           "CRC-32C (polynomial 0x82F63B78), not the CRC-32 the header's comment names. The "
           "spec writes the payload's CRC-32/IEEE and refuses an envelope whose checksum "
           "differs.",
)
erratum(
    E4_101, "An envelope of version 0 is accepted",
    seed=SEEDS["ringkernel"],
    location="crates/ringkernel-core/src/message.rs MessageHeader::validate",
    ops=("message.decode",),
    witness={"args": {"envelope": _envelope(0)}, "spec": {"error": "invalid_input"},
             "seed": {"version": 0}},
    flag="result",
    detail="validate (and the generated message_header_validate) test version <= VERSION, "
           "so version 0, which no writer produces, reads as a valid envelope. The spec "
           "accepts VERSION only.",
)
erratum(
    E4_105, "The envelope's last 24 header bytes are uninitialised memory",
    seed=SEEDS["ringkernel"],
    location="crates/ringkernel-core/src/message.rs MessageHeader::as_bytes, "
             "MessageEnvelope::to_bytes",
    ops=("message.encode",),
    witness={"args": {"payload": ""},
             "spec": "bytes 232-255 of the envelope are zero",
             "seed": "bytes 232-255 are whatever the stack held: two runs of the real code gave "
                     "...eded6c6b25560000...90ec6590fe7f0000 and ...0400000000000000"
                     "...80368a3cfd7f0000 (pointers)"},
    flag="ub",
    detail="MessageHeader is repr(C, align(64)) with 232 bytes of members, so size_of is 256 "
           "and the last 24 bytes are padding. as_bytes makes a &[u8] over all 256 bytes, "
           "reading padding that no constructor writes: undefined behaviour, and in practice "
           "stale stack bytes (addresses among them) go into every envelope to_bytes writes. "
           "The spec writes zeros there, and so does the seed profile (the real-code adapter "
           "builds the header in zeroed memory, one content the padding may have).",
)
erratum(
    E4_106, "An envelope is written with a payload over 64 KiB",
    seed=SEEDS["ringkernel"],
    location="crates/ringkernel-core/src/message.rs MessageHeader::new, "
             "MessageEnvelope::to_bytes",
    ops=("message.encode",),
    witness={"args": BIG, "spec": {"error": "invalid_input"},
             "seed": {"checksum": "0x00000000"}},
    flag="result",
    detail="Nothing on the writing side compares the payload with MAX_PAYLOAD_SIZE: new takes "
           "any usize as payload_size and to_bytes appends the whole payload, so an envelope "
           "that from_bytes (validate: payload_size <= 64 KiB) refuses is written. The spec "
           "refuses the payload when encoding.",
)
erratum(
    E4_107, "Bytes after the payload are ignored",
    seed=SEEDS["ringkernel"],
    location="crates/ringkernel-core/src/message.rs MessageEnvelope::from_bytes",
    ops=("message.decode",),
    witness={"args": {"envelope": TRAILING}, "spec": {"error": "invalid_input"},
             "seed": {"payload_size": 9, "payload": CHECK_PAYLOAD.hex()}},
    flag="result",
    detail="from_bytes checks only that payload_size bytes follow the header and takes them, "
           "so any bytes after the payload are dropped without a word: an envelope and that "
           "envelope with garbage appended decode alike. The spec requires payload_size to be "
           "the number of bytes after the header.",
)
