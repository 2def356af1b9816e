"""numba scanner of a batch request's items written as compact JSON, straight into integer
columns (serve's quick paths, conformance/quick_batch.py and
fast/numba/crucible/trace_build_ops.py).

The items are objects whose fields are integers or fixed-length arrays of integers, each
field present once, in any order, with no whitespace: `{"a":"0x1f","b":[1,2]},...`.
An integer is a JSON integer `-?(0|[1-9][0-9]*)` or a string "0x"/"0X" plus 1 to 62 hex
digits; it must fit its field (a hex string of a signed field is its two's-complement bits).
`read_object` reads one such object with optional fields, booleans (`true`, `false`) and
arrays shorter than their bound, for scanners of nested requests.
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
def at(buf, i: int) -> int:
    """buf[i], or -1 past its end."""
    return int(buf[i]) if i < buf.size else -1


@njit(cache=True)
def _word(buf, i: int, word) -> bool:
    """Whether the bytes `word` start at buf[i]."""
    j = 0
    while j < word.size and at(buf, i + j) == word[j]:
        j += 1
    return j == word.size


_TRUE = np.frombuffer(b"true", dtype=np.uint8)
_FALSE = np.frombuffer(b"false", dtype=np.uint8)


@njit(cache=True)
def _boolean(buf, i: int):
    """The JSON boolean at buf[i], as (0 or 1, next index) or (0, -1)."""
    if _word(buf, i, _TRUE):
        return np.uint64(1), i + 4
    if _word(buf, i, _FALSE):
        return np.uint64(0), i + 5
    return np.uint64(0), -1


@njit(cache=True)
def read_value(buf, i: int, bits: int, signed: bool):
    """The integer (`bits` 8 to 64) or JSON boolean (`bits` 0) at buf[i], as (its bits, next
    index) or (0, -1)."""
    if i >= buf.size:
        return np.uint64(0), -1
    if bits == 0:
        return _boolean(buf, i)
    if buf[i] == _QUOTE:
        return _hex(buf, i, bits)
    return _decimal(buf, i, bits, signed)


@njit(cache=True)
def read_field(buf, i: int, names, name_offsets) -> int:
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
def read_object(buf, i, names, name_offsets, counts, exact, bits, signed, first, row,
                seen) -> int:
    """Read the object at buf[i] into `row`: field k (bytes `"name":` at
    names[name_offsets[k]:name_offsets[k + 1]]) is a value as `read_value` reads it (`counts[k]`
    0) or an array of at most `counts[k]` of them (exactly, with `exact`), written from
    row[first[k]]; each field at most once (`seen` says which came). The next index, or -1."""
    if at(buf, i) != _OPEN_OBJ:
        return -1
    i += 1
    seen[:] = False
    if at(buf, i) == _CLOSE_OBJ:
        return i + 1
    while True:
        k = read_field(buf, i, names, name_offsets)
        if k < 0 or seen[k]:
            return -1
        seen[k] = True
        i += name_offsets[k + 1] - name_offsets[k]
        many = counts[k]
        if many == 0:
            value, i = read_value(buf, i, bits[k], signed[k])
            if i < 0:
                return -1
            row[first[k]] = value
        else:
            if at(buf, i) != _OPEN_ARR:
                return -1
            i += 1
            e = 0
            while at(buf, i) != _CLOSE_ARR:
                if e > 0:
                    if at(buf, i) != _COMMA:
                        return -1
                    i += 1
                if e >= many:
                    return -1
                value, i = read_value(buf, i, bits[k], signed[k])
                if i < 0:
                    return -1
                row[first[k] + e] = value
                e += 1
            if exact and e != many:
                return -1
            i += 1
        c = at(buf, i)
        if c == _CLOSE_OBJ:
            return i + 1
        if c != _COMMA:
            return -1
        i += 1


@njit(cache=True)
def next_item(buf, i: int) -> int:
    """Where the next comma-separated item starts after one that ends at buf[i]: past the
    comma, buf.size where the items end, or -1."""
    if i == buf.size:
        return i
    return i + 1 if buf[i] == _COMMA and i + 1 < buf.size else -1


def first_columns(counts: np.ndarray) -> np.ndarray:
    """Each field's first column in a row: fields take `counts[k]` columns, or 1 where 0."""
    return np.concatenate(([0], np.cumsum(np.maximum(counts, 1))[:-1])).astype(np.int64)


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
    n, i = 0, 0
    while True:
        if n >= out.shape[0]:
            return -1
        i = read_object(buf, i, names, name_offsets, counts, True, bits, signed, first, out[n],
                        seen)
        if i < 0 or not seen.all():
            return -1
        n += 1
        i = next_item(buf, i)
        if i < 0 or i == buf.size:
            return n if i == buf.size else -1
