"""`crucible-spec serve`: the wire protocol (design §4) over stdin/stdout.

One JSON object per line in, exactly one JSON line out per request, in order, flushed.
Errors carry a code from spec.errors; the args are checked against the op's JSON Schema
before anything decodes them; a line over the length limit is answered bad_request without
being held whole. The server never stops on a bad request, and exits 0 at EOF. Diagnostics
go to stderr only.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from .. import SPEC_VERSION
from ..engine import Implementation
from ..gc_pause import gc_paused
from ..spec.core.errors import BAD_REQUEST, INTERNAL, INVALID_INPUT, SpecError
from ..spec.core.registry import REGISTRY
from .deep_json import MAX_DEPTH, BoundedDecoder, cut_too_deep


def device_of(impl: str) -> str:
    if impl == "cupy":
        from ..fast.cupy.core.xp import device

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


_DECODER = BoundedDecoder(json.JSONDecoder(parse_constant=_reject_constant))
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def parse_request(line: str) -> tuple[Any, str | None]:
    """The request and the path of its first value nested deeper than MAX_DEPTH (None when
    none is): such values are read as null. Raises ValueError on text that is not JSON."""
    first = None
    while True:
        try:
            return _DECODER.decode(line), first
        except RecursionError:
            cut = cut_too_deep(line)
            if cut is None:
                raise ValueError("nested too deeply") from None
            line, path = cut
            first = first or path


@dataclass(frozen=True)
class Request:
    """A well-formed request line: its id (an integer or a string, as in JSON-RPC 2.0, echoed
    exactly), op and args."""

    rid: int | str
    op: str
    args: dict


def read_request(line: str) -> Request | dict:
    """The request on one line, or the error response it is answered with."""
    try:
        req, too_deep = parse_request(line)
    except ValueError as e:
        return _error(None, BAD_REQUEST, f"not JSON: {e}")
    if not isinstance(req, dict):
        return _error(None, BAD_REQUEST, "a request is a JSON object")
    rid = req.get("id")
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return _error(None, BAD_REQUEST, "missing 'id', or an id that is neither an integer "
                                         "nor a string")
    op, args = req.get("op"), req.get("args")
    if not isinstance(op, str):
        return _error(rid, BAD_REQUEST, "missing or non-string 'op'")
    if not isinstance(args, dict):
        return _error(rid, BAD_REQUEST, "missing 'args' object")
    if too_deep:
        return _error(rid, INVALID_INPUT, f"{too_deep}: nested deeper than {MAX_DEPTH} levels")
    return Request(rid, op, args)


def answer(line: str, impl: Implementation, profile: str) -> dict:
    """The response object for one request line."""
    return answer_all([line], impl, profile)[0]


def answer_all(lines: list[str], impl: Implementation, profile: str) -> list[dict]:
    """The responses to request lines that arrived together, in order."""
    return [r for chunk in answer_chunks(lines, impl, profile) for r in chunk]


def answer_chunks(lines: list[str], impl: Implementation, profile: str
                  ) -> Iterator[list[dict]]:
    """The responses to request lines that arrived together, in order, in chunks to write as
    soon as each is ready: a run of consecutive requests for one op that a kernel answers is
    one `call_many` (each request gets the answer it would get alone) and one chunk; any other
    request is a chunk of its own, so a slow op's answers are not held back."""
    reqs = [read_request(line) for line in lines]
    i = 0
    while i < len(reqs):
        j = i + 1
        if isinstance(reqs[i], Request) and _batched(reqs[i].op, impl):
            while j < len(reqs) and isinstance(reqs[j], Request) and reqs[j].op == reqs[i].op:
                j += 1
            yield _respond(reqs[i:j], impl, profile)
        else:
            yield _respond(reqs[i:j], impl, profile) if isinstance(reqs[i], Request) \
                else [reqs[i]]
        i = j


def _batched(op: str, impl: Implementation) -> bool:
    known = REGISTRY.ops.get(op)
    return known is not None and impl.route(known).how == "kernel"


def _respond(reqs: list[Request], impl: Implementation, profile: str) -> list[dict]:
    if reqs[0].op == "hello":
        return [{"id": r.rid, "ok": True, "result": hello(impl, profile)} for r in reqs]
    outcomes = impl.call_many(reqs[0].op, [r.args for r in reqs])
    return [_response(r.rid, o) for r, o in zip(reqs, outcomes, strict=True)]


def _response(rid: int | str, outcome: Any) -> dict:
    if isinstance(outcome, SpecError):
        return _error(rid, outcome.code, outcome.message)
    if isinstance(outcome, Exception):  # an implementation bug is reported, never kills serve
        traceback.print_exception(outcome, file=sys.stderr)
        return _error(rid, INTERNAL, f"{type(outcome).__name__}: {outcome}")
    return {"id": rid, "ok": True, "result": outcome}


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
    """Answer every line of `stdin` until EOF; return the exit status (0). The lines already
    waiting when one is answered are answered together: a run of them for one op that a kernel
    answers is one batch, written and flushed at once, and every other answer is flushed as
    soon as it is ready. A client that waits for each answer still gets it at once."""
    sys.set_int_max_str_digits(MAX_INT_DIGITS)
    for group in arrived(lines(stdin, max_line_bytes)):
        responses, texts = [], []
        for raw in group:
            if raw is None:
                responses.append(_error(None, BAD_REQUEST, f"request line longer than "
                                        f"{max_line_bytes} bytes (serve --max-line-bytes)"))
                continue
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                responses.append(_error(None, BAD_REQUEST, "request is not UTF-8"))
                continue
            if line:
                responses.append(len(texts))
                texts.append(line)
        answered = answer_chunks(texts, impl, profile)
        chunk: list = []
        for r in responses:
            if isinstance(r, int):
                if not chunk:
                    with gc_paused():  # a long request is millions of acyclic dicts and lists
                        chunk = next(answered)[::-1]
                r = chunk.pop()
            stdout.write(_ENCODER.encode(r) + "\n")
            if not chunk:
                stdout.flush()
    return 0


MAX_GROUP = 4096
"""The most waiting lines answered together."""
_END = object()


def arrived(source: Iterator[bytes | None]) -> Iterator[list[bytes | None]]:
    """The items of `source` in order, grouped: each group is the next item plus those read
    ahead by then (at most MAX_GROUP). A thread reads ahead; its exceptions are re-raised."""
    waiting: queue.Queue = queue.Queue(maxsize=MAX_GROUP)

    def read() -> None:
        try:
            for item in source:
                waiting.put(item)
        except Exception as e:  # handed to the answering thread, which raises it
            waiting.put(e)
        waiting.put(_END)

    threading.Thread(target=read, daemon=True, name="serve-reader").start()
    while True:
        group = [waiting.get()]
        while len(group) < MAX_GROUP and group[-1] is not _END:
            try:
                group.append(waiting.get_nowait())
            except queue.Empty:
                break
        for item in group:
            if isinstance(item, Exception):
                raise item
        done = group[-1] is _END
        if done:
            group.pop()
        if group:
            yield group
        if done:
            return
