"""A request nested deeper than Python's JSON parser can follow is still answered about the
field that is too deep: one iterative pass over the text finds the first array or object
that opens at `MAX_DEPTH`, names its path (`args.expr[1][1]...`) and replaces it with `null`,
so the rest of the request (its id, op and other args) parses as usual."""

from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
from dataclasses import dataclass

import numpy as np

MAX_DEPTH = 512
"""Arrays and objects may nest this deep in a request (the parser's own limit is about 1000,
less whatever the caller's stack holds)."""


@dataclass
class _Frame:
    """An open array (key is the index of the current item) or object (key: the last key)."""

    is_object: bool
    key: str | int = 0
    want_key: bool = False


def _segment(frame: _Frame) -> str:
    return f"[{frame.key}]" if not frame.is_object else f".{frame.key}"


SHOWN = 8
"""Path segments named before the rest is elided."""


def _path(stack: list[_Frame]) -> str:
    """The JSON path of the value being read, from the request's top level (`args.expr[1]`),
    its first SHOWN segments and `...` for the rest."""
    segments = [_segment(f) for f in stack[1:] if f.key != ""]
    return ("".join(segments[:SHOWN]) + ("..." if len(segments) > SHOWN else "")).lstrip(".")


def _closing(text: str, start: int) -> int:
    """The index of the bracket that closes the one at `start`, or -1."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = _string_end(text, i)
            if i < 0:
                return -1
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _string_end(text: str, start: int) -> int:
    """The index of the quote that ends the string opened at `start`, or -1."""
    i, n = start + 1, len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return -1


def cut_too_deep(text: str, limit: int = MAX_DEPTH) -> tuple[str, str] | None:
    """(text with the first value nested `limit` deep replaced by null, that value's path), or
    None when nothing nests that deep or the text is not balanced JSON."""
    stack: list[_Frame] = [_Frame(True, "")]
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            end = _string_end(text, i)
            if end < 0:
                return None
            top = stack[-1] if depth else None
            if top is not None and top.is_object and top.want_key:
                top.key, top.want_key = json.loads(text[i:end + 1]), False
            i = end
        elif c in "[{":
            if depth == limit:
                end = _closing(text, i)
                return None if end < 0 else (text[:i] + "null" + text[end + 1:], _path(stack))
            depth += 1
            stack.append(_Frame(c == "{", "" if c == "{" else 0, c == "{"))
        elif c in "]}":
            depth -= 1
            stack.pop()
            if depth < 0:
                return None
        elif c == "," and depth:
            top = stack[-1]
            if top.is_object:
                top.want_key = True
            else:
                top.key = int(top.key) + 1
        i += 1
    return None


def batch_items(text: str) -> list[str]:
    """The text of each item of the request's top-level "batch" array (its last, as JSON
    objects keep the last of a repeated key), read without nesting; [] when it has none. The
    text is a JSON object that only nests too deeply (the cut of it decodes)."""
    items: list[str] = []
    current: list[str] | None = None
    depth, i, n, key, want_key, start = 0, 0, len(text), None, False, 0
    while i < n:
        c = text[i]
        if c == '"':
            end = _string_end(text, i)
            if depth == 1 and want_key:
                key, want_key = json.loads(text[i:end + 1]), False
            i = end
        elif c in "[{":
            depth += 1
            want_key = depth == 1
            if depth == 2 and c == "[" and key == "batch":
                current, start = [], i + 1
        elif c in "]}":
            if depth == 2 and current is not None:
                last = text[start:i].strip()
                items, current = [*current, last] if last else current, None
            depth -= 1
        elif c == "," and depth == 1:
            want_key = True
        elif c == "," and depth == 2 and current is not None:
            current.append(text[start:i].strip())
            start = i + 1
        i += 1
    return items


def _recursion_depth() -> int:
    """The recursion depth of the caller as the interpreter counts it (Python frames and the C
    calls that count), measured by recursing to the limit; cached per thread and call stack."""
    frame, stack = sys._getframe(1), []
    while frame is not None:
        stack.append(frame.f_code)
        frame = frame.f_back
    key = (threading.get_ident(), tuple(stack))
    if key not in _DEPTHS:
        _DEPTHS[key] = sys.getrecursionlimit() - _room()
    return _DEPTHS[key]


_DEPTHS: dict[tuple, int] = {}


def _room() -> int:
    """How many more nested calls the interpreter allows from here."""
    n = 0

    def down() -> None:
        nonlocal n
        n += 1
        down()

    with contextlib.suppress(RecursionError):
        down()
    return n


def _decode_under(decoder: json.JSONDecoder, text: str, headroom: int) -> object:
    """`decoder.decode(text)` with the recursion limit `headroom` levels above this call."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(_recursion_depth() + headroom)
    try:
        return decoder.decode(text)
    finally:
        sys.setrecursionlimit(old)


def _calibrate(decoder: json.JSONDecoder, limit: int) -> int:
    """The headroom under which `limit` nested arrays decode and `limit + 1` do not."""
    for headroom in range(limit - 16, limit + 64):
        try:
            _decode_under(decoder, "[" * limit + "]" * limit, headroom)
        except RecursionError:
            continue
        with contextlib.suppress(RecursionError):
            _decode_under(decoder, "[" * (limit + 1) + "]" * (limit + 1), headroom)
            continue
        return headroom
    raise RuntimeError("the JSON decoder's nesting could not be bounded")


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_STEP = np.zeros(256, dtype=np.int8)
_STEP[[ord("["), ord("{")]], _STEP[[ord("]"), ord("}")]] = 1, -1


def max_depth(text: str) -> int:
    """How deep arrays and objects nest in `text`, brackets inside strings left out; read in one
    vectorized pass (a string with an escape is first emptied by a regular expression)."""
    if "\\" in text:
        text = _STRING.sub('""', text)
    b = np.frombuffer(text.encode(), dtype=np.uint8)
    inside = np.bitwise_xor.accumulate(b == ord('"'))
    return int(np.cumsum(np.where(inside, 0, _STEP[b]), dtype=np.int32).max(initial=0))


@dataclass
class BoundedDecoder:
    """A JSON decoder that raises RecursionError on anything nested deeper than `limit`, exactly,
    wherever it is called from (Python's own decoder fails somewhere near 1000, less what the
    caller's stack holds, and a value just under that exhausts the stack of whatever reads it).

    Where the decoder's nesting counts against the recursion limit (Python 3.11), a limit set
    just above the caller bounds it at no cost; where it does not (3.12 on, whose C decoder
    stops only at the C stack's own limit), the depth is measured before decoding."""

    decoder: json.JSONDecoder
    limit: int = MAX_DEPTH

    def __post_init__(self) -> None:
        try:
            self.headroom: int | None = _calibrate(self.decoder, self.limit)
        except RuntimeError:
            self.headroom = None

    def decode(self, text: str) -> object:
        if text.count("[") + text.count("{") <= self.limit:  # cannot nest that deep
            return self.decoder.decode(text)
        if self.headroom is not None:
            return _decode_under(self.decoder, text, self.headroom)
        if max_depth(text) > self.limit:
            raise RecursionError(f"nested deeper than {self.limit} levels")
        return self.decoder.decode(text)
