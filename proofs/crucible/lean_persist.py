"""Chapter 18 obligations from the Lean formalization's Serialize and Cipher modules: the CDAG
region file at the byte level (header image, round trip, rejection of bad magic, version and
every truncation, no pointer in the bytes) and the Cipher store's objects, HEAD, log and time
travel, on the spec's own encode_region, decode_region and Cipher."""

from __future__ import annotations

import copy
import struct
from dataclasses import dataclass

from hypothesis import strategies as st

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible import cdag
from ...spec.crucible.cdag_ops import region_values
from ...spec.crucible.cipher import Cipher, object_path
from ...spec.crucible.merkle_dag import TraceNodeKind
from ..core.obligation import Property, property_obligation


def _rejected(data: bytes) -> bool:
    try:
        cdag.decode_region(data)
    except InvalidInput:
        return True
    return False


def _check_header(r: cdag.CdagRegion) -> None:
    data = cdag.encode_region(r)
    assert len(data) == cdag.region_size(r), "the size formula disagrees with the bytes"
    magic, version, kind = struct.unpack_from("<IIB", data)
    assert (magic, version, kind) == (0x43444147, 7, TraceNodeKind.REGION)
    assert data[9:16] == bytes(7), "the header pad is not zero"
    assert struct.unpack_from("<QQ", data, 16) == (r.merkle_hash, r.content_hash)


def _check_round_trip(r: cdag.CdagRegion) -> None:
    data = cdag.encode_region(r)
    back = cdag.decode_region(data)
    assert (back.merkle_hash, back.content_hash, back.first_op_schema, back.measured_ms_bits,
            back.variant_id) == (r.merkle_hash, r.content_hash, r.first_op_schema,
                                 r.measured_ms_bits, r.variant_id)
    assert back.plan == r.plan, "the plan did not come back"
    assert len(back.ops) == len(r.ops)
    for a, b in zip(back.ops, r.ops, strict=True):
        assert (a.inputs, a.outputs, a.schema_hash) == (b.inputs, b.outputs, b.schema_hash)
    assert cdag.encode_region(back) == data, "decode then encode changed the bytes"


def _check_rejections(r: cdag.CdagRegion) -> None:
    data = cdag.encode_region(r)
    for cut in sorted({0, 1, 4, 8, 31, 32, *range(32, len(data), 7), len(data) - 1}):
        if cut < len(data):
            assert _rejected(data[:cut]), f"a {cut}-byte prefix of {len(data)} decodes"
    for at in range(8):
        bad = bytearray(data)
        bad[at] ^= 0x01
        assert _rejected(bytes(bad)), f"flipping header byte {at} is accepted"


def _check_pointer_free(case: tuple[cdag.CdagRegion, int]) -> None:
    r, ptr = case
    moved = copy.deepcopy(r)
    for op in moved.ops:
        for m in (*op.inputs, *op.outputs):
            m["data_ptr"] = ptr
    assert cdag.encode_region(moved) == cdag.encode_region(r), "a data pointer reached a file"


def _regions():
    return region_values()


@property_obligation(
    "PO18.40",
    "CDAG region files (random regions, with and without plans): the header is magic "
    "0x43444147, version 7, kind REGION, 7 zero bytes, merkle hash, content hash, and the "
    "file is region_size bytes; decoding gives back the header, fixed fields, plan and every "
    "op's metas, and re-encodes to the same bytes; every strict prefix and every flipped bit "
    "of magic or version is rejected; the data pointers never reach the bytes.",
    covers=("cdag.encode", "cdag.decode"),
    subject=cdag.encode_region,
    mutants=(
        Mutant.edit("hashes swapped", "the header writes content before merkle",
                    cdag.encode_region,
                    "write_header(w, TraceNodeKind.REGION, r.merkle_hash, r.content_hash)",
                    "write_header(w, TraceNodeKind.REGION, r.content_hash, r.merkle_hash)"),
        Mutant.edit("version unchecked", "the reader accepts any version", cdag.read_header,
                    "if version != VERSION:", "if version != version:"),
        Mutant.edit("short header read", "a header shorter by one byte is read on",
                    cdag.Reader.take, "if n > self.left:", "if n > self.left + 1:"),
    ),
)
def cdag_region_bytes(subject):
    return [Property("header image", _check_header, strategy=_regions, examples=30),
            Property("round trip", _check_round_trip, strategy=_regions, examples=40),
            Property("rejections", _check_rejections, strategy=_regions, examples=25),
            Property("no pointers", _check_pointer_free,
                     strategy=lambda: st.tuples(region_values(), st.integers(1, 2**64 - 1)),
                     examples=25)]


@dataclass(frozen=True)
class CipherRun:
    regions: tuple[cdag.CdagRegion, ...]
    heads: tuple[tuple[int, int], ...]
    """(region index, step increment) per advance_head."""


def cipher_runs() -> st.SearchStrategy:
    regions = st.lists(region_values(max_ops=1), min_size=1, max_size=3).map(tuple)
    return regions.flatmap(lambda rs: st.builds(CipherRun, st.just(rs), st.lists(
        st.tuples(st.integers(0, len(rs) - 1), st.integers(0, 3)), max_size=6).map(tuple)))


def _objects(c: Cipher) -> dict[str, bytes]:
    return {k: v for k, v in c.files.items() if k.startswith("objects/")}


def _check_store(run: CipherRun) -> None:
    c = Cipher.open({})
    assert c.empty() and c.head == 0 and c.log == [] and c.hash_at_step(0) == 0
    first: dict[int, cdag.CdagRegion] = {}
    for r in run.regions:
        before = _objects(c)
        h = c.store(r)
        if r.content_hash == 0:
            assert h == 0 and _objects(c) == before, "a zero content hash was stored"
            continue
        assert h == r.content_hash and c.head == 0, "store moved HEAD or lost the hash"
        first.setdefault(h, r)
        others = {k: v for k, v in _objects(c).items() if k != object_path(h)}
        assert others == {k: v for k, v in before.items() if k != object_path(h)}
        again = dict(c.files)
        assert c.store(r) == h and c.files == again, "storing twice changed the store"
    for h, r in first.items():
        assert cdag.encode_region(c.load(h)) == cdag.encode_region(r), "first writer lost"


def _check_head_and_log(run: CipherRun) -> None:
    c, step, entries = Cipher.open({}), 0, []
    for idx, inc in run.heads:
        h = run.regions[idx].content_hash
        objects, log = _objects(c), list(c.log)
        step += inc
        c.advance_head(h, step)
        entries.append((step, h))
        assert c.head == h and c.log[:-1] == log and len(c.log) == len(log) + 1
        assert _objects(c) == objects, "advance_head touched the objects"
    for s in range(-1, step + 2):
        want = [h for st_, h in entries if st_ <= s]
        assert c.hash_at_step(s) == (want[-1] if want else 0), f"hash_at_step({s})"
    again = Cipher.open(dict(c.files))
    assert (again.head, again.log) == (c.head, c.log), "HEAD or the log did not read back"


@property_obligation(
    "PO18.41",
    "Cipher on random regions and head moves with non-decreasing steps: a fresh store is "
    "empty (head 0, no log, every step gives 0); store returns the content hash, writes only "
    "that object, keeps HEAD, is idempotent, and the first writer's region loads back; "
    "advance_head sets HEAD, appends exactly one log entry and leaves the objects; "
    "hash_at_step is the last entry at or before the step (0 before the first); reopening "
    "the files gives the same HEAD and log.",
    covers=("cipher.simulate",),
    subject=Cipher.store,
    mutants=(
        Mutant.edit("last writer wins", "an existing object is overwritten", Cipher.store,
                    "if path in self.files:  # 2", "if path in self.files and not h:  # 2"),
        Mutant.edit("strict step", "time travel skips an entry at exactly the step",
                    Cipher.hash_at_step, "if self.log[mid].step_id <= step_id:",
                    "if self.log[mid].step_id < step_id:"),
    ),
)
def cipher_store(subject):
    return [Property("objects", _check_store, strategy=cipher_runs, examples=40),
            Property("HEAD, log and time travel", _check_head_and_log, strategy=cipher_runs,
                     examples=60)]
