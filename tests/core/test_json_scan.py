"""The batch scanner (fast/numba/core/json_scan.py) against the json module and Int.decode:
it reads a value exactly as they do, and refuses every text either of them refuses."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec.fast.numba.core.json_scan import scan_items
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.schema import Int

TYPES = (Int(8), Int(8, signed=True), Int(16), Int(32, signed=True), Int(64),
         Int(64, signed=True))


def scan_one(t: Int, text: str) -> int | None:
    """The value the scanner reads from `{"v":text}`, as `t` reads it, or None (refused)."""
    items = np.frombuffer(b'{"v":' + text.encode() + b"}", dtype=np.uint8)
    out = np.zeros((1, 1), dtype=np.uint64)
    n = scan_items(items, np.frombuffer(b'"v":', dtype=np.uint8), np.array([0, 4]),
                   np.array([0]), np.array([t.bits]), np.array([t.signed]), out)
    if n != 1:
        return None
    return int(out[:, 0].astype(np.dtype(f"u{t.bits // 8}")).view(t.np_dtype)[0])


def decoded(t: Int, text: str) -> int | None:
    """What the json module and Int.decode make of the text; None where either refuses."""
    try:
        return t.decode(json.loads(text), "v")
    except (ValueError, SpecError):
        return None


EDGES = ("0", "-0", "00", "01", "-01", "1", "-1", "127", "128", "-128", "-129", "255", "256",
         "32767", "65535", "65536", "2147483647", "2147483648", "-2147483648", "-2147483649",
         "4294967295", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
         "-9223372036854775809", "18446744073709551615", "18446744073709551616",
         "184467440737095516150", "1.0", "1e2", "-", "+1", "true", "null", '"0x"', '"0x0"',
         '"0X7f"', '"0x80"', '"0xff"', '"0x100"', '"0x00ff"', '"0xFFFF"', '"0x7fffffff"',
         '"0x80000000"', '"0xffffffff"', '"0x1ffffffff"', '"0xffffffffffffffff"',
         '"0x10000000000000000"', '"0x' + "0" * 60 + '1"', '"ff"', '"0xg"', '"0x-1"',
         '"\\u0030x1"', '"0x1', '"0x 1"', '"1x2"')


MAY_REFUSE = ('"\\u0030x1"', "-0")
"""Valid texts the scanner may leave to the usual path: an escape, a minus on an unsigned."""


@pytest.mark.parametrize("t", TYPES, ids=Int.describe)
@pytest.mark.parametrize("text", EDGES)
def test_each_edge_reads_as_the_json_module_and_int_decode_read_it(t, text):
    got, want = scan_one(t, text), decoded(t, text)
    assert got == want or (text in MAY_REFUSE and got is None)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(TYPES), st.integers(-(1 << 65), 1 << 65), st.integers(0, 3),
       st.sampled_from(["dec", "hex", "HEX"]))
def test_integers_of_any_size_read_alike(t, v, zeros, form):
    text = str(v) if form == "dec" or v < 0 else json.dumps(
        "0x" + "0" * zeros + (f"{v:x}" if form == "hex" else f"{v:X}"))
    assert scan_one(t, text) == decoded(t, text)


@pytest.mark.parametrize("text", [b'{"v":1},', b'{"v":1},,{"v":2}', b',{"v":1}', b'{"v":1}{"v":2}',
                                  b'{"v":1} ', b""])
def test_items_are_separated_by_single_commas_and_nothing_trails(text):
    out = np.zeros((4, 1), dtype=np.uint64)
    assert scan_items(np.frombuffer(text, dtype=np.uint8), np.frombuffer(b'"v":', dtype=np.uint8),
                      np.array([0, 4]), np.array([0]), np.array([8]), np.array([False]),
                      out) == -1


def test_two_items_are_read_in_order():
    out = np.zeros((4, 1), dtype=np.uint64)
    assert scan_items(np.frombuffer(b'{"v":1},{"v":"0x2"}', dtype=np.uint8),
                      np.frombuffer(b'"v":', dtype=np.uint8), np.array([0, 4]), np.array([0]),
                      np.array([8]), np.array([False]), out) == 2
    assert out[:2, 0].tolist() == [1, 2]
