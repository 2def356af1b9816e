"""`crucible-spec bench --serve / --cmd`: a wire implementation timed on the bench's requests.

A wire implementation is any command that speaks the `serve` protocol on stdin/stdout
(`crucible-spec serve --impl numba`, the real C++ binary). It is timed as a user pays for it:

1. Start the command; send a hello request and wait for its answer, then the warm-up items (as
   the kernels get theirs) and wait for their answers, so the start-up (process launch,
   imports, loading the op's compiled code) is left out of the timing.
2. Encode the op's bench items with `op.args.encode`, one request line each, ids 1..n; where
   the hello declares the batch form, batch requests of up to BENCH_BATCH items (and about
   BATCH_BYTES of args) each, ids 1.., instead.
3. Start the clock; a writer thread writes every line and closes stdin while this thread reads
   the answers (so neither side blocks on a full pipe); stop the clock at the last answer.
4. Each item's answer is checked against the reference's encoded result where the reference
   ran on that item (a prefix of the batch when its time budget ran out): equal, or within
   the op's envelope; an error answer, a wrong id or a malformed batch answer is a mismatch.
5. Batches are also timed against the json module's own work on the same lines: parsing each
   request line and writing each answer line (json.loads and json.dumps, the best of
   JSON_REPEAT), the least any Python server of the protocol pays.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from .conformance.batching import declares_batch
from .conformance.diff import within_envelope
from .spec.core.registry import Op


class WireError(Exception):
    """The command could not be started or broke the protocol: one line for the user."""


@dataclass(frozen=True)
class WireImpl:
    """A named command line that speaks the wire protocol."""

    name: str
    argv: tuple[str, ...]


def parse_cmd(text: str) -> WireImpl:
    """`NAME=COMMAND ARGS...` or `COMMAND ARGS...` (named after the command's file name).
    Raises WireError on an empty command or one that is not on PATH."""
    name, sep, rest = text.partition("=")
    if not sep or " " in name or not name:
        name, rest = "", text
    try:
        argv = tuple(shlex.split(rest))
    except ValueError as e:
        raise WireError(f"--cmd {text!r}: {e}") from None
    if not argv:
        raise WireError(f"--cmd {text!r}: no command")
    if shutil.which(argv[0]) is None:
        raise WireError(f"--cmd {text!r}: command not found: {argv[0]}")
    return WireImpl(name or argv[0].rsplit("/", 1)[-1], argv)


BENCH_MAX_LINE = 1 << 30
"""serve's line limit in the bench: a 100k-op trace.build request is over 100 MB, past the
default 64 MiB."""


def serve_impl(backend: str, profile: str = "crucible") -> WireImpl:
    """`crucible-spec serve --impl backend --profile profile`, run by this Python."""
    return WireImpl(f"serve {backend}",
                    (sys.executable, "-m", "crucible_spec", "serve", "--impl", backend,
                     "--profile", profile, "--max-line-bytes", str(BENCH_MAX_LINE)))


BENCH_BATCH = 4096
"""The most items in one batch request."""
BATCH_BYTES = 64 << 20
"""A batch request ends once its args reach this many bytes (an item larger alone is a batch
of one)."""
JSON_REPEAT = 3
"""The json module's time on the batch lines is the best of this many runs."""


@dataclass(frozen=True)
class WireTiming:
    """One wire implementation on one op's items: the seconds from the first request written
    to the last answer read, each item's answer (None for one that never came), and, where it
    took batch requests, the json module's seconds to parse those lines and write its answers."""

    seconds: float
    answers: list[dict | None]
    json_seconds: float | None = None


def request_lines(op: Op, items: list[dict]) -> list[bytes]:
    """One wire request per item, ids 1..n."""
    return [json.dumps({"id": i, "op": op.name, "args": op.args.encode(a)},
                       separators=(",", ":")).encode() + b"\n"
            for i, a in enumerate(items, 1)]


def batch_lines(op: Op, items: list[dict], size: int = BENCH_BATCH,
                max_bytes: int = BATCH_BYTES) -> tuple[list[bytes], list[int]]:
    """Batch requests of the items, in order, ids 1.., each of at most `size` items and about
    `max_bytes` of args, and how many items each carries."""
    texts = [json.dumps(op.args.encode(a), separators=(",", ":")) for a in items]
    groups: list[list[str]] = []
    held = 0
    for text in texts:
        if not groups or len(groups[-1]) == size or held + len(text) > max_bytes:
            groups.append([])
            held = 0
        groups[-1].append(text)
        held += len(text)
    head = [json.dumps({"id": i, "op": op.name}, separators=(",", ":"))[:-1]
            for i in range(1, len(groups) + 1)]
    return ([(h + ',"batch":[' + ",".join(g) + "]}\n").encode() for h, g in zip(head, groups,
                                                                                strict=True)],
            [len(g) for g in groups])


def item_answers(raw: list[bytes], counts: list[int]) -> list[dict | None]:
    """Each item's answer, with the id of its place (1..n), from the batch answer lines `raw`
    (None for each item of a batch whose answer is missing, has the wrong id or is not a
    batch answer of its size)."""
    out: list[dict | None] = []
    for rid, (line, count) in enumerate(zip(raw, counts, strict=True), 1):
        got = _parsed(line)
        results = got.get("results") if isinstance(got, dict) and got.get("id") == rid else None
        if not isinstance(results, list) or len(results) != count:
            out += [None] * count
            continue
        out += [{"id": len(out) + i, **r} if isinstance(r, dict) else None
                for i, r in enumerate(results, 1)]
    return out


def _parsed(line: bytes) -> object:
    """The JSON value of an answer line; None for a blank line or one that is not JSON."""
    try:
        return json.loads(line) if line.strip() else None
    except ValueError:
        return None


def json_seconds(requests: list[bytes], answers: list[bytes]) -> float:
    """The json module's best time (of JSON_REPEAT) to parse the request lines and write the
    answer lines (parsed beforehand, written compactly, as serve writes them)."""
    parsed = [json.loads(a) for a in answers]
    best = float("inf")
    for _ in range(JSON_REPEAT):
        start = time.perf_counter()
        for line in requests:
            json.loads(line)
        for answer in parsed:
            json.dumps(answer, separators=(",", ":"))
        best = min(best, time.perf_counter() - start)
    return best


def _start(impl: WireImpl) -> tuple[subprocess.Popen, dict | None]:
    try:
        proc = subprocess.Popen(impl.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    except OSError as e:
        raise WireError(f"{impl.name}: cannot start {impl.argv[0]}: {e.strerror}") from None
    try:
        proc.stdin.write(b'{"id":0,"op":"hello","args":{}}\n')
        proc.stdin.flush()
    except BrokenPipeError:
        pass
    hello = proc.stdout.readline()
    if not hello:
        proc.kill()
        proc.wait()
        raise WireError(f"{impl.name}: no answer to hello (exit status {proc.returncode})")
    try:
        answer = json.loads(hello)
    except ValueError:
        answer = None
    return proc, answer.get("result") if isinstance(answer, dict) else None


def _write_all(proc: subprocess.Popen, lines: list[bytes]) -> None:
    try:
        proc.stdin.writelines(lines)
        proc.stdin.close()
    except BrokenPipeError:
        pass


def _warm_up(proc: subprocess.Popen, op: Op, items: list[dict], batch: bool) -> None:
    """Send the warm-up items (ids 1..) and read their answers, untimed; nothing is checked."""
    lines = batch_lines(op, items)[0] if batch else request_lines(op, items)
    try:
        proc.stdin.writelines(lines)
        proc.stdin.flush()
    except BrokenPipeError:
        return
    for _ in lines:
        proc.stdout.readline()


def time_wire(impl: WireImpl, op: Op, items: list[dict], warm: list[dict] = ()) -> WireTiming:
    """The implementation timed on the items: one request per item, or batch requests where
    its hello declares them; after the warm-up items, untimed."""
    proc, greeting = _start(impl)
    batch = declares_batch(greeting)
    if warm:
        _warm_up(proc, op, list(warm), batch)
    lines, counts = batch_lines(op, items) if batch else (request_lines(op, items), [])
    writer = threading.Thread(target=_write_all, args=(proc, lines), daemon=True)
    start = time.perf_counter()
    writer.start()
    raw = [proc.stdout.readline() for _ in lines]
    took = time.perf_counter() - start
    writer.join()
    proc.stdout.close()
    proc.wait()
    if not batch:
        return WireTiming(took, [json.loads(r) if r.strip() else None for r in raw])
    answers = item_answers(raw, counts)
    every = all(a is not None for a in answers)
    return WireTiming(took, answers, json_seconds(lines, raw) if every else None)


def answers_agree(op: Op, expected: list, answers: list[dict | None]) -> bool:
    """Every answer came, in order, without an error, and each one with a reference result to
    compare with (the first len(expected)) is that result or within the op's envelope."""
    if any(got is None or got.get("id") != i or not got.get("ok")
           for i, got in enumerate(answers, 1)):
        return False
    return all(got["result"] == want or within_envelope(op, want, got["result"])
               for want, got in zip(json.loads(json.dumps(expected)), answers[:len(expected)],
                                    strict=True))
