"""A wire-protocol client for an external implementation that may misbehave.

Every request gets one `Reply`: a response object, or a named failure: `crash` (the process
exited or closed stdout), `hang` (no line within the timeout), `garbage` (a line that is not a
JSON object), `flood` (a line over the size limit, or a response for another id: output the
client did not ask for). After any failure the process is killed; the next request starts a
fresh one, so the rest of the suite still runs. The first request of each op to a process
waits `first_timeout` instead of `timeout`: the process may still be starting, or compiling
that op (a JIT).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

OK, CRASH, HANG, GARBAGE, FLOOD = "ok", "crash", "hang", "garbage", "flood"
MAX_LINE = 16 << 20
STDERR_TAIL = 2000
TOO_LONG = object()


@dataclass
class Reply:
    """What came back for one request, and how long it took."""

    kind: str
    response: dict | None
    seconds: float
    detail: str = ""


class Client:
    """Speaks the protocol with `command`, restarting it after any failure."""

    def __init__(self, command: list[str], timeout: float = 10.0, first_timeout: float = 60.0):
        self.command = command
        self.timeout = timeout
        self.first_timeout = first_timeout
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue = queue.Queue(maxsize=64)
        self.stderr: deque[str] = deque(maxlen=200)
        self.starts = 0
        self.warm: set[str] = set()

    def _start(self) -> None:
        self.starts += 1
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.lines = queue.Queue(maxsize=64)
        self.stderr.clear()
        self.warm = set()
        threading.Thread(target=_pump_stdout, args=(self.proc, self.lines), daemon=True).start()
        threading.Thread(target=_pump_stderr, args=(self.proc, self.stderr), daemon=True).start()

    def stderr_tail(self) -> str:
        return "".join(self.stderr)[-STDERR_TAIL:]

    def request(self, rid: int, op: str, args: Any) -> Reply:
        """Send one request and wait for its response line."""
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            try:
                self._start()
            except OSError as e:
                return Reply(CRASH, None, 0.0, f"cannot start {self.command[0]!r}: {e}")
        line = json.dumps({"id": rid, "op": op, "args": args}, separators=(",", ":")) + "\n"
        limit = self.timeout if op in self.warm else self.first_timeout
        start = time.perf_counter()
        if not _write(self.proc, line.encode(), limit):
            return self._fail(HANG, start, f"did not read its input within {limit:g} s")
        try:
            raw = self.lines.get(timeout=limit)
        except queue.Empty:
            return self._fail(HANG, start, f"no response within {limit:g} s")
        self.warm.add(op)
        if raw is None:
            return self._fail(CRASH, start, "stdout closed")
        if raw is TOO_LONG:
            return self._fail(FLOOD, start, f"a response line over {MAX_LINE} bytes")
        try:
            resp = json.loads(raw)
        except ValueError:
            return self._fail(GARBAGE, start, f"not JSON: {raw[:200]!r}")
        if not isinstance(resp, dict):
            return self._fail(GARBAGE, start, f"not a JSON object: {raw[:200]!r}")
        if resp.get("id") != rid and resp.get("id") is not None:
            return self._fail(FLOOD, start, f"response for id {resp.get('id')!r} while waiting "
                                            f"for {rid}: unrequested output")
        return Reply(OK, resp, time.perf_counter() - start)

    def _fail(self, kind: str, start: float, detail: str) -> Reply:
        seconds = time.perf_counter() - start
        code = self.close()
        if kind == CRASH and code is not None:
            detail += f"; exit status {code}"
        tail = self.stderr_tail().strip()
        if tail:
            detail += f"; stderr: {tail[-500:]}"
        return Reply(kind, None, seconds, detail)

    def close(self) -> int | None:
        """Stop the process (EOF first, then kill); return its exit status if it had one."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        code = proc.poll()
        if code is None:
            try:
                proc.stdin.close()
                code = proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                _kill(proc)
                code = proc.wait()
        else:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        return code


def _write(proc: subprocess.Popen, data: bytes, limit: float) -> bool:
    """Write one request; False when the process does not take it within `limit` seconds.
    A closed pipe counts as written: the missing response then reports the crash."""

    def write() -> None:
        try:
            proc.stdin.write(data)
            proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(limit)
    return not writer.is_alive()


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _pump_stdout(proc: subprocess.Popen, lines: queue.Queue) -> None:
    """Forward stdout lines to the queue; TOO_LONG for an over-long line, None at the end."""
    stream = proc.stdout
    while True:
        raw = stream.readline(MAX_LINE + 1)
        if not raw:
            break
        if len(raw) > MAX_LINE:
            lines.put(TOO_LONG)
            break
        try:
            lines.put(raw.decode("utf-8", "replace").rstrip("\n"), timeout=60)
        except queue.Full:
            break
    with contextlib.suppress(queue.Full):
        lines.put(None, timeout=1)


def _pump_stderr(proc: subprocess.Popen, tail: deque) -> None:
    for raw in iter(lambda: proc.stderr.readline(65536), b""):
        tail.append(raw.decode("utf-8", "replace"))
