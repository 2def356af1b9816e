"""Which checks kill a mutant of the spec: the proof obligations (`prove`), the conformance
vectors checked against the reference (`vectors`) and the test suite (`tests`).

Each check runs only where it can see the mutated function: a one-time traced run of every
obligation, every op's vectors and every test records which spec functions each calls
(`Dependencies`). A mutant is then planted in a forked child and the checks that call its
function run in order until one fails; a crash or a hang under the mutant is a kill too."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import multiprocessing
import os
import pickle
import subprocess
import sys
import tempfile
import time
import types
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .proofs.core import mutation, patch, runner
from .spec.core.registry import REGISTRY

CHECKS = ("prove", "vectors", "tests")
SAME_BYTECODE = "compiles to the same bytecode"
SPEC_PREFIX = "crucible_spec.spec."
REPO = Path(__file__).resolve().parent.parent


@dataclass
class Trace:
    """What one check (an obligation, an op's vectors under a profile, a test) called, with
    the key of the code it was traced under and whether it passed without any mutant."""

    key: str
    functions: list[str]
    passed: bool = True
    seconds: float = 0.0


@dataclass
class Dependencies:
    """The traces of every check, reused while their keys hold: an obligation is traced
    again when the spec, the reference or its own module changes; vectors when the spec,
    the reference or the suite does; tests when any of those or the tests do."""

    obligations: dict[str, Trace] = field(default_factory=dict)
    ops: dict[str, Trace] = field(default_factory=dict)
    tests: dict[str, Trace] = field(default_factory=dict)

    def callers(self, table: str, function: str) -> list[str]:
        """The passing checks of `table` that call `function`."""
        index = self.__dict__.setdefault("_index", {})
        if table not in index:
            by_function: dict[str, list[str]] = defaultdict(list)
            for check, t in sorted(getattr(self, table).items()):
                if t.passed:
                    for f in t.functions:
                        by_function[f].append(check)
            index[table] = by_function
        return index[table].get(function, [])

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        body = {k: {c: asdict(t) for c, t in getattr(self, k).items()}
                for k in ("obligations", "ops", "tests")}
        tmp.write_text(json.dumps(body, sort_keys=True))
        os.replace(tmp, path)

    @staticmethod
    def load(path: Path) -> Dependencies:
        try:
            body = json.loads(path.read_text())
            return Dependencies(**{k: {c: Trace(**t) for c, t in v.items()}
                                   for k, v in body.items()})
        except (OSError, ValueError, TypeError):
            return Dependencies()


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def code_digest() -> str:
    """Digest of spec/ and reference/: what every check runs."""
    from . import reference

    return runner.source_digest(mutation.SPEC_DIR, Path(reference.__file__).parent)


def code_name(code: types.CodeType) -> str | None:
    """module:qualname of a spec function's code object, else None."""
    path = Path(code.co_filename)
    if not path.is_relative_to(mutation.SPEC_DIR) or path.name == "__init__.py":
        return None
    dotted = ".".join(path.relative_to(mutation.SPEC_DIR).with_suffix("").parts)
    return f"{SPEC_PREFIX}{dotted}:{code.co_qualname}"


@contextlib.contextmanager
def calls() -> Iterator[set[str]]:
    """Collect the spec functions called inside the block (this thread)."""
    codes: set[types.CodeType] = set()

    def hook(frame, event, _arg):
        if event == "call":
            codes.add(frame.f_code)

    found: set[str] = set()
    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        yield found
    finally:
        sys.setprofile(previous)
        found.update(n for n in map(code_name, codes) if n is not None)


def traced(work: Callable[[], object]) -> tuple[list[str], object, float]:
    """(the spec functions `work` calls, its answer, its seconds)."""
    start = time.perf_counter()
    with calls() as found:
        answer = work()
    return sorted(found), answer, time.perf_counter() - start


def _trace_obligation(po_id: str) -> tuple[list[str], object, float]:
    settings = runner.Settings(Path(tempfile.mkdtemp()), use_cache=False)
    return traced(lambda: runner.check_obligation(REGISTRY.obligations[po_id], None,
                                                  settings).status == runner.PROVED)


def _trace_vectors(check: str) -> tuple[list[str], object, float]:
    op, profile = check.split("|")
    return traced(lambda: first_vector_failure(op, profile, vector_cases()[(op, profile)])
                  is None)


def traced_all(fn: Callable[[str], tuple[list[str], object, float]], names: list[str],
               workers: int, what: str, progress: Callable[[str], None]
               ) -> Iterator[tuple[str, tuple[list[str], object, float]]]:
    """(name, fn(name)) for each name in order, on `workers` processes (forked where that is
    safe, as the prover's are; in this process when a bug is planted and forking is not)."""
    method = runner.start_method()
    with contextlib.ExitStack() as stack:
        if workers <= 1 or len(names) <= 1 or method is None:
            answers: Iterator = map(fn, names)
        else:
            pool = stack.enter_context(ProcessPoolExecutor(
                workers, mp_context=multiprocessing.get_context(method),
                initializer=runner.worker_init))
            answers = pool.map(fn, names)
        for i, (name, out) in enumerate(zip(names, answers, strict=True)):
            progress(f"tracing {what} [{i + 1}/{len(names)}] {name}")
            yield name, out


def trace_obligations(deps: Dependencies, progress: Callable[[str], None],
                      workers: int = 1) -> None:
    """Run every obligation whose trace is stale once (no cache), recording the spec
    functions it calls, whether it proves and its time."""
    base = code_digest()
    stale = {}
    for po_id, po in REGISTRY.obligations.items():
        module = sys.modules[po.build.__module__]
        key = _digest(base, po_id, Path(module.__file__).read_text())
        if po_id not in deps.obligations or deps.obligations[po_id].key != key:
            stale[po_id] = key
    for po_id in [i for i in deps.obligations if i not in REGISTRY.obligations]:
        del deps.obligations[po_id]
    for po_id, (found, proved, seconds) in traced_all(_trace_obligation, sorted(stale),
                                                      workers, "obligations", progress):
        deps.obligations[po_id] = Trace(stale[po_id], found, bool(proved), round(seconds, 3))


@functools.cache
def vector_cases() -> dict[tuple[str, str], list]:
    """(op, profile) -> its conformance cases."""
    from .conformance import vectors

    out = {}
    for profile in vectors.vector_profiles():
        for op, cases in vectors.load(vectors.VECTORS_DIR, profile).items():
            out[(op, profile)] = cases
    return out


def first_vector_failure(op_name: str, profile: str, cases: list) -> str | None:
    """The first case the reference no longer answers as recorded, or None."""
    from .conformance.vectors import expected
    from .engine import Implementation
    from .spec.core.errata import profile_errata

    impl = Implementation("reference", profile_errata(profile))
    op = REGISTRY.ops[op_name]
    for i, case in enumerate(cases):
        try:
            again = expected(impl, op, case.args, case.source)
        except Exception as e:  # a crash under the mutant is a detection
            return f"{op_name}[{profile}] case {i}: {type(e).__name__}"
        if (again.result, again.error) != (case.result, case.error):
            return f"{op_name}[{profile}] case {i}"
    return None


def trace_vectors(deps: Dependencies, progress: Callable[[str], None],
                  workers: int = 1) -> None:
    """Run the vectors of every op and profile whose trace is stale against the reference,
    recording the spec functions each calls."""
    from .conformance import vectors

    base = code_digest()
    manifests = {p: vectors.manifest_sha256(vectors.VECTORS_DIR, p)
                 for p in vectors.vector_profiles()}
    keys = {f"{op}|{profile}": _digest(base, op, manifests[profile])
            for op, profile in sorted(vector_cases())}
    stale = [check for check, key in keys.items()
             if deps.ops.get(check, Trace("", [])).key != key]
    for check, (found, passed, _) in traced_all(_trace_vectors, stale, workers, "vectors",
                                                progress):
        deps.ops[check] = Trace(keys[check], found, bool(passed))


def trace_tests(deps: Dependencies, root: Path, progress: Callable[[str], None],
                timeout_s: float) -> None:
    """Run the test suite once with the tracing plugin when any code or test changed: test
    node id -> the spec functions it calls and whether it passed."""
    key = _digest(code_digest(), runner.source_digest(REPO / "tests"))
    if deps.tests and all(t.key == key for t in deps.tests.values()):
        return
    progress("tracing the test suite (one full run)")
    out = root / "tests-trace.json"
    env = os.environ | {"CRUCIBLE_SPEC_TRACE_TESTS": str(out)}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "crucible_spec.mutant_plugin",
                    "--no-header", "-o", "addopts="], cwd=REPO, env=env, timeout=timeout_s,
                   capture_output=True, check=False)
    try:
        traced = json.loads(out.read_text())
    except (OSError, ValueError):
        traced = {}
    deps.tests = {node: Trace(key, t["functions"], t["passed"]) for node, t in traced.items()}


def build(checks: tuple[str, ...], root: Path, progress: Callable[[str], None],
          tests_timeout_s: float = 3600.0, workers: int = 1) -> Dependencies:
    """Trace the chosen checks where their traces in `root` are stale, on `workers`
    processes."""
    path = root / "dependencies.json"
    deps = Dependencies.load(path)
    if "prove" in checks:
        trace_obligations(deps, progress, workers)
        deps.save(path)
    if "vectors" in checks:
        trace_vectors(deps, progress, workers)
        deps.save(path)
    if "tests" in checks:
        trace_tests(deps, root, progress, tests_timeout_s)
        deps.save(path)
    return deps


@dataclass
class Verdict:
    """What happened to one mutant: `killed_by` is the first check that failed under it
    ("prove:PO7.20", "vectors:detector.run[crucible] case 3", "tests:tests/x.py::t"), with
    `stage` its kind; `equivalent` gives the reason when it is not a bug at all; `checks`
    are the kinds of check it went through, `checks_digest` the digest of the spec and
    proofs it went through them with (a survivor is tried again when they change)."""

    id: str
    function: str
    chapter: int
    source_sha: str
    stage: str | None = None
    killed_by: str | None = None
    equivalent: str | None = None
    seconds: float = 0.0
    ran: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    checks: list[str] = field(default_factory=list)
    checks_digest: str | None = None

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        if self.equivalent:
            return "equivalent"
        return f"killed:{self.stage}" if self.stage else "survived"


def _callers(deps: Dependencies, table: str, mutant_id: str) -> list[str]:
    """The passing checks of `table` that call a function the mutant changes."""
    return sorted({c for f in mutation.mutated_functions(mutant_id)
                   for c in deps.callers(table, f)})


def _prove(deps: Dependencies, mutant_id: str, root: Path, ran: dict[str, int]) -> str | None:
    settings = runner.Settings(root / "cache", use_cache=True, variant=mutant_id)
    for po_id in sorted(_callers(deps, "obligations", mutant_id),
                        key=lambda i: (deps.obligations[i].seconds, i)):
        ran["prove"] = ran.get("prove", 0) + 1
        if runner.check_obligation(REGISTRY.obligations[po_id], None, settings).status \
                != runner.PROVED:
            return f"prove:{po_id}"
    return None


def _vectors(deps: Dependencies, mutant_id: str, ran: dict[str, int]) -> str | None:
    cases = vector_cases()
    for key in _callers(deps, "ops", mutant_id):
        op, profile = key.split("|")
        ran["vectors"] = ran.get("vectors", 0) + 1
        bad = first_vector_failure(op, profile, cases[(op, profile)])
        if bad:
            return f"vectors:{bad}"
    return None


def _tests(deps: Dependencies, mutant_id: str, timeout_s: float, ran: dict[str, int]
           ) -> str | None:
    nodes = _callers(deps, "tests", mutant_id)
    if not nodes:
        return None
    ran["tests"] = len(nodes)
    env = os.environ | {"CRUCIBLE_SPEC_MUTANT": mutant_id}
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(nodes))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "crucible_spec.mutant_plugin",
             "--no-header", "-o", "addopts=", "-p", "no:cacheprovider", *nodes],
            cwd=REPO, env=env, timeout=timeout_s, capture_output=True, text=True, check=False)
    except subprocess.TimeoutExpired:
        return "tests: timeout"
    finally:
        os.unlink(f.name)
    if done.returncode == 0:
        return None
    failed = [line.split()[1] for line in done.stdout.splitlines()
              if line.startswith(("FAILED ", "ERROR "))]
    return f"tests:{failed[0] if failed else f'exit {done.returncode}'}"


def _in_child(work: Callable[[], str | None], timeout_s: float) -> str | None:
    """Run `work` in a forked child (the planted bug dies with it); a crash or a hang of the
    child is a detection."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            result = work()
        except BaseException as e:
            result = f"crash: {type(e).__name__}: {e}"[:300]
        with os.fdopen(write, "wb") as out:
            pickle.dump(result, out)
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + timeout_s
    with os.fdopen(read, "rb") as inp:
        os.set_blocking(inp.fileno(), False)
        chunks = []
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            with contextlib.suppress(BlockingIOError):
                chunk = inp.read()
                if chunk:
                    chunks.append(chunk)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return "timeout"
            time.sleep(0.01)
        with contextlib.suppress(BlockingIOError):
            rest = inp.read()
            if rest:
                chunks.append(rest)
    try:
        return pickle.loads(b"".join(chunks))
    except (pickle.UnpicklingError, EOFError):
        return f"crash: exit status {status}"


def evaluate(mutant_id: str, deps: Dependencies, checks: tuple[str, ...], root: Path,
             equivalent: dict[str, str], timeout_s: float = 300.0) -> Verdict:
    """Plant one mutant and run the chosen checks that can see it, in order, until one fails."""
    start = time.perf_counter()
    function, *_ = mutation.parse_id(mutant_id)
    chapter = mutation.MODULE_CHAPTERS[function.split(":")[0].removeprefix(SPEC_PREFIX)]
    try:
        v = Verdict(mutant_id, function, chapter, mutation.mutant_sha(mutant_id))
        if not mutation.is_constant(mutant_id):
            fn, site = mutation.find(mutant_id)
            if mutation.equivalent_by_code(fn, mutation.mutant_code(fn, site)):
                v.equivalent = SAME_BYTECODE
    except patch.PatchError as e:
        return Verdict(mutant_id, function, chapter, "", error=str(e))
    if not v.equivalent and mutant_id in equivalent:
        v.equivalent = equivalent[mutant_id]
    if v.equivalent:
        return v
    v.checks, v.checks_digest = list(checks), runner.source_digest()
    for stage in checks:
        if stage == "tests":
            found = _tests(deps, mutant_id, timeout_s, v.ran)
        else:
            def work(stage=stage):
                ran: dict[str, int] = {}
                with mutation.planted(mutant_id):
                    hit = _prove(deps, mutant_id, root, ran) if stage == "prove" \
                        else _vectors(deps, mutant_id, ran)
                return json.dumps([hit, ran])

            answer = _in_child(work, timeout_s)
            found, ran = (json.loads(answer) if answer and answer.startswith("[")
                          else (f"{stage}:{answer}", {}))
            v.ran.update(ran)
        if found:
            v.stage, v.killed_by = stage, found
            break
    v.seconds = round(time.perf_counter() - start, 3)
    return v


def planted_from_environment() -> contextlib.AbstractContextManager:
    """The mutant named by $CRUCIBLE_SPEC_MUTANT, planted while the context is open (the
    pytest plugin holds it open for the whole session of the selected tests)."""
    mutant_id = os.environ.get("CRUCIBLE_SPEC_MUTANT")
    return mutation.planted(mutant_id) if mutant_id else contextlib.nullcontext()


def load_equivalent(path: Path) -> dict[str, str]:
    """Mutant id -> why it is equivalent, from the tab-separated list."""
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                mutant_id, _, reason = line.partition("\t")
                out[mutant_id] = reason.strip()
    return out
