"""A request nested deeper than Python's JSON parser can follow is still answered about the
field that is too deep: one iterative pass over the text finds the first array or object
that opens at `MAX_DEPTH`, names its path (`args.expr[1][1]...`) and replaces it with `null`,
so the rest of the request (its id, op and other args) parses as usual."""

from __future__ import annotations

import json
from dataclasses import dataclass

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
