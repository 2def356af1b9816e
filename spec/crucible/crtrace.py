"""Chapter 18: the .crtrace file and how a loader turns it into ring entries and metas.

Layout (little-endian): a 16-byte header ("CRTR", version u32 = 1, num_ops u32, num_metas
u32); num_ops 80-byte op records; num_metas TensorMeta records (168 bytes; legacy files have
160 or 144, read as a prefix of a default TensorMeta); an optional name table (count u32, then
per name: hash u64, length u16 in 1..256, the bytes). Loading gives one TraceRing::Entry per
record, its MetaLog start (a running cursor over the ops' inputs then outputs; none for an op
without tensors), and its scope and callsite hashes. A meta must describe a tensor the
pipeline can read: bools 0 or 1, at most 8 dimensions, a ScalarType, and a storage span that
fits int64 (meta_problem); the real loader checks none of these.
"""

from __future__ import annotations

import struct as _struct
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput, at_offset
from ..core.layout import Member, array, hash64, i64, struct, u8, u16
from .tensor_meta import (
    I64_MAX,
    MAX_DIMS,
    TENSOR_META,
    check_storage_args,
    compute_storage_nbytes,
)
from .trace_ring import MAX_SCALARS
from .types import NONE32, ScalarType

MAGIC = b"CRTR"
"""The file's first four bytes. Real code: `TraceLoader.h` and the recorder's writer."""
VERSION = 1
"""Real code: `TraceLoader.h`, the accepted version."""
HEADER_SIZE = 16
"""magic, version, num_ops, num_metas. Real code: `TraceLoader.h`."""
META_RECORD_SIZES = (168, 160, 144)
"""Current, then legacy, TensorMeta record sizes."""
NAME_TABLE_CAP = 512
"""A table claiming more names than the schema table holds is ignored."""
NAME_MAX = 256
"""Bytes of one op name the loader keeps. Real code: `TraceLoader.h`, `load_trace`'s name
buffer."""
DEFAULT_META = TENSOR_META.pack(TENSOR_META.default_values())
"""The image of a default TensorMeta: what a loader puts where a record leaves fields out."""
SCALAR_ORDINALS = frozenset(int(t) for t in ScalarType)

TRACE_OP_RECORD = struct("TraceOpRecord", [
    Member("schema_hash", hash64),
    Member("shape_hash", hash64),
    Member("scope_hash", hash64),
    Member("callsite_hash", hash64),
    Member("scalar_values", array(i64, 5)),
    Member("num_inputs", u16),
    Member("num_outputs", u16),
    Member("num_scalars", u16),
    Member("grad_enabled", u8, doc="read as a bool: non-zero = true"),
    Member("inference_mode", u8, doc="misnamed: holds every op_flags bit"),
], size=80, align=8, chapter=18, doc="One op record of a .crtrace file.")

E18_1, E18_2, E18_3, E18_4 = "E18.1", "E18.2", "E18.3", "E18.4"


@dataclass
class LoadedTrace:
    """A loaded .crtrace: parallel per-op arrays, all metas, and the op and scope names."""

    entries: list[dict] = field(default_factory=list)
    meta_starts: list[int] = field(default_factory=list)
    scope_hashes: list[int] = field(default_factory=list)
    callsite_hashes: list[int] = field(default_factory=list)
    metas: list[dict] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)


def name_table_end(data: bytes, at: int) -> int | None:
    """Where a name table starting at `at` ends if it is well formed (count <= 512, every entry
    complete with a length in 1..256); None otherwise."""
    if at + 4 > len(data):
        return None
    (count,) = _struct.unpack_from("<I", data, at)
    if count > NAME_TABLE_CAP:
        return None
    end, seen = at + 4, 0
    for pos, _, length in _name_entries(data, at):
        end, seen = pos + 10 + length, seen + 1
    return end if seen == count else None


def _name_entries(data: bytes, at: int) -> Iterator[tuple[int, int, int]]:
    """(offset, hash, length) of the entries of the name table at `at`, up to its count,
    stopping at the first one short or with a length outside 1..256."""
    (count,) = _struct.unpack_from("<I", data, at)
    pos = at + 4
    for _ in range(count):
        if pos + 10 > len(data):
            return
        h, length = _struct.unpack_from("<QH", data, pos)
        if not 1 <= length <= NAME_MAX or pos + 10 + length > len(data):
            return
        yield pos, h, length
        pos += 10 + length


def meta_record_size(data: bytes, start: int, num_metas: int, errata: frozenset[str]) -> int:
    """The TensorMeta record size of this file.

    1. With no metas, 168.
    2. The first of 168, 160, 144 whose records fit and are followed by nothing or by exactly a
       well-formed name table.
    3. Otherwise the largest size whose records fit (168 if none fits: the read then fails).
    The real loader uses rule 3 alone (erratum E18.1)."""
    if num_metas == 0:
        return 168
    fits = [s for s in META_RECORD_SIZES if start + s * num_metas <= len(data)]
    if E18_1 not in errata:
        for s in fits:
            end = start + s * num_metas
            if end == len(data) or name_table_end(data, end) == len(data):
                return s
    return fits[0] if fits else 168


def parse_names(data: bytes, at: int) -> dict[int, str]:
    """The optional name table, read as the loader reads it: a count of 1..512, then entries
    until one is short or has a length of 0 or over 256. A name ends at its first NUL."""
    if at + 4 > len(data):
        return {}
    (count,) = _struct.unpack_from("<I", data, at)
    names: dict[int, str] = {}
    if not 0 < count <= NAME_TABLE_CAP:
        return names
    for i, (pos, h, length) in enumerate(_name_entries(data, at)):
        raw = data[pos + 10 : pos + 10 + length].split(b"\0", 1)[0]
        try:
            names[h] = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise at_offset(pos + 10 + e.start, f"name {i}", "not UTF-8") from None
    return names


@dataclass(frozen=True)
class Frame:
    """Where a file's parts lie, all checked against its size: records at [16, meta_start),
    metas at [meta_start, meta_end) in records of meta_size bytes, then the name table."""

    num_ops: int
    num_metas: int
    meta_start: int
    meta_size: int
    meta_end: int


def frame(data: bytes, errata: frozenset[str] = NO_ERRATA) -> Frame:
    """Check the header and that every count fits the file, before anything is built (the
    real loader allocates what the header claims first: E18.3)."""
    # 1. Header.
    if len(data) < HEADER_SIZE:
        raise at_offset(0, "header", f"the file is {len(data)} bytes; the header alone is 16")
    if data[:4] != MAGIC:
        raise at_offset(0, "magic", f"{data[:4].hex()} is not 'CRTR' (43525452)")
    version, num_ops, num_metas = _struct.unpack_from("<III", data, 4)
    if version != VERSION:
        raise at_offset(4, "version", f"{version} is not {VERSION}")
    # 2. Op records.
    rec_end = HEADER_SIZE + TRACE_OP_RECORD.size * num_ops
    if rec_end > len(data):
        raise at_offset(HEADER_SIZE, "op records", f"{num_ops} records need {rec_end - 16} bytes, "
                                              f"{len(data) - 16} follow the header")
    # 3. Metas.
    size = meta_record_size(data, rec_end, num_metas, errata)
    meta_end = rec_end + size * num_metas
    if meta_end > len(data):
        raise at_offset(rec_end, "meta records", f"{num_metas} metas need at least "
                                            f"{144 * num_metas} bytes, {len(data) - rec_end} "
                                            f"follow the op records")
    return Frame(num_ops, num_metas, rec_end, size, meta_end)


def check_meta_total(used: int, num_metas: int, errata: frozenset[str]) -> None:
    """The records must use exactly the metas the header announces (E18.4)."""
    if used != num_metas and E18_4 not in errata:
        raise at_offset(8, "num_metas", f"the op records use {used} metas, the header says "
                                   f"{num_metas}")


def meta_starts_of(tensors: list[int]) -> list[int]:
    """Each op's MetaLog start: the running count of inputs and outputs before it, or none for
    an op without tensors."""
    starts, cursor = [], 0
    for n in tensors:
        starts.append(cursor if n else NONE32)
        cursor += n
    return starts


def parse_crtrace(data: bytes, errata: frozenset[str] = NO_ERRATA) -> LoadedTrace:
    """Load a .crtrace image: frame it, read the names and metas, make one entry per record."""
    f = frame(data, errata)  # 1-3
    trace = LoadedTrace(names=parse_names(data, f.meta_end))  # 4. names
    for k in range(f.num_metas):  # 5. metas: a short record is a prefix of a default meta
        at = f.meta_start + k * f.meta_size
        trace.metas.append(read_meta(data[at : at + f.meta_size] + DEFAULT_META[f.meta_size:],
                                     at, k))
    tensors = []
    for i in range(f.num_ops):  # 6. one ring entry per record
        at = HEADER_SIZE + i * TRACE_OP_RECORD.size
        r = _unpack(TRACE_OP_RECORD, data[at : at + TRACE_OP_RECORD.size], at, f"op record {i}")
        trace.entries.append(entry_of(r))
        trace.scope_hashes.append(r["scope_hash"])
        trace.callsite_hashes.append(r["callsite_hash"])
        n = r["num_inputs"] + r["num_outputs"]
        tensors.append(n & 0xFFFF if E18_2 in errata else n)
    trace.meta_starts = meta_starts_of(tensors)  # 7. meta starts
    check_meta_total(sum(tensors), f.num_metas, errata)
    return trace


def meta_problem(m: dict) -> str | None:
    """What a loaded TensorMeta may not hold, the first of: ndim over 8, a dtype that is no
    ScalarType ordinal, used sizes and strides outside meta.storage_nbytes's domain (a
    negative size, an extent past int64), or a storage span past int64 (the pipeline's)."""
    ndim = m["ndim"]
    if ndim > MAX_DIMS:
        return f"ndim {ndim} > {MAX_DIMS}"
    if m["dtype"] not in SCALAR_ORDINALS:
        return f"dtype {m['dtype']} is not a ScalarType ordinal"
    view = {"sizes": m["sizes"][:ndim], "strides": m["strides"][:ndim], "dtype": m["dtype"]}
    try:
        check_storage_args(view)
    except InvalidInput as e:
        return f"sizes and strides outside compute_storage_nbytes's domain ({e.message})"
    if compute_storage_nbytes(**view) > I64_MAX:
        return "the storage span does not fit int64"
    return None


def read_meta(image: bytes, at: int, k: int) -> dict:
    """Meta k, a full 168-byte image read at offset `at`: its fields, or invalid_input naming
    the offset (a bool byte other than 0 or 1, or a meta_problem)."""
    m = _unpack(TENSOR_META, image, at, f"meta {k}")
    problem = meta_problem(m)
    if problem is not None:
        raise at_offset(at, f"meta {k}", problem)
    return m


def _unpack(s, image: bytes, at: int, what: str) -> dict:
    try:
        return s.unpack(image)
    except InvalidInput as e:
        raise at_offset(at, what, e.message) from None


def entry_of(record: dict) -> dict:
    """The ring entry a loader makes of an op record: counts as recorded, grad = byte != 0,
    op_flags = the last byte, the first min(num_scalars, 5) scalars, zeros after."""
    n = min(record["num_scalars"], MAX_SCALARS)
    return {
        "schema_hash": record["schema_hash"], "shape_hash": record["shape_hash"],
        "num_inputs": record["num_inputs"], "num_outputs": record["num_outputs"],
        "num_scalar_args": record["num_scalars"],
        "grad_enabled": record["grad_enabled"] != 0, "op_flags": record["inference_mode"],
        "scalar_values": record["scalar_values"][:n] + [0] * (MAX_SCALARS - n),
    }


def check_names(names: dict[int, str]) -> None:
    """A name table a loader reads whole: at most 512 names of at most 256 UTF-8 bytes, no
    NUL (a name is a C string)."""
    if len(names) > NAME_TABLE_CAP:
        raise InvalidInput(f"args.names: {len(names)} names; a loader ignores more than 512")
    for h, name in names.items():
        raw = name.encode("utf-8")
        if len(raw) > NAME_MAX or b"\0" in raw:
            raise InvalidInput(f"args.names[0x{h:016x}]: a name is at most 256 bytes, no NUL")


def check_meta_starts(given: list[int], tensors: list[int], num_metas: int) -> None:
    """A file can only say the running cursor, and must hold exactly the metas used."""
    for i, (got, want) in enumerate(zip(given, meta_starts_of(tensors), strict=True)):
        if got != want:
            raise InvalidInput(f"args.meta_starts[{i}]: {got}, but a file can only say {want} "
                               f"(the running count of inputs and outputs)")
    if sum(tensors) != num_metas:
        raise InvalidInput(f"args.metas: {num_metas} metas, the entries use {sum(tensors)}")


def check_parallel(n: int, **arrays: list) -> None:
    """The per-op arrays have one item per entry."""
    for name, values in arrays.items():
        if len(values) != n:
            raise InvalidInput(f"args.{name}: {len(values)} items for {n} entries")


def header(num_ops: int, num_metas: int) -> bytes:
    return MAGIC + _struct.pack("<III", VERSION, num_ops, num_metas)


def name_table(names: dict[int, str]) -> bytes:
    """The table as the C++ exporter writes it: the count, then the names sorted by hash. An
    empty name is written as one NUL byte (a length of 0 would end the table)."""
    out = bytearray(_struct.pack("<I", len(names)))
    for h in sorted(names):
        raw = names[h].encode("utf-8") or b"\0"
        out += _struct.pack("<QH", h, len(raw)) + raw
    return bytes(out)


def write_crtrace(t: LoadedTrace) -> bytes:
    """The canonical file of a trace: 168-byte metas and a name table sorted by hash (the C++
    exporter's layout). parse_crtrace(write_crtrace(t)) == t for every writable t."""
    n = len(t.entries)
    check_parallel(n, meta_starts=t.meta_starts, scope_hashes=t.scope_hashes,
                   callsite_hashes=t.callsite_hashes)
    check_meta_starts(t.meta_starts, [e["num_inputs"] + e["num_outputs"] for e in t.entries],
                      len(t.metas))
    check_names(t.names)
    out = bytearray(header(n, len(t.metas)))
    for i, e in enumerate(t.entries):
        out += TRACE_OP_RECORD.pack({
            "schema_hash": e["schema_hash"], "shape_hash": e["shape_hash"],
            "scope_hash": t.scope_hashes[i], "callsite_hash": t.callsite_hashes[i],
            "scalar_values": e["scalar_values"], "num_inputs": e["num_inputs"],
            "num_outputs": e["num_outputs"], "num_scalars": e["num_scalar_args"],
            "grad_enabled": int(e["grad_enabled"]), "inference_mode": e["op_flags"],
        })
    for k, m in enumerate(t.metas):
        check_writable_meta(k, m)
        out += TENSOR_META.pack(m)
    return bytes(out + name_table(t.names))


def check_writable_meta(k: int, m: dict) -> None:
    """A file holds only metas a loader accepts (meta_problem)."""
    problem = meta_problem(m)
    if problem is not None:
        raise InvalidInput(f"args.metas[{k}]: {problem}")


_SEED = "crucible@8d2680a2"
_LOADER = "include/crucible/TraceLoader.h load_trace"

ONE_INPUT_RECORD = "00" * 72 + "0100" + "0000" + "0000" + "00" + "00"
"""An op record with one input and nothing else."""

erratum(
    E18_1, "The meta record size is guessed from a length that includes the name table",
    seed=_SEED, location=_LOADER, ops=("crtrace.decode",),
    witness={"args": {"hex": "43525452" "01000000" "01000000" "01000000" + ONE_INPUT_RECORD
                      + "00" * 136 + "0206" + "00" * 22  # one 160-byte meta
                      + "01000000" "8877665544332211" "0400" "61626364"},  # names: "abcd"
             "spec": {"names": {"0x1122334455667788": "abcd"}},
             "seed": {"names": {}}},
    flag="result",
    detail="remaining = file size - header - records counts the trailing name table, so a "
           "160-byte-meta file whose table has at least 8 bytes per meta is read as 168-byte "
           "records: every meta takes 8 bytes of its neighbour and the name table is lost. The "
           "spec takes the first of 168, 160, 144 that leaves nothing or exactly a well-formed "
           "name table, and only then falls back to the loader's rule.",
)

erratum(
    E18_2, "Meta starts advance by a 16-bit sum of inputs and outputs",
    seed=_SEED, location=_LOADER, ops=("crtrace.decode",),
    witness={"record": {"num_inputs": 65535, "num_outputs": 1},
             "seed": "meta start none; the cursor does not move",
             "spec": "meta start = cursor; the cursor moves by 65536"},
    flag="result",
    detail="total_tensors is uint16_t, so an op with num_inputs + num_outputs = 65536 counts as "
           "an op without tensors and every later op's metas are read from the wrong place. "
           "(A witness needs 65,536 metas, 11 MB, so it is not run live.)",
)

erratum(
    E18_3, "The loader allocates what the header claims before checking the file's size",
    seed=_SEED, location=_LOADER, ops=("crtrace.decode",),
    witness={"args": {"hex": "43525452" "01000000" "ffffffff" "00000000"},
             "spec": "invalid_input at once", "seed": "a 343 GB allocation (std::bad_alloc)"},
    flag="ub",
    detail="std::vector<TraceOpRecord> records(num_ops) and metas(num_metas) are built before "
           "any read, so 16 bytes claiming 2^32-1 ops ask for 343 GB. The spec checks every "
           "count against the bytes that are there first.",
)

erratum(
    E18_4, "The loader does not check that the records use exactly num_metas metas",
    seed=_SEED, location=_LOADER, ops=("crtrace.decode",),
    witness={"args": {"hex": "43525452" "01000000" "01000000" "00000000" + ONE_INPUT_RECORD
                      + "00000000"},
             "spec": {"error": "invalid_input"},
             "seed": {"meta_starts": [0], "metas": []}},
    flag="result",
    detail="An op whose inputs and outputs run past num_metas gets a meta start that points "
           "outside the metas; building the trace graph then reads past the array. The spec "
           "rejects the file; the seed profile loads it as the loader does.",
)
