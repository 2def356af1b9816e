"""Chapter 18: the CDAG binary format, version 7, of one Merkle DAG node (a region or a branch).

Fields follow one another with no alignment padding, little-endian. A 32-byte header (magic
bytes 47 41 44 43 "GADC", version u32 = 7, kind u8, 7 zero bytes, merkle hash, content hash)
is followed by the node's body. A region body: 21 fixed bytes, an optional memory plan (36
bytes, then its TensorSlots verbatim), then per op 41 fixed bytes, its TensorMetas (data_ptr
written 0), scalars and index arrays. A branch body: its Guard verbatim, num_arms, then per arm
(value, target merkle). Header hashes are carried, never recomputed or verified.

Decoding accepts exactly the canonical encodings: encode(decode(b)) == b for every b it accepts.
Anything else (a short read, a wrong magic, version or kind, a count the bytes cannot hold,
trailing bytes, a byte the writer never produces) is InvalidInput naming the byte offset.
"""

from __future__ import annotations

import struct as _struct
from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput, at_offset
from .merkle_dag import GUARD, TraceNodeKind
from .tensor_meta import TENSOR_META
from .tensor_slot import TENSOR_SLOT
from .trace_entry import TraceOp
from .types import NONE32

MAGIC = 0x43444147
"""Read as a little-endian u32; the bytes on disk are 47 41 44 43, ASCII "GADC"."""
VERSION = 7
"""Real code: `Serialize.h`, the CDAG format version."""
HEADER_SIZE = 32
"""Bytes of the node header (magic, version, kind, hashes). Real code: `Serialize.h`."""
REGION_FIXED = 21
"""Bytes of a region node's fixed part after the header. Real code: `Serialize.h`,
`serialize_region`."""
PLAN_FIXED = 36
"""Bytes of a plan's fixed part. Real code: `Serialize.h`, the region writer."""
OP_FIXED = 41
"""Bytes of an op's fixed part before its metas. Real code: `Serialize.h`, the region writer."""
META_SIZE = TENSOR_META.size
"""A TensorMeta as written: its 168 bytes. Real code: `Serialize.h`."""
SLOT_SIZE = TENSOR_SLOT.size
"""A TensorSlot as written: its 40 bytes. Real code: `Serialize.h`."""
GUARD_SIZE = GUARD.size
"""A guard as written: 12 bytes. Real code: `Serialize.h`, the branch writer."""
ARM_SIZE = 16
"""An arm as written: value i64 and target Merkle hash. Real code: `Serialize.h`,
`serialize_branch`."""
RESERVED_OP_FLAGS = 0xE0
"""op_flags bits 5-7: the writer always leaves them 0."""
DATA_PTR = TENSOR_META.offsets["data_ptr"]
"""Offset of data_ptr in a written TensorMeta (the reader clears it)."""
REQUIRES_GRAD = TENSOR_META.offsets["requires_grad"]
"""Offset of requires_grad in a written TensorMeta."""
IS_EXTERNAL = TENSOR_SLOT.offsets["is_external"]
"""Offset of is_external in a written TensorSlot."""

E18_6, E18_7, E18_8 = "E18.6", "E18.7", "E18.8"


@dataclass
class CdagPlan:
    """The serialized part of a MemoryPlan (its slots pointer is replaced by the slots)."""

    pool_bytes: int = 0
    num_external: int = 0
    device_type: int = 0
    device_idx: int = -1
    pad0: bytes = bytes(2)
    device_capability: int = 0
    rank: int = -1
    world_size: int = 0
    slots: list[dict] = field(default_factory=list)


@dataclass
class CdagRegion:
    """What a region file holds: header hashes, the region's fixed fields, plan and ops."""

    ops: list[TraceOp]
    content_hash: int = 0
    merkle_hash: int = 0
    first_op_schema: int = 0
    measured_ms_bits: int = 0
    variant_id: int = 0
    plan: CdagPlan | None = None


@dataclass
class CdagBranch:
    """What a branch file holds: its Merkle hash, its continuation's (0 if none), its Guard
    (pad bytes included) and its arms as (value, target merkle)."""

    guard: dict
    arms: list[tuple[int, int]]
    merkle_hash: int = 0
    next_merkle: int = 0


def op_body_size(nin: int, nout: int, nsa: int) -> int:
    """The bytes after an op's fixed record: 168 (in + out) + 8 nsa + 4 (2 in + out)."""
    return META_SIZE * (nin + nout) + 8 * nsa + 4 * (2 * nin + nout)


def region_size(r: CdagRegion) -> int:
    """32 + 21 + [36 + 40 slots] + sum over ops of 41 + the op's body."""
    size = HEADER_SIZE + REGION_FIXED
    if r.plan is not None:
        size += PLAN_FIXED + SLOT_SIZE * len(r.plan.slots)
    for op in r.ops:
        size += OP_FIXED + op_body_size(len(op.inputs), len(op.outputs), op.num_scalar_args)
    return size


def branch_size(b: CdagBranch) -> int:
    """48 + 16 per arm."""
    return HEADER_SIZE + GUARD_SIZE + 4 + ARM_SIZE * len(b.arms)


class Writer:
    """Appends little-endian fields; with `spans`, records (offset, size, name) of each."""

    def __init__(self, spans: list[tuple[int, int, str]] | None = None):
        self.buf = bytearray()
        self.spans = spans

    def put(self, fmt: str, value: int, name: str) -> None:
        self.raw(_struct.pack("<" + fmt, value), name)

    def raw(self, data: bytes, name: str) -> None:
        if self.spans is not None:
            self.spans.append((len(self.buf), len(data), name))
        self.buf += data


def write_header(w: Writer, kind: TraceNodeKind, merkle: int, second: int) -> None:
    """Magic, version, kind, 7 zero bytes, merkle hash, then the content hash (for a branch:
    its continuation's merkle hash)."""
    w.put("I", MAGIC, "header.magic")
    w.put("I", VERSION, "header.version")
    w.put("B", kind, "header.kind")
    w.raw(bytes(7), "header.pad")
    w.put("Q", merkle, "header.merkle_hash")
    w.put("Q", second, "header.content_hash" if kind == TraceNodeKind.REGION
          else "header.next_merkle")


def meta_image(m: dict) -> bytes:
    """A TensorMeta as written: its 168 bytes with data_ptr 0."""
    return TENSOR_META.pack(m | {"data_ptr": 0})




def check_op(op: TraceOp, path: str) -> None:
    """What the writer can express: a 2-bit phase, counts that fit u16, and as many scalars
    (when the array is not null) as num_scalar_args says."""
    if not 0 <= op.training_phase <= 3:
        raise InvalidInput(f"{path}.training_phase: {op.training_phase} does not fit the 2-bit "
                           f"phase of op_flags")
    if len(op.inputs) > 0xFFFF or len(op.outputs) > 0xFFFF:
        raise InvalidInput(f"{path}: more than 65535 inputs or outputs")
    if op.scalar_args is not None and len(op.scalar_args) < op.num_scalar_args:
        raise InvalidInput(f"{path}.scalar_args: {len(op.scalar_args)} given, num_scalar_args "
                           f"says {op.num_scalar_args}")


def write_op(w: Writer, op: TraceOp, k: int) -> None:
    """One op: 41 fixed bytes, metas, scalars, then the three index arrays (none if null)."""
    p = f"ops[{k}]"
    nin, nout = len(op.inputs), len(op.outputs)
    for name in ("schema_hash", "shape_hash", "scope_hash", "callsite_hash"):  # 3a. fixed
        w.put("Q", getattr(op, name), f"{p}.{name}")
    w.put("H", nin, f"{p}.num_inputs")
    w.put("H", nout, f"{p}.num_outputs")
    w.put("H", op.num_scalar_args, f"{p}.num_scalar_args")
    w.put("B", int(op.grad_enabled), f"{p}.grad_enabled")
    w.put("B", op.op_flags, f"{p}.op_flags")
    w.put("B", op.kernel_id, f"{p}.kernel_id")
    for side, metas in (("inputs", op.inputs), ("outputs", op.outputs)):  # 3b. metas
        for j, m in enumerate(metas):
            w.raw(meta_image(m), f"{p}.{side}[{j}]")
    scalars = op.scalar_args if op.scalar_args is not None else [0] * op.num_scalar_args
    for s in range(op.num_scalar_args):  # 3c. scalars (zeros if null)
        w.put("q", scalars[s], f"{p}.scalar_args[{s}]")
    for name, n in (("input_trace_indices", nin), ("input_slot_ids", nin),
                    ("output_slot_ids", nout)):  # 3d. index arrays (none if null)
        ids = getattr(op, name) or [NONE32] * n
        for j in range(n):
            w.put("I", ids[j], f"{p}.{name}[{j}]")


def encode_region(r: CdagRegion, spans: list | None = None) -> bytes:
    """The region file: header, fixed fields, optional plan, ops (section 16); its ops pass
    check_op (region_from_wire checks them)."""
    w = Writer(spans)
    write_header(w, TraceNodeKind.REGION, r.merkle_hash, r.content_hash)  # 0. header
    w.put("I", len(r.ops), "region.num_ops")  # 1. fixed fields
    w.put("Q", r.first_op_schema, "region.first_op_schema")
    w.put("I", r.measured_ms_bits, "region.measured_ms")
    w.put("I", r.variant_id, "region.variant_id")
    w.put("B", int(r.plan is not None), "region.has_plan")
    if r.plan is not None:  # 2. plan
        p = r.plan
        w.put("Q", p.pool_bytes, "plan.pool_bytes")
        w.put("I", len(p.slots), "plan.num_slots")
        w.put("I", p.num_external, "plan.num_external")
        w.put("b", p.device_type, "plan.device_type")
        w.put("b", p.device_idx, "plan.device_idx")
        w.raw(p.pad0, "plan.pad0")
        w.put("Q", p.device_capability, "plan.device_capability")
        w.put("i", p.rank, "plan.rank")
        w.put("i", p.world_size, "plan.world_size")
        for s, slot in enumerate(p.slots):
            w.raw(TENSOR_SLOT.pack(slot), f"plan.slots[{s}]")
    for k, op in enumerate(r.ops):  # 3. ops
        write_op(w, op, k)
    return bytes(w.buf)


def encode_branch(b: CdagBranch, spans: list | None = None) -> bytes:
    """The branch file: header (second hash = continuation merkle), Guard verbatim, arms."""
    w = Writer(spans)
    write_header(w, TraceNodeKind.BRANCH, b.merkle_hash, b.next_merkle)  # 0. header
    w.raw(GUARD.pack(b.guard), "guard")  # 1. guard
    w.put("I", len(b.arms), "num_arms")  # 2. arms
    for k, (value, target) in enumerate(b.arms):
        w.put("q", value, f"arms[{k}].value")
        w.put("Q", target, f"arms[{k}].target_merkle")
    return bytes(w.buf)


class Reader:
    """A cursor over the bytes; a read past the end is InvalidInput at the cursor."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    @property
    def left(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int, what: str) -> bytes:
        if n > self.left:
            raise at_offset(self.pos, what, f"needs {n} bytes, {self.left} remain (truncated)")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def get(self, fmt: str, what: str) -> int:
        return _struct.unpack("<" + fmt, self.take(_struct.calcsize("<" + fmt), what))[0]

    def flag(self, what: str, lenient: bool) -> bool:
        """A bool byte: 0 or 1 (the seed reads any other byte as a C++ bool: E18.6)."""
        at, v = self.pos, self.get("B", what)
        if v > 1 and not lenient:
            raise at_offset(at, what, f"0x{v:02x} is not a bool (0 or 1)")
        return v != 0

    def need(self, count: int, each: int, what: str, at: int) -> None:
        """A count (read at `at`) must fit the bytes left before anything is built for it
        (the seed allocates first: E18.8)."""
        if count * each > self.left:
            raise at_offset(at, what, f"{count} items need at least {count * each} bytes, "
                                 f"{self.left} remain")

    def end(self, lenient: bool) -> None:
        """Nothing may follow the node (the seed ignores trailing bytes: E18.6/E18.7)."""
        if self.left and not lenient:
            raise at_offset(self.pos, "end", f"{self.left} trailing bytes after the node")


def read_header(r: Reader, kind: TraceNodeKind, lenient: bool) -> tuple[int, int]:
    """Check magic, version, kind and the zero pad; return (merkle, second hash)."""
    if r.left < HEADER_SIZE:
        raise at_offset(0, "header", f"{r.left} bytes; the header alone is {HEADER_SIZE}")
    magic = r.get("I", "header.magic")
    if magic != MAGIC:
        raise at_offset(0, "header.magic", f"bytes {r.data[:4].hex()} are not 47414443 ('GADC')")
    version = r.get("I", "header.version")
    if version != VERSION:
        raise at_offset(4, "header.version", f"{version} is not {VERSION}")
    got = r.get("B", "header.kind")
    if got != kind:
        raise at_offset(8, "header.kind", f"{got} is not {int(kind)} ({kind.name})")
    pad = r.take(7, "header.pad")
    if any(pad) and not lenient:
        at = 9 + next(i for i, b in enumerate(pad) if b)
        raise at_offset(at, "header.pad", "the 7 bytes after kind are written as zero")
    return r.get("Q", "header.merkle_hash"), r.get("Q", "header.content_hash")


def read_meta(r: Reader, what: str, lenient: bool) -> dict:
    """One TensorMeta: data_ptr must read 0 and requires_grad 0 or 1."""
    at = r.pos
    image = bytearray(r.take(META_SIZE, what))
    if any(image[DATA_PTR:DATA_PTR + 8]) and not lenient:
        raise at_offset(at + DATA_PTR, f"{what}.data_ptr", "written as 0, read non-zero")
    if image[REQUIRES_GRAD] > 1:
        if not lenient:
            raise at_offset(at + REQUIRES_GRAD, f"{what}.requires_grad",
                       f"0x{image[REQUIRES_GRAD]:02x} is not a bool (0 or 1)")
        image[REQUIRES_GRAD] = 1
    image[DATA_PTR:DATA_PTR + 8] = bytes(8)
    return TENSOR_META.unpack(bytes(image))


def read_plan(r: Reader, lenient: bool) -> CdagPlan:
    """36 fixed bytes, then num_slots TensorSlots verbatim (is_external 0 or 1)."""
    p = CdagPlan(pool_bytes=r.get("Q", "plan.pool_bytes"))
    count_at, num_slots = r.pos, r.get("I", "plan.num_slots")
    p.num_external = r.get("I", "plan.num_external")
    p.device_type = r.get("b", "plan.device_type")
    p.device_idx = r.get("b", "plan.device_idx")
    p.pad0 = r.take(2, "plan.pad0")
    p.device_capability = r.get("Q", "plan.device_capability")
    p.rank = r.get("i", "plan.rank")
    p.world_size = r.get("i", "plan.world_size")
    r.need(num_slots, SLOT_SIZE, "plan.num_slots", count_at)
    for s in range(num_slots):
        at = r.pos
        image = bytearray(r.take(SLOT_SIZE, f"plan.slots[{s}]"))
        if image[IS_EXTERNAL] > 1:
            if not lenient:
                raise at_offset(at + IS_EXTERNAL, f"plan.slots[{s}].is_external",
                           f"0x{image[IS_EXTERNAL]:02x} is not a bool (0 or 1)")
            image[IS_EXTERNAL] = 1
        p.slots.append(TENSOR_SLOT.unpack(bytes(image)))
    return p


def read_op(r: Reader, k: int, lenient: bool) -> TraceOp:
    """One op, as write_op lays it out; arrays with a zero count are null."""
    p = f"ops[{k}]"
    op = TraceOp()
    for name in ("schema_hash", "shape_hash", "scope_hash", "callsite_hash"):  # 3a. fixed
        setattr(op, name, r.get("Q", f"{p}.{name}"))
    nin, nout = r.get("H", f"{p}.num_inputs"), r.get("H", f"{p}.num_outputs")
    op.num_scalar_args = r.get("H", f"{p}.num_scalar_args")
    op.grad_enabled = r.flag(f"{p}.grad_enabled", lenient)
    at, flags = r.pos, r.get("B", f"{p}.op_flags")
    if flags & RESERVED_OP_FLAGS and not lenient:
        raise at_offset(at, f"{p}.op_flags", f"0x{flags:02x} sets reserved bits 5-7")
    op.op_flags = flags
    op.kernel_id = r.get("B", f"{p}.kernel_id")
    body = op_body_size(nin, nout, op.num_scalar_args)
    if body > r.left:
        raise at_offset(at - 7, f"{p}.num_inputs/num_outputs/num_scalar_args",
                   f"{nin} + {nout} metas, {op.num_scalar_args} scalars and their ids need "
                   f"{body} bytes, {r.left} remain (truncated)")
    op.inputs = [read_meta(r, f"{p}.inputs[{j}]", lenient) for j in range(nin)]  # 3b. metas
    op.outputs = [read_meta(r, f"{p}.outputs[{j}]", lenient) for j in range(nout)]
    if op.num_scalar_args:  # 3c. scalars
        op.scalar_args = [r.get("q", f"{p}.scalar_args[{s}]")
                          for s in range(op.num_scalar_args)]
    for name, n in (("input_trace_indices", nin), ("input_slot_ids", nin),
                    ("output_slot_ids", nout)):  # 3d. index arrays
        if n:
            setattr(op, name, [r.get("I", f"{p}.{name}[{j}]") for j in range(n)])
    return op


def read_region_head(r: Reader, lenient: bool) -> tuple[CdagRegion, int]:
    """Header, fixed fields and plan: the region less its ops, and num_ops (checked against
    the bytes left)."""
    merkle, content = read_header(r, TraceNodeKind.REGION, lenient)  # 0. header
    num_ops = r.get("I", "region.num_ops")  # 1. fixed fields
    region = CdagRegion([], content, merkle, r.get("Q", "region.first_op_schema"),
                        r.get("I", "region.measured_ms"), r.get("I", "region.variant_id"))
    if r.flag("region.has_plan", lenient):  # 2. plan
        region.plan = read_plan(r, lenient)
    r.need(num_ops, OP_FIXED, "region.num_ops", HEADER_SIZE)
    return region, num_ops


def decode_region(data: bytes, errata: frozenset[str] = NO_ERRATA) -> CdagRegion:
    """Read a region file back, rejecting anything encode_region would not have written."""
    lenient = E18_6 in errata
    r = Reader(data)
    region, num_ops = read_region_head(r, lenient)  # 0-2
    region.ops = [read_op(r, k, lenient) for k in range(num_ops)]  # 3. ops
    r.end(lenient)
    return region


def decode_branch(data: bytes, errata: frozenset[str] = NO_ERRATA) -> CdagBranch:
    """Read a branch file back; its arms must be sorted by value, as a BranchNode keeps them
    (the seed reads any order and trailing bytes: E18.7)."""
    lenient = E18_7 in errata
    r = Reader(data)
    merkle, next_merkle = read_header(r, TraceNodeKind.BRANCH, lenient)  # 0. header
    guard = GUARD.unpack(r.take(GUARD_SIZE, "guard"))  # 1. guard
    count_at, num_arms = r.pos, r.get("I", "num_arms")  # 2. arms
    r.need(num_arms, ARM_SIZE, "num_arms", count_at)
    arms = []
    for k in range(num_arms):
        at = r.pos
        arms.append((r.get("q", f"arms[{k}].value"), r.get("Q", f"arms[{k}].target_merkle")))
        if k and arms[k][0] <= arms[k - 1][0] and not lenient:
            raise at_offset(at, f"arms[{k}].value", f"{arms[k][0]} does not exceed the previous "
                                               f"arm's {arms[k - 1][0]} (arms are sorted)")
    r.end(lenient)
    return CdagBranch(guard, arms, merkle, next_merkle)


def check_arms(arms: list[tuple[int, int]], errata: frozenset[str] = NO_ERRATA) -> None:
    """Arm values strictly ascending (replay binary-searches them)."""
    if E18_7 in errata:
        return
    for k in range(1, len(arms)):
        if arms[k][0] <= arms[k - 1][0]:
            raise InvalidInput(f"args.arms[{k}].value: arms must be sorted by value, strictly "
                               f"ascending")


def serial_estimate(r: CdagRegion) -> int:
    """Cipher's buffer for a region: 64 + 32 + [64 + 40 slots] + sum of (40 + 168 (in + out)
    + 8 nsa + 4 (2 in + out)) + 256. It counts 40 bytes per op where 41 are written (E18.5)."""
    size = 64 + 32
    if r.plan is not None:
        size += 64 + SLOT_SIZE * len(r.plan.slots)
    for op in r.ops:
        size += 40 + op_body_size(len(op.inputs), len(op.outputs), op.num_scalar_args)
    return size + 256


_SEED = "crucible@8d2680a2"
EMPTY_REGION = ("47414443" "07000000" "00" + "00" * 7 + "00" * 16 + "00000000" + "00" * 16
                + "00")
"""The hex of a region of no ops and no plan, with zero hashes."""

erratum(
    E18_6, "deserialize_region accepts bytes that serialize_region never writes",
    seed=_SEED, location="include/crucible/Serialize.h deserialize_region", ops=("cdag.decode",),
    witness={"args": {"hex": EMPTY_REGION + "ff"},
             "spec": {"error": "invalid_input"},
             "seed": {"region": {"ops": [], "has_plan": False, "measured_ms_bits": "0x00000000",
                                 "variant_id": 0, "content_hash": "0x0000000000000000",
                                 "merkle_hash": "0x0000000000000000",
                                 "first_op_schema": "0x0000000000000000"}}},
    flag="result",
    detail="The reader ignores trailing bytes and the 7 header pad bytes, drops op_flags bits "
           "5-7 and a non-zero data_ptr, and loads bool bytes (has_plan, grad_enabled, "
           "requires_grad, is_external) other than 0 or 1 as C++ bools (undefined behaviour). "
           "Such a file loads, but writing the region back gives other bytes, so a content-"
           "addressed object no longer matches what it decodes to. The spec accepts exactly "
           "the canonical encodings; the seed profile reads them as the code does (trailing "
           "bytes, pad, reserved bits and data_ptr ignored, a bool byte non-zero = true).",
)

erratum(
    E18_7, "deserialize_branch accepts unsorted arms and trailing bytes",
    seed=_SEED, location="include/crucible/Serialize.h deserialize_branch",
    ops=("cdag.decode_branch", "cdag.encode_branch"),
    witness={"args": {"hex": "47414443" "07000000" "01" + "00" * 23 + "00" * 12 + "02000000"
                      + "0500000000000000" + "00" * 8 + "0300000000000000" + "00" * 8},
             "spec": {"error": "invalid_input"},
             "seed": {"arms": [{"value": 5, "target_merkle": "0x0000000000000000"},
                               {"value": 3, "target_merkle": "0x0000000000000000"}]}},
    flag="result",
    detail="A BranchNode keeps its arms sorted by value and replay binary-searches them, but "
           "the reader takes the arms in file order (and ignores trailing bytes and the header "
           "pad), so a file with arms [5, 3] loads as a branch whose arm 3 replay never finds. "
           "The spec rejects unsorted or repeated values on both sides; the seed profile "
           "writes and reads any order.",
)

erratum(
    E18_8, "The CDAG readers allocate what a count claims before reading it",
    seed=_SEED, location="include/crucible/Serialize.h deserialize_region, deserialize_branch",
    ops=("cdag.decode", "cdag.decode_branch"),
    witness={"args": {"hex": EMPTY_REGION[:64] + "ffffffff" + EMPTY_REGION[72:]},
             "spec": "invalid_input at offset 32 (num_ops)",
             "seed": "arena.alloc_array<TraceEntry>(2^32-1): a 412 GB request from 53 bytes"},
    flag="ub",
    detail="num_ops, num_slots and num_arms size arena arrays before any of their bytes are "
           "read, so a short file claiming 2^32-1 items asks the arena for hundreds of GB. "
           "The spec checks every count against the bytes left first.",
)
