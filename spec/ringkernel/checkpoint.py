"""Chapter 19: RingKernel's checkpoint container (ringkernel-core checkpoint.rs), byte for byte.

Encoding a checkpoint (header created_at and flags, metadata, chunks), all little-endian:
1. The metadata: kernel_id and kernel_type (u32 length + UTF-8 bytes), step u64, grid 3 x u32,
   tile 3 x u32, HLC (physical, logical, node_id) 3 x u64, then the `custom` map: a u32 count
   and per entry the key and the value as length-prefixed strings, keys in ascending byte
   order (RingKernel: a HashMap's order, E19.41).
2. The body: the metadata's u32 length and bytes, then per chunk its 32-byte ChunkHeader
   (type, flags 0, uncompressed = compressed = the data's length, chunk_id) and its data.
3. The 64-byte CheckpointHeader: magic "RKCKPT01", version 1, header_size 64, total_size the
   file's length (RingKernel: 56 and 8 less, E19.40), the chunk count, compression 0, the
   checksum, flags (RingKernel: 0, E19.46), created_at (microseconds), 16 zero bytes. The
   checksum is CRC-32/IEEE over the body (every byte after the header).

Decoding takes exactly what encoding writes, so encode(decode(b)) == b for every b it
accepts. It rejects, as invalid_input naming the byte offset: fewer than 64 bytes, a bad magic,
a version other than 1 (RingKernel takes any version up to 1), a total_size over 1 GiB, a
checksum mismatch, then any header word, chunk header word, metadata order or trailing byte
that encoding would not have written (RingKernel reads past them, E19.42), an unknown chunk
type, a nonzero chunk_id on a type other than DeviceMemory and Custom, a string that is not
UTF-8, and every length that runs past the bytes left. Each length is compared with the bytes
left before anything is sliced, so a short file that claims a huge length allocates nothing.
"""

from __future__ import annotations

import enum
import struct as _struct
import zlib
from dataclasses import dataclass

from ..core.errata import NO_ERRATA, SEEDS
from ..core.errors import at_offset
from ..core.layout import Member, array, struct, u8, u32, u64

SEED = SEEDS["ringkernel"]
E19_40 = "E19.40"
E19_41 = "E19.41"
E19_42 = "E19.42"
E19_46 = "E19.46"
E19_47 = "E19.47"

MAGIC = 0x524B434B50543031
""""RKCKPT01" read as a little-endian u64. Real code: checkpoint.rs, CHECKPOINT_MAGIC."""
VERSION = 1
"""Real code: checkpoint.rs, CHECKPOINT_VERSION."""
HEADER_SIZE = 64
"""Bytes the header takes in the file."""
SEED_HEADER_SIZE = 56
"""size_of::<CheckpointHeader>(), which RingKernel writes as header_size (E19.40)."""
MAX_SIZE = 1 << 30
"""The largest total_size a loader accepts. Real code: checkpoint.rs, MAX_CHECKPOINT_SIZE."""
CHUNK_HEADER_SIZE = 32


class ChunkType(enum.IntEnum):
    """Real code: checkpoint.rs, ChunkType."""

    CONTROL_BLOCK = 1
    H2K_QUEUE = 2
    K2H_QUEUE = 3
    HLC_STATE = 4
    DEVICE_MEMORY = 5
    K2K_ROUTING = 6
    HALO_BUFFERS = 7
    TELEMETRY = 8
    CUSTOM = 100


CHUNK_TYPES = frozenset(int(t) for t in ChunkType)
KEYED = frozenset({ChunkType.DEVICE_MEMORY, ChunkType.CUSTOM})
"""The chunk types whose chunk_id is part of their identity; every other type's is 0
(RingKernel's identity, digest and delta ignore it, so a delta could not carry another)."""

CHECKPOINT_HEADER = struct("CheckpointHeader", [
    Member("magic", u64, default=MAGIC),
    Member("version", u32, default=VERSION),
    Member("header_size", u32, default=HEADER_SIZE),
    Member("total_size", u64),
    Member("chunk_count", u32),
    Member("compression", u32, doc="0 none, 1 lz4, 2 zstd; only 0 is written"),
    Member("checksum", u32, doc="CRC-32/IEEE of every byte after the header"),
    Member("flags", u32),
    Member("created_at", u64, doc="UNIX epoch microseconds"),
    Member("_reserved", array(u8, 16), doc="the struct's 8 reserved bytes, then 8 past its "
                                           "size_of; all zero"),
], size=64, align=8, chapter=19, seed=SEED,
   doc="The checkpoint file's header as written (64 bytes; the "
                                     "Rust struct's size_of is 56).")

CHUNK_HEADER = struct("ChunkHeader", [
    Member("chunk_type", u32),
    Member("flags", u32),
    Member("uncompressed_size", u64),
    Member("compressed_size", u64, doc="the data's length in the file"),
    Member("chunk_id", u64, doc="e.g. a device-memory region's name hash"),
], size=32, align=8, chapter=19, seed=SEED,
   doc="The header in front of each chunk's data.")


@dataclass(frozen=True)
class Metadata:
    """CheckpointMetadata; `custom` as (key, value) pairs in the order a caller inserted them."""

    kernel_id: str = ""
    kernel_type: str = ""
    step: int = 0
    grid: tuple[int, int, int] = (0, 0, 0)
    tile: tuple[int, int, int] = (0, 0, 0)
    hlc: tuple[int, int, int] = (0, 0, 0)
    custom: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Chunk:
    """DataChunk: its type, chunk_id and (uncompressed) data."""

    type: int
    id: int
    data: bytes


@dataclass(frozen=True)
class Checkpoint:
    metadata: Metadata
    chunks: tuple[Chunk, ...] = ()
    created_at: int = 0
    flags: int = 0


@dataclass(frozen=True)
class Decoded:
    checkpoint: Checkpoint
    checksum: int


def custom_order(custom: tuple[tuple[str, str], ...], errata: frozenset[str] = NO_ERRATA
                 ) -> tuple[tuple[str, str], ...]:
    """The entries in the order they are written: ascending key bytes (RingKernel: the
    HashMap's, here taken as insertion order, E19.41)."""
    if E19_41 in errata:
        return custom
    return tuple(sorted(custom, key=lambda kv: kv[0].encode()))


def _string(s: str) -> bytes:
    raw = s.encode()
    return _struct.pack("<I", len(raw)) + raw


def metadata_bytes(m: Metadata, errata: frozenset[str] = NO_ERRATA) -> bytes:
    """Step 1."""
    out = [_string(m.kernel_id), _string(m.kernel_type),
           _struct.pack("<Q3I3I3QI", m.step, *m.grid, *m.tile, *m.hlc, len(m.custom))]
    for key, value in custom_order(m.custom, errata):
        out += [_string(key), _string(value)]
    return b"".join(out)


def body_bytes(c: Checkpoint, errata: frozenset[str] = NO_ERRATA) -> bytes:
    """Step 2."""
    meta = metadata_bytes(c.metadata, errata)
    out = [_struct.pack("<I", len(meta)), meta]
    for ch in c.chunks:
        out += [CHUNK_HEADER.pack({"chunk_type": ch.type, "flags": 0,
                                   "uncompressed_size": len(ch.data),
                                   "compressed_size": len(ch.data), "chunk_id": ch.id}), ch.data]
    return b"".join(out)


def sizes(file_len: int, errata: frozenset[str] = NO_ERRATA) -> tuple[int, int]:
    """(header_size, total_size) for a file of `file_len` bytes (RingKernel counts the header
    as 56 bytes, E19.40)."""
    if E19_40 in errata:
        return SEED_HEADER_SIZE, file_len - (HEADER_SIZE - SEED_HEADER_SIZE)
    return HEADER_SIZE, file_len


def header_values(c: Checkpoint, body: bytes, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Step 3's words."""
    header_size, total_size = sizes(HEADER_SIZE + len(body), errata)
    return {"magic": MAGIC, "version": VERSION, "header_size": header_size,
            "total_size": total_size, "chunk_count": len(c.chunks), "compression": 0,
            "checksum": zlib.crc32(body), "flags": 0 if E19_46 in errata else c.flags,
            "created_at": c.created_at,
            "_reserved": [0] * 16}


def encode(c: Checkpoint, errata: frozenset[str] = NO_ERRATA) -> bytes:
    """Steps 1-3: the checkpoint file."""
    body = body_bytes(c, errata)
    return CHECKPOINT_HEADER.pack(header_values(c, body, errata)) + body


# ── decoding ─────────────────────────────────────────────────────────────────────────────────


@dataclass
class Reader:
    """A cursor over data[at:end]; every read is checked against the bytes left first."""

    data: bytes
    at: int
    end: int

    def take(self, n: int, what: str) -> bytes:
        if n > self.end - self.at:
            raise at_offset(self.at, what, f"{n} bytes needed, {self.end - self.at} left")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out

    def u32(self, what: str) -> int:
        return _struct.unpack("<I", self.take(4, what))[0]

    def u64(self, what: str) -> int:
        return _struct.unpack("<Q", self.take(8, what))[0]

    def string(self, what: str) -> str:
        n = self.u32(f"{what} length")
        at = self.at
        raw = self.take(n, what)
        try:
            return raw.decode()
        except UnicodeDecodeError as e:
            raise at_offset(at + e.start, what, "not UTF-8") from None


def read_custom(r: Reader, errata: frozenset[str] = NO_ERRATA) -> tuple[tuple[str, str], ...]:
    """The custom map: keys strictly ascending (RingKernel, E19.41: any order, the last of a
    repeated key wins)."""
    count, entries = r.u32("custom count"), {}
    for i in range(count):
        at = r.at
        key = r.string(f"custom key {i}")
        value = r.string(f"custom value {i}")
        if E19_41 not in errata and entries and key.encode() <= list(entries)[-1].encode():
            raise at_offset(at, f"custom key {i}", "keys must be unique and ascending")
        entries[key] = value
    return tuple(entries.items())


def read_metadata(data: bytes, at: int, end: int, errata: frozenset[str] = NO_ERRATA
                  ) -> Metadata:
    r = Reader(data, at, end)
    kernel_id, kernel_type = r.string("kernel_id"), r.string("kernel_type")
    step = r.u64("step")
    grid = tuple(r.u32(f"grid[{i}]") for i in range(3))
    tile = tuple(r.u32(f"tile[{i}]") for i in range(3))
    hlc = tuple(r.u64(f"hlc.{f}") for f in ("physical", "logical", "node_id"))
    custom = read_custom(r, errata)
    if r.at != end and E19_42 not in errata:
        raise at_offset(r.at, "metadata", f"{end - r.at} bytes past the last custom entry")
    return Metadata(kernel_id, kernel_type, step, grid, tile, hlc, custom)  # type: ignore[arg-type]


def check_header(h: dict, file_len: int, errata: frozenset[str] = NO_ERRATA) -> None:
    """The loader's checks (magic, version, 1 GiB), then the spec's: every other word is the
    one encoding writes (RingKernel reads past them, E19.42)."""
    off = CHECKPOINT_HEADER.offsets
    if h["magic"] != MAGIC:
        raise at_offset(0, "magic", f"{h['magic']:#x} is not RKCKPT01")
    if h["version"] > VERSION or (h["version"] != VERSION and E19_42 not in errata):
        raise at_offset(off["version"], "version", f"{h['version']} is not {VERSION}")
    if h["total_size"] > MAX_SIZE:
        raise at_offset(off["total_size"], "total_size", f"{h['total_size']} exceeds 1 GiB")
    if E19_42 in errata:
        return
    header_size, total_size = sizes(file_len, errata)
    expected = {"header_size": header_size, "total_size": total_size, "compression": 0}
    for name, value in expected.items():
        if h[name] != value:
            raise at_offset(off[name], name, f"{h[name]} is not {value}")
    if any(h["_reserved"]):
        raise at_offset(off["_reserved"], "_reserved", "not zero")


def read_chunk(r: Reader, i: int, errata: frozenset[str] = NO_ERRATA) -> Chunk:
    at = r.at
    h = CHUNK_HEADER.unpack(r.take(CHUNK_HEADER_SIZE, f"chunk {i} header"))
    off = CHUNK_HEADER.offsets
    if E19_42 not in errata:
        if h["chunk_type"] not in CHUNK_TYPES:
            raise at_offset(at, f"chunk {i} type", f"{h['chunk_type']} is not a ChunkType")
        if h["chunk_type"] not in KEYED and h["chunk_id"]:
            raise at_offset(at + off["chunk_id"], f"chunk {i} chunk_id",
                            "not 0 for a chunk type without ids")
        if h["flags"]:
            raise at_offset(at + off["flags"], f"chunk {i} flags", "not zero")
        if h["uncompressed_size"] != h["compressed_size"]:
            raise at_offset(at + off["uncompressed_size"], f"chunk {i} uncompressed_size",
                            "differs from compressed_size (nothing is compressed)")
    data = r.take(h["compressed_size"], f"chunk {i} data")
    return Chunk(h["chunk_type"], h["chunk_id"], data)


def decode(data: bytes, errata: frozenset[str] = NO_ERRATA) -> Decoded:
    """The checkpoint a file holds, or invalid_input naming the offset of the first fault."""
    h = CHECKPOINT_HEADER.unpack(Reader(data, 0, len(data)).take(HEADER_SIZE, "header"))
    check_header(h, len(data), errata)
    if zlib.crc32(data[HEADER_SIZE:]) != h["checksum"]:
        raise at_offset(CHECKPOINT_HEADER.offsets["checksum"], "checksum",
                        f"{h['checksum']:#010x} is not the body's CRC-32 "
                        f"{zlib.crc32(data[HEADER_SIZE:]):#010x}")
    r = Reader(data, HEADER_SIZE, len(data))
    meta_len = r.u32("metadata length")
    meta_at = r.at
    r.take(meta_len, "metadata")
    metadata = read_metadata(data, meta_at, meta_at + meta_len, errata)
    chunks = tuple(read_chunk(r, i, errata) for i in range(h["chunk_count"]))
    if r.at != len(data) and E19_42 not in errata:
        raise at_offset(r.at, "end", f"{len(data) - r.at} bytes past the last chunk")
    return Decoded(Checkpoint(metadata, chunks, h["created_at"], h["flags"]), h["checksum"])
