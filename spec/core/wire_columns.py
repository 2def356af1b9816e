"""Columnar wire decoding and encoding: a batch of JSON values straight into the numpy column
a fast kernel receives, and a result column straight back to JSON values, without building
one Python value per item (design §4, the fast path of `Implementation.run_batch_wire`).

Decoding a column of n JSON values for one wire type:
1. A vectorised check that is sound but need not be complete: it accepts a column only when
   every item is one that `Type.decode` accepts, and then builds exactly the column that
   `to_column` of the decoded values would hold (one pass over the list per field: a type
   census, then numpy over the whole column).
2. Anything the check does not accept (a bad item, a mix it does not handle, a type without a
   vectorised form) goes the per-item way: `decode` of each item in order, then `to_column`.
   The first bad item therefore raises exactly the error (code and message) that decoding
   it alone raises, under its own path `path[i]`; nothing else produces an error message.

Hex integers are parsed a length at a time: the strings of one length, joined and encoded as
ASCII, are the rows of an (n, width) byte array; each row must start "0x" or "0X", the rest
map to nibbles through a 256-entry table (255: not a hex digit), a nonzero nibble at or above
the type's width refuses the column, and the others are shifted into place and ORed.
Encoding hex integers writes each value's big-endian bytes as hex (bytes.hex) into rows
"0x<digits>," of one ASCII buffer, which one str.split cuts into the n strings. `rows_text`
goes one step further for a batch answer: the compact JSON text of each result, its fields'
texts put together by joins and one format string, with no dict built. `hex_rows` goes
further still where every field is a hex integer or a fixed array of them: each answer then
has one length, so all are rows of one byte array, a template with the digits written in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import chain
from typing import Any

import numpy as np

from .schema import Array, Bool, Bytes, Int, List, Optional, Ragged, Record, Type

Path = Callable[[int], str]

MAX_HEX_WIDTH = 64
"""Hex strings longer than this (leading zeros are legal) send the column the per-item way,
so that one long string cannot make the (n, width) array huge."""

_NIBBLE = np.full(256, 255, dtype=np.uint8)
"""Nibble of each ASCII byte; 255 for a byte that is not a hex digit."""
for _i, _c in enumerate(b"0123456789abcdef"):
    _NIBBLE[_c] = _NIBBLE[ord(chr(_c).upper())] = _i


def decode_column(t: Type, values: list, path: Path) -> Any:
    """The column of `values` decoded as `t`; the first bad item raises its own error."""
    column = fast_column(t, values)
    if column is not None:
        return column
    return t.to_column([t.decode(v, path(i)) for i, v in enumerate(values)])


def decode_columns(rec: Record, items: list, path: str) -> dict[str, Any]:
    """One column per field of `rec` for the JSON objects `items` (item i at `path[i]`)."""
    names = list(rec.fields)
    if _kinds(items) <= {dict} and set(map(len, items)) <= {len(names)}:
        try:
            per_field = {n: [it[n] for it in items] for n in names}
        except KeyError:
            per_field = None
        if per_field is not None:
            columns = {n: fast_column(rec.fields[n].type, per_field[n]) for n in names}
            if all(c is not None for c in columns.values()):
                return columns
    return rec.columns([rec.decode(it, f"{path}[{i}]") for i, it in enumerate(items)])


def fast_column(t: Type, values: list) -> Any:
    """The vectorised column of `values` as `t`, or None where step 1 does not accept it."""
    if isinstance(t, Int):
        return _int_column(t, values)
    if isinstance(t, Bool):
        return _bool_column(values)
    if isinstance(t, Array):
        return _array_column(t, values)
    if isinstance(t, List):
        return _list_column(t, values)
    if isinstance(t, Bytes):
        return _bytes_column(t, values)
    if isinstance(t, Optional):
        return _optional_column(t, values)
    return None


def _kinds(values: Any) -> set:
    return set(map(type, values))


def _int_column(t: Int, values: list) -> np.ndarray | None:
    kinds = _kinds(values)
    if kinds <= {int}:
        try:
            return np.array(values, dtype=t.np_dtype).reshape(len(values))
        except OverflowError:
            return None
    if kinds == {str}:
        return _hex_column(t, values)
    if kinds == {int, str}:
        is_hex = np.fromiter((type(v) is str for v in values), dtype=np.bool_, count=len(values))
        hexes = _hex_column(t, [v for v in values if type(v) is str])
        ints = _int_column(t, [v for v in values if type(v) is int])
        if hexes is None or ints is None:
            return None
        out = np.empty(len(values), dtype=t.np_dtype)
        out[is_hex], out[~is_hex] = hexes, ints
        return out
    return None


def _hex_column(t: Int, values: list[str]) -> np.ndarray | None:
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    if lengths.min() < 3 or lengths.max() > MAX_HEX_WIDTH:
        return None
    if lengths.min() == lengths.max():
        out = _hex_fixed(t.bits, values, int(lengths[0]))
    else:
        out = np.empty(len(values), dtype=np.uint64)
        for width in np.unique(lengths).tolist():
            rows = np.flatnonzero(lengths == width)
            part = _hex_fixed(t.bits, [values[i] for i in rows.tolist()], width)
            if part is None:
                return None
            out[rows] = part
    if out is None:
        return None
    return out.astype(np.dtype(f"u{t.bits // 8}")).view(t.np_dtype)


def _hex_fixed(bits: int, values: list[str], width: int) -> np.ndarray | None:
    """uint64 values of hex strings all `width` characters long, or None if one is not a
    "0x" hex string or does not fit `bits`."""
    try:
        text = np.frombuffer("".join(values).encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError:
        return None
    rows = text.reshape(len(values), width)
    if not (np.all(rows[:, 0] == ord("0")) and np.all((rows[:, 1] | 0x20) == ord("x"))):
        return None
    digits = _NIBBLE[rows[:, 2:]]
    if np.any(digits == 255):
        return None
    shifts = range(4 * (width - 3), -4, -4)
    if any(np.any(digits[:, j]) for j, s in enumerate(shifts) if s >= bits):
        return None  # a set digit above the type's width
    acc = np.zeros(len(values), dtype=np.uint64)
    for j, s in enumerate(shifts):
        if s < bits:
            acc |= digits[:, j].astype(np.uint64) << np.uint64(s)
    return acc


def _bool_column(values: list) -> np.ndarray | None:
    kinds = _kinds(values)
    if kinds <= {bool}:
        return np.array(values, dtype=np.bool_).reshape(len(values))
    if kinds <= {bool, int}:
        try:
            ints = np.array(values, dtype=np.int64)
        except OverflowError:
            return None
        return ints.astype(np.bool_) if np.all((ints == 0) | (ints == 1)) else None
    return None


def _array_column(t: Array, values: list) -> np.ndarray | None:
    if not (_kinds(values) <= {list} and set(map(len, values)) <= {t.n}):
        return None
    flat = _int_column(t.item, list(chain.from_iterable(values)))
    return None if flat is None else flat.reshape(len(values), t.n)


def _list_column(t: List, values: list) -> Ragged | None:
    if not _kinds(values) <= {list}:
        return None
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    if t.max_len is not None and len(values) and lengths.max() > t.max_len:
        return None
    flat = fast_column(t.item, list(chain.from_iterable(values)))
    return None if flat is None else Ragged(flat, _offsets(lengths))


def _bytes_column(t: Bytes, values: list) -> Ragged | None:
    if not _kinds(values) <= {str}:
        return None
    if any("x" in v or "X" in v for v in values):
        values = [v[2:] if v[:2] in ("0x", "0X") else v for v in values]
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    if np.any(lengths % 2):
        return None
    text = "".join(values)
    try:
        data = bytes.fromhex(text)
    except ValueError:
        return None
    nbytes = lengths // 2
    if 2 * len(data) != len(text) or (t.max_len is not None and np.any(nbytes > t.max_len)):
        return None
    return Ragged(np.frombuffer(data, dtype=np.uint8).copy(), _offsets(nbytes))


def _optional_column(t: Optional, values: list) -> tuple[np.ndarray, np.ndarray] | None:
    if not isinstance(t.inner, (Int, Bool)):
        return None
    present = np.fromiter((v is not None for v in values), dtype=np.bool_, count=len(values))
    inner = fast_column(t.inner, [v for v in values if v is not None])
    if inner is None:
        return None
    full = t.inner.to_column([t.fill] * len(values))
    full[present] = inner
    return present, full


def _offsets(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def encode_column(t: Type, column: Any) -> list:
    """JSON values of a result column: what `encode` of each of `from_column` gives."""
    if isinstance(t, Int):
        return _encode_ints(t, column)
    if isinstance(t, Bool):
        return np.asarray(column).astype(np.bool_).tolist()
    if isinstance(t, Array) and isinstance(column, np.ndarray):
        flat = _encode_ints(t.item, column.reshape(-1))
        return [flat[i : i + t.n] for i in range(0, len(flat), t.n)]
    if isinstance(t, List) and isinstance(column, Ragged):
        flat, offs = encode_column(t.item, column.values), np.asarray(column.offsets).tolist()
        return [flat[offs[i]:offs[i + 1]] for i in range(len(offs) - 1)]
    if isinstance(t, Bytes):
        text = np.asarray(column.values, dtype=np.uint8).tobytes().hex()
        offs = (2 * np.asarray(column.offsets)).tolist()
        return [text[offs[i] : offs[i + 1]] for i in range(len(offs) - 1)]
    return [t.encode(v) for v in t.from_column(column)]


def _encode_ints(t: Int, column: Any) -> list:
    words = np.asarray(column)
    if words.dtype.kind not in "iu" or not len(words):
        return [t.encode(v) for v in t.from_column(column)]
    if not t.hex:
        return words.tolist()
    width = t.bits // 4
    rows = np.empty((len(words), width + 3), dtype=np.uint8)
    rows[:, 0], rows[:, 1], rows[:, -1] = ord("0"), ord("x"), ord(",")
    rows[:, 2:-1] = hex_digits(words, t.bits)
    return rows.tobytes()[:-1].decode("ascii").split(",")


def hex_digits(words: np.ndarray, bits: int) -> np.ndarray:
    """The (n, bits / 4) ASCII lowercase hex digits of n words as `bits`-bit unsigned values
    (two's complement for signed ones), most significant first."""
    big_endian = words.astype(np.dtype(f"u{bits // 8}")).astype(f">u{bits // 8}")
    digits = np.frombuffer(big_endian.tobytes().hex().encode("ascii"), dtype=np.uint8)
    return digits.reshape(len(words), bits // 4)


def encode_rows(rec: Record, columns: dict[str, Any], n: int) -> list[dict]:
    """The wire dicts of n results given as one column per field of `rec`."""
    per_field = _encoded_fields(rec, columns, n)
    if len(per_field) == 1:
        [(name, values)] = per_field.items()
        return [{name: v} for v in values]
    names = list(per_field)
    return [dict(zip(names, row, strict=True)) for row in zip(*per_field.values(), strict=True)]


def _encoded_fields(rec: Record, columns: dict[str, Any], n: int) -> dict[str, list]:
    """The JSON values of each field's column; raises ValueError on a column not n long."""
    per_field = {name: encode_column(f.type, columns[name]) for name, f in rec.fields.items()}
    for name, values in per_field.items():
        if len(values) != n:
            raise ValueError(f"column {name!r} has {len(values)} rows, expected {n}")
    return per_field


def rows_text(rec: Record, columns: dict[str, Any], n: int) -> list[str] | None:
    """The compact JSON text (separators "," and ":") of each of n results given as columns:
    exactly what the encoder writes of each of `encode_rows`' dicts, built a column at a
    time. None where a field's values are not all integers, all booleans, all strings of
    printable ASCII without '"', '\\' or ',' (which the encoder writes as they are), or all
    lists of such values."""
    texts = [_value_texts(values) for values in _encoded_fields(rec, columns, n).values()]
    if any(t is None for t in texts):
        return None
    keys = [json.dumps(name) for name in rec.fields]
    if len(keys) == 1:
        head = "{" + keys[0] + ":"
        return [head + t + "}" for t in texts[0]]
    template = "{" + ",".join(k.replace("%", "%%") + ":%s" for k in keys) + "}"
    return list(map(template.__mod__, zip(*texts, strict=True)))


def _value_texts(values: list) -> list[str] | None:
    """The JSON text of each value, for the kinds `rows_text` writes; None for any other."""
    if not values:
        return []
    kinds = set(map(type, values))
    if kinds <= {bool}:
        return ["true" if v else "false" for v in values]
    if kinds <= {int}:
        return list(map(int.__repr__, values))
    if kinds <= {str}:
        joined = "".join(values)
        if joined.isascii() and joined.isprintable() and not any(c in joined for c in '",\\'):
            return ('"' + '","'.join(values) + '"').split(",")
    if kinds <= {list}:
        return _list_texts(values)
    return None


def _list_texts(values: list[list]) -> list[str] | None:
    """The JSON text of each list, its items written by `_value_texts`; a run of lists all n
    long is written n items at a time."""
    items = _value_texts(list(chain.from_iterable(values)))
    if items is None:
        return None
    lengths = set(map(len, values))
    if len(lengths) == 1:
        n = lengths.pop()
        if n == 0:
            return ["[]"] * len(values)
        row = "[" + ",".join(["%s"] * n) + "]"
        return list(map(row.__mod__, zip(*[iter(items)] * n, strict=True)))
    out, at = [], 0
    for n in map(len, values):
        out.append("[" + ",".join(items[at:at + n]) + "]")
        at += n
    return out


def hex_rows(rec: Record, columns: dict[str, Any], n: int, head: str, tail: str) -> bytes | None:
    """Each of n results' compact JSON text between `head` and `tail`, joined by ","; None
    unless every field of `rec` is a hex integer or a fixed array of
    them (the texts are then exactly the encoder's of `encode_rows`' dicts)."""
    template, slots = [head.encode("ascii"), b"{"], []
    for k, (name, f) in enumerate(rec.fields.items()):
        t = f.type
        item = t.item if isinstance(t, Array) else t
        if not (isinstance(item, Int) and item.hex) or not name.isascii():
            return None
        values = np.asarray(columns[name]).reshape(n, -1 if isinstance(t, Array) else 1)
        template.append((b"," if k else b"") + json.dumps(name).encode("ascii") + b":")
        template.append(b"[" if isinstance(t, Array) else b"")
        for j in range(values.shape[1]):
            template.append(b',"0x' if j else b'"0x')
            slots.append((sum(map(len, template)), item.bits, values[:, j]))
            template.append(b"0" * (item.bits // 4) + b'"')
        template.append(b"]" if isinstance(t, Array) else b"")
    template.append(b"}" + tail.encode("ascii") + b",")
    row = np.frombuffer(b"".join(template), dtype=np.uint8)
    rows = np.empty((n, row.size), dtype=np.uint8)
    rows[:] = row
    for at, bits, values in slots:
        rows[:, at:at + bits // 4] = hex_digits(values, bits)
    return rows.tobytes()[:-1]
