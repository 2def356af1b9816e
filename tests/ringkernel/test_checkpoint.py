"""RingKernel's checkpoints (facts sheet §3.5) through `serve`: the file's bytes, the decoder's
offsets, the digest vectors, deltas with deletions, and errata E19.40-E19.45 under each
profile. Expected bytes are built here from the facts sheet's layout."""

from __future__ import annotations

import json
import struct
import zlib

import pytest
from hypothesis import find, settings

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.ringkernel import checkpoint_ops
from crucible_spec.spec.ringkernel.checkpoint_delta import applied, delta_from
from crucible_spec.witness import check

load_all()

SEED = "ringkernel@1.1.0"
PRESSURE_ID = 12440809081581870634
CB = {"type": 1, "id": 0, "data": "010203"}
PRESSURE = {"type": 5, "id": PRESSURE_ID, "data": "04050607"}
PARENT, LAYOUT = "ringkernel.delta.parent_digest", "crucible.delta.layout"


def _ask(op: str, args: dict, profile: str = "crucible", impl: str = "reference") -> dict:
    out = answer(json.dumps({"id": 1, "op": op, "args": args}),
                 Implementation(impl, profile_errata(profile)), profile)
    return out.get("result", out.get("error"))


def _map(custom: dict) -> list[dict]:
    return [{"key": k, "value": v} for k, v in custom.items()]


def _ck(*chunks: dict, custom: dict | None = None) -> dict:
    return {"metadata": {"custom": _map(custom or {})}, "chunks": list(chunks)}


def _string(s: bytes) -> bytes:
    return struct.pack("<I", len(s)) + s


def _file(meta: bytes, chunks: bytes = b"", count: int = 0, header_size: int = 64,
          short: int = 0) -> bytes:
    """A file as the facts sheet lays it out, from its metadata and chunk bytes."""
    body = struct.pack("<I", len(meta)) + meta + chunks
    header = struct.pack("<QIIQIIIIQ", 0x524B434B50543031, 1, header_size,
                         64 + len(body) - short, count, 0, zlib.crc32(body), 0, 0)
    return header + bytes(16) + body


EMPTY_META = _string(b"") + _string(b"") + bytes(8 + 12 + 12 + 24) + bytes(4)


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("profile", ["crucible", SEED])
@pytest.mark.parametrize("chunks,digest", [([CB], "a7171038"), ([CB, PRESSURE], "f0c2205b"),
                                           ([], "00000000")])
def test_the_digest_vectors(impl, profile, chunks, digest):
    assert _ask("checkpoint.digest", {"chunks": chunks}, profile, impl) == {"digest": digest}


def test_an_empty_checkpoint_is_136_bytes_and_the_seed_says_56_and_128():
    spec = _ask("checkpoint.encode", _ck())
    assert bytes.fromhex(spec["hex"]) == _file(EMPTY_META)
    assert (spec["header_size"], spec["total_size"]) == (64, 136)
    seed = _ask("checkpoint.encode", _ck(), SEED)
    assert bytes.fromhex(seed["hex"]) == _file(EMPTY_META, header_size=56, short=8)
    assert bytes.fromhex(seed["hex"])[:8] == b"10TPKCKR"


def test_every_metadata_field_and_chunk_header_lies_where_the_facts_sheet_puts_it():
    args = {"header": {"created_at": 5, "flags": 0},
            "metadata": {"kernel_id": "k", "kernel_type": "wave", "step": 7, "grid": [1, 2, 3],
                         "tile": [4, 5, 6], "hlc": {"physical": 8, "logical": 9, "node_id": 10},
                         "custom": _map({"b": "1", "a": "2"})},
            "chunks": [CB, PRESSURE]}
    meta = (_string(b"k") + _string(b"wave") + struct.pack("<Q6I3QI", 7, 1, 2, 3, 4, 5, 6, 8, 9,
                                                           10, 2)
            + _string(b"a") + _string(b"2") + _string(b"b") + _string(b"1"))
    chunks = (struct.pack("<IIQQQ", 1, 0, 3, 3, 0) + b"\1\2\3"
              + struct.pack("<IIQQQ", 5, 0, 4, 4, PRESSURE_ID) + b"\4\5\6\7")
    data = bytearray(_file(meta, chunks, count=2))
    data[40:48] = struct.pack("<Q", 5)
    assert _ask("checkpoint.encode", args)["hex"] == data.hex()
    back = _ask("checkpoint.decode", {"hex": data.hex()})
    assert back["chunks"] == [CB, PRESSURE]
    assert back["metadata"] == args["metadata"] | {"custom": _map({"a": "2", "b": "1"})}
    assert back["checksum"] == zlib.crc32(data[64:])


def test_the_seed_writes_custom_keys_as_inserted_and_reads_any_order():
    args = _ck(custom={"b": "1", "a": "2"})
    seed = bytes.fromhex(_ask("checkpoint.encode", args, SEED)["hex"])
    assert seed[64 + 4 + len(EMPTY_META) - 4:].startswith(struct.pack("<I", 2) + _string(b"b"))
    spec_only_order = _file(EMPTY_META[:-4] + struct.pack("<I", 2) + _string(b"b")
                            + _string(b"1") + _string(b"a") + _string(b"2"))
    assert _ask("checkpoint.decode", {"hex": spec_only_order.hex()})["code"] == "invalid_input"
    assert _ask("checkpoint.decode", {"hex": spec_only_order.hex()}, SEED)["metadata"][
        "custom"] == _map({"a": "2", "b": "1"})


def _reseal(data: bytes) -> bytes:
    return data[:32] + struct.pack("<I", zlib.crc32(data[64:])) + data[36:]


GOOD = _file(EMPTY_META)


@pytest.mark.parametrize("data,offset,field", [
    (GOOD[:63], 0, "header"),
    (b"RKCKPT01" + GOOD[8:], 0, "magic"),
    (GOOD[:8] + struct.pack("<I", 2) + GOOD[12:], 8, "version"),
    (GOOD[:8] + struct.pack("<I", 0) + GOOD[12:], 8, "version"),
    (GOOD[:12] + struct.pack("<I", 56) + GOOD[16:], 12, "header_size"),
    (GOOD[:16] + struct.pack("<Q", (1 << 30) + 1) + GOOD[24:], 16, "total_size"),
    (GOOD[:16] + struct.pack("<Q", 1 << 30) + GOOD[24:100], 16, "total_size"),
    (GOOD[:28] + struct.pack("<I", 1) + GOOD[32:], 28, "compression"),
    (GOOD[:32] + bytes(4) + GOOD[36:], 32, "checksum"),
    (_reseal(GOOD[:64] + b"\xff\xff\xff\xff" + GOOD[68:]), 68, "metadata"),
    (_reseal(GOOD[:24] + struct.pack("<I", 2**32 - 1) + GOOD[28:]), 136, "chunk 0 header"),
    (_reseal(GOOD[:16] + struct.pack("<Q", 137) + GOOD[24:] + b"\0"), 136, "end"),
    (_file(_string(b"\xff") + EMPTY_META[4:]), 72, "kernel_id"),
    (_file(EMPTY_META + b"\0"), 136, "metadata"),
])
def test_each_fault_is_invalid_input_naming_its_offset(data, offset, field):
    error = _ask("checkpoint.decode", {"hex": data.hex()})
    assert error["code"] == "invalid_input"
    assert error["message"].startswith(f"offset {offset} ({field}")


def test_a_delta_holds_changed_and_new_chunks_and_its_layout():
    out = _ask("checkpoint.delta", {"base": _ck(CB), "new": _ck(CB, PRESSURE)})
    assert out["chunks"] == [PRESSURE]
    assert out["metadata"]["custom"] == _map({LAYOUT: "1,+", PARENT: "a7171038"})
    restored = _ask("checkpoint.apply", {"base": _ck(CB), "delta": out})
    assert restored["chunks"] == [CB, PRESSURE] and restored["metadata"]["custom"] == []


def test_a_delta_restores_deletions_and_order_only_in_the_spec():
    base, new = _ck(CB, PRESSURE), _ck(PRESSURE)
    for profile, kept in (("crucible", [PRESSURE]), (SEED, [CB, PRESSURE])):
        delta = _ask("checkpoint.delta", {"base": base, "new": new}, profile)
        assert delta["chunks"] == []
        assert _ask("checkpoint.apply", {"base": base, "delta": delta}, profile)["chunks"] == kept
    h2k = {"type": 2, "id": 0, "data": "09"}
    base, new = _ck(CB, h2k), _ck(h2k, CB)
    for profile, order in (("crucible", [h2k, CB]), (SEED, [CB, h2k])):
        delta = _ask("checkpoint.delta", {"base": base, "new": new}, profile)
        assert _ask("checkpoint.apply", {"base": base, "delta": delta}, profile)["chunks"] == order


@pytest.mark.parametrize("profile", ["crucible", SEED])
def test_a_delta_for_another_base_is_refused_in_both(profile):
    delta = _ask("checkpoint.delta", {"base": _ck(CB), "new": _ck()}, profile)
    error = _ask("checkpoint.apply", {"base": _ck(PRESSURE), "delta": delta}, profile)
    assert error["code"] == "invalid_input" and "parent digest mismatch" in error["message"]


def test_a_delta_without_a_parent_digest_applies_only_in_the_seed():
    args = {"base": _ck(CB), "delta": _ck()}
    assert _ask("checkpoint.apply", args)["code"] == "invalid_input"
    assert _ask("checkpoint.apply", args, SEED)["chunks"] == [CB]


@pytest.mark.parametrize("args,field", [
    ({"metadata": {}, "chunks": [{"type": 9, "data": ""}]}, "args.chunks[0].type"),
    ({"metadata": {}, "chunks": [{"type": 1, "id": 3, "data": ""}]}, "args.chunks[0].id"),
    ({"metadata": {"custom": _map({"a": "1"}) * 2}, "chunks": []},
     "args.metadata.custom[1].key"),
])
def test_bad_chunks_are_refused_naming_the_field(args, field):
    error = _ask("checkpoint.encode", args)
    assert error["code"] == "invalid_input" and field in error["message"]


def test_hypothesis_finds_e19_43s_witness_under_the_seed_profile():
    errata = profile_errata(SEED)

    def seed_loses_new(args: dict) -> bool:
        base = checkpoint_ops.value_checkpoint(args["base"])
        new = checkpoint_ops.value_checkpoint(args["new"])
        return applied(base, delta_from(base, new, errata), errata).chunks != new.chunks

    found = find(checkpoint_ops.delta_values(), seed_loses_new,
                 settings=settings(database=None, max_examples=2000))
    assert [c | {"data": c["data"].hex()} for c in found["base"]["chunks"]] == \
        checkpoint_ops.FOUND_BASE["chunks"]
    assert found["new"]["chunks"] == checkpoint_ops.FOUND_NEW["chunks"] == []


@pytest.mark.parametrize("eid", [f"E19.{n}" for n in range(40, 48)])
def test_each_erratum_reproduces(eid):
    assert check(REGISTRY.errata[eid]) == "reproduced"


def test_the_two_headers_lie_at_the_facts_sheets_offsets():
    header, chunk = REGISTRY.layout("CheckpointHeader"), REGISTRY.layout("ChunkHeader")
    assert (header.size, chunk.size) == (64, 32)
    assert header.offsets == {"magic": 0, "version": 8, "header_size": 12, "total_size": 16,
                              "chunk_count": 24, "compression": 28, "checksum": 32,
                              "flags": 36, "created_at": 40, "_reserved": 48}
    assert chunk.offsets == {"chunk_type": 0, "flags": 4, "uncompressed_size": 8,
                             "compressed_size": 16, "chunk_id": 24}


def test_real_headers_and_chunk_types_under_the_seed_profile():
    """E19.46 and E19.47: the real checkpoint.rs at 6c1ecbd (rustc -O) answered these."""
    flagged = {"header": {"created_at": 5, "flags": 1}, "metadata": {}, "chunks": []}
    assert _ask("checkpoint.delta", {"base": _ck(), "new": flagged}, SEED)["header"] == \
        {"created_at": 5, "flags": 0}
    out = _ask("checkpoint.encode", {"metadata": {}, "chunks": [{"type": 9, "data": ""}]}, SEED)
    assert (out["checksum"], out["total_size"]) == (1853360039, 160)
    assert _ask("checkpoint.digest", {"chunks": [{"type": 0, "data": ""}]}, SEED) == \
        {"digest": "00000000"}
    base, delta = _ck({"type": 9, "id": 0, "data": "01"}), \
        _ck({"type": 9, "id": 0, "data": "02"}, {"type": 99, "id": 0, "data": "03"})
    assert _ask("checkpoint.apply", {"base": base, "delta": delta}, SEED)["chunks"] == \
        [{"type": 9, "id": 0, "data": "01"}]
    new = _ck({"type": 1, "id": 3, "data": ""}, {"type": 101, "id": 0, "data": "04"})
    assert _ask("checkpoint.delta", {"base": _ck(), "new": new}, SEED)["chunks"] == \
        [{"type": 1, "id": 3, "data": ""}]
