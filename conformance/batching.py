"""The conformance runner's side of the batch form (design §4): where an implementation's
hello declares `"batch": true`, an op's cases go in batch requests, and each case is still
answered, judged and timed as if it had been sent alone.

1. The first case of an op to a process goes alone (its answer may be `unsupported`, and it
   may wait for a compile). Later cases go in batches, at most BATCHES_IN_FLIGHT of them in
   flight: the first of 2 cases, the size doubling (up to BATCH_ITEMS) with each answer that
   comes within a quarter of the timeout, and half that answer's size after one that does
   not (at least 2). A batch may take its items times the timeout (client.py), as its cases
   would one per line.
2. A batch answer is split into one reply per case: its item's answer, with an equal share of
   the batch's seconds.
3. A batch whose request fails (crash, hang, ...), or whose answer is not `{"ok": true,
   "results": [one object per item]}` (a `garbage` event; the process is stopped), sends its
   cases again one per line, and so does the rest of that op: each failure then falls on its
   own case, as a single-line run finds it.
4. Fuzzing (`prefetch`): the inputs a block draws go in batches first, up to the first that
   gets no answer; the block's search, as in a single-line run, then takes each input's reply
   from them and sends only those it lacks (the shrinking of a failure).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .client import BUDGET, GARBAGE, OK, Reply
from .session import Run

BATCH_ITEMS = 128
"""The most cases one batch request carries."""
BATCHES_IN_FLIGHT = 2
"""Batch requests in flight at once: one answered while the next waits."""


def declares_batch(greeting: Any) -> bool:
    """The hello answer declares the batch form."""
    return isinstance(greeting, dict) and greeting.get("batch") is True


def split_answer(response: dict, seconds: float, items: int) -> list[Reply] | None:
    """One reply per item of a batch answer, each with an equal share of its seconds, or None
    when the answer is not `{"ok": true, "results": [items objects]}`."""
    results = response.get("results")
    if response.get("ok") is not True or not isinstance(results, list) or \
            len(results) != items or not all(isinstance(r, dict) for r in results):
        return None
    return [Reply(OK, r, seconds / items) for r in results]


def case_key(args: Any) -> str:
    """The canonical text of one input's args: equal args, equal keys."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"))


@dataclass
class Feed:
    """One op's cases (their args), sent in order, alone or in batches (see 1-3), and
    answered one reply per case, in order."""

    run: Run
    op: str
    args: list
    deadline: float
    batch: bool
    size: int = 2
    sent: int = 0
    units: deque[int] = field(default_factory=deque)
    """The cases of each request in flight, oldest first (1: a request alone)."""
    ready: deque[Reply] = field(default_factory=deque)
    """Replies split from a batch answer, for the cases after the one it was received for."""

    def reply(self, i: int) -> Reply:
        """The reply to case i, the first case not answered yet."""
        if self.ready:
            return self.ready.popleft()
        self.sent = max(self.sent, i)
        while self.sent < len(self.args) and self._room():
            items = self._next_size()
            if items == 1:
                self.run.send(self.op, self.args[self.sent], self.deadline)
            else:
                self.run.send(self.op, self.args[self.sent:self.sent + items], self.deadline,
                              items)
            self.units.append(items)
            self.sent += items
        items = self.units.popleft()
        reply = self.run.receive(self.op)
        if items == 1 or reply.kind == BUDGET:
            return reply
        replies = self._split(reply, items)
        if replies is None:
            self.batch = False
            self.lost(i - 1)
            return self.reply(i)
        self.ready.extend(replies[1:])
        return replies[0]

    def lost(self, i: int) -> None:
        """Case i failed alone and the process with it: what was in flight is sent again."""
        self.sent = i + 1
        self.units.clear()
        self.ready.clear()

    def _room(self) -> bool:
        room = self.run.client.room(self.op)
        batches = sum(1 for u in self.units if u > 1)
        return room > 0 and (self._next_size() == 1 or batches < BATCHES_IN_FLIGHT)

    def _next_size(self) -> int:
        if not self.batch or self.op not in self.run.client.warm:
            return 1
        return min(self.size, len(self.args) - self.sent)

    def _split(self, reply: Reply, items: int) -> list[Reply] | None:
        """The batch answer's replies, the next batch's size set by its speed; None when the
        batch failed (the process is then stopped)."""
        if reply.kind != OK:
            return None
        replies = split_answer(reply.response, reply.seconds, items)
        if replies is None:
            self.run.events.append({"kind": GARBAGE, "op": self.op, "detail": (
                f"a batch of {items} answered without 'ok': true and 'results' of {items} "
                f"objects: {json.dumps(reply.response)[:200]}")})
            self.run.client.close(grace=False)
            return None
        quick = reply.seconds <= self.run.client.timeout / 4
        self.size = min(2 * self.size, BATCH_ITEMS) if quick else max(items // 2, 2)
        return replies


def prefetch(run: Run, op: str, inputs: list, deadline: float) -> dict[str, Reply]:
    """The replies to `inputs` (see 4), by `case_key`, up to and including the first that is
    a failure of the process; none past the budget's end."""
    feed = Feed(run, op, inputs, deadline, batch=True)
    out: dict[str, Reply] = {}
    for i, args in enumerate(inputs):
        reply = feed.reply(i)
        if reply.kind == BUDGET:
            break
        out.setdefault(case_key(args), reply)
        if reply.kind != OK:
            break
    run.client.drain()
    return out
