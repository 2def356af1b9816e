"""A mutation campaign on Dask distributed: every mutant is one task, run on a local cluster
(one single-threaded worker process per core) or on the cluster of a scheduler address.
Results are appended to a JSON-lines file as they arrive, so an interrupted campaign resumes
where it stopped; a result is reused only while its function's source is unchanged."""

from __future__ import annotations

import json
import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from . import mutants
from .commands.console import render
from .commands.console import table as console_table
from .proofs.core import mutation, patch, runner


def load_results(path: Path) -> dict[str, mutants.Verdict]:
    """Mutant id -> its recorded verdict, for every result still valid (source unchanged)."""
    out: dict[str, mutants.Verdict] = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        try:
            v = mutants.Verdict(**json.loads(line))
        except (ValueError, TypeError):
            continue
        try:
            current = mutation.mutant_sha(v.id)
        except (patch.PatchError, AttributeError, ImportError, OSError, ValueError):
            continue
        if v.source_sha == current and v.error is None:
            out[v.id] = v
    return out


def remaining(v: mutants.Verdict | None, checks: tuple[str, ...],
              digest: str | None = None) -> tuple[str, ...]:
    """The checks still to run on a mutant given its recorded verdict: none once it is
    killed (or equivalent by its bytecode), all of them for a survivor whose checks have
    changed since (`digest` of spec and proofs), else those it has not been through yet."""
    if v is None:
        return checks
    if v.stage or v.equivalent == mutants.SAME_BYTECODE:
        return ()
    if digest is not None and v.checks_digest != digest:
        return checks
    return tuple(c for c in checks if c not in v.checks)


def _task(mutant_id: str, deps: mutants.Dependencies, checks: tuple[str, ...], root: str,
          equivalent: dict[str, str], timeout_s: float) -> dict:
    """One mutant, on a worker."""
    from . import load_all

    load_all()
    return asdict(mutants.evaluate(mutant_id, deps, checks, Path(root), equivalent, timeout_s))


def _client(workers: int, scheduler: str | None):
    from dask.distributed import Client, LocalCluster

    if scheduler:
        return Client(scheduler)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=40)
    return Client(cluster)


def run(ids: Iterable[str], *, checks: tuple[str, ...], root: Path, results: Path,
        equivalent: dict[str, str], workers: int, scheduler: str | None, timeout_s: float,
        progress: Callable[[str], None]) -> list[mutants.Verdict]:
    """Evaluate every mutant of `ids` not already in `results`; return all their verdicts."""
    ids = list(ids)
    done = load_results(results)
    digest = runner.source_digest()
    todo = {i: remaining(done.get(i), checks, digest) for i in ids}
    todo = {i: stages for i, stages in todo.items() if stages}
    progress(f"{len(ids) - len(todo)} of {len(ids)} mutants already have results")
    if todo:
        deps = mutants.build(checks, root, progress, workers=1 if scheduler else workers)
        results.parent.mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        client = _client(workers, scheduler)
        try:
            from dask.distributed import as_completed

            shared = client.scatter(deps, broadcast=True)
            futures = [client.submit(_task, i, shared, stages, str(root), equivalent,
                                     timeout_s, pure=False) for i, stages in todo.items()]
            with results.open("a") as out:
                for n, future in enumerate(as_completed(futures), 1):
                    v = mutants.Verdict(**future.result())
                    if v.id in done:
                        v.checks = sorted({*done[v.id].checks, *v.checks})
                    out.write(json.dumps(asdict(v), sort_keys=True) + "\n")
                    out.flush()
                    done[v.id] = v
                    rate = n / max(time.monotonic() - start, 1e-9)
                    progress(f"[{n}/{len(todo)}] {rate:.2f} mutants/s  {v.status:14} {v.id}")
        finally:
            client.close()
    return [done[i] for i in ids if i in done]


@dataclass
class Row:
    """Counts for one chapter or function."""

    planted: int = 0
    equivalent: int = 0
    error: int = 0
    prove: int = 0
    vectors: int = 0
    tests: int = 0
    survived: int = 0

    @property
    def live(self) -> int:
        """Mutants that are bugs: planted less the equivalent and the unplantable."""
        return self.planted - self.equivalent - self.error

    @property
    def killed(self) -> int:
        return self.prove + self.vectors + self.tests

    def ratio(self, n: int) -> float:
        return n / self.live if self.live else 1.0


def tally(verdicts: Iterable[mutants.Verdict], key: Callable[[mutants.Verdict], object]
          ) -> dict[object, Row]:
    rows: dict[object, Row] = defaultdict(Row)
    for v in verdicts:
        for k in (key(v), "all"):
            row = rows[k]
            row.planted += 1
            status = v.status
            if status == "equivalent":
                row.equivalent += 1
            elif status == "error":
                row.error += 1
            elif status == "survived":
                row.survived += 1
            else:
                stage = status.split(":")[1]
                setattr(row, stage, getattr(row, stage) + 1)
    return dict(rows)


def table(rows: dict[object, Row], title: str) -> str:
    """Per group (chapter or function) the mutants planted, equivalent, errors, killed by each
    stage, surviving, and the kill ratios; the `all` row last."""
    header = [title, "planted", "equiv", "error", "by prove", "+vectors", "+tests", "survived",
              "prove%", "all%"]
    keys = [*sorted((k for k in rows if k != "all"), key=lambda k: (str(type(k)), k)), "all"]
    body = [[str(k), r.planted, r.equivalent, r.error, r.prove, r.vectors, r.tests, r.survived,
             f"{100 * r.ratio(r.prove):.1f}", f"{100 * r.ratio(r.killed):.1f}"]
            for k, r in ((k, rows[k]) for k in keys)]
    return render(console_table(header, body, right=header[1:]))


def report(verdicts: list[mutants.Verdict], wall_s: float) -> dict:
    """The JSON report: per chapter, per function, every survivor, throughput."""
    by_chapter = tally(verdicts, lambda v: v.chapter)
    by_function = tally(verdicts, lambda v: v.function)
    return {
        "chapters": {str(k): asdict(r) for k, r in by_chapter.items()},
        "functions": {str(k): asdict(r) for k, r in sorted(by_function.items(), key=str)},
        "survivors": sorted(v.id for v in verdicts if v.status == "survived"),
        "equivalent": {v.id: v.equivalent for v in verdicts if v.equivalent},
        "errors": {v.id: v.error for v in verdicts if v.error},
        "kills": dict(Counter(v.killed_by.split(" ")[0] for v in verdicts if v.killed_by)),
        "wall_s": round(wall_s, 1),
        "mutants": len(verdicts),
        "workers": os.cpu_count(),
    }
