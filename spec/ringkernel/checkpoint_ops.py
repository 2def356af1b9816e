"""Chapter 19: the checkpoint ops and the errata of RingKernel's checkpoints.

Wire form of a checkpoint: {header: {created_at, flags} or null (zeros), metadata: {kernel_id,
kernel_type, step, grid [3], tile [3], hlc {physical, logical, node_id}, custom [{key, value}]},
chunks: [{type, id, data}]}. A chunk's type must be a ChunkType (1-8, 100); `id` is its
chunk_id, part of its identity for DeviceMemory (5) and Custom (100) and 0 for other types.
`custom` is the map as a list of entries in insertion order (keys unique); results list it
in ascending key order. A delta is a checkpoint whose custom map holds the two delta keys
(spec/ringkernel/checkpoint_delta.py). RingKernel takes any u32 type and any chunk_id (E19.47): its
digest, delta and apply pass over a type outside ChunkType, its encoding writes it.

1. checkpoint.encode: the file (spec/ringkernel/checkpoint.py), with its header_size, total_size and
   checksum.
2. checkpoint.decode: the checkpoint a file holds, and its checksum; every fault is
   invalid_input naming its byte offset.
3. checkpoint.digest: the content digest of a chunk list.
4. checkpoint.delta / checkpoint.apply: the delta of `new` against `base`, and a delta applied
   to its base.
"""

from __future__ import annotations

import zlib

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BYTES, U32, U64, Array, Field, List, Optional, Utf8, record
from ..core.strategies import st
from .checkpoint import (
    CHUNK_TYPES,
    E19_40,
    E19_41,
    E19_42,
    E19_46,
    E19_47,
    HEADER_SIZE,
    KEYED,
    SEED,
    Checkpoint,
    Chunk,
    Metadata,
    body_bytes,
    decode,
    encode,
    sizes,
)
from .checkpoint_delta import (
    E19_43,
    E19_44,
    E19_45,
    LAYOUT_KEY,
    PARENT_KEY,
    applied,
    content_digest,
    delta_from,
)

PRESSURE_ID = 12440809081581870634
"""DefaultHasher("pressure") on rustc 1.95: the chunk_id of a device-memory region so named."""
ZERO_HEADER = {"created_at": 0, "flags": 0}
ZERO_HLC = {"physical": 0, "logical": 0, "node_id": 0}

HEADER = record(created_at=Field(U64, "UNIX epoch microseconds", 0),
                flags=Field(U32, "the header's flags word", 0))
CUSTOM = List(record(key=Utf8(), value=Utf8()))
METADATA = record(
    kernel_id=Field(Utf8(), "", ""), kernel_type=Field(Utf8(), "", ""),
    step=Field(U64, "the current step", 0),
    grid=Field(Array(U32, 3), "grid width, height, depth", [0, 0, 0]),
    tile=Field(Array(U32, 3), "tile x, y, z", [0, 0, 0]),
    hlc=Field(record(physical=Field(U64, "", 0), logical=Field(U64, "", 0),
                     node_id=Field(U64, "", 0)), "HLC timestamp", ZERO_HLC),
    custom=Field(CUSTOM, "the custom map's entries, keys unique", []))
CHUNK = record(type=Field(U32, "ChunkType: 1-8 or 100"),
               id=Field(U64, "chunk_id: DeviceMemory and Custom only, else 0", 0),
               data=Field(BYTES, "the chunk's bytes"))
CHUNKS = List(CHUNK)
CHECKPOINT = record(header=Field(Optional(HEADER, ZERO_HEADER), "null: zeros", None),
                    metadata=Field(METADATA), chunks=Field(CHUNKS))
RESULT = {"header": Field(HEADER), "metadata": Field(METADATA), "chunks": Field(CHUNKS)}


def pairs(custom: dict[str, str]) -> list[dict]:
    """A custom map's entries in wire form, in the dict's order."""
    return [{"key": k, "value": v} for k, v in custom.items()]


# ── wire <-> spec ────────────────────────────────────────────────────────────────────────────

def chunks_from_wire(items: list[dict], path: str, errata: frozenset[str] = NO_ERRATA
                     ) -> tuple[Chunk, ...]:
    for i, c in enumerate(items):
        if E19_47 in errata:
            break
        if c["type"] not in CHUNK_TYPES:
            raise InvalidInput(f"{path}[{i}].type: {c['type']} is not a ChunkType")
        if c["type"] not in KEYED and c["id"]:
            raise InvalidInput(f"{path}[{i}].id: a type {c['type']} chunk has chunk_id 0")
    return tuple(Chunk(c["type"], c["id"], bytes(c["data"])) for c in items)


def metadata_from_wire(m: dict, path: str) -> Metadata:
    keys = [e["key"] for e in m["custom"]]
    for i, key in enumerate(keys):
        if key in keys[:i]:
            raise InvalidInput(f"{path}.custom[{i}].key: {key!r} is repeated")
    hlc = m["hlc"]
    return Metadata(m["kernel_id"], m["kernel_type"], m["step"], tuple(m["grid"]),
                    tuple(m["tile"]), (hlc["physical"], hlc["logical"], hlc["node_id"]),
                    tuple((e["key"], e["value"]) for e in m["custom"]))


def from_wire(header: dict | None, metadata: dict, chunks: list[dict], path: str,
              errata: frozenset[str] = NO_ERRATA) -> Checkpoint:
    h = header or ZERO_HEADER
    return Checkpoint(metadata_from_wire(metadata, f"{path}metadata"),
                      chunks_from_wire(chunks, f"{path}chunks", errata), h["created_at"],
                      h["flags"])


def checkpoint_arg(c: dict, name: str, errata: frozenset[str] = NO_ERRATA) -> Checkpoint:
    return from_wire(c["header"], c["metadata"], c["chunks"], f"args.{name}.", errata)


def to_wire(c: Checkpoint) -> dict:
    m = c.metadata
    return {"header": {"created_at": c.created_at, "flags": c.flags},
            "metadata": {"kernel_id": m.kernel_id, "kernel_type": m.kernel_type,
                         "step": m.step, "grid": list(m.grid), "tile": list(m.tile),
                         "hlc": dict(zip(("physical", "logical", "node_id"), m.hlc,
                                         strict=True)),
                         "custom": pairs(dict(sorted(m.custom,
                                                     key=lambda e: e[0].encode())))},
            "chunks": [{"type": ch.type, "id": ch.id, "data": ch.data} for ch in c.chunks]}


def json_wire(c: Checkpoint) -> dict:
    """to_wire with the data as hex: a checkpoint as a request carries it."""
    return {**to_wire(c), "chunks": [{"type": ch.type, "id": ch.id, "data": ch.data.hex()}
                                     for ch in c.chunks]}


# ── ops ──────────────────────────────────────────────────────────────────────────────────────

def encode_op(header: dict | None, metadata: dict, chunks: list[dict],
              errata: frozenset[str] = NO_ERRATA) -> dict:
    data = encode(from_wire(header, metadata, chunks, "args.", errata), errata)
    header_size, total_size = sizes(len(data), errata)
    return {"hex": data, "header_size": header_size, "total_size": total_size,
            "checksum": int.from_bytes(data[32:36], "little")}


def decode_op(hex: bytes, errata: frozenset[str] = NO_ERRATA) -> dict:
    d = decode(bytes(hex), errata)
    return {**to_wire(d.checkpoint), "checksum": d.checksum}


def digest_op(chunks: list[dict], errata: frozenset[str] = NO_ERRATA) -> dict:
    return {"digest": content_digest(chunks_from_wire(chunks, "args.chunks", errata))}


def delta_op(base: dict, new: dict, errata: frozenset[str] = NO_ERRATA) -> dict:
    return to_wire(delta_from(checkpoint_arg(base, "base", errata),
                              checkpoint_arg(new, "new", errata), errata))


def apply_op(base: dict, delta: dict, errata: frozenset[str] = NO_ERRATA) -> dict:
    return to_wire(applied(checkpoint_arg(base, "base", errata),
                           checkpoint_arg(delta, "delta", errata), errata))


# ── domains and edges ────────────────────────────────────────────────────────────────────────

TYPES = (1, 2, 4, 5, 100)
"""The chunk types the domains draw: three unkeyed, both keyed."""


def chunk_values(small: bool = True) -> st.SearchStrategy:
    """Chunks (Python values) from a small pool, so that identities and bytes repeat."""
    data = st.sampled_from([b"", b"\x01", b"\x02\x03"]) if small else st.binary(max_size=8)
    ids = st.sampled_from([0, 1, PRESSURE_ID])
    return st.builds(lambda t, i, d: {"type": t, "id": i if t in KEYED else 0, "data": d},
                     st.sampled_from(TYPES), ids, data)


def metadata_values() -> st.SearchStrategy:
    text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)
    u32, u64 = st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)
    return st.fixed_dictionaries({
        "kernel_id": text, "kernel_type": text, "step": u64,
        "grid": st.lists(u32, min_size=3, max_size=3), "tile": st.lists(u32, min_size=3,
                                                                        max_size=3),
        "hlc": st.fixed_dictionaries({"physical": u64, "logical": u64, "node_id": u64}),
        "custom": st.dictionaries(text, text, max_size=3).map(pairs)})


def checkpoint_values(small: bool = True) -> st.SearchStrategy:
    header = st.none() | st.fixed_dictionaries({"created_at": st.integers(0, 2**64 - 1),
                                                "flags": st.integers(0, 2**32 - 1)})
    return st.fixed_dictionaries({"header": header, "metadata": metadata_values(),
                                  "chunks": st.lists(chunk_values(small), max_size=4)})


def value_checkpoint(c: dict) -> Checkpoint:
    return from_wire(c["header"], c["metadata"], c["chunks"], "")


def delta_values() -> st.SearchStrategy:
    return st.fixed_dictionaries({"base": checkpoint_values(), "new": checkpoint_values()})


@st.composite
def apply_values(draw) -> dict:
    """A base and a delta made against it, or against another checkpoint."""
    base, other, new = draw(checkpoint_values()), draw(checkpoint_values()), \
        draw(checkpoint_values())
    parent = draw(st.sampled_from([base, base, other]))
    delta = delta_from(value_checkpoint(parent), value_checkpoint(new))
    return {"base": base, "delta": to_wire(delta) | {"header": None}}


@st.composite
def file_values(draw) -> dict:
    """Files encoding writes, sometimes with one byte changed or cut short."""
    data = bytearray(encode(value_checkpoint(draw(checkpoint_values(small=False)))))
    how = draw(st.sampled_from(["as is", "as is", "byte", "cut"]))
    if how == "byte":
        data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
    elif how == "cut":
        del data[draw(st.integers(0, len(data) - 1)):]
    return {"hex": bytes(data)}


def resealed(data: bytes) -> bytes:
    """The file with its checksum rewritten to match its body."""
    return data[:32] + zlib.crc32(data[HEADER_SIZE:]).to_bytes(4, "little") + data[36:]


EMPTY = Checkpoint(Metadata())
CB_123 = {"type": 1, "id": 0, "data": "010203"}
PRESSURE = {"type": 5, "id": PRESSURE_ID, "data": "04050607"}
SPEC_FILE = encode(EMPTY)


def decode_edges() -> list[dict]:
    """The faults the decoder names, each once, and a file the spec writes."""
    def word(at: int, value: int, n: int = 4) -> bytes:
        return resealed(SPEC_FILE[:at] + value.to_bytes(n, "little") + SPEC_FILE[at + n:])

    claims_1gib = SPEC_FILE[:16] + (1 << 30).to_bytes(8, "little") + SPEC_FILE[24:100]
    huge_meta = resealed(SPEC_FILE[:64] + b"\xff\xff\xff\xff" + SPEC_FILE[68:])
    files = [SPEC_FILE, SPEC_FILE[:63], b"RKCKPT02" + SPEC_FILE[8:], word(8, 2), word(8, 0),
             word(12, 56), word(16, 1 << 31, 8), claims_1gib, word(28, 1), word(24, 1),
             huge_meta, SPEC_FILE[:32] + b"\0\0\0\0" + SPEC_FILE[36:], resealed(SPEC_FILE + b"\0"),
             encode(Checkpoint(Metadata(), (Chunk(1, 0, b"\x01\x02\x03"),)))]
    return [{"hex": f.hex()} for f in files]


declare(
    "checkpoint.encode", chapter=19,
    summary="RingKernel's checkpoint file: the 64-byte header, the length-prefixed metadata "
            "(custom keys in byte order) and the chunks, with the CRC-32 of the body.",
    args=CHECKPOINT,
    result=record(hex=Field(BYTES, "the file"),
                  header_size=Field(U32, "the header_size word"),
                  total_size=Field(U64, "the total_size word"),
                  checksum=Field(U32, "CRC-32/IEEE of the bytes after the header")),
    spec=(encode,), errata=(E19_40, E19_41, E19_46, E19_47),
    domain=lambda: checkpoint_values(small=False),
    edges=lambda: [{"metadata": {}, "chunks": []},
                   {"header": {"created_at": 1, "flags": 2}, "metadata": {
                       "kernel_id": "k", "kernel_type": "fdtd_3d", "step": 7,
                       "grid": [1, 2, 3], "tile": [4, 5, 6],
                       "hlc": {"physical": 8, "logical": 9, "node_id": 10},
                       "custom": pairs({"b": "1", "a": "2"})}, "chunks": [CB_123, PRESSURE]}],
    invalid=(InvalidCase("a chunk type that is no ChunkType", lambda: st.just(
        {"metadata": {}, "chunks": [{"type": 9, "data": ""}]})),),
    not_applicable={"numba": "one byte string per checkpoint, built field by field: no "
                             "numeric core to compile",
                    "cupy": "one serial byte string per checkpoint: nothing to spread over "
                            "a device"},
)
declare(
    "checkpoint.decode", chapter=19,
    summary="The checkpoint a file holds and its checksum; every fault is invalid_input "
            "naming its byte offset.",
    args=record(hex=Field(BYTES, "the file")),
    result=record(**RESULT, checksum=Field(U32, "the header's checksum word")),
    spec=(decode,), errata=(E19_40, E19_41, E19_42), domain=file_values, edges=decode_edges,
    invalid=(InvalidCase("a file shorter than its header", lambda: st.binary(max_size=63).map(
                 lambda b: {"hex": b.hex()})),
             InvalidCase("a checksum that is not the body's", lambda: st.just(
                 {"hex": (SPEC_FILE[:32] + b"\1\0\0\0" + SPEC_FILE[36:]).hex()}))),
    not_applicable={"numba": "a sequential parse whose every step depends on the lengths "
                             "before it: no batch form",
                    "cupy": "a sequential parse of one file: nothing to spread over a device"},
)
declare(
    "checkpoint.digest", chapter=19,
    summary="RingKernel's content digest: 8 lowercase hex digits of the CRC-32 over each "
            "chunk's 16-byte identity record and data, in order.",
    args=record(chunks=Field(CHUNKS)),
    result=record(digest=Field(Utf8(), "8 lowercase hex digits")),
    spec=(content_digest,), errata=(E19_47,), domain=lambda: st.fixed_dictionaries(
        {"chunks": st.lists(chunk_values(small=False), max_size=6)}),
    edges=lambda: [{"chunks": []}, {"chunks": [CB_123]}, {"chunks": [CB_123, PRESSURE]},
                   {"chunks": [PRESSURE, CB_123]}],
    invalid=(InvalidCase("a chunk type that is no ChunkType", lambda: st.just(
        {"chunks": [{"type": 0, "data": ""}]})),),
    not_applicable={"numba": "one CRC-32 over a few chunks, which zlib computes; a batch "
                             "kernel would only reimplement the CRC table",
                    "cupy": "a CRC chain is serial over the bytes of one checkpoint"},
)
declare(
    "checkpoint.delta", chapter=19,
    summary="The delta of `new` against `base`: new's changed and new chunks, with the base's "
            "digest and new's chunk layout (which deletes what it does not name) recorded.",
    args=record(base=Field(CHECKPOINT), new=Field(CHECKPOINT)),
    result=record(**RESULT),
    spec=(delta_from, content_digest), errata=(E19_43, E19_44, E19_46, E19_47),
    domain=delta_values,
    edges=lambda: [
        {"base": {"metadata": {}, "chunks": [CB_123]},
         "new": {"metadata": {}, "chunks": [CB_123, PRESSURE]}},
        {"base": {"metadata": {}, "chunks": [PRESSURE, CB_123]},
         "new": {"metadata": {}, "chunks": [{**CB_123, "data": "01"}, PRESSURE]}}],
    invalid=(InvalidCase("a ControlBlock with a chunk_id", lambda: st.just(
        {"base": {"metadata": {}, "chunks": []},
         "new": {"metadata": {}, "chunks": [{"type": 1, "id": 3, "data": ""}]}})),),
    not_applicable={"numba": "a keyed comparison of a few chunks: no numeric core",
                    "cupy": "a keyed comparison of a few chunks: nothing to spread over a "
                            "device"},
)
declare(
    "checkpoint.apply", chapter=19,
    summary="A delta applied to its base: the base's digest is checked, the chunks are the "
            "layout's, the metadata the delta's without the delta keys.",
    args=record(base=Field(CHECKPOINT), delta=Field(CHECKPOINT)),
    result=record(**RESULT),
    spec=(applied, content_digest), errata=(E19_43, E19_44, E19_45, E19_46, E19_47),
    domain=apply_values,
    edges=lambda: [
        {"base": {"metadata": {}, "chunks": [CB_123]},
         "delta": {"metadata": {"custom": pairs({PARENT_KEY: "a7171038", LAYOUT_KEY: "1,+"})},
                   "chunks": [PRESSURE]}}],
    invalid=(InvalidCase("a delta made against another base", lambda: st.just(
        {"base": {"metadata": {}, "chunks": [CB_123]},
         "delta": {"metadata": {"custom": pairs({PARENT_KEY: "00000000", LAYOUT_KEY: ""})},
                   "chunks": []}})),),
    not_applicable={"numba": "a keyed merge of a few chunks: no numeric core",
                    "cupy": "a keyed merge of a few chunks: nothing to spread over a device"},
)



# ── errata ───────────────────────────────────────────────────────────────────────────────────

def _empty(custom: dict[str, str] | None = None, chunks: tuple[dict, ...] = ()) -> dict:
    """A checkpoint in request form: default metadata but `custom`, and `chunks`."""
    return {"metadata": {"custom": pairs(custom or {})}, "chunks": list(chunks)}


SORTED = Checkpoint(Metadata(custom=(("b", "1"), ("a", "2"))))
CB_EMPTY = {"type": 1, "id": 0, "data": ""}
FOUND_BASE, FOUND_NEW = _empty(chunks=(CB_EMPTY,)), _empty()
"""The smallest base and new for which RingKernel's apply(base, delta(base, new)) is not new,
as hypothesis finds it (tests/ringkernel/test_checkpoint.py searches again)."""
FOUND_DIGEST = content_digest((Chunk(1, 0, b""),))
FOUND_DELTA = _empty({PARENT_KEY: FOUND_DIGEST, LAYOUT_KEY: ""})
NO_CUSTOM = dict.fromkeys(("kernel_id", "kernel_type"), "") | {
    "step": 0, "grid": [0, 0, 0], "tile": [0, 0, 0], "hlc": ZERO_HLC}

erratum(
    E19_40, "header_size says 56 and total_size is 8 bytes short",
    seed=SEED, location="crates/ringkernel-core/src/checkpoint.rs CheckpointHeader::new, "
                        "Checkpoint::total_size",
    ops=("checkpoint.encode",),
    witness={"args": _empty(), "spec": {"header_size": 64, "total_size": 136},
             "seed": {"header_size": 56, "total_size": 128}},
    also=({"op": "checkpoint.decode", "args": {"hex": encode(EMPTY, frozenset({E19_40})).hex()},
           "spec": {"error": "invalid_input"}, "seed": {"chunks": [], "checksum":
                                                        zlib.crc32(SPEC_FILE[64:])}},),
    flag="result",
    detail="The header is written as 64 bytes, but header_size and total_size are computed "
           "from size_of::<CheckpointHeader>(), 56 (8+4+4+8+4+4+4+4+8+8). Every file says its "
           "header is 56 bytes and its length 8 bytes less than it is. The spec writes 64 and "
           "the file's length, and its decoder refuses other values.",
)
erratum(
    E19_41, "The custom map is written in HashMap order, so the bytes are not a function of "
            "the checkpoint",
    seed=SEED, location="crates/ringkernel-core/src/checkpoint.rs CheckpointMetadata::to_bytes",
    ops=("checkpoint.encode",),
    witness={"args": {"metadata": {"custom": pairs({"b": "1", "a": "2"})}, "chunks": []},
             "spec": {"checksum": zlib.crc32(body_bytes(SORTED))},
             "seed": {"checksum": zlib.crc32(body_bytes(SORTED, frozenset({E19_41})))}},
    also=({"op": "checkpoint.decode",
           "args": {"hex": encode(SORTED, frozenset({E19_41})).hex()},
           "spec": {"error": "invalid_input"},
           "seed": {"metadata": NO_CUSTOM | {"custom": pairs({"a": "2", "b": "1"})}}},),
    flag="result",
    detail="`custom` is a std HashMap, iterated as it lies: with two keys or more, the bytes "
           "and the file's checksum differ between processes (SipHash with random keys). The "
           "seed profile takes insertion order as one order the HashMap may yield, so the "
           "witness is checked live; the real answer is either order. The spec writes the "
           "keys in ascending byte order and its decoder refuses any other (and a repeated "
           "key), so a checkpoint has exactly one file.",
)
erratum(
    E19_42, "The loader reads past every header word but magic, version, total_size and "
            "checksum",
    seed=SEED, location="crates/ringkernel-core/src/checkpoint.rs Checkpoint::from_bytes, "
                        "CheckpointHeader::validate, CheckpointMetadata::from_bytes",
    ops=("checkpoint.decode",),
    witness={"args": {"hex": resealed(SPEC_FILE + b"\0").hex()},
             "spec": {"error": "invalid_input"}, "seed": {"chunks": []}},
    flag="result",
    detail="RingKernel checks the magic, version <= 1 (so version 0 passes), total_size <= "
           "1 GiB and the checksum. It ignores header_size, total_size against the length, "
           "compression (an lz4 or zstd file is read as raw bytes), the reserved bytes, chunk "
           "flags, an uncompressed_size unlike compressed_size, unknown chunk types, bytes "
           "left in the metadata and bytes after the last chunk. So many files load as the "
           "same checkpoint. The spec accepts exactly the files it writes.",
)
erratum(
    E19_43, "A restored checkpoint keeps the chunks the new checkpoint deleted",
    seed=SEED, location="crates/ringkernel-core/src/checkpoint.rs Checkpoint::delta_from, "
                        "Checkpoint::applied_with_delta",
    ops=("checkpoint.apply",),
    witness={"args": {"base": FOUND_BASE, "delta": FOUND_DELTA},
             "spec": {"chunks": []}, "seed": {"chunks": [CB_EMPTY]}},
    also=({"op": "checkpoint.delta", "args": {"base": FOUND_BASE, "new": FOUND_NEW},
           "spec": {"metadata": NO_CUSTOM | {"custom": pairs({LAYOUT_KEY: "",
                                                        PARENT_KEY: FOUND_DIGEST})}},
           "seed": {"metadata": NO_CUSTOM | {"custom": pairs({PARENT_KEY: FOUND_DIGEST})}}},),
    flag="result",
    detail="A delta holds new's changed and new chunks only, and apply starts from base's "
           "chunks, so a chunk base has and new lacks survives: apply(base, delta(base, new)) "
           "is not new. Hypothesis finds the smallest case: a base of one empty ControlBlock "
           "and an empty new. Base order wins too, so a reordered new is restored in base's "
           "order, with another digest, and the next delta of a chain is refused. The spec "
           "records new's layout, which deletes what it does not name and fixes the order.",
)
erratum(
    E19_44, "A restored checkpoint keeps the delta's parent key, and a delta overwrites one",
    seed=SEED, location="crates/ringkernel-core/src/checkpoint.rs Checkpoint::delta_from, "
                        "Checkpoint::applied_with_delta",
    ops=("checkpoint.apply",),
    witness={"args": {"base": _empty(), "delta": _empty({PARENT_KEY: "00000000",
                                                         LAYOUT_KEY: ""})},
             "spec": {"metadata": NO_CUSTOM | {"custom": pairs({})}},
             "seed": {"metadata": NO_CUSTOM | {"custom": pairs({LAYOUT_KEY: "",
                                                                PARENT_KEY: "00000000"})}}},
    also=({"op": "checkpoint.delta",
           "args": {"base": _empty(), "new": _empty({PARENT_KEY: "x"})},
           "spec": {"error": "invalid_input"},
           "seed": {"metadata": NO_CUSTOM | {"custom": pairs({PARENT_KEY: "00000000"})}}},),
    flag="result",
    detail="applied_with_delta takes the delta's metadata whole, so the restored checkpoint "
           "carries ringkernel.delta.parent_digest, which new never had, and a delta made "
           "from it records that key over new's own. The spec drops the delta keys on apply "
           "and refuses a new checkpoint that holds one.",
)
erratum(
    E19_45, "A delta that records no parent digest is applied to any base",
    seed=SEED, location="crates/ringkernel-core/src/checkpoint.rs Checkpoint::applied_with_delta",
    ops=("checkpoint.apply",),
    witness={"args": {"base": _empty(chunks=(CB_123,)), "delta": _empty()},
             "spec": {"error": "invalid_input"}, "seed": {"chunks": [CB_123]}},
    flag="result",
    detail="The parent check runs only when the key is present, so a full checkpoint or a "
           "delta stripped of its key is applied on top of whatever base it is given. The "
           "spec requires the key.",
)
FLAGGED = {"header": {"created_at": 5, "flags": 1}, "metadata": {}, "chunks": []}
"""A checkpoint whose header carries flags."""
UNKNOWN_TYPES = {"base": _empty(chunks=({"type": 9, "id": 0, "data": "01"},)),
                 "delta": _empty(chunks=({"type": 9, "id": 0, "data": "02"},
                                         {"type": 99, "id": 0, "data": "03"}))}
"""Chunk types 9 and 99, outside ChunkType, in a base and a delta."""

erratum(
    E19_46, "The header's flags are never written, and a delta or a restored checkpoint gets "
            "a fresh header",
    seed=SEED, location="crates/ringkernel-core/src/checkpoint.rs Checkpoint::to_bytes, "
                        "CheckpointHeader::new, Checkpoint::delta_from, applied_with_delta",
    ops=("checkpoint.encode", "checkpoint.delta", "checkpoint.apply"),
    witness={"args": FLAGGED, "spec": {"hex": encode(Checkpoint(Metadata(), (), 5, 1)).hex()},
             "seed": {"hex": encode(Checkpoint(Metadata(), (), 5, 1),
                                    frozenset({E19_40, E19_46})).hex()}},
    also=({"op": "checkpoint.delta", "args": {"base": _empty(), "new": FLAGGED},
           "spec": {"header": {"created_at": 5, "flags": 1}},
           "seed": {"header": {"created_at": 5, "flags": 0}}},
          {"op": "checkpoint.apply", "args": {"base": _empty(), "delta": FLAGGED},
           "spec": {"error": "invalid_input"},
           "seed": {"header": {"created_at": 5, "flags": 0}}}),
    flag="result",
    detail="to_bytes writes CheckpointHeader::new(count, size), whose flags are 0 and whose "
           "created_at is the wall clock at writing, so a checkpoint's own header (flags, "
           "created_at) never reaches the file; delta_from and applied_with_delta build their "
           "result with Checkpoint::new, a fresh header too. The seed profile takes the clock "
           "to read the checkpoint's created_at (new's, the delta's), so only the flags differ: "
           "always 0. The spec writes and keeps the header it is given.",
)
erratum(
    E19_47, "A chunk of any type and chunk_id is taken: digest, delta and apply pass over "
            "unknown types",
    seed=SEED, location="crates/ringkernel-core/src/checkpoint.rs ChunkHeader, "
                        "DataChunk::chunk_identity, content_digest, delta_from, "
                        "applied_with_delta",
    ops=("checkpoint.digest", "checkpoint.encode", "checkpoint.delta", "checkpoint.apply"),
    witness={"args": {"chunks": [{"type": 0, "data": ""}]}, "spec": {"error": "invalid_input"},
             "seed": {"digest": "00000000"}},
    also=({"op": "checkpoint.apply", "args": UNKNOWN_TYPES, "spec": {"error": "invalid_input"},
           "seed": {"chunks": [{"type": 9, "id": 0, "data": "01"}]}},
          {"op": "checkpoint.delta",
           "args": {"base": _empty(), "new": _empty(chunks=({"type": 1, "id": 3, "data": ""},
                                                            {"type": 101, "id": 0,
                                                             "data": "04"}))},
           "spec": {"error": "invalid_input"},
           "seed": {"chunks": [{"type": 1, "id": 3, "data": ""}]}},
          {"op": "checkpoint.encode", "args": _empty(chunks=({"type": 9, "id": 0, "data": ""},)),
           "spec": {"error": "invalid_input"}, "seed": {"checksum": 1853360039}}),
    flag="result",
    detail="ChunkHeader's chunk_type is a raw u32 and chunk_id a u64 on every type. A type "
           "outside ChunkType (0, 9, 99, 101, 2^32 - 1) has no chunk_identity: the digest skips "
           "it, delta_from drops it from the delta, applied_with_delta keeps the base's and "
           "drops the delta's, and to_bytes writes it as it is. A chunk_id on a type without "
           "ids is written and carried into a delta, but is no part of the identity, so two "
           "ControlBlocks with different ids are one chunk to delta and apply. The spec refuses "
           "both.",
)
