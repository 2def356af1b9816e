"""`crucible-spec conform`: run the vectors (and optionally fuzzing) against an external
implementation through the wire protocol, and compare every answer with the reference.

Per op: passed / failed / xfail / skipped cases, or unsupported; the first failures with the
exact field path and byte; the implementation's time against the reference's on the same
cases. Misbehaviour (crash, hang, garbage, flood) is recorded as an event and the run goes on
with a fresh process; after three in a row an op's remaining cases are skipped.

Fuzzing sends each op's inputs in blocks of FUZZ_BLOCK, each drawn by hypothesis from a seed
of its own (`block_seed`), so a block's inputs are the same whichever process sends it: a
sharded run (conformance/sharded.py) sends the same cases and merges to the same result.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, given, seed, settings

from ..engine import Implementation
from ..spec.errata import profile_errata
from ..spec.errors import SpecError
from ..spec.registry import REGISTRY, Op
from .client import OK, Client, Reply
from .diff import Difference, compare
from .vectors import Case

MAX_FAILURES_SHOWN = 5
GIVE_UP_AFTER = 3
FUZZ_BLOCK = 100
UNSUPPORTED_CODES = ("unsupported", "unknown_op")


@dataclass
class Failure:
    """One case the implementation got wrong (or misbehaved on)."""

    op: str
    index: int
    source: str
    args: dict
    kind: str
    difference: Difference | None = None
    detail: str = ""

    def describe(self) -> str:
        what = self.difference.describe() if self.difference else f"{self.kind}: {self.detail}"
        return f"{self.op} case {self.index} ({self.source}): {what}"

    def to_json(self) -> dict:
        return {"op": self.op, "case": self.index, "source": self.source, "args": self.args,
                "kind": self.kind, "detail": self.detail, "text": self.describe(),
                "difference": self.difference.to_json() if self.difference else None}

    @staticmethod
    def from_json(d: dict) -> Failure:
        diff = d["difference"]
        return Failure(d["op"], d["case"], d["source"], d["args"], d["kind"],
                       Difference(**{k: v for k, v in diff.items() if k != "text"})
                       if diff else None, d["detail"])


@dataclass
class OpResult:
    """Everything the run learnt about one op."""

    op: str
    cases: int = 0
    passed: int = 0
    failed: int = 0
    xfailed: int = 0
    xpassed: int = 0
    skipped: int = 0
    unsupported: bool = False
    impl_seconds: float = 0.0
    reference_seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    fuzz: dict | None = None
    note: str = ""

    @property
    def status(self) -> str:
        if self.unsupported:
            return "unsupported"
        if self.failed or (self.fuzz and self.fuzz.get("failure")):
            return "fail"
        if self.xfailed:
            return "xfail"
        if self.skipped:
            return "incomplete"
        return "pass"

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__} | {
            "failures": [f.to_json() for f in self.failures]}

    @staticmethod
    def from_json(d: dict) -> OpResult:
        return OpResult(**d | {"failures": [Failure.from_json(f) for f in d["failures"]]})


class Xfail:
    """Known failures: {"op": reason} or {"op:case": reason} (from --xfail FILE)."""

    def __init__(self, entries: dict[str, str] | None = None):
        self.entries = entries or {}

    def reason(self, op: str, index: int) -> str | None:
        return self.entries.get(f"{op}:{index}") or self.entries.get(op)


@dataclass
class Run:
    """A conformance run in progress: the client, profile, request ids and events."""

    client: Client
    errata: frozenset[str]
    xfail: Xfail
    events: list[dict] = field(default_factory=list)
    next_id: int = 1

    def ask(self, op: str, args: dict) -> Reply:
        rid, self.next_id = self.next_id, self.next_id + 1
        reply = self.client.request(rid, op, args)
        if reply.kind != OK:
            self.events.append({"kind": reply.kind, "op": op, "detail": reply.detail})
        return reply


def hello(run: Run) -> dict | None:
    """The implementation's hello, or None (and an event) if it has none."""
    reply = run.client.request(0, "hello", {})
    if reply.kind != OK:
        run.events.append({"kind": reply.kind, "op": "hello", "detail": reply.detail})
        return None
    if reply.response.get("ok") is not True:
        run.events.append({"kind": "no-hello", "op": "hello", "detail": str(reply.response)})
        return None
    greeting = reply.response.get("result")
    check_profile(run, greeting)
    return greeting


def check_profile(run: Run, greeting) -> None:
    """An event when the implementation says it serves a profile with other errata than the
    run checks: then every erratum-affected case fails, and this names the reason."""
    served = greeting.get("profile") if isinstance(greeting, dict) else None
    try:
        errata = profile_errata(served) if isinstance(served, str) else None
    except KeyError:
        errata = None
    if errata is not None and errata != run.errata:
        diff = sorted(errata ^ run.errata)
        run.events.append({"kind": "profile-mismatch", "op": "hello", "detail":
                           f"the implementation serves profile {served!r}, whose errata differ "
                           f"from this run's in {', '.join(diff)}: start it with the same "
                           f"profile as --profile"})


def run_op(run: Run, op: Op, cases: list[Case],
           progress: Callable[[str], None] | None = None) -> OpResult:
    """Every case of one op."""
    res = OpResult(op.name, cases=len(cases))
    reference = Implementation("reference", run.errata)
    in_a_row = 0
    for i, case in enumerate(cases):
        if progress:
            progress(f"{op.name} {i + 1}/{len(cases)}")
        if in_a_row >= GIVE_UP_AFTER:
            res.skipped = len(cases) - i
            res.note = f"gave up after {GIVE_UP_AFTER} failures of the process in a row"
            break
        reply = run.ask(op.name, case.args)
        res.impl_seconds += reply.seconds
        start = time.perf_counter()
        with contextlib.suppress(SpecError):
            reference.call(op.name, case.args)
        res.reference_seconds += time.perf_counter() - start
        if reply.kind != OK:
            in_a_row += 1
            _record(res, run, Failure(op.name, i, case.source, case.args, reply.kind,
                                      detail=reply.detail))
            continue
        in_a_row = 0
        error = reply.response.get("error")
        if i == 0 and isinstance(error, dict) and error.get("code") in UNSUPPORTED_CODES:
            res.unsupported = True
            res.note = f"{error.get('code')}: {error.get('message', '')}"[:200]
            return res
        diff = compare(op, case.args, case.result, case.error, reply.response)
        if diff is None:
            if run.xfail.reason(op.name, i):
                res.xpassed += 1
            res.passed += 1
        else:
            _record(res, run, Failure(op.name, i, case.source, case.args, "mismatch", diff))
    return res


def _record(res: OpResult, run: Run, failure: Failure) -> None:
    if run.xfail.reason(failure.op, failure.index):
        res.xfailed += 1
        return
    res.failed += 1
    if len(res.failures) < MAX_FAILURES_SHOWN:
        res.failures.append(failure)


def fuzz_blocks(examples: int) -> list[int]:
    """The sizes of one op's fuzz blocks: FUZZ_BLOCK inputs each, the last one the rest."""
    return [min(FUZZ_BLOCK, examples - start) for start in range(0, examples, FUZZ_BLOCK)]


def block_seed(seed_value: int, block: int) -> int:
    """The hypothesis seed of fuzz block `block`: the run's own seed for block 0 (so a run of
    up to FUZZ_BLOCK inputs draws what it always drew), else one derived from both."""
    if block == 0:
        return seed_value
    digest = hashlib.sha256(f"crucible-spec fuzz {seed_value} {block}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def fuzz_wanted(res: OpResult) -> bool:
    """An op is fuzzed only when its vectors all ran on an implementation that serves it."""
    return not res.unsupported and not res.skipped


def fuzz_block(run: Run, op: Op, examples: int, seed_value: int) -> dict:
    """Send `examples` inputs from the op's domain; shrink a failing one by asking again.

    Hypothesis drives the search: each example is one request to the implementation, and a
    failure is shrunk by re-running smaller inputs through the same protocol. The last
    failure hypothesis replays is the minimal one. The inputs depend only on the op, the
    examples and the seed, never on what the run sent before."""
    reference = Implementation("reference", run.errata)
    state: dict = {"runs": 0, "failure": None}

    @settings(max_examples=examples, database=None, deadline=None,
              phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck))
    @seed(seed_value)
    @given(op.strategy())
    def probe(value):
        args = op.args.encode(value)
        state["runs"] += 1
        try:
            want, error = reference.call(op.name, args), None
        except SpecError as e:
            want, error = None, e.code
        reply = run.ask(op.name, args)
        if reply.kind != OK:
            state["failure"] = Failure(op.name, -1, "fuzz", args, reply.kind, detail=reply.detail)
            raise AssertionError(reply.kind)
        diff = compare(op, args, want, error, reply.response)
        if diff is not None:
            state["failure"] = Failure(op.name, -1, "fuzz", args, "mismatch", diff)
            raise AssertionError(diff.describe())

    with contextlib.suppress(AssertionError):
        probe()
    failure = state["failure"]
    return {"examples": examples, "requests": state["runs"],
            "failure": failure.to_json() if failure else None}


def merge_fuzz(examples: int, parts: list[dict]) -> dict:
    """One op's fuzz result from its blocks' results in block order: the requests up to and
    including the first failing block, and that block's minimal failure."""
    requests, failure = 0, None
    for part in parts:
        requests += part["requests"]
        if part["failure"]:
            failure = part["failure"]
            break
    return {"examples": examples, "requests": requests, "failure": failure}


def fuzz_op(run: Run, op: Op, examples: int, seed_value: int) -> dict:
    """Fuzz one op block by block (see `fuzz_block`), stopping after the first failing block."""
    parts: list[dict] = []
    for block, size in enumerate(fuzz_blocks(examples)):
        parts.append(fuzz_block(run, op, size, block_seed(seed_value, block)))
        if parts[-1]["failure"]:
            break
    return merge_fuzz(examples, parts)


def run_suite(client: Client, suite: dict[str, list[Case]], errata: frozenset[str],
              xfail: Xfail, fuzz: int = 0, fuzz_seed: int = 0,
              progress: Callable[[str], None] | None = None) -> tuple[dict | None,
                                                                       list[OpResult], list]:
    """Run every op of `suite`; returns (hello, per-op results, events)."""
    run = Run(client, errata, xfail)
    greeting = hello(run)
    results = []
    for name, cases in suite.items():
        op = REGISTRY.ops.get(name)
        if op is None:
            continue
        res = run_op(run, op, cases, progress)
        if fuzz and fuzz_wanted(res):
            if progress:
                progress(f"{name} fuzz")
            res.fuzz = fuzz_op(run, op, fuzz, fuzz_seed)
        results.append(res)
    client.close()
    return greeting, results, run.events
