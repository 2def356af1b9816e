"""`crucible-spec conform`: run the vectors (and optionally fuzzing) against an external
implementation through the wire protocol, and compare every answer with the reference.

Per op: passed / failed / xfail / skipped cases, those answered `resource_limit`, or
unsupported; the first failures with the exact field path and byte; the implementation's time
(and, when the run times it, the reference's on the same cases). Each case is compared with the
answer its vector holds; the vectors of an op are pipelined, up to the client's window of
requests in flight (conformance/client.py), with the same results as one request at a time,
and go in batch requests where the implementation's hello declares the batch form
(conformance/batching.py), with the same results again.
Misbehaviour (crash, hang, garbage, null-id, wrong-id, flood) is recorded as an event and the
run goes on with a fresh process. An op's remaining cases are skipped after three failures of
the process in a row, after `max_hangs` hangs in all, or when its time budget (`op_budget`
seconds for its vectors and fuzzing) or the run's (`run_budget`) is spent: every wait for a
response ends at the budget's end, so a run takes at most the run budget and the time to stop
one process.

An answer `{"ok": false, "error": {"code": "resource_limit"}}` to an input the spec answers
with a result says the implementation cannot hold that input: it is counted apart, never as a
pass, and leaves the op incomplete. In place of a spec error it is a mismatch.

Fuzzing sends each op's inputs in blocks of FUZZ_BLOCK, each drawn by hypothesis from a seed
of its own (`block_seed`), so a block's inputs are the same whichever process sends it: a
sharded run (conformance/sharded.py) sends the same cases and merges to the same result.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Flaky

from ..engine import Implementation
from ..spec.core.errata import profile_errata
from ..spec.core.errors import RESOURCE_LIMIT, SpecError
from ..spec.core.optional import MissingPackage, installed
from ..spec.core.registry import REGISTRY, Op
from .batching import Feed, case_key, declares_batch, prefetch
from .client import BUDGET, HANG, OK, Client, Reply, request_line
from .diff import Difference, compare
from .session import Limits, Run, Xfail
from .vectors import Case

MAX_FAILURES_SHOWN = 5
GIVE_UP_AFTER = 3
FUZZ_BLOCK = 100
UNSUPPORTED_CODES = ("unsupported", "unknown_op")
BUDGET_SPENT = "the time budget was spent"


def case_id(profile: str, op: Op, index: int) -> str:
    """A case's stable id: its vector file and line (`crucible/8/hash.fnv1a.jsonl:3`), or for
    a fuzz input (index -1) the op's fuzz stream (`crucible/8/hash.fnv1a.fuzz`)."""
    where = f"{profile}/{op.chapter}/{op.name}"
    return f"{where}.fuzz" if index < 0 else f"{where}.jsonl:{index + 1}"


@dataclass
class Failure:
    """One case the implementation got wrong (or misbehaved on), with its id and the request
    line that re-runs it."""

    op: str
    index: int
    source: str
    args: dict
    kind: str
    difference: Difference | None = None
    detail: str = ""
    case_id: str = ""

    @property
    def request(self) -> str:
        return request_line(1, self.op, self.args)

    def describe(self) -> str:
        what = self.difference.describe() if self.difference else f"{self.kind}: {self.detail}"
        return f"{self.op} case {self.index} [{self.case_id}] ({self.source}): {what}"

    def to_json(self) -> dict:
        return {"op": self.op, "case": self.index, "case_id": self.case_id,
                "source": self.source, "args": self.args, "request": self.request,
                "kind": self.kind, "detail": self.detail, "text": self.describe(),
                "difference": self.difference.to_json() if self.difference else None}

    @staticmethod
    def from_json(d: dict) -> Failure:
        diff = d["difference"]
        return Failure(d["op"], d["case"], d["source"], d["args"], d["kind"],
                       Difference(**{k: v for k, v in diff.items() if k != "text"})
                       if diff else None, d["detail"], d.get("case_id", ""))


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
    resource_limit: int = 0
    unsupported: bool = False
    seconds: float = 0.0
    impl_seconds: float = 0.0
    reference_seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    fuzz: dict | None = None
    note: str = ""
    failed_cases: list[int] = field(default_factory=list)
    """The index of every failed case (`failures` holds the first MAX_FAILURES_SHOWN)."""
    first_case: int = 0
    """The suite index of the first case run (non-zero when one case is re-run alone)."""

    fallback: bool = False
    """Answered by the implementation's reference fallback (its hello says so)."""

    @property
    def status(self) -> str:
        if self.unsupported:
            return "unsupported"
        if self.failed or (self.fuzz and self.fuzz.get("failure")):
            return "fail"
        if self.xfailed:
            return "xfail"
        if self.skipped or self.resource_limit or (self.fuzz and self.fuzz.get("note")):
            return "incomplete"
        return "fallback" if self.fallback else "pass"

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__} | {
            "failures": [f.to_json() for f in self.failures]}

    @staticmethod
    def from_json(d: dict) -> OpResult:
        return OpResult(**d | {"failures": [Failure.from_json(f) for f in d["failures"]]})


def hello(run: Run) -> dict | None:
    """The implementation's hello, or None (and an event) if it has none."""
    reply = run.client.request(0, "hello", {}, run.deadline)
    if reply.kind != OK:
        if reply.kind != BUDGET:
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


def resource_limited(response: dict) -> bool:
    """The implementation says the input is beyond its limits."""
    error = response.get("error")
    return response.get("ok") is False and isinstance(error, dict) and \
        error.get("code") == RESOURCE_LIMIT


def give_up(run: Run, op_deadline: float, in_a_row: int, hangs: int) -> str:
    """Why the rest of an op's cases are skipped ("" while they are not)."""
    if in_a_row >= GIVE_UP_AFTER:
        return f"gave up after {GIVE_UP_AFTER} failures of the process in a row"
    if hangs >= run.limits.max_hangs:
        return f"gave up after {hangs} hangs"
    return run.spent(op_deadline)


def run_op(run: Run, op: Op, cases: list[Case],
           progress: Callable[[str], None] | None = None) -> OpResult:
    """Every case of one op, within the op's time budget and the run's, compared with the
    answer its vector holds. Up to the client's window of requests are in flight (batch
    requests where the implementation declares them: conformance/batching.py); after a
    failure of the process those lost in flight are sent again to the fresh one, so each case
    is answered as if it had been sent alone. The timings leave out the first request (an
    implementation may compile the op then); the reference is timed only when the run says."""
    base = run.index_base.get(op.name, 0)
    res = OpResult(op.name, cases=len(cases), first_case=base)
    reference = Implementation("reference", run.errata) if run.time_reference else None
    began = time.monotonic()
    op_deadline = began + run.limits.op_budget
    in_a_row = hangs = 0
    feed = Feed(run, op.name, [c.args for c in cases], op_deadline, run.batch)
    for i, case in enumerate(cases):
        if progress:
            progress(f"{op.name} {i + 1}/{len(cases)}")
        res.note = give_up(run, op_deadline, in_a_row, hangs)
        if res.note:
            res.skipped = len(cases) - i
            break
        reply = feed.reply(i)
        if reply.kind == BUDGET:
            res.skipped, res.note = len(cases) - i, run.spent(op_deadline) or BUDGET_SPENT
            break
        if i:
            res.impl_seconds += reply.seconds
            res.reference_seconds += _reference_seconds(reference, op, case)
        index = base + i
        if reply.kind != OK:
            in_a_row += 1
            hangs += reply.kind == HANG
            feed.lost(i)
            _record(res, run, Failure(op.name, index, case.source, case.args, reply.kind,
                                      detail=reply.detail,
                                      case_id=case_id(run.profile, op, index)))
            continue
        in_a_row = 0
        error = reply.response.get("error")
        if i == 0 and isinstance(error, dict) and error.get("code") in UNSUPPORTED_CODES:
            res.unsupported = True
            res.note = f"{error.get('code')}: {error.get('message', '')}"[:200]
            break
        if case.error is None and resource_limited(reply.response):
            res.resource_limit += 1
            continue
        diff = compare(op, case.args, case.result, case.error, reply.response)
        if diff is None:
            if run.xfail.reason(op.name, index):
                res.xpassed += 1
            res.passed += 1
        else:
            _record(res, run, Failure(op.name, index, case.source, case.args, "mismatch", diff,
                                      case_id=case_id(run.profile, op, index)))
    run.client.drain()
    res.seconds = time.monotonic() - began
    return res


def _reference_seconds(reference: Implementation | None, op: Op, case: Case) -> float:
    """The reference's time on one case (0 when the run does not time it)."""
    if reference is None:
        return 0.0
    start = time.perf_counter()
    with contextlib.suppress(SpecError):
        reference.call(op.name, case.args)
    return time.perf_counter() - start


def _record(res: OpResult, run: Run, failure: Failure) -> None:
    if run.xfail.reason(failure.op, failure.index):
        res.xfailed += 1
        return
    res.failed += 1
    res.failed_cases.append(failure.index)
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


def fuzz_block(run: Run, op: Op, examples: int, seed_value: int,
               budget: float = math.inf) -> dict:
    """Send `examples` inputs from the op's domain; shrink a failing one by asking again.

    Hypothesis drives the search: each example is one request to the implementation, and a
    failure is shrunk by re-running smaller inputs through the same protocol. The last
    failure hypothesis replays is the minimal one. The inputs depend only on the op, the
    examples and the seed, never on what the run sent before. A failure of the process
    (crash, hang, ...) is reported on its input, unshrunk: nothing more is sent. Nothing more
    is sent either once `budget` seconds (or the run budget) are spent; the note says so.
    Where the implementation declares the batch form, the inputs the search draws go in
    batches first (conformance/batching.py, 4), with the same result."""
    reference = Implementation("reference", run.errata)
    deadline = time.monotonic() + budget
    state = FuzzState()
    if run.batch:
        state.answered = prefetch(run, op.name, drawn_inputs(op, examples, seed_value),
                                  deadline)

    @fuzz_search(op, examples, seed_value, [Phase.generate, Phase.shrink])
    def probe(value):
        state.note = state.note or run.spent(deadline)
        if state.stopped():  # every input now fails (or none), so shrinking sends nothing
            failing = state.failure is not None
        else:
            failing = fuzz_case(run, op, reference, op.args.encode(value), deadline, state)
        if failing:
            raise AssertionError("fuzz failure")

    with contextlib.suppress(AssertionError, Flaky):
        probe()
    return state.to_json(examples)


def fuzz_search(op: Op, examples: int, seed_value: int, phases: list[Phase]
                ) -> Callable[[Callable], Callable]:
    """The hypothesis search of a fuzz block, as a decorator of the function given each input."""
    def decorate(fn: Callable) -> Callable:
        searched = given(op.strategy())(fn)
        return settings(max_examples=examples, database=None, deadline=None, phases=phases,
                        suppress_health_check=list(HealthCheck))(seed(seed_value)(searched))
    return decorate


def drawn_inputs(op: Op, examples: int, seed_value: int) -> list[dict]:
    """The wire args of the inputs a fuzz block's search draws, in order, while none fails."""
    drawn: list[dict] = []

    @fuzz_search(op, examples, seed_value, [Phase.generate])
    def collect(value):
        drawn.append(op.args.encode(value))

    collect()
    return drawn


def fuzz_case(run: Run, op: Op, reference: Implementation, args: dict, deadline: float,
              state: FuzzState) -> bool:
    """Send one fuzz input (or take its reply from those the block's batches got) and keep
    what it showed; True when the probe is to fail."""
    try:
        want, error = reference.call(op.name, args), None
    except SpecError as e:
        want, error = None, e.code
    reply = state.answered.get(case_key(args)) if state.answered else None
    if reply is None:
        reply = run.ask(op.name, args, deadline)
    state.requests += 1
    if reply.kind == BUDGET:
        state.note = run.spent(deadline) or BUDGET_SPENT
        return state.failure is not None
    if reply.kind != OK:
        state.failure = Failure(op.name, -1, "fuzz", args, reply.kind, detail=reply.detail,
                                case_id=case_id(run.profile, op, -1))
        return True
    if error is None and resource_limited(reply.response):
        state.resource_limit += 1
        return False
    diff = compare(op, args, want, error, reply.response)
    if diff is not None:
        state.failure = Failure(op.name, -1, "fuzz", args, "mismatch", diff,
                                case_id=case_id(run.profile, op, -1))
        return True
    return False


@dataclass
class FuzzState:
    """One fuzz block so far: requests (the inputs the search tried, each sent alone or
    answered in a batch), the last failure, resource_limit answers, why it stopped sending
    early ("" while it has not), and the replies its batches got, by `case_key`."""

    requests: int = 0
    failure: Failure | None = None
    resource_limit: int = 0
    note: str = ""
    answered: dict[str, Reply] = field(default_factory=dict)

    def stopped(self) -> bool:
        return bool(self.note) or (self.failure is not None and self.failure.kind != "mismatch")

    def to_json(self, examples: int) -> dict:
        return {"examples": examples, "requests": self.requests,
                "failure": self.failure.to_json() if self.failure else None,
                "resource_limit": self.resource_limit, "note": self.note}


def merge_fuzz(examples: int, parts: list[dict]) -> dict:
    """One op's fuzz result from its blocks' results in block order: the requests and
    resource_limit answers up to and including the first failing block, that block's minimal
    failure, and the first block's note on stopping early."""
    requests = resource_limit = 0
    failure, note = None, ""
    for part in parts:
        requests += part["requests"]
        resource_limit += part.get("resource_limit", 0)
        note = note or part.get("note", "")
        if part["failure"]:
            failure = part["failure"]
            break
    return {"examples": examples, "requests": requests, "failure": failure,
            "resource_limit": resource_limit, "note": note}


def fuzz_share(limits: Limits, vectors: OpResult, blocks: int) -> float:
    """The seconds each of an op's fuzz blocks may take: an equal share of what its vectors
    left of the op budget."""
    return max(limits.op_budget - vectors.seconds, 0.0) / max(blocks, 1)


def fuzz_op(run: Run, op: Op, examples: int, seed_value: int, budget: float = math.inf) -> dict:
    """Fuzz one op block by block (see `fuzz_block`), stopping after the first failing block;
    each block may take `budget` seconds. An op whose reference needs a package that is not
    installed here is not fuzzed, and the note names the package: the reference could not
    judge a single answer."""
    missing = [p for p in op.needs if not installed(p)]
    if missing:
        return {"examples": examples, "requests": 0, "failure": None, "resource_limit": 0,
                "note": f"not fuzzed: the reference {MissingPackage(missing[0]).message}"}
    parts: list[dict] = []
    for block, size in enumerate(fuzz_blocks(examples)):
        parts.append(fuzz_block(run, op, size, block_seed(seed_value, block), budget))
        if parts[-1]["failure"]:
            break
    return merge_fuzz(examples, parts)


def run_suite(client: Client, suite: dict[str, list[Case]], errata: frozenset[str],
              xfail: Xfail, fuzz: int = 0, fuzz_seed: int = 0,
              progress: Callable[[str], None] | None = None,
              limits: Limits | None = None, profile: str = "crucible",
              index_base: dict[str, int] | None = None,
              done: Callable[[OpResult], None] | None = None,
              time_reference: bool = False,
              ) -> tuple[dict | None, list[OpResult], list]:
    """Run every op of `suite` within the limits; returns (hello, per-op results, events).
    `done` hears of each op as it finishes; `time_reference` also times the reference."""
    limits = limits or Limits(client.timeout, client.first_timeout)
    run = Run(client, errata, xfail, limits=limits,
              deadline=time.monotonic() + limits.run_budget, profile=profile,
              index_base=index_base or {}, time_reference=time_reference)
    greeting = hello(run)
    run.batch = declares_batch(greeting)
    results = []
    for name, cases in suite.items():
        op = REGISTRY.ops.get(name)
        if op is None:
            continue
        res = run_op(run, op, cases, progress)
        mark_fallbacks(greeting, [res])
        if fuzz and fuzz_wanted(res):
            if progress:
                progress(f"{name} fuzz")
            blocks = len(fuzz_blocks(fuzz))
            res.fuzz = fuzz_op(run, op, fuzz, fuzz_seed, fuzz_share(limits, res, blocks))
        results.append(res)
        if done:
            done(res)
    client.close()
    return greeting, results, run.events


def mark_fallbacks(greeting: dict | None, results: list[OpResult]) -> None:
    """Mark the ops the implementation's hello says it answers with the reference."""
    fallbacks = greeting.get("fallbacks") if isinstance(greeting, dict) else None
    for res in results:
        res.fallback = isinstance(fallbacks, dict) and res.op in fallbacks
