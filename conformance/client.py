"""A wire-protocol client for an external implementation that may misbehave.

Every request gets one `Reply`: a response object whose id is exactly the request's, or a
named failure: `crash` (the process exited or closed stdout), `hang` (no line within the
timeout), `garbage` (a line that is not a JSON object), `null-id` (a response whose id is null
or missing), `wrong-id` (a response for an id never sent to this process, or for a later
request than the oldest unanswered one: answers come in request order), `flood` (output the
client did not ask for: a line already waiting before a request was sent to an idle process, a
second response to an earlier request, or a line over the size limit). After any failure the
process is killed; the next request starts a fresh one, so the rest of the suite still runs.
The first request of each op to a process waits `first_timeout` instead of `timeout`: the
process may still be starting, or compiling that op (a JIT); once such a first request of an
op has hung, the op's later first requests (to restarted processes) wait `timeout` only. A
request may carry a deadline (the caller's time budget): the wait ends there, and the reply is
`budget`, which is no failure of the implementation.

Requests are pipelined: up to `window` of them are in flight at once.

1. `send` hands a request line to the process's one writer thread (a queue; the thread writes
   what has queued up in one go and notes when each request was written) and appends it to
   the in-flight queue. Nothing is written to a process that has failed: the failure is
   reported on the oldest request, and the rest in flight are lost (the caller resends them).
2. `receive` waits for the answer of the oldest request in flight, from the one reader thread
   (a queue of stdout lines). Its clock starts when it is written, or when the previous answer
   came if that was later (the process answers in order); a request not yet written has its
   clock started when it was sent, so a process that stops reading its input hangs too. A
   hang is reported on that oldest request.
3. `room(op)` is how many more requests of `op` may be sent now: the window less those in
   flight once the op has had an answer from this process, else one request alone (its first
   answer may be `unsupported`, and it waits `first_timeout`). A window of 1 is lockstep.
4. `drain` waits out the requests still in flight and drops their answers (a caller that stops
   early); any failure on the way restarts the process, as usual.

A batch request (design §4, `send` with `items`) is one request in flight whose one answer
line answers all its items; it may take `items` times the timeout.
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


@dataclass
class _InFlight:
    """A request sent and not yet answered: its id, op, whether it is the op's first request
    to this process, its deadline, when it was sent, and its items (0: not a batch)."""

    rid: int
    op: str
    first: bool
    deadline: float | None
    sent: float
    items: int = 0


class Client:
    """Speaks the protocol with `command`, restarting it after any failure; keeps up to
    `window` requests in flight."""

    def __init__(self, command: list[str], timeout: float = 10.0, first_timeout: float = 60.0,
                 window: int = 64):
        self.command = command
        self.timeout = timeout
        self.first_timeout = first_timeout
        self.window = window
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue = queue.Queue(maxsize=64)
        self.writes: queue.Queue = queue.Queue()
        self.written: dict[int, float] = {}
        self.stderr: deque[str] = deque(maxlen=200)
        self.starts = 0
        self.warm: set[str] = set()
        self.hung_first: set[str] = set()
        self.sent: set[int] = set()
        self.in_flight: deque[_InFlight] = deque()
        self.last_answer = 0.0
        self.broken: tuple[str, str] | None = None

    def _start(self) -> None:
        self.starts += 1
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.lines = queue.Queue(maxsize=64)
        self.writes = queue.Queue()
        self.written = {}
        self.stderr.clear()
        self.warm = set()
        self.sent = set()
        threading.Thread(target=_pump_stdout, args=(self.proc, self.lines), daemon=True).start()
        threading.Thread(target=_pump_stderr, args=(self.proc, self.stderr), daemon=True).start()
        threading.Thread(target=_pump_stdin, args=(self.proc, self.writes, self.written),
                         daemon=True).start()

    def stderr_tail(self) -> str:
        return "".join(self.stderr)[-STDERR_TAIL:]

    def request(self, rid: int, op: str, args: Any, deadline: float | None = None) -> Reply:
        """Send one request and wait for its response line, at most until `deadline` (a
        time.monotonic() value) when given."""
        self.send(rid, op, args, deadline)
        return self.receive()

    def room(self, op: str) -> int:
        """How many more requests of `op` may be sent now (see the module docstring, 3)."""
        if self.proc is None or self.broken or op not in self.warm:
            return 0 if self.in_flight else 1
        return max(self.window - len(self.in_flight), 0)

    def send(self, rid: int, op: str, args: Any, deadline: float | None = None,
             items: int = 0) -> None:
        """Put one request in flight; its answer (or failure) comes from `receive`. With
        `items`, `args` is the list of that many args of one batch request."""
        if not self.in_flight:
            self.broken = self._idle_check(rid)
        first = op not in self.warm and op not in self.hung_first
        self.in_flight.append(_InFlight(rid, op, first, deadline, time.monotonic(), items))
        if self.broken is None:
            line = request_line(rid, op, args, "batch" if items else "args")
            self.writes.put((rid, (line + "\n").encode()))

    def _idle_check(self, rid: int) -> tuple[str, str] | None:
        """Before a request to an idle process: start it if need be, and make sure nothing
        came that nobody asked for. The failure to report on the request, or None."""
        failed = self._ensure_started()
        if failed:
            return CRASH, failed
        try:
            waiting = self.lines.get_nowait()
        except queue.Empty:
            return None
        if waiting is None:  # stdout closed after the last answer: start afresh, as on exit
            self.close()
            failed = self._ensure_started()
            return (CRASH, failed) if failed else None
        return FLOOD, (f"a line before request {rid} was sent: unrequested output: "
                       f"{_show(waiting)}")

    def receive(self) -> Reply:
        """The answer to the oldest request in flight (see the module docstring, 2)."""
        head = self.in_flight[0]
        if self.broken:
            kind, detail = self.broken
            if kind == CRASH:  # it could not be started
                self.in_flight.clear()
                self.broken = None
                return Reply(CRASH, None, 0.0, detail)
            return self._fail(kind, time.monotonic(), detail)
        limit = (self.first_timeout if head.first else self.timeout) * max(head.items, 1)
        while True:
            start = max(self.written.get(head.rid, head.sent), self.last_answer)
            end = start + limit
            cut = head.deadline is not None and head.deadline < end
            stop = head.deadline if cut else end
            try:
                raw = self.lines.get(timeout=max(stop - time.monotonic(), 0.0))
                break
            except queue.Empty:
                if max(self.written.get(head.rid, head.sent), self.last_answer) > start:
                    continue  # written since: its clock starts now
                what = ("no response" if head.rid in self.written
                        else "did not read its input")
                return self._expired(head.op, head.first, start, cut,
                                     f"{what} within {limit:g} s")
        self.warm.add(head.op)
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
        kind, detail = _check_id(resp, head.rid, self.sent, self.in_flight)
        if kind != OK:
            return self._fail(kind, start, detail)
        self.sent.add(head.rid)
        self.in_flight.popleft()
        self.written.pop(head.rid, None)
        self.last_answer = time.monotonic()
        return Reply(OK, resp, self.last_answer - start)

    def drain(self) -> None:
        """Wait out the requests in flight, dropping their answers."""
        while self.in_flight:
            self.receive()

    def _ensure_started(self) -> str:
        """Start the process unless it runs; why it cannot be started ("" when it runs)."""
        if self.proc is not None and self.proc.poll() is None:
            return ""
        self.close()
        try:
            self._start()
        except OSError as e:
            return f"cannot start {self.command[0]!r}: {e}"
        return ""

    def _expired(self, op: str, first: bool, start: float, cut: bool, detail: str) -> Reply:
        """No answer in time: a hang, or, when the caller's deadline ended the wait, `budget`."""
        if cut:
            return self._fail(BUDGET, start, "the time budget ran out waiting for the response")
        if first:
            self.hung_first.add(op)
        return self._fail(HANG, start, detail)

    def _fail(self, kind: str, start: float, detail: str) -> Reply:
        """The oldest request's failure; the process is stopped and every request in flight
        is lost."""
        seconds = time.monotonic() - start
        self.in_flight.clear()
        self.broken = None
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
        self.in_flight.clear()
        if proc is None:
            return None
        self.writes.put(None)  # the writer closes stdin once it has written the rest
        code = proc.poll()
        if code is None and grace:
            try:
                code = proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        if code is None:
            _kill(proc)
            code = proc.wait()
        return code


def _check_id(resp: dict, rid: int, sent: set[int],
              in_flight: deque[_InFlight]) -> tuple[str, str]:
    """OK when the response's id is exactly `rid` (an integer, not a bool or a float), else
    the failure: null-id, flood (an earlier request's id: a second answer) or wrong-id (an id
    never sent, or a later request's: an answer out of order)."""
    got = resp.get("id")
    if type(got) is int and got == rid:
        return OK, ""
    if got is None:
        return NULL_ID, (f"response {'with a null id' if 'id' in resp else 'without an id'} "
                         f"while waiting for {rid}")
    if type(got) is int and got in sent:
        return FLOOD, (f"a second response for id {got}, answered before, while waiting for "
                       f"{rid}: unrequested output")
    if type(got) is int and any(r.rid == got for r in in_flight):
        return WRONG_ID, (f"response for id {got} while waiting for {rid}, sent before it: "
                          f"answers out of request order")
    return WRONG_ID, f"response for id {json.dumps(got)[:40]} while waiting for {rid}"


def _show(line: str | object) -> str:
    return f"a line over {MAX_LINE} bytes" if line is TOO_LONG else repr(line[:200])


def _pump_stdin(proc: subprocess.Popen, writes: queue.Queue, written: dict[int, float]) -> None:
    """The process's one writer: write each queued request (all those queued up, in one go)
    and note when each was written, until None comes; then close stdin. A closed pipe counts
    as written: the missing response then reports the crash."""
    stream, done = proc.stdin, False
    while not done:
        batch = [writes.get()]
        with contextlib.suppress(queue.Empty):
            while True:
                batch.append(writes.get_nowait())
        done = None in batch
        items = [item for item in batch if item is not None]
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):
            stream.write(b"".join(data for _, data in items))
            stream.flush()
        now = time.monotonic()
        for rid, _ in items:
            written[rid] = now
    with contextlib.suppress(BrokenPipeError, OSError, ValueError):
        stream.close()


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


def request_line(rid: int, op: str, args: Any, key: str = "args") -> str:
    """One request as it goes on the wire (without its newline); `key` "batch" sends a list
    of args as one batch request."""
    return json.dumps({"id": rid, "op": op, key: args}, separators=(",", ":"))
