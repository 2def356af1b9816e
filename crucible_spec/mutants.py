"""Which checks kill a mutant of the spec: the proof obligations (`prove`), the conformance
vectors checked against the reference (`vectors`) and the test suite (`tests`).

Each check runs only where it can see the mutated function: a one-time traced run of every
obligation, every op's vectors and every test records which spec functions each calls
(`Dependencies`). A mutant is then planted in a forked child and the checks that call its
function run in order until one fails; a crash or a hang under the mutant is a kill too."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
import types
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .proofs import mutation, patch, runner
from .spec.registry import REGISTRY

CHECKS = ("prove", "vectors", "tests")
SPEC_PREFIX = "crucible_spec.spec."
REPO = Path(__file__).resolve().parent.parent


@dataclass
class Dependencies:
    """function (module:qualname) -> the obligations, ops (vectors) and tests that call it;
    `failing` lists the checks that fail without any mutant (never counted as kills) and
    `seconds` what each obligation took, so the cheap ones run first."""

    digest: str
    obligations: dict[str, list[str]] = field(default_factory=dict)
    ops: dict[str, list[str]] = field(default_factory=dict)
    tests: dict[str, list[str]] = field(default_factory=dict)
    failing: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), sort_keys=True))
        os.replace(tmp, path)

    @staticmethod
    def load(path: Path) -> Dependencies | None:
        try:
            return Dependencies(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            return None


def code_name(code: types.CodeType) -> str | None:
    """module:qualname of a spec function's code object, else None."""
    path = Path(code.co_filename)
    if path.parent != mutation.SPEC_DIR:
        return None
    return f"{SPEC_PREFIX}{path.stem}:{code.co_qualname}"


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


def _invert(by_check: dict[str, set[str]]) -> dict[str, list[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for check, names in by_check.items():
        for name in names:
            out[name].add(check)
    return {k: sorted(v) for k, v in sorted(out.items())}


def trace_obligations(settings: runner.Settings, progress: Callable[[str], None]
                      ) -> tuple[dict[str, set[str]], list[str], dict[str, float]]:
    """Run every obligation once (no cache), recording the spec functions each calls and
    its time."""
    by_po, failing, seconds = {}, [], {}
    for i, po_id in enumerate(sorted(REGISTRY.obligations)):
        progress(f"tracing obligations [{i + 1}/{len(REGISTRY.obligations)}] {po_id}")
        with calls() as found:
            out = runner.check_obligation(REGISTRY.obligations[po_id], None, settings)
        by_po[po_id], seconds[po_id] = found, out.seconds
        if out.status != runner.PROVED:
            failing.append(f"prove:{po_id}")
    return by_po, failing, seconds


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
    from .spec.errata import profile_errata

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


def trace_vectors(progress: Callable[[str], None]) -> tuple[dict[str, set[str]], list[str]]:
    by_op: dict[str, set[str]] = defaultdict(set)
    failing = []
    cases = vector_cases()
    for i, ((op, profile), items) in enumerate(sorted(cases.items())):
        progress(f"tracing vectors [{i + 1}/{len(cases)}] {op} [{profile}]")
        with calls() as found:
            bad = first_vector_failure(op, profile, items)
        by_op[f"{op}|{profile}"] |= found
        if bad:
            failing.append(f"vectors:{op}|{profile}")
    return by_op, failing


def trace_tests(out: Path, progress: Callable[[str], None], timeout_s: float
                ) -> dict[str, set[str]]:
    """Run the test suite once with the tracing plugin; test node id -> spec functions."""
    progress("tracing the test suite (one full run)")
    env = os.environ | {"CRUCIBLE_SPEC_TRACE_TESTS": str(out)}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "crucible_spec.mutant_plugin",
                    "-x", "--no-header", "-o", "addopts="], cwd=REPO, env=env,
                   timeout=timeout_s, capture_output=True, check=False)
    try:
        return {k: set(v) for k, v in json.loads(out.read_text()).items()}
    except (OSError, ValueError):
        return {}


def build(checks: tuple[str, ...], root: Path, progress: Callable[[str], None],
          tests_timeout_s: float = 3600.0) -> Dependencies:
    """Trace the chosen checks once (cached in `root` by the digest of spec/ and proofs/)."""
    digest = runner.source_digest()
    path = root / "dependencies.json"
    deps = Dependencies.load(path)
    if deps is None or deps.digest != digest:
        deps = Dependencies(digest)
    settings = runner.Settings(root / "cache", use_cache=False)
    if "prove" in checks and not deps.obligations:
        by_po, failing, deps.seconds = trace_obligations(settings, progress)
        deps.obligations, deps.failing = _invert(by_po), sorted({*deps.failing, *failing})
        deps.save(path)
    if "vectors" in checks and not deps.ops:
        by_op, failing = trace_vectors(progress)
        deps.ops, deps.failing = _invert(by_op), sorted({*deps.failing, *failing})
        deps.save(path)
    if "tests" in checks and not deps.tests:
        deps.tests = _invert(trace_tests(root / "tests-trace.json", progress, tests_timeout_s))
        deps.save(path)
    return deps


@dataclass
class Verdict:
    """What happened to one mutant: `killed_by` is the first check that failed under it
    ("prove:PO7.20", "vectors:detector.run[crucible] case 3", "tests:tests/x.py::t"), with
    `stage` its kind; `equivalent` gives the reason when it is not a bug at all; `checks`
    are the kinds of check it went through."""

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

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        if self.equivalent:
            return "equivalent"
        return f"killed:{self.stage}" if self.stage else "survived"


def _callers(table: dict[str, list[str]], mutant_id: str) -> list[str]:
    """The checks of `table` that call a function the mutant changes."""
    return sorted({c for f in mutation.mutated_functions(mutant_id) for c in table.get(f, [])})


def _prove(deps: Dependencies, mutant_id: str, root: Path, ran: dict[str, int]) -> str | None:
    settings = runner.Settings(root / "cache", use_cache=True, variant=mutant_id)
    for po_id in sorted(_callers(deps.obligations, mutant_id),
                        key=lambda i: (deps.seconds.get(i, 0.0), i)):
        if f"prove:{po_id}" in deps.failing:
            continue
        ran["prove"] = ran.get("prove", 0) + 1
        if runner.check_obligation(REGISTRY.obligations[po_id], None, settings).status \
                != runner.PROVED:
            return f"prove:{po_id}"
    return None


def _vectors(deps: Dependencies, mutant_id: str, ran: dict[str, int]) -> str | None:
    cases = vector_cases()
    for key in _callers(deps.ops, mutant_id):
        if f"vectors:{key}" in deps.failing:
            continue
        op, profile = key.split("|")
        ran["vectors"] = ran.get("vectors", 0) + 1
        bad = first_vector_failure(op, profile, cases[(op, profile)])
        if bad:
            return f"vectors:{bad}"
    return None


def _tests(deps: Dependencies, mutant_id: str, timeout_s: float, ran: dict[str, int]
           ) -> str | None:
    nodes = _callers(deps.tests, mutant_id)
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
    chapter = mutation.MODULE_CHAPTERS[function.split(":")[0].rsplit(".", 1)[1]]
    try:
        v = Verdict(mutant_id, function, chapter, mutation.mutant_sha(mutant_id))
        if not mutation.is_constant(mutant_id):
            fn, site = mutation.find(mutant_id)
            if mutation.equivalent_by_code(fn, mutation.mutant_code(fn, site)):
                v.equivalent = "compiles to the same bytecode"
    except patch.PatchError as e:
        return Verdict(mutant_id, function, chapter, "", error=str(e))
    if not v.equivalent and mutant_id in equivalent:
        v.equivalent = equivalent[mutant_id]
    if v.equivalent:
        return v
    v.checks = list(checks)
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
