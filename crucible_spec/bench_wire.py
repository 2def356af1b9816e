"""`crucible-spec bench --serve / --cmd`: a wire implementation timed on the bench's requests.

A wire implementation is any command that speaks the `serve` protocol on stdin/stdout
(`crucible-spec serve --impl numba`, the real C++ binary). It is timed as a user pays for it:

1. Start the command; send a hello request and wait for its answer, so the start-up (process
   launch, imports, JIT caches) is left out of the timing.
2. Encode the op's bench items with `op.args.encode`, one request line each, ids 1..n.
3. Start the clock; a writer thread writes every line and closes stdin while this thread reads
   the answers (so neither side blocks on a full pipe); stop the clock at the n-th answer.
4. Each answer is checked against the reference's encoded result where the reference ran on
   that item (a prefix of the batch when its time budget ran out): equal, or within the op's
   envelope; an error answer or a wrong id is a mismatch.
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


def serve_impl(backend: str) -> WireImpl:
    """`crucible-spec serve --impl backend`, run by this Python."""
    return WireImpl(f"serve {backend}",
                    (sys.executable, "-m", "crucible_spec", "serve", "--impl", backend,
                     "--max-line-bytes", str(BENCH_MAX_LINE)))


def request_lines(op: Op, items: list[dict]) -> list[bytes]:
    """One wire request per item, ids 1..n."""
    return [json.dumps({"id": i, "op": op.name, "args": op.args.encode(a)},
                       separators=(",", ":")).encode() + b"\n"
            for i, a in enumerate(items, 1)]


def _start(impl: WireImpl) -> subprocess.Popen:
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
    return proc


def _write_all(proc: subprocess.Popen, lines: list[bytes]) -> None:
    try:
        proc.stdin.writelines(lines)
        proc.stdin.close()
    except BrokenPipeError:
        pass


def time_wire(impl: WireImpl, op: Op, items: list[dict]) -> tuple[float, list[dict | None]]:
    """Seconds from the first request written to the last answer read, and each answer (None
    for one that never came)."""
    lines = request_lines(op, items)
    proc = _start(impl)
    writer = threading.Thread(target=_write_all, args=(proc, lines), daemon=True)
    start = time.perf_counter()
    writer.start()
    raw = [proc.stdout.readline() for _ in lines]
    took = time.perf_counter() - start
    writer.join()
    proc.stdout.close()
    proc.wait()
    answers = [json.loads(r) if r.strip() else None for r in raw]
    return took, answers


def answers_agree(op: Op, expected: list, answers: list[dict | None]) -> bool:
    """Every answer came, in order, without an error, and each one with a reference result to
    compare with (the first len(expected)) is that result or within the op's envelope."""
    if any(got is None or got.get("id") != i or not got.get("ok")
           for i, got in enumerate(answers, 1)):
        return False
    return all(got["result"] == want or within_envelope(op, want, got["result"])
               for want, got in zip(json.loads(json.dumps(expected)), answers[:len(expected)],
                                    strict=True))
