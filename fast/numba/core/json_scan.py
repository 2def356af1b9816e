"""numba scanner of a batch request's items written as compact JSON, straight into integer
columns (serve's quick path, conformance/quick_batch.py).

The items are objects whose fields are integers or fixed-length arrays of integers, each
field present once, in any order, with no whitespace: `{"a":"0x1f","b":[1,2]},...`.
An integer is a JSON integer `-?(0|[1-9][0-9]*)` or a string "0x"/"0X" plus 1 to 62 hex
digits; it must fit its field (a hex string of a signed field is its two's-complement bits).
Anything else is refused (-1): the caller then reads the line the usual way, so a refusal
never changes an answer, and everything accepted here is a value `Int.decode` accepts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_HEX_DIGITS = 62
"""Longer hex strings are refused (Int.decode takes them; they go the usual way)."""

_QUOTE, _COMMA, _MINUS = 34, 44, 45
_OPEN_OBJ, _CLOSE_OBJ, _OPEN_ARR, _CLOSE_ARR = 123, 125, 91, 93
_U64_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True)
def _nibble(c: int) -> int:
    """The hex digit's value, or -1."""
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    if 65 <= c <= 70:
        return c - 55
    return -1


@njit(cache=True)
def _hex(buf, i: int, bits: int):
    """The hex string at buf[i] (its opening quote), as (bits, next index) or (0, -1)."""
    end = buf.size
    if i + 3 >= end or buf[i + 1] != 48 or (buf[i + 2] | 0x20) != 120:
        return np.uint64(0), -1
    i += 3
    start, acc = i, np.uint64(0)
    while i < end and buf[i] != _QUOTE:
        d = _nibble(buf[i])
        if d < 0 or i - start >= MAX_HEX_DIGITS or (acc >> np.uint64(60)) != 0:
            return np.uint64(0), -1
        acc = (acc << np.uint64(4)) | np.uint64(d)
        i += 1
    if i == start or i >= end or (bits < 64 and (acc >> np.uint64(bits)) != 0):
        return np.uint64(0), -1
    return acc, i + 1


@njit(cache=True)
def _decimal(buf, i: int, bits: int, signed: bool):
    """The JSON integer at buf[i], as (its two's-complement bits, next index) or (0, -1)."""
    end = buf.size
    negative = buf[i] == _MINUS
    if negative:
        if not signed:
            return np.uint64(0), -1
        i += 1
    if i >= end or not 48 <= buf[i] <= 57:
        return np.uint64(0), -1
    acc, start = np.uint64(0), i
    while i < end and 48 <= buf[i] <= 57:
        d = np.uint64(buf[i] - 48)
        if (buf[start] == 48 and i > start) or acc > (_U64_MAX - d) // np.uint64(10):
            return np.uint64(0), -1
        acc = acc * np.uint64(10) + d
        i += 1
    top = np.uint64(1) << np.uint64(bits - 1) if signed else _U64_MAX >> np.uint64(64 - bits)
    if negative:
        if acc > top:
            return np.uint64(0), -1
        return (~acc) + np.uint64(1), i
    if (signed and acc >= top) or acc > top:
        return np.uint64(0), -1
    return acc, i


@njit(cache=True)
def _integer(buf, i: int, bits: int, signed: bool):
    if i >= buf.size:
        return np.uint64(0), -1
    if buf[i] == _QUOTE:
        return _hex(buf, i, bits)
    return _decimal(buf, i, bits, signed)


@njit(cache=True)
def _field(buf, i: int, names, name_offsets) -> int:
    """The field whose bytes `"name":` start at buf[i], or -1."""
    for k in range(name_offsets.size - 1):
        lo, hi = name_offsets[k], name_offsets[k + 1]
        if i + hi - lo <= buf.size:
            j = 0
            while j < hi - lo and buf[i + j] == names[lo + j]:
                j += 1
            if j == hi - lo:
                return k
    return -1


@njit(cache=True)
def scan_items(buf, names, name_offsets, counts, bits, signed, out) -> int:
    """Read the comma-separated items filling `buf` into `out` (one row per item; field k's
    integers, `counts[k]` of them or 1 where it is 0, from column sum of the earlier ones);
    field k's bytes `"name":` are names[name_offsets[k]:name_offsets[k + 1]]. Each item has
    every field once, in any order. The number of items, or -1."""
    fields = counts.size
    first = np.zeros(fields, dtype=np.int64)
    for k in range(1, fields):
        first[k] = first[k - 1] + max(counts[k - 1], 1)
    seen = np.zeros(fields, dtype=np.bool_)
    end, n, i = buf.size, 0, 0
    while True:
        if n >= out.shape[0] or i >= end or buf[i] != _OPEN_OBJ:
            return -1
        i += 1
        seen[:] = False
        for f in range(fields):
            if f > 0:
                if i >= end or buf[i] != _COMMA:
                    return -1
                i += 1
            k = _field(buf, i, names, name_offsets)
            if k < 0 or seen[k]:
                return -1
            seen[k] = True
            i += name_offsets[k + 1] - name_offsets[k]
            many = counts[k]
            if many > 0:
                if i >= end or buf[i] != _OPEN_ARR:
                    return -1
                i += 1
            for e in range(max(many, 1)):
                if e > 0:
                    if i >= end or buf[i] != _COMMA:
                        return -1
                    i += 1
                value, i = _integer(buf, i, bits[k], signed[k])
                if i < 0:
                    return -1
                out[n, first[k] + e] = value
            if many > 0:
                if i >= end or buf[i] != _CLOSE_ARR:
                    return -1
                i += 1
        if i >= end or buf[i] != _CLOSE_OBJ:
            return -1
        i += 1
        n += 1
        if i == end:
            return n
        if buf[i] != _COMMA:
            return -1
        i += 1
