"""A conformance run split into shards on Dask distributed: the hello, the vectors of each op,
and each fuzz block of each op (runner.FUZZ_BLOCK inputs) are one task each, run on a local
cluster (one single-threaded worker process per core) or on the cluster of a scheduler
address. Each worker starts its own implementation process and runs its shards through the
runner's own functions; the shards' results merge into the per-op results, events and hello
a single-process run gives. With a results file, every finished shard is appended to it and
reused by a later run with the same implementation command, profile, seed, xfail list, spec
version, vectors, hypothesis version and limits, so an interrupted run resumes.

The limits are those of a single-process run: each shard's waits end at the run budget's end
(a wall-clock time set when the run starts), the vectors shard of an op at the op budget, and
each fuzz block at its equal share of what the op's vectors left of it; the client checks ids
as it does in a single process. A worker asks its implementation's hello once, before its
first vectors or fuzz shard, to send batch requests where the hello declares them.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis.errors import HypothesisDeprecationWarning

from .. import load_all
from ..spec.core.registry import REGISTRY, Op
from .batching import declares_batch
from .client import OK, Client
from .runner import (
    Limits,
    OpResult,
    Run,
    Xfail,
    block_seed,
    fuzz_block,
    fuzz_blocks,
    fuzz_share,
    fuzz_wanted,
    hello,
    mark_fallbacks,
    merge_fuzz,
    run_op,
)
from .vectors import Case

HELLO = "hello"


@dataclass(frozen=True)
class Setup:
    """What every shard needs besides its own cases: the implementation, the profile, the
    limits, and the time.time() at which the run budget ends."""

    command: tuple[str, ...]
    errata: frozenset[str]
    xfail: tuple[tuple[str, str], ...] = ()
    seed: int = 0
    limits: Limits = field(default_factory=Limits)
    deadline: float = math.inf
    profile: str = "crucible"
    window: int = 64
    time_reference: bool = False


@dataclass(frozen=True)
class Shard:
    """One task: the hello, one op's vectors, or one fuzz block of one op."""

    kind: str
    op: str = ""
    block: int = 0
    size: int = 0

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.op}:{self.block}:{self.size}"


@dataclass
class _Worker:
    """A worker's implementation process, kept for its later shards, its next request id, and
    whether its hello declares the batch form (None until asked)."""

    client: Client
    next_id: int = 1
    batch: bool | None = None


_WORKERS: dict[tuple, _Worker] = {}


def _worker(setup: Setup) -> _Worker:
    key = (setup.command, setup.limits.timeout, setup.limits.first_timeout, setup.window)
    if key not in _WORKERS:
        _WORKERS[key] = _Worker(Client(list(setup.command), setup.limits.timeout,
                                       setup.limits.first_timeout, setup.window))
    return _WORKERS[key]


def close_workers() -> None:
    """Stop this worker's implementation processes (run on every worker at the end)."""
    while _WORKERS:
        _WORKERS.popitem()[1].client.close()


def run_shard(shard: Shard, setup: Setup, cases: list[Case], budget: float = math.inf) -> dict:
    """One shard, on a worker: its result, the events it caused and the requests it sent; a
    fuzz block may take `budget` seconds."""
    load_all()
    with warnings.catch_warnings():
        # the worker's own threads touch the global `random` while hypothesis draws; the
        # draws use hypothesis's own generator, so its warning about that is noise here
        warnings.filterwarnings("ignore", "Do not use the `random` module",
                                HypothesisDeprecationWarning)
        return _run_shard(shard, setup, cases, REGISTRY.ops.get(shard.op), budget)


def _run_shard(shard: Shard, setup: Setup, cases: list[Case], op: Op | None,
               budget: float) -> dict:
    worker = _worker(setup)
    run = Run(worker.client, setup.errata, Xfail(dict(setup.xfail)), next_id=worker.next_id,
              limits=setup.limits, deadline=time.monotonic() + setup.deadline - time.time(),
              profile=setup.profile, time_reference=setup.time_reference)
    record: dict = {"greeting": None, "result": None}
    if shard.kind == HELLO:
        record["greeting"] = hello(run)
        worker.batch = declares_batch(record["greeting"])
        requests = 1
    elif shard.kind == "vectors":
        run.batch = _batch(worker, run)
        res = run_op(run, op, cases)
        record["result"] = res.to_json()
        requests = res.cases - res.skipped
    else:
        run.batch = _batch(worker, run)
        record["result"] = fuzz_block(run, op, shard.size,
                                      block_seed(setup.seed, shard.block), budget)
        requests = record["result"]["requests"]
    worker.next_id = run.next_id
    return record | {"events": run.events, "requests": requests}


def _batch(worker: _Worker, run: Run) -> bool:
    """Whether the worker's implementation declares the batch form: its hello, asked once
    (a hello that gets no answer counts as no; nothing is recorded of it)."""
    if worker.batch is None:
        reply = run.client.request(0, HELLO, {}, run.deadline)
        answer = reply.response if reply.kind == OK else None
        worker.batch = isinstance(answer, dict) and answer.get("ok") is True and \
            declares_batch(answer.get("result"))
    return worker.batch


@dataclass
class Campaign:
    """The shards of one run and the records of those finished so far."""

    setup: Setup
    suite: dict[str, list[Case]]
    fuzz: int
    records: dict[str, dict] = field(default_factory=dict)

    def first_shards(self) -> list[Shard]:
        return [Shard(HELLO)] + [Shard("vectors", op, 0, len(cases))
                                 for op, cases in self.suite.items()]

    def follow_ups(self, shard: Shard) -> list[Shard]:
        """The fuzz blocks of an op whose vectors say it is to be fuzzed."""
        if shard.kind != "vectors" or not self.fuzz:
            return []
        if not fuzz_wanted(OpResult.from_json(self.records[shard.id]["result"])):
            return []
        return self._fuzz_shards(shard.op)

    def moot(self, shard: Shard) -> bool:
        """A fuzz block after the op's first failing one: a single process never sends it."""
        first = self.first_failing_block(shard.op) if shard.kind == "fuzz" else None
        return first is not None and shard.block > first

    def first_failing_block(self, op: str) -> int | None:
        blocks = [s.block for s in self._fuzz_shards(op)
                  if s.id in self.records and self.records[s.id]["result"]["failure"]]
        return min(blocks, default=None)

    def budget(self, shard: Shard) -> float:
        """The seconds a fuzz block may take: its share of what the op's vectors left."""
        if shard.kind != "fuzz":
            return math.inf
        vectors = self.records[Shard("vectors", shard.op, 0, len(self.suite[shard.op])).id]
        return fuzz_share(self.setup.limits, OpResult.from_json(vectors["result"]),
                          len(fuzz_blocks(self.fuzz)))

    def _fuzz_shards(self, op: str) -> list[Shard]:
        return [Shard("fuzz", op, b, n) for b, n in enumerate(fuzz_blocks(self.fuzz))]

    def merge(self) -> tuple[dict | None, list[OpResult], list[dict]]:
        """(hello, per-op results, events) as the single-process run gives them."""
        first = self.records[Shard(HELLO).id]
        events = list(first["events"])
        results = []
        for op, cases in self.suite.items():
            record = self.records[Shard("vectors", op, 0, len(cases)).id]
            res = OpResult.from_json(record["result"])
            events += record["events"]
            if self.fuzz and fuzz_wanted(res):
                parts = []
                for s in self._fuzz_shards(op):
                    part = self.records[s.id]
                    parts.append(part["result"])
                    events += part["events"]
                    if part["result"]["failure"]:
                        break
                res.fuzz = merge_fuzz(self.fuzz, parts)
            results.append(res)
        mark_fallbacks(first["greeting"], results)
        return first["greeting"], results, events


def load_records(path: Path | None, key: dict) -> dict[str, dict]:
    """Shard id -> record, for every line of the results file written under the same key."""
    out: dict[str, dict] = {}
    if path is None or not path.exists():
        return out
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("key") == key and "shard" in entry:
            out[entry["shard"]] = entry["record"]
    return out


@dataclass
class Tally:
    """Progress: shards done of the total, requests sent by this run's own shards."""

    total: int
    done: int = 0
    reused: int = 0
    requests: int = 0
    start: float = field(default_factory=time.monotonic)

    def line(self, shard: Shard) -> str:
        rate = self.requests / max(time.monotonic() - self.start, 1e-9)
        return (f"[{self.done}/{self.total} shards] {rate:.0f} cases/s  {shard.kind} "
                f"{shard.op} {shard.block if shard.kind == 'fuzz' else ''}").rstrip()


def run(campaign: Campaign, *, results: Path | None, key: dict, workers: int,
        scheduler: str | None, progress: Callable[[str], None]) -> Tally:
    """Run every shard not already in `results` (appending each as it finishes) and keep all
    records in `campaign.records`; shards are submitted as soon as they are known."""
    key = json.loads(json.dumps(key))
    saved = load_records(results, key)
    todo = deque(campaign.first_shards())
    tally = Tally(total=len(todo) + len(campaign.suite) * len(fuzz_blocks(campaign.fuzz)))
    if results:
        results.parent.mkdir(parents=True, exist_ok=True)
    out = results.open("a") if results else None
    dask, pending, finished = None, {}, None
    try:
        while todo or pending:
            while todo:
                shard = todo.popleft()
                if campaign.moot(shard):
                    tally.total -= 1
                    continue
                if shard.id in saved:
                    tally.reused += 1
                    _finish(campaign, shard, saved[shard.id], tally, todo, pending)
                    continue
                if dask is None:
                    dask, finished = _start(workers, scheduler)
                future = dask.submit(run_shard, shard, campaign.setup,
                                     campaign.suite.get(shard.op, []) if shard.kind == "vectors"
                                     else [], campaign.budget(shard), pure=False)
                pending[future] = shard
                finished.add(future)
            if pending:
                future = next(finished)
                shard = pending.pop(future, None)
                if shard is None:
                    continue
                record = future.result()
                tally.requests += record["requests"]
                if out:
                    out.write(json.dumps({"key": key, "shard": shard.id, "record": record},
                                         sort_keys=True) + "\n")
                    out.flush()
                _finish(campaign, shard, record, tally, todo, pending)
                progress(tally.line(shard))
    finally:
        if out:
            out.close()
        if dask is not None:
            _stop(dask)
    return tally


def _finish(campaign: Campaign, shard: Shard, record: dict, tally: Tally, todo: deque,
            pending: dict) -> None:
    """Keep a shard's record; queue its follow-ups; drop the fuzz blocks a failure makes moot
    (the run stops at an op's first failing block, as a single process does)."""
    campaign.records[shard.id] = record
    tally.done += 1
    follow = campaign.follow_ups(shard)
    if shard.kind == "vectors" and campaign.fuzz:
        tally.total -= len(fuzz_blocks(campaign.fuzz)) - len(follow)
    todo.extend(follow)
    if shard.kind != "fuzz" or not record["result"]["failure"]:
        return
    for future, other in list(pending.items()):
        if campaign.moot(other):
            future.cancel()
            del pending[future]
            tally.total -= 1


def _start(workers: int, scheduler: str | None):
    from dask.distributed import as_completed

    from ..campaign import _client

    return _client(workers, scheduler), as_completed()


def _stop(dask) -> None:
    """Stop the workers' implementation processes, then the client (and a local cluster)."""
    cluster = dask.cluster
    try:
        dask.run(close_workers)
    finally:
        dask.close()
        if cluster is not None:
            cluster.close()
