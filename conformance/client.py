"""A wire-protocol client for an external implementation that may misbehave.

Every request gets one `Reply`: a response object whose id is exactly the request's, or a
named failure: `crash` (the process exited or closed stdout), `hang` (no line within the
timeout), `garbage` (a line that is not a JSON object), `null-id` (a response whose id is null
or missing), `wrong-id` (a response for an id never sent to this process), `flood` (output the
client did not ask for: a line already waiting before the request was sent, a second response
to an earlier request, or a line over the size limit). After any failure the process is
killed; the next request starts a fresh one, so the rest of the suite still runs. The first
request of each op to a process waits `first_timeout` instead of `timeout`: the process may
still be starting, or compiling that op (a JIT); once such a first request of an op has hung,
the op's later first requests (to restarted processes) wait `timeout` only. A request may
carry a deadline (the caller's time budget): the wait ends there, and the reply is `budget`,
which is no failure of the implementation.
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
NULL_ID, WRONG_ID, BUDGET = "null-id", "wrong-id", "budget"
MAX_LINE = 16 << 20
STDERR_TAIL = 2000
TOO_LONG = object()
NOTHING = object()


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
        self.hung_first: set[str] = set()
        self.sent: set[int] = set()

    def _start(self) -> None:
        self.starts += 1
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.lines = queue.Queue(maxsize=64)
        self.stderr.clear()
        self.warm = set()
        self.sent = set()
        threading.Thread(target=_pump_stdout, args=(self.proc, self.lines), daemon=True).start()
        threading.Thread(target=_pump_stderr, args=(self.proc, self.stderr), daemon=True).start()

    def stderr_tail(self) -> str:
        return "".join(self.stderr)[-STDERR_TAIL:]

    def request(self, rid: int, op: str, args: Any, deadline: float | None = None) -> Reply:
        """Send one request and wait for its response line, at most until `deadline` (a
        time.monotonic() value) when given."""
        failed = self._ensure_started()
        if failed:
            return failed
        start = time.perf_counter()
        try:
            waiting = self.lines.get_nowait()
        except queue.Empty:
            waiting = NOTHING
        if waiting is None:  # stdout closed after the last answer: start afresh, as on exit
            self.close()
            failed = self._ensure_started()
            if failed:
                return failed
        elif waiting is not NOTHING:
            return self._fail(FLOOD, start, f"a line before request {rid} was sent: unrequested "
                                            f"output: {_show(waiting)}")
        line = request_line(rid, op, args) + "\n"
        first = op not in self.warm and op not in self.hung_first
        limit, cut = _wait_limit(self.first_timeout if first else self.timeout, deadline)
        if not _write(self.proc, line.encode(), limit):
            return self._expired(op, first, start, cut,
                                 f"did not read its input within {limit:g} s")
        try:
            raw = self.lines.get(timeout=limit)
        except queue.Empty:
            return self._expired(op, first, start, cut, f"no response within {limit:g} s")
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
        kind, detail = _check_id(resp, rid, self.sent)
        self.sent.add(rid)
        if kind != OK:
            return self._fail(kind, start, detail)
        return Reply(OK, resp, time.perf_counter() - start)

    def _ensure_started(self) -> Reply | None:
        """Start the process unless it runs; a crash reply when it cannot be started."""
        if self.proc is not None and self.proc.poll() is None:
            return None
        self.close()
        try:
            self._start()
        except OSError as e:
            return Reply(CRASH, None, 0.0, f"cannot start {self.command[0]!r}: {e}")
        return None

    def _expired(self, op: str, first: bool, start: float, cut: bool, detail: str) -> Reply:
        """No answer in time: a hang, or, when the caller's deadline ended the wait, `budget`."""
        if cut:
            return self._fail(BUDGET, start, "the time budget ran out waiting for the response")
        if first:
            self.hung_first.add(op)
        return self._fail(HANG, start, detail)

    def _fail(self, kind: str, start: float, detail: str) -> Reply:
        seconds = time.perf_counter() - start
        code = self.close(grace=kind == CRASH)
        if kind == CRASH and code is not None:
            detail += f"; exit status {code}"
        tail = self.stderr_tail().strip()
        if tail:
            detail += f"; stderr: {tail[-500:]}"
        return Reply(kind, None, seconds, detail)

    def close(self, grace: bool = True) -> int | None:
        """Stop the process (EOF first and up to 2 s to exit when `grace`, then kill); return
        its exit status if it had one."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        code = proc.poll()
        if code is None and not grace:
            _kill(proc)
            code = proc.wait()
            with contextlib.suppress(OSError):
                proc.stdin.close()
        elif code is None:
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


def _wait_limit(limit: float, deadline: float | None) -> tuple[float, bool]:
    """The seconds to wait, and whether the deadline (not the timeout) sets them."""
    if deadline is None:
        return limit, False
    left = max(deadline - time.monotonic(), 0.0)
    return (left, True) if left < limit else (limit, False)


def _check_id(resp: dict, rid: int, sent: set[int]) -> tuple[str, str]:
    """OK when the response's id is exactly `rid` (an integer, not a bool or a float), else
    the failure: null-id, flood (an earlier request's id: a second answer) or wrong-id."""
    got = resp.get("id")
    if type(got) is int and got == rid:
        return OK, ""
    if got is None:
        return NULL_ID, (f"response {'with a null id' if 'id' in resp else 'without an id'} "
                         f"while waiting for {rid}")
    if type(got) is int and got in sent:
        return FLOOD, (f"a second response for id {got}, answered before, while waiting for "
                       f"{rid}: unrequested output")
    return WRONG_ID, f"response for id {json.dumps(got)[:40]} while waiting for {rid}"


def _show(line: str | object) -> str:
    return f"a line over {MAX_LINE} bytes" if line is TOO_LONG else repr(line[:200])


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


def request_line(rid: int, op: str, args: Any) -> str:
    """One request as it goes on the wire (without its newline)."""
    return json.dumps({"id": rid, "op": op, "args": args}, separators=(",", ":"))
