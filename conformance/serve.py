"""`crucible-spec serve`: the wire protocol (design §4) over stdin/stdout.

One JSON object per line in, exactly one JSON line out per request, in order, flushed.
Errors carry a code from spec.errors; the args are checked against the op's JSON Schema
before anything decodes them; a line over the length limit is answered bad_request without
being held whole. The server never stops on a bad request, and exits 0 at EOF. Diagnostics
go to stderr only.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Iterator
from typing import IO, Any

from .. import SPEC_VERSION
from ..engine import Implementation
from ..spec.errors import BAD_REQUEST, INTERNAL, INVALID_INPUT, SpecError
from .deep_json import MAX_DEPTH, cut_too_deep


def device_of(impl: str) -> str:
    if impl == "cupy":
        from ..fast.cupy.xp import device

        return device()
    if impl == "numba":
        import numba

        return f"cpu (numba {numba.__version__})"
    return "cpu (python)"


def hello(impl: Implementation, profile: str) -> dict:
    return {
        "impl": impl.name,
        "profile": profile,
        "spec_version": SPEC_VERSION,
        "ops": ["hello", *impl.supported()],
        "device": device_of(impl.name),
        "fallbacks": impl.fallbacks(),
    }


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_request(line: str) -> tuple[Any, str | None]:
    """The request and the path of its first value nested deeper than MAX_DEPTH (None when
    none is): such values are read as null. Raises ValueError on text that is not JSON."""
    first = None
    while True:
        try:
            return json.loads(line, parse_constant=_reject_constant), first
        except RecursionError:
            cut = cut_too_deep(line)
            if cut is None:
                raise ValueError("nested too deeply") from None
            line, path = cut
            first = first or path


def answer(line: str, impl: Implementation, profile: str) -> dict:
    """The response object for one request line."""
    try:
        req, too_deep = parse_request(line)
    except ValueError as e:
        return _error(None, BAD_REQUEST, f"not JSON: {e}")
    if not isinstance(req, dict):
        return _error(None, BAD_REQUEST, "a request is a JSON object")
    rid = req.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int):
        return _error(None, BAD_REQUEST, "missing or non-integer 'id'")
    op, args = req.get("op"), req.get("args")
    if not isinstance(op, str):
        return _error(rid, BAD_REQUEST, "missing or non-string 'op'")
    if not isinstance(args, dict):
        return _error(rid, BAD_REQUEST, "missing 'args' object")
    if too_deep:
        return _error(rid, INVALID_INPUT, f"{too_deep}: nested deeper than {MAX_DEPTH} levels")
    try:
        if op == "hello":
            return {"id": rid, "ok": True, "result": hello(impl, profile)}
        return {"id": rid, "ok": True, "result": impl.call(op, args)}
    except SpecError as e:
        return _error(rid, e.code, e.message)
    except Exception as e:  # an implementation bug is reported, never kills the server
        traceback.print_exc(file=sys.stderr)
        return _error(rid, INTERNAL, f"{type(e).__name__}: {e}")


def _error(rid: Any, code: str, message: str) -> dict:
    return {"id": rid, "ok": False, "error": {"code": code, "message": message}}


MAX_INT_DIGITS = 100_000
"""Integers in a request may have this many digits (Python's default limit is 4,300)."""


MAX_LINE_BYTES = 64 << 20
"""The longest request line answered (64 MiB); a longer one is bad_request, read in bounded
chunks and never held whole."""
_CHUNK = 1 << 20


def lines(stdin: IO[bytes], max_bytes: int) -> Iterator[bytes | None]:
    """Each line of `stdin` (None for one over `max_bytes`, whose rest is skipped unread)."""
    while True:
        raw = stdin.readline(max_bytes + 1)
        if not raw:
            return
        if len(raw) <= max_bytes or (len(raw) == max_bytes + 1 and raw.endswith(b"\n")):
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = stdin.readline(_CHUNK)
        yield None


def serve(impl: Implementation, profile: str, stdin: IO[bytes], stdout: IO[str],
          max_line_bytes: int = MAX_LINE_BYTES) -> int:
    """Answer every line of `stdin` until EOF; return the exit status (0)."""
    sys.set_int_max_str_digits(MAX_INT_DIGITS)
    for raw in lines(stdin, max_line_bytes):
        if raw is None:
            response = _error(None, BAD_REQUEST, f"request line longer than {max_line_bytes} "
                                                 f"bytes (serve --max-line-bytes)")
        else:
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                response = _error(None, BAD_REQUEST, "request is not UTF-8")
            else:
                if not line:
                    continue
                response = answer(line, impl, profile)
        stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        stdout.flush()
    return 0
