"""`crucible-spec serve`: the wire protocol (design §4) over stdin/stdout.

One JSON object per line in, exactly one JSON line out per request, in order, flushed.
Errors carry a code from spec.errors; the args are checked against the op's JSON Schema
before anything decodes them; a line over the length limit is answered bad_request without
being held whole. The server never stops on a bad request, and exits 0 at EOF. Diagnostics
go to stderr only.

The batch form (protocol version 2, declared by hello's `"batch": true` unless serve runs
without it): `"batch": [args, ...]` in place of `"args"` is answered `{"id", "ok": true,
"results": [...]}`, one `{"ok", "result"|"error"}` per item, in order, each exactly what the
line `{"id", "op", "args": item}` gets alone (a kernel answers the items as one batch, from
columns decoded straight from the JSON). A request with both, a `batch` that is not a list,
or a batch sent to a server without the form is bad_request.
"""

from __future__ import annotations

import io
import json
import os
import queue
import sys
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from .. import PROTOCOL_VERSION, SPEC_VERSION
from ..engine import Implementation, JsonRows
from ..gc_pause import gc_paused
from ..spec.core.errors import BAD_REQUEST, INTERNAL, INVALID_INPUT, SpecError
from ..spec.core.registry import REGISTRY
from ..spec.core.schema import json_kind
from .deep_json import MAX_DEPTH, BoundedDecoder, batch_items, cut_too_deep
from .quick_batch import HEAD as QUICK_HEAD
from .quick_batch import answer_quick


def device_of(impl: str) -> str:
    if impl == "cupy":
        from ..fast.cupy.core.xp import device

        return device()
    if impl == "numba":
        import numba

        return f"cpu (numba {numba.__version__})"
    return "cpu (python)"


def hello(impl: Implementation, profile: str, batch: bool = True) -> dict:
    """The hello answer: the implementation, its profile, the spec and protocol versions, its
    ops and device, its reference fallbacks, and `"batch": true` where it takes the batch form."""
    return {
        "impl": impl.name,
        "profile": profile,
        "spec_version": SPEC_VERSION,
        "protocol_version": PROTOCOL_VERSION,
        "ops": ["hello", *impl.supported()],
        "device": device_of(impl.name),
        "fallbacks": impl.fallbacks(),
    } | ({"batch": True} if batch else {})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = BoundedDecoder(json.JSONDecoder(parse_constant=_reject_constant))
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def parse_request(line: str) -> tuple[Any, list[str]]:
    """The request and the paths of its values nested deeper than MAX_DEPTH, in text order:
    such values are read as null. Raises ValueError on text that is not JSON."""
    cuts: list[str] = []
    while True:
        try:
            return _DECODER.decode(line), cuts
        except RecursionError:
            cut = cut_too_deep(line)
            if cut is None:
                raise ValueError("nested too deeply") from None
            line, path = cut
            cuts.append(path)


@dataclass(frozen=True)
class Request:
    """A well-formed request line: its id (an integer or a string, as in JSON-RPC 2.0, echoed
    exactly), op and args."""

    rid: int | str
    op: str
    args: dict


@dataclass(frozen=True)
class Batch:
    """A well-formed batch request line: its id and op, each item's args, and by index the
    answer (without an id) of each item refused before its op runs, as it would be alone."""

    rid: int | str
    op: str
    items: list
    refused: dict[int, dict]


NOT_ARGS = "missing 'args' object"
NOT_DECLARED = "; this implementation does not take the batch form (its hello does not declare " \
               "\"batch\": true): send one request per line"


def read_request(line: str, batch: bool = True) -> Request | Batch | dict:
    """The request on one line (a batch request where `batch`: the server declares the
    form), or the error response it is answered with."""
    try:
        req, cuts = parse_request(line)
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
    if batch and "batch" in req:
        return read_batch(line, req, cuts)
    if not isinstance(args, dict):
        return _error(rid, BAD_REQUEST, NOT_ARGS + (NOT_DECLARED if "batch" in req else ""))
    if cuts:
        return _error(rid, INVALID_INPUT, _too_deep(cuts[0]))
    return Request(rid, op, args)


def _too_deep(path: str) -> str:
    return f"{path}: nested deeper than {MAX_DEPTH} levels"


def read_batch(line: str, req: dict, cuts: list[str]) -> Batch | dict:
    """A batch request whose id and op are well formed, or the error response it is answered
    with. Where values nest too deeply inside items, each item's text is read alone."""
    rid, op, items = req["id"], req["op"], req["batch"]
    if "args" in req:
        return _error(rid, BAD_REQUEST, "a request carries 'args' or 'batch', not both")
    if not isinstance(items, list):
        return _error(rid, BAD_REQUEST, f"'batch' must be a list of args objects, got "
                                        f"{json_kind(items)}")
    outside = [p for p in cuts if not p.startswith("batch[")]
    if outside:
        return _error(rid, INVALID_INPUT, _too_deep(outside[0]))
    if cuts:
        return read_alone(rid, op, batch_items(line))
    if set(map(type, items)) <= {dict}:
        return Batch(rid, op, items, {})
    refused = {i: _failure(BAD_REQUEST, NOT_ARGS) for i, a in enumerate(items)
               if not isinstance(a, dict)}
    return Batch(rid, op, items, refused)


def read_alone(rid: int | str, op: str, texts: list[str]) -> Batch:
    """The batch of the item texts `texts`, each read as the line that sends it alone."""
    head = _ENCODER.encode({"id": rid, "op": op})[:-1] + ',"args":'
    items, refused = [], {}
    for i, text in enumerate(texts):
        alone = read_request(head + text + "}")
        items.append(alone.args if isinstance(alone, Request) else None)
        if not isinstance(alone, Request):
            refused[i] = {k: v for k, v in alone.items() if k != "id"}
    return Batch(rid, op, items, refused)


@dataclass(frozen=True)
class Quick:
    """A line that may be a batch request of integers (conformance/quick_batch.py)."""

    line: str


@dataclass(frozen=True)
class Encoded:
    """A response already written as its compact JSON text (a batch a kernel answered whole)."""

    text: str


def answer(line: str, impl: Implementation, profile: str, batch: bool = True) -> dict:
    """The response object for one request line."""
    return answer_all([line], impl, profile, batch)[0]


def answer_all(lines: list[str], impl: Implementation, profile: str,
               batch: bool = True) -> list[dict]:
    """The responses to request lines that arrived together, in order."""
    return [json.loads(r.text) if isinstance(r, Encoded) else r
            for chunk in answer_chunks(lines, impl, profile, batch) for r in chunk]


def answer_chunks(lines: list[str], impl: Implementation, profile: str, batch: bool = True
                  ) -> Iterator[list[dict | Encoded]]:
    """The responses to request lines that arrived together, in order, in chunks to write as
    soon as each is ready: a run of consecutive requests for one op that a kernel answers is
    one `call_many` (each request gets the answer it would get alone) and one chunk; a batch
    request is one `call_many` of its items; any other request is a chunk of its own, so a
    slow op's answers are not held back. `batch`: the server takes the batch form."""
    reqs = [Quick(line) if batch and QUICK_HEAD.match(line) else read_request(line, batch)
            for line in lines]
    i = 0
    while i < len(reqs):
        j, req = i + 1, reqs[i]
        if isinstance(req, Quick):
            text = answer_quick(req.line, impl)
            req = read_request(req.line, batch) if text is None else Encoded(text)
        if isinstance(req, Request) and _batched(req.op, impl):
            while j < len(reqs) and isinstance(reqs[j], Request) and reqs[j].op == req.op:
                j += 1
            chunk = _respond([req, *reqs[i + 1:j]], impl, profile, batch)
        elif isinstance(req, Request):
            chunk = _respond([req], impl, profile, batch)
        elif isinstance(req, Batch):
            chunk = [answer_batch(req, impl, profile, batch)]
        else:
            chunk = [req]
        reqs[i:j] = [None] * (j - i)  # the parsed requests go before the collector resumes
        req = None
        yield chunk
        i = j


def _batched(op: str, impl: Implementation) -> bool:
    known = REGISTRY.ops.get(op)
    return known is not None and impl.route(known).how == "kernel"


def _respond(reqs: list[Request], impl: Implementation, profile: str, batch: bool
             ) -> list[dict]:
    bodies = answer_items(reqs[0].op, [r.args for r in reqs], impl, profile, batch)
    return [{"id": r.rid, **b} for r, b in zip(reqs, bodies, strict=True)]


_OK_HEAD = '{"ok":true,"result":'


def answer_batch(req: Batch, impl: Implementation, profile: str, batch: bool = True
                 ) -> dict | Encoded:
    """The response to a batch request: one answer per item, in order; its text written
    straight from the results' texts where a kernel answers every item (engine.JsonRows)."""
    if not req.refused and req.items and req.op != "hello":
        outcomes = impl.call_many(req.op, req.items, text=True)
        if isinstance(outcomes, JsonRows):
            head = '{"id":' + _ENCODER.encode(req.rid) + ',"ok":true,"results":['
            return Encoded(head + _OK_HEAD + ("}," + _OK_HEAD).join(outcomes) + "}]}")
        return {"id": req.rid, "ok": True, "results": _bodies(outcomes)}
    todo = [i for i in range(len(req.items)) if i not in req.refused]
    results = [req.refused.get(i) for i in range(len(req.items))]
    bodies = answer_items(req.op, [req.items[i] for i in todo], impl, profile, batch)
    for i, body in zip(todo, bodies, strict=True):
        results[i] = body
    return {"id": req.rid, "ok": True, "results": results}


def answer_items(op: str, items: list[dict], impl: Implementation, profile: str,
                 batch: bool = True) -> list[dict]:
    """The answer (without an id) to each args of one op, each as it would be alone."""
    if not items:
        return []
    if op == "hello":
        return [{"ok": True, "result": hello(impl, profile, batch)} for _ in items]
    return _bodies(impl.call_many(op, items))


def _bodies(outcomes: list) -> list[dict]:
    return [{"ok": True, "result": o} if type(o) is dict else _body(o) for o in outcomes]


def _body(outcome: Any) -> dict:
    if isinstance(outcome, SpecError):
        return _failure(outcome.code, outcome.message)
    if isinstance(outcome, Exception):  # an implementation bug is reported, never kills serve
        traceback.print_exception(outcome, file=sys.stderr)
        return _failure(INTERNAL, f"{type(outcome).__name__}: {outcome}")
    return {"ok": True, "result": outcome}


def _failure(code: str, message: str) -> dict:
    return {"ok": False, "error": {"code": code, "message": message}}


def _error(rid: Any, code: str, message: str) -> dict:
    return {"id": rid, **_failure(code, message)}


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
          max_line_bytes: int = MAX_LINE_BYTES, batch: bool = True) -> int:
    """Answer every line of `stdin` until EOF; return the exit status (0). The lines already
    waiting when one is answered are answered together: a run of them for one op that a kernel
    answers is one batch, written and flushed at once, and every other answer is flushed as
    soon as it is ready. A client that waits for each answer still gets it at once. `batch`:
    hello declares the batch form, and batch requests are answered."""
    sys.set_int_max_str_digits(MAX_INT_DIGITS)
    reader = own_reader(stdin)
    for group in arrived(lines(reader, max_line_bytes)):
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
        answered = answer_chunks(texts, impl, profile, batch)
        chunk: list = []
        for r in responses:
            if isinstance(r, int):
                if not chunk:
                    with gc_paused():  # a long request is millions of acyclic dicts and lists
                        chunk = next(answered)[::-1]
                r = chunk.pop()
            stdout.write((r.text if isinstance(r, Encoded) else _ENCODER.encode(r)) + "\n")
            if not chunk:
                stdout.flush()
    if reader is not stdin:
        reader.close()
    return 0


def own_reader(stdin: IO[bytes]) -> IO[bytes]:
    """A reader of its own over `stdin`'s file (a duplicate descriptor) for the reading thread:
    Python takes sys.stdin's lock at exit, and a daemon thread blocked while holding it makes
    the exit abort (an internal error then ended in SIGABRT, not status 70). `stdin` itself
    where it has no file."""
    try:
        fd = stdin.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return stdin
    return os.fdopen(os.dup(fd), "rb")


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
