"""Chapter 19 obligations of RingKernel's checkpoints: a delta restores the new checkpoint
exactly and applies only to its base; the file round-trips both ways and every fault is named
by offset; the content digest gives the facts sheet's vectors."""

from __future__ import annotations

import re
import zlib
from dataclasses import replace

from hypothesis import strategies as st

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.ringkernel.checkpoint import (
    HEADER_SIZE,
    Checkpoint,
    Chunk,
    Metadata,
    Reader,
    check_header,
    custom_order,
    decode,
    encode,
    read_chunk,
    read_metadata,
    sizes,
)
from ...spec.ringkernel.checkpoint_delta import (
    PARENT_KEY,
    applied,
    content_digest,
    delta_from,
    identity,
    index,
    laid_out,
)
from ...spec.ringkernel.checkpoint_ops import (
    checkpoint_values,
    delta_values,
    value_checkpoint,
)
from ..core.obligation import Property, property_obligation

PRESSURE_ID = 12440809081581870634


def _pair(args: dict) -> tuple[Checkpoint, Checkpoint]:
    return value_checkpoint(args["base"]), value_checkpoint(args["new"])


def _changed(base: Checkpoint, c: Chunk) -> bool:
    """Base has no chunk of c's identity, or its last one holds other bytes."""
    same = [b for b in base.chunks if identity(b) == identity(c)]
    return not same or same[-1].data != c.data


def _restores_new(args: dict) -> None:
    base, new = _pair(args)
    delta = delta_from(base, new)
    assert applied(base, delta) == new, (base, new, delta)
    assert delta.chunks == tuple(c for c in new.chunks if _changed(base, c)), delta


CB, H2K = Chunk(1, 0, b"\x01"), Chunk(2, 0, b"\x02")
PAIRS = [
    ((CB,), ()), ((CB, H2K), (H2K, CB)), ((CB, Chunk(1, 0, b"\x09")), (Chunk(1, 0, b"\x09"),)),
    ((CB, Chunk(1, 0, b"\x09")), (CB,)), ((), (CB, CB)), ((CB,), (CB, Chunk(1, 0, b""))),
    ((Chunk(5, 1, b""), Chunk(5, 2, b"")), (Chunk(5, 2, b""),)),
]
"""Deletions, a reorder, repeated identities (base's last wins), keyed chunks."""


def _pair_case(pair) -> dict:
    def wire(chunks):
        return {"header": None, "metadata": {
            "kernel_id": "", "kernel_type": "", "step": 0, "grid": [0, 0, 0],
            "tile": [0, 0, 0], "hlc": {"physical": 0, "logical": 0, "node_id": 0},
            "custom": []}, "chunks": [{"type": c.type, "id": c.id, "data": c.data}
                                      for c in chunks]}
    return {"base": wire(pair[0]), "new": wire(pair[1])}


@property_obligation(
    "PO19.40",
    "checkpoint.delta and checkpoint.apply: apply(base, delta(base, new)) == new (header, "
    "metadata, chunks and their order) for every base and new, deletions and repeated "
    "identities included; the delta holds exactly new's chunks that base's last chunk of "
    "their identity does not already hold.",
    covers=("checkpoint.delta", "checkpoint.apply"),
    subject=delta_from,
    mutants=(
        Mutant.edit("tombstones dropped", "base chunks the layout does not name survive",
                    laid_out, "return tuple(out)", "return tuple(out) + tuple(c for c in "
                    "base.chunks if c not in out)"),
        Mutant.edit("first wins", "a repeated identity in base is indexed by its first chunk",
                    index, "for c in chunks", "for c in reversed(chunks)"),
        Mutant.edit("unchanged included", "every chunk of new goes into the delta",
                    delta_from, "old[ident].data == c.data", "False"),
        Mutant.edit("changed omitted", "a chunk whose identity base has is left out",
                    delta_from, "ident in old and old[ident].data == c.data", "ident in old"),
        Mutant.edit("base order", "apply merges as RingKernel does", applied,
                    "if E19_43 in errata:", "if True:"),
        Mutant.edit("delta keys kept", "the restored metadata keeps the delta keys", applied,
                    "if E19_44 not in errata:", "if False:"),
    ),
)
def delta_restores_new(_subject):
    return [Property("deletions, reorders, repeated identities",
                     _restores_new, cases=lambda: [_pair_case(p) for p in PAIRS]),
            Property("generated base and new", _restores_new, strategy=delta_values,
                     examples=500)]


def _only_its_base(args: dict) -> None:
    base, new = _pair(args)
    other = replace(base, chunks=(*base.chunks, Chunk(4, 0, b"\x07")))
    delta = delta_from(base, new)
    for target in (base, other):
        try:
            applied(target, delta)
            ok = True
        except InvalidInput:
            ok = False
        assert ok == (content_digest(target.chunks) == content_digest(base.chunks)), target
    custom = tuple(kv for kv in delta.metadata.custom if kv[0] != PARENT_KEY)
    bare = replace(delta, metadata=replace(delta.metadata, custom=custom))
    try:
        applied(base, bare)
    except InvalidInput:
        return
    raise AssertionError("a delta without a parent digest was applied")


@property_obligation(
    "PO19.41",
    "checkpoint.apply: a delta applies only to a base whose content digest it records; one "
    "made against another base, or recording no parent digest, is invalid_input.",
    covers=("checkpoint.apply",),
    subject=applied,
    mutants=(
        Mutant.edit("no digest check", "the recorded digest is not compared", applied,
                    "recorded != actual", "False"),
        Mutant.edit("no key no check", "a delta without the key applies (E19.45 always on)",
                    applied, "if recorded is None and E19_45 not in errata:",
                    "if recorded is None and False:"),
    ),
)
def delta_only_on_its_base(_subject):
    return [Property("generated base and new", _only_its_base, strategy=delta_values,
                     examples=300)]


OFFSET = re.compile(r"^offset (\d+) \(")


def _sorted_custom(c: Checkpoint) -> Checkpoint:
    m = c.metadata
    return replace(c, metadata=replace(m, custom=tuple(sorted(m.custom,
                                                              key=lambda kv: kv[0].encode()))))


def _round_trip(c_args: dict) -> None:
    c = value_checkpoint(c_args)
    data = encode(c)
    assert len(data) == int.from_bytes(data[16:24], "little"), "total_size"
    assert decode(data).checkpoint == _sorted_custom(c)


def _file_round_trip(data: bytes) -> None:
    try:
        d = decode(data)
    except InvalidInput as e:
        m = OFFSET.match(e.message)
        assert m and int(m.group(1)) <= len(data), e.message
        return
    assert encode(d.checkpoint) == data


@st.composite
def files(draw) -> bytes:
    """Files encoding writes, changed (a byte or a header word set, bytes inserted, cut or
    appended), then perhaps with total_size and the checksum made to fit again."""
    data = bytearray(encode(value_checkpoint(draw(checkpoint_values(False)))))
    at = draw(st.integers(0, len(data) - 1) | st.sampled_from([8, 12, 24, 28, 36, 48, 60]))
    how = draw(st.sampled_from(["none", "set", "word", "insert", "cut", "append"]))
    if how == "set":
        data[at] = draw(st.integers(0, 255))
    elif how == "word":
        data[at:at + 4] = draw(st.integers(0, 2**32 - 1)).to_bytes(4, "little")
    elif how == "insert":
        data[at:at] = draw(st.binary(min_size=1, max_size=4))
    elif how == "cut":
        del data[at:]
    elif how == "append":
        data += draw(st.binary(min_size=1, max_size=4))
    if len(data) >= HEADER_SIZE:
        if draw(st.booleans()):
            data[16:24] = len(data).to_bytes(8, "little")
        if draw(st.booleans()):
            data[32:36] = zlib.crc32(bytes(data[HEADER_SIZE:])).to_bytes(4, "little")
    return bytes(data)


def _sealed(body: bytes, words: dict[int, tuple[int, int]]) -> bytes:
    """A spec-written empty file with its body swapped and header words (offset: value,
    width) replaced."""
    data = bytearray(encode(Checkpoint(Metadata()))[:64] + body)
    data[16:24] = len(data).to_bytes(8, "little")
    for at, (value, n) in words.items():
        data[at:at + n] = value.to_bytes(n, "little")
    data[32:36] = zlib.crc32(body).to_bytes(4, "little")
    return bytes(data)


HOSTILE = [
    _sealed(b"\xff\xff\xff\xff" + bytes(32), {16: (100, 8)}),
    _sealed(bytes(96), {16: (1 << 30, 8), 24: (2**32 - 1, 4)}),
    encode(Checkpoint(Metadata()))[:100] + bytes(36),
]
"""Short files claiming a 4 GiB metadata, 2^32 - 1 chunks, 1 GiB in all."""
EMPTY_BODY = encode(Checkpoint(Metadata()))[64:]
ONE_CHUNK_BODY = encode(Checkpoint(Metadata(), (Chunk(1, 0, b"\1\2\3"),)))[64:]
CRAFTED = [
    _sealed(EMPTY_BODY + b"\0", {}),
    _sealed(ONE_CHUNK_BODY[:-31] + b"\1" + ONE_CHUNK_BODY[-30:], {24: (1, 4)}),
    _sealed((0x45).to_bytes(4, "little") + EMPTY_BODY[4:] + b"\0", {}),
    _sealed(EMPTY_BODY, {12: (56, 4)}),
    _sealed(EMPTY_BODY, {8: (0, 4)}),
]
"""Files right but for one thing: a byte after the last chunk, a chunk with flags set, a byte
left in the metadata, header_size 56, version 0."""


@property_obligation(
    "PO19.42",
    "checkpoint.encode and checkpoint.decode: decode(encode(c)) == c for every checkpoint "
    "(custom keys in byte order), total_size is the file's length, and encode(decode(b)) == b "
    "for every b decode accepts; every b it refuses is invalid_input naming an offset inside b.",
    covers=("checkpoint.encode", "checkpoint.decode"),
    subject=decode,
    mutants=(
        Mutant.edit("trailing bytes", "bytes after the last chunk are ignored", decode,
                    "if r.at != len(data) and E19_42 not in errata:", "if False:"),
        Mutant.edit("header_size unchecked", "any header_size is accepted", check_header,
                    '"header_size": header_size, ', ""),
        Mutant.edit("flags unchecked", "chunk flags are ignored", read_chunk,
                    'if h["flags"]:', "if False:"),
        Mutant.edit("metadata tail", "bytes left in the metadata are ignored", read_metadata,
                    "if r.at != end and E19_42 not in errata:", "if False:"),
        Mutant.edit("56-byte header", "total_size counts a 56-byte header (E19.40 always on)",
                    sizes, "if E19_40 in errata:", "if True:"),
        Mutant.edit("insertion order", "custom keys keep insertion order (E19.41 always on)",
                    custom_order, "if E19_41 in errata:", "if True:"),
        Mutant.edit("no bounds check", "a read runs past the bytes left", Reader.take,
                    "if n > self.end - self.at:", "if False:"),
    ),
)
def file_round_trip(_subject):
    return [Property("generated checkpoints", _round_trip,
                     strategy=lambda: checkpoint_values(False), examples=300),
            Property("short files claiming huge lengths, files wrong in one thing",
                     _file_round_trip, cases=lambda: HOSTILE + CRAFTED),
            Property("changed and resealed files", _file_round_trip, strategy=files,
                     examples=1500)]


SWAPPED_RECORDS = bytes.fromhex("05000000" "2a1e240af2a1a6ac" "00000000" "04050607"
                                "01000000" "0000000000000000" "00000000" "010203")
"""The second vector's chunks the other way round, written out record by record."""
DIGESTS = [
    ((), "00000000"),
    ((Chunk(1, 0, b"\x01\x02\x03"),), "a7171038"),
    ((Chunk(1, 0, b"\x01\x02\x03"), Chunk(5, PRESSURE_ID, b"\x04\x05\x06\x07")), "f0c2205b"),
    ((Chunk(5, PRESSURE_ID, b"\x04\x05\x06\x07"), Chunk(1, 0, b"\x01\x02\x03")),
     f"{zlib.crc32(SWAPPED_RECORDS):08x}"),
]
"""The facts sheet's vectors, and the second in the other order (its records written out)."""


def _digest_is(case) -> None:
    chunks, expected = case
    assert content_digest(chunks) == expected, (chunks, content_digest(chunks))


@property_obligation(
    "PO19.43",
    "checkpoint.digest: the facts sheet's vectors, ControlBlock [1,2,3] -> a7171038 and with "
    "DeviceMemory(\"pressure\") [4,5,6,7] -> f0c2205b; no chunk -> 00000000; the order counts.",
    covers=("checkpoint.digest",),
    subject=content_digest,
    mutants=(
        Mutant.edit("id dropped", "the record's id is always 0", content_digest,
                    "ident[1] or 0", "0"),
        Mutant.edit("12-byte record", "the 4 zero bytes are left out", content_digest,
                    '"<IQ4x"', '"<IQ"'),
        Mutant.edit("sorted", "the records are taken in identity order", content_digest,
                    "for c in chunks:", "for c in sorted(chunks, key=identity):"),
    ),
)
def digest_vectors(_subject):
    return [Property("the facts sheet's vectors", _digest_is, cases=lambda: DIGESTS)]

