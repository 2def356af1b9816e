"""A conformance run's state: its limits, its known failures, and the `Run` that sends requests
through the client, numbers them and records the implementation's misbehaviour as events."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from .client import BUDGET, OK, Client, Reply


@dataclass(frozen=True)
class Limits:
    """How long the runner waits for one response, for one op and for the whole run, and how
    many hangs of one op it takes before giving up on the op; all are stated in the report."""

    timeout: float = 10.0
    first_timeout: float = 60.0
    op_budget: float = 300.0
    run_budget: float = 3600.0
    max_hangs: int = 3

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class Xfail:
    """Known failures: {"op": reason} or {"op:case": reason} (from --xfail FILE)."""

    def __init__(self, entries: dict[str, str] | None = None):
        self.entries = entries or {}

    def reason(self, op: str, index: int) -> str | None:
        return self.entries.get(f"{op}:{index}") or self.entries.get(op)


@dataclass
class Run:
    """A conformance run in progress: the client, profile, limits, request ids and events.
    `deadline` is the time.monotonic() at which the run budget ends."""

    client: Client
    errata: frozenset[str]
    xfail: Xfail
    events: list[dict] = field(default_factory=list)
    next_id: int = 1
    limits: Limits = field(default_factory=Limits)
    deadline: float = math.inf
    profile: str = "crucible"
    index_base: dict[str, int] = field(default_factory=dict)
    """op -> the suite index of its first case given (non-zero when one case is re-run)."""
    time_reference: bool = False
    """Also time the reference on every vector case (the report's reference column)."""
    batch: bool = False
    """The implementation's hello declares the batch form: cases go in batch requests."""

    def ask(self, op: str, args: dict, deadline: float = math.inf) -> Reply:
        """One request, its wait ending at `deadline` or the run's deadline, whichever is first."""
        rid, self.next_id = self.next_id, self.next_id + 1
        reply = self.client.request(rid, op, args, min(deadline, self.deadline))
        if reply.kind not in (OK, BUDGET):
            self.events.append({"kind": reply.kind, "op": op, "detail": reply.detail})
        return reply

    def send(self, op: str, args: dict | list, deadline: float = math.inf,
             items: int = 0) -> None:
        """Put one request in flight (its answer comes from `receive`, in order); with
        `items`, `args` is the list of that many args of one batch request."""
        rid, self.next_id = self.next_id, self.next_id + 1
        self.client.send(rid, op, args, min(deadline, self.deadline), items)

    def receive(self, op: str) -> Reply:
        """The answer to the oldest request in flight."""
        reply = self.client.receive()
        if reply.kind not in (OK, BUDGET):
            self.events.append({"kind": reply.kind, "op": op, "detail": reply.detail})
        return reply

    def spent(self, op_deadline: float) -> str:
        """Which budget has run out ("" when neither): the op's or the run's."""
        now = time.monotonic()
        if now >= self.deadline:
            return f"the run budget of {self.limits.run_budget:g} s was spent"
        if now >= op_deadline:
            return f"the op budget of {self.limits.op_budget:g} s was spent"
        return ""
