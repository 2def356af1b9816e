"""The proof runner: checks obligations (or their mutants) in parallel, with per-query
timeouts and the result cache, and returns one outcome per task (design §6). A z3 obligation
is a list of queries; a model obligation is a list of spec machines to explore."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import z3

from ... import fast as fast_package
from ... import spec as spec_package
from ...spec.core.machine import Machine
from ...spec.core.optional import MissingPackage
from ...spec.core.registry import REGISTRY, SAME_SUBJECT, Obligation, po_sort_key
from . import cache, patch
from .evidence import BACKEND_VARIABLE, check_contract, check_property
from .model import explore
from .obligation import BIT_BLAST, DEFAULT_RLIMIT, Contract, Property, Query

PROVED, REFUTED, UNKNOWN, ERROR = "proved", "refuted", "unknown", "error"
SKIPPED = "skipped"
"""Not checked: the check needs an optional package that is not installed (never refuted)."""
KILLED, SURVIVED = "killed", "survived"


@dataclass
class QueryOutcome:
    """One z3 query: its label, status, solver seconds, whether it came from the cache."""

    label: str
    status: str
    seconds: float
    cached: bool
    model: str | None = None
    states: int | None = None
    rlimit: int | None = None


@dataclass
class Outcome:
    """One obligation (or one of its mutants) checked."""

    id: str
    statement: str
    kind: str
    mutant: str | None
    status: str
    seconds: float
    cached: bool
    queries: list[QueryOutcome] = field(default_factory=list)
    error: str | None = None
    needs: list[str] = field(default_factory=list)
    """The missing packages a skipped obligation needs."""

    @property
    def states(self) -> int | None:
        """States explored, for a model check."""
        counts = [q.states for q in self.queries if q.states is not None]
        return sum(counts) if counts else None

    @property
    def verdict(self) -> str:
        """For a mutant: killed when the obligation fails on it; otherwise the status."""
        if self.mutant is None or self.status == SKIPPED:
            return self.status
        return {REFUTED: KILLED, PROVED: SURVIVED}.get(self.status, self.status)

    def to_json(self) -> dict:
        return asdict(self) | {"verdict": self.verdict, "states": self.states}


@dataclass(frozen=True)
class Settings:
    """How to run: cache location and use, a wall-time override, parallel jobs, and extra
    key material for cached non-z3 checks (a bug planted by `mutate`)."""

    cache_root: Path
    use_cache: bool = True
    timeout_s: float | None = None
    jobs: int = 1
    variant: str = ""


def z3_version() -> str:
    return z3.get_version_string()


def canonical_smt2(formula) -> str:
    """SMT-LIB text of one query that depends only on the formula: declarations sorted by name,
    then the assertion. (Solver.to_smt2 names shared terms by global AST ids, which differ
    between processes, so it cannot key a cache.)"""
    decls = sorted(f"(declare-fun {v} () {v.sort().sexpr()})" for v in free_constants(formula))
    return "\n".join([*decls, f"(assert {formula.sexpr()})", "(check-sat)"])


def free_constants(formula) -> list:
    """The uninterpreted constants of a formula, visiting each shared subterm once (a tree walk
    is exponential in the depth of terms like ten composed Philox rounds)."""
    seen, found, stack = set(), {}, [formula]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            found[e.get_id()] = e
        else:
            stack.extend(e.children())
    return list(found.values())


def query_key(q: Query) -> str:
    """The cache key of a query: its canonical text, expected answer and the z3 version."""
    return cache.query_key(canonical_smt2(q.formula), q.expect, z3_version())


def make_solver(logic: str | None, ctx: z3.Context) -> z3.Solver:
    """z3's general solver, its solver for an SMT-LIB logic, or (BIT_BLAST) a bit-vector
    formula simplified, bit-blasted and handed to the SAT solver alone."""
    if logic == BIT_BLAST:
        return z3.Then("simplify", "bit-blast", "sat", ctx=ctx).solver()
    return z3.SolverFor(logic, ctx=ctx) if logic else z3.Solver(ctx=ctx)


def check_query(q: Query, timeout_s: float, settings: Settings, key: str | None = None
                ) -> QueryOutcome:
    """Solve one query in a context of its own within its resource budget (rlimit, so the
    answer does not depend on load; `timeout_s` of wall time is only a safety net), or answer
    it from the cache. The cache entry records the z3 version and the resources used. `key`
    is the query's `query_key` when the caller has it already."""
    key = key or query_key(q)
    if settings.use_cache:
        hit = cache.load(settings.cache_root, key)
        if hit is not None:
            return QueryOutcome(q.label, hit["status"], hit["seconds"], True, hit.get("model"),
                                rlimit=hit.get("rlimit"))
    ctx = z3.Context()
    solver = make_solver(q.logic, ctx)
    solver.set("rlimit", q.rlimit or DEFAULT_RLIMIT)
    solver.set("timeout", max(1, int(timeout_s * 1000)))
    solver.add(q.formula.translate(ctx))
    start = time.perf_counter()
    answer = solver.check()
    seconds = round(time.perf_counter() - start, 4)
    used = int(solver.statistics().get_key_value("rlimit count"))
    model = None
    if answer == z3.unknown:
        status = UNKNOWN
        model = f"{solver.reason_unknown()} after {used} resource units"
    else:
        found = answer == z3.sat
        status = PROVED if found == (q.expect == "sat") else REFUTED
        if found:
            model = str(solver.model())[:600]
    if status != UNKNOWN and settings.use_cache:
        cache.store(settings.cache_root, key, {"status": status, "seconds": seconds,
                                               "model": model, "rlimit": used,
                                               "z3": z3_version()})
    return QueryOutcome(q.label, status, seconds, False, model, rlimit=used)


SOURCE_ROOTS = (Path(spec_package.__file__).parent, Path(__file__).parents[1],
                Path(fast_package.__file__).parent)
"""spec/, proofs/, and fast/, whose compiled searches some model checks run."""


@functools.cache
def source_digest(*roots: Path) -> str:
    """sha256 of every module under `roots` (default: SOURCE_ROOTS): the code an
    obligation's checks can read, whatever module it lives in."""
    h = hashlib.sha256()
    for root in roots or SOURCE_ROOTS:
        for path in sorted(root.rglob("*.py")):
            name = f"{root.name}/{path.relative_to(root).as_posix()}"
            h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


EVIDENCE_VERSION = "evidence-3"


def _evidence_key(kind: str, variant: str, label: str, settings: Settings) -> str:
    """Cache key of a check that is not a z3 query: what is checked (obligation, mutant,
    planted edit, check label), the hypothesis backend and the digest of every spec and
    proofs module."""
    backend = os.environ.get(BACKEND_VARIABLE, "")
    return cache.query_key(f"{variant}\n{settings.variant}\n{label}\n{backend}\n"
                           f"{source_digest()}", kind, EVIDENCE_VERSION)


def _cached(kind: str, variant: str, label: str, settings: Settings,
            compute: Callable[[], QueryOutcome]) -> QueryOutcome:
    key = _evidence_key(kind, variant, label, settings)
    if settings.use_cache:
        hit = cache.load(settings.cache_root, key)
        if hit is not None:
            return QueryOutcome(label, hit["status"], hit["seconds"], True, hit.get("model"),
                                hit.get("states"))
    out = compute()
    if settings.use_cache and out.status in (PROVED, REFUTED):
        cache.store(settings.cache_root, key, {"status": out.status, "seconds": out.seconds,
                                               "model": out.model, "states": out.states})
    return out


def check_machine(m: Machine, settings: Settings, variant: str = "") -> QueryOutcome:
    """Explore every interleaving of a spec machine, or answer from the cache."""

    def compute() -> QueryOutcome:
        start = time.perf_counter()
        found = explore(m)
        seconds = round(time.perf_counter() - start, 4)
        status = PROVED if found.violation is None else REFUTED
        trace = None if found.violation is None else \
            f"{found.violation} after: {' ; '.join(found.trace or [])}"[:1500]
        return QueryOutcome(m.name, status, seconds, False, trace, found.states)

    return _cached("model", variant, f"{m.name}\n{m.initial!r}", settings, compute)


def check_evidence(item: Property | Contract, settings: Settings, variant: str,
                   shrink: bool = True) -> QueryOutcome:
    """Check a property (its failing draw shrunk unless `shrink` is false) or a contract, or
    answer from the cache."""

    def compute() -> QueryOutcome:
        start = time.perf_counter()
        found = check_property(item, shrink) if isinstance(item, Property) else \
            check_contract(item)
        seconds = round(time.perf_counter() - start, 4)
        status = PROVED if found.counterexample is None else REFUTED
        return QueryOutcome(item.label, status, seconds, False, found.counterexample,
                            found.tried)

    kind = "property" if isinstance(item, Property) else "contract"
    return _cached(kind, variant, item.label, settings, compute)


def check_obligation(po: Obligation, mutant: str | None, settings: Settings) -> Outcome:
    """Check `po` on its own subject, or with its mutant `mutant`: a replaced subject, or a
    bug planted in the spec's own code for the duration of the check."""
    start = time.perf_counter()
    try:
        m = None if mutant is None else _mutant(po, mutant)
        subject = po.subject if m is None or m.subject is SAME_SUBJECT else m.subject
        variant = po.id if m is None else \
            f"{po.id} mutant {m.name} {m.old!r}->{m.new!r}#{m.occurrence}"
        planted = contextlib.nullcontext() if m is None or m.target is None else \
            patch.edited(m.target, m.old, m.new, m.occurrence)
        with planted:
            queries = _check_items(po, subject, settings, variant, shrink=m is None)
    except MissingPackage as e:  # its items cannot even be built here
        return Outcome(po.id, po.statement, po.kind, mutant, SKIPPED,
                       round(time.perf_counter() - start, 4), False, error=e.message,
                       needs=[e.package])
    except Exception as e:  # a broken obligation is reported, never crashes the run
        return Outcome(po.id, po.statement, po.kind, mutant, ERROR,
                       round(time.perf_counter() - start, 4), False,
                       error=f"{type(e).__name__}: {e}")
    needs = sorted({q.model for q in queries if q.status == SKIPPED})
    statuses = {q.status for q in queries}
    status = next((s for s in (REFUTED, UNKNOWN, SKIPPED) if s in statuses), PROVED)
    return Outcome(po.id, po.statement, po.kind, mutant, status,
                   round(time.perf_counter() - start, 4),
                   bool(queries) and all(q.cached for q in queries), queries,
                   error="; ".join(MissingPackage(p).message for p in needs) or None,
                   needs=needs)


def _check_items(po: Obligation, subject, settings: Settings, variant: str, shrink: bool
                 ) -> list[QueryOutcome]:
    """Each item of the obligation checked in order, up to the first refuted one (it alone
    decides the outcome; a mutant is killed by it, and its case is not shrunk). An item that
    needs a missing package is skipped, its model the package's name."""
    if po.kind == "model":
        check = functools.partial(check_machine, settings=settings, variant=variant)
    elif po.kind in ("property", "contract"):
        check = functools.partial(check_evidence, settings=settings, variant=variant,
                                  shrink=shrink)
    else:
        check = _once_per_query(functools.partial(
            check_query, timeout_s=settings.timeout_s or po.timeout_s, settings=settings))
    outs: list[QueryOutcome] = []
    for item in po.build(subject):
        try:
            outs.append(check(item))
        except MissingPackage as e:
            label = getattr(item, "label", None) or getattr(item, "name", "")
            outs.append(QueryOutcome(label, SKIPPED, 0.0, False, e.package))
        if outs[-1].status == REFUTED:
            break
    return outs


def _once_per_query(check: Callable[..., QueryOutcome]) -> Callable[[Query], QueryOutcome]:
    """`check`, solving each distinct query once: an identical query (the same text, answer
    and resource budget, e.g. a rule checked under two profiles that do not change it) gets
    the first one's answer under its own label. Each query's text is keyed once."""
    answered: dict[tuple[str, int | None, str | None], QueryOutcome] = {}

    def once(q: Query) -> QueryOutcome:
        key = query_key(q)
        same = (key, q.rlimit, q.logic)
        if same not in answered:
            answered[same] = check(q, key=key)
            return answered[same]
        return replace(answered[same], label=q.label, seconds=0.0)

    return once


def _mutant(po: Obligation, name: str):
    for m in po.mutants:
        if m.name == name:
            return m
    raise KeyError(f"{po.id} has no mutant {name!r}")


def _task(args: tuple[str, str | None, Settings]) -> Outcome:
    po_id, mutant, settings = args
    return check_obligation(REGISTRY.obligations[po_id], mutant, settings)


FORK_UNSAFE = ("egglog",)
"""Modules that start threads when imported: a process holding one cannot fork safely (the
child can block on a lock a vanished thread held), so its workers are spawned instead."""


def start_method() -> str | None:
    """fork where it is safe (fast: the registry and any planted bug are inherited), else
    spawn; None (check in this process) when a bug is planted that a spawned worker would
    not see."""
    unsafe = any(name in sys.modules for name in FORK_UNSAFE)
    if "fork" in multiprocessing.get_all_start_methods() and not unsafe:
        return "fork"
    return None if patch.PLANTED else "spawn"


def worker_init() -> None:
    """A spawned worker loads every spec module, as a forked one inherits them."""
    from ... import load_all

    load_all()


def run(ids: Iterable[str], *, mutants: bool, settings: Settings,
        progress: Callable[[Outcome, int, int], None] | None = None) -> list[Outcome]:
    """Check the obligations `ids` (with --mutants: every mutant of each), sorted by id."""
    tasks = []
    for po_id in sorted(ids, key=po_sort_key):
        po = REGISTRY.obligations[po_id]
        names = [m.name for m in po.mutants] if mutants else [None]
        tasks.extend((po_id, name, settings) for name in names)
    results: list[Outcome] = []
    method = start_method()
    if settings.jobs <= 1 or len(tasks) <= 1 or method is None:
        for t in tasks:
            results.append(_task(t))
            if progress:
                progress(results[-1], len(results), len(tasks))
    else:
        context = multiprocessing.get_context(method)
        with ProcessPoolExecutor(settings.jobs, mp_context=context,
                                 initializer=worker_init) as pool:
            for out in pool.map(_task, tasks):
                results.append(out)
                if progress:
                    progress(out, len(results), len(tasks))
    return results
