"""Fuzzing checkpoint.decode through `serve`: every file is either a checkpoint that
checkpoint.encode turns back into the same bytes, or invalid_input naming an offset inside the
file; under RingKernel's profile never anything but a result or invalid_input; and a short
file claiming a huge length allocates nothing large."""

from __future__ import annotations

import json
import re
import struct
import tracemalloc
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.proofs.ringkernel.checkpoint import files
from crucible_spec.spec.core.errata import profile_errata

load_all()

SEED = "ringkernel@1.1.0"
OFFSET = re.compile(r"^offset (\d+) \(")
FUZZ = settings(max_examples=400, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def _ask(op: str, args: dict, profile: str = "crucible") -> dict:
    return answer(json.dumps({"id": 1, "op": op, "args": args}),
                  Implementation("reference", profile_errata(profile)), profile)


def _outcome_is_named_or_re_encodes(data: bytes) -> None:
    out = _ask("checkpoint.decode", {"hex": data.hex()})
    if "error" in out:
        assert out["error"]["code"] == "invalid_input", out
        m = OFFSET.match(out["error"]["message"])
        assert m and int(m.group(1)) <= len(data), out
        return
    args = {k: out["result"][k] for k in ("header", "metadata", "chunks")}
    assert _ask("checkpoint.encode", args)["result"]["hex"] == data.hex()


def _sealed(data: bytes) -> bytes:
    """`data` with total_size and checksum made to fit, when it holds a header."""
    if len(data) < 64:
        return data
    data = data[:16] + struct.pack("<Q", len(data)) + data[24:]
    return data[:32] + struct.pack("<I", zlib.crc32(data[64:])) + data[36:]


@FUZZ
@given(files())
def test_a_changed_file_re_encodes_or_is_refused_at_an_offset(data):
    _outcome_is_named_or_re_encodes(data)


@FUZZ
@given(st.binary(max_size=200).map(lambda b: b"10TPKCKR" + b).map(_sealed))
def test_random_bodies_behind_a_good_magic(data):
    _outcome_is_named_or_re_encodes(data)


@FUZZ
@given(files() | st.binary(max_size=200))
def test_the_seed_profile_answers_a_checkpoint_or_invalid_input(data):
    out = _ask("checkpoint.decode", {"hex": data.hex()}, SEED)
    assert "result" in out or out["error"]["code"] == "invalid_input", out


HEADER = struct.pack("<QIIQII", 0x524B434B50543031, 1, 64, 100, 0, 0)


def _claiming(words: bytes, body: bytes) -> bytes:
    data = HEADER[:16] + words + bytes(64 - 16 - len(words)) + body
    return data[:32] + struct.pack("<I", zlib.crc32(body)) + data[36:]


@pytest.mark.parametrize("profile", ["crucible", SEED])
@pytest.mark.parametrize("data", [
    _claiming(struct.pack("<Q", 1 << 30), bytes(36)),
    _claiming(struct.pack("<QI", 100, 0), b"\xff\xff\xff\xff" + bytes(32)),
    _claiming(struct.pack("<QI", 100, 2**32 - 1), struct.pack("<I", 0) + bytes(32)),
    _claiming(struct.pack("<QI", 100, 1), struct.pack("<I", 0)
              + struct.pack("<IIQQQ", 1, 0, 2**63, 2**63, 0)),
], ids=["1 GiB in all", "4 GiB metadata", "2^32-1 chunks", "2^63-byte chunk"])
def test_a_short_file_claiming_a_huge_length_allocates_nothing_large(profile, data):
    tracemalloc.start()
    try:
        out = _ask("checkpoint.decode", {"hex": data.hex()}, profile)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out["error"]["code"] == "invalid_input" and OFFSET.match(out["error"]["message"])
    assert peak < 1 << 20
