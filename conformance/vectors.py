"""Conformance vectors: `conformance/vectors/<profile>/<chapter>/<op>.jsonl` plus a manifest.

One case per line, keys sorted: {"args", "result", "source"} or {"args", "error", "source"}.
Sources, in this order in each file: the real Crucible's golden values, the witnesses of the
errata that reach the op (the same args under every profile, so the suites tell the profiles
apart), hand-picked edge cases (the op's `edges`), invalid inputs with their error code, and
cases drawn from the op's domain by hypothesis with a seed derived from the op name.
Generation is deterministic: two runs give byte-identical files (with one hypothesis version).
Every registered op gets a file.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from unittest.mock import patch

import hypothesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from .. import SPEC_VERSION
from ..engine import Implementation
from ..spec.core.errata import profile_errata, profiles, result_witnesses
from ..spec.core.errors import SpecError
from ..spec.core.registry import REGISTRY, InvalidCase, Op, po_sort_key
from . import golden

VECTORS_DIR = Path(__file__).parent / "vectors"
GENERATED_PER_OP = 32
INVALID_PER_CASE = 3
MANIFEST = "manifest.json"


_LINE_BREAKS = {c: f"\\u{c:04x}" for c in (0x85, 0x2028, 0x2029)}
"""Characters JSON may leave raw in a string but line readers (Python's splitlines among them)
take for line ends: escaped, so every vector stays one line."""


@dataclass(frozen=True)
class Case:
    """One vector: wire args and the expected result or error code, with its source."""

    args: dict
    source: str
    result: dict | None = None
    error: str | None = None

    def to_line(self) -> str:
        body = {"args": self.args, "source": self.source}
        body |= {"error": self.error} if self.error else {"result": self.result}
        line = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return line.translate(_LINE_BREAKS)

    @staticmethod
    def from_line(line: str) -> Case:
        d = json.loads(line)
        return Case(d["args"], d.get("source", ""), d.get("result"), d.get("error"))


def vector_profiles() -> list[str]:
    """The default profile, and every profile that turns on at least one erratum."""
    return [name for name, errata in profiles().items() if name == "crucible" or errata]


@contextmanager
def _only_global_constants() -> Iterator[None]:
    """Hypothesis biases draws towards string and number constants found in the modules that
    happen to be loaded; switch that off so a draw depends on the strategy and seed alone."""
    from hypothesis.internal.conjecture import providers

    if not hasattr(providers, "_get_local_constants"):
        yield
        return
    with patch.object(providers, "_get_local_constants", providers.Constants), \
            patch.object(providers, "CONSTANTS_CACHE", {}):
        yield


def draw(strategy: st.SearchStrategy, n: int, key: str) -> list:
    """n examples of `strategy`, the same on every run: hypothesis seeded from `key`, with no
    constants taken from the loaded modules."""
    out: list = []

    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @seed(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little"))
    @given(strategy)
    def collect(x):
        out.append(x)

    with _only_global_constants():
        collect()
    return out[:n]


def expected(impl: Implementation, op: Op, args: dict, source: str) -> Case:
    """The reference's answer for wire args `args`, as a case."""
    try:
        return Case(args, source, result=impl.call(op.name, args))
    except SpecError as e:
        return Case(args, source, error=e.code)


def _golden_cases(impl: Implementation, op: Op, profile: str) -> list[Case]:
    out = []
    for g in golden.cases():
        if g.op != op.name:
            continue
        case = expected(impl, op, g.args, golden.PROVENANCE)
        if case.result != g.result:
            if profile == golden.PROFILE:
                raise AssertionError(f"reference disagrees with the real code: {g.op} {g.args}")
            case = Case(g.args, f"{golden.PROVENANCE} args; result amended by "
                                f"{', '.join(REGISTRY.errata_for(op.name))}", case.result)
        out.append(case)
    if op.name == "layout.decode":
        out += [expected(impl, op, {"struct": s, "hex": h}, f"{golden.PROVENANCE} image")
                for s, h, _ in golden.raw_images()]
    return out


def witness_args(op: Op) -> list[tuple[str, dict]]:
    """(erratum id, args) of every result witness on `op`, in erratum order."""
    errata = sorted(REGISTRY.errata.values(), key=lambda e: po_sort_key(e.id))
    return [(e.id, w["args"]) for e in errata for name, w in result_witnesses(e)
            if name == op.name]


def case_args(op: Op, per_op: int = GENERATED_PER_OP
              ) -> Iterator[tuple[str, dict, InvalidCase | None]]:
    """(source, wire args, the invalid family or None) of every vector of `op` but the golden
    values, in file order: erratum witnesses, edges, invalid draws, domain draws."""
    for eid, a in witness_args(op):
        yield f"erratum {eid}", a, None
    for a in op.edges() if op.edges else []:
        yield "edge", a, None
    for inv in op.invalid:
        for a in draw(inv.args(), INVALID_PER_CASE, f"{op.name}/invalid/{inv.description}"):
            yield f"invalid: {inv.description}", a, inv
    for a in draw(op.strategy(), per_op, f"{op.name}/domain"):
        yield "generated", op.args.encode(a), None


def unique(cases: list[Case]) -> list[Case]:
    """`cases` without repeated args (the first source wins)."""
    seen, out = set(), []
    for c in cases:
        key = json.dumps(c.args, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _checked_invalid(impl: Implementation, op: Op, case: Case, inv: InvalidCase) -> Case:
    """An invalid draw's case: the declared code, or a result an erratum of the profile allows."""
    amending = sorted(set(REGISTRY.errata_for(op.name)) & impl.errata)
    if case.error != inv.code and not (amending and case.error is None):
        raise AssertionError(f"{op.name}: declared invalid case answered {case}")
    if case.error is None:
        return Case(case.args, f"{case.source}; answered under {', '.join(amending)}",
                    case.result)
    return case


def op_cases(op: Op, profile: str, per_op: int = GENERATED_PER_OP) -> list[Case]:
    """Every vector of `op` under `profile`, deduplicated by args (first source wins)."""
    impl = Implementation("reference", profile_errata(profile))
    cases = _golden_cases(impl, op, profile)
    for source, a, inv in case_args(op, per_op):
        case = expected(impl, op, a, source)
        cases.append(_checked_invalid(impl, op, case, inv) if inv else case)
    return unique(cases)


def op_path(op: Op) -> str:
    return f"{op.chapter}/{op.name}.jsonl"


def generate(root: Path, profile: str, per_op: int = GENERATED_PER_OP,
             progress: Callable[[str], None] | None = None) -> dict:
    """Write every op's vectors for `profile` under root/profile, and its manifest. Vector
    files no op writes are deleted only from a directory this run creates or one holding a
    manifest (a suite of ours); elsewhere they are kept (see `unlisted`)."""
    base = root / profile
    owned = not base.exists() or (base / MANIFEST).is_file()
    files = {}
    for name in sorted(REGISTRY.ops):
        op = REGISTRY.ops[name]
        if progress:
            progress(f"{profile} {name}")
        cases = op_cases(op, profile, per_op)
        text = "".join(c.to_line() + "\n" for c in cases).encode()
        path = base / op_path(op)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text)
        files[op_path(op)] = {
            "op": name, "chapter": op.chapter, "count": len(cases),
            "sha256": hashlib.sha256(text).hexdigest(),
            "provenance": dict(sorted(Counter(source_family(c.source) for c in cases).items())),
        }
    if owned:
        for stale in unlisted(base, files):
            stale.unlink()
    manifest = {
        "spec_version": SPEC_VERSION, "profile": profile,
        "errata": sorted(profile_errata(profile)),
        "generator": {"hypothesis": hypothesis.__version__, "generated_per_op": per_op,
                      "invalid_per_case": INVALID_PER_CASE,
                      "seed": "sha256 of '<op>/domain' or '<op>/invalid/<case>'"},
        "files": files,
    }
    (base / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def unlisted(base: Path, files: dict) -> list[Path]:
    """Vector-like files (<chapter>/<op>.jsonl) under base that `files` does not list."""
    return [p for p in sorted(base.glob("*/*.jsonl")) if str(p.relative_to(base)) not in files]


def source_family(source: str) -> str:
    if source.startswith(("invalid:", "erratum ")):
        return source.split(":")[0].split(" ")[0]
    return source


def manifest_sha256(root: Path, profile: str) -> str:
    return hashlib.sha256((root / profile / MANIFEST).read_bytes()).hexdigest()


def load_manifest(root: Path, profile: str) -> dict:
    path = root / profile / MANIFEST
    if not path.exists():
        raise FileNotFoundError(f"no vectors for profile {profile!r} at {path} (run "
                                f"'crucible-spec vectors generate')")
    return json.loads(path.read_text())


def load(root: Path, profile: str) -> dict[str, list[Case]]:
    """op -> cases, for every file the manifest of `profile` lists."""
    manifest = load_manifest(root, profile)
    return {info["op"]: [Case.from_line(x) for x in case_lines((root / profile / rel).read_bytes())]
            for rel, info in sorted(manifest["files"].items())}


def case_lines(data: bytes) -> list[str]:
    """The case lines of a file: split at newlines only (a name may hold U+2028)."""
    return [x for x in data.decode("utf-8").split("\n") if x]


def verify(root: Path, profile: str) -> list[str]:
    """Problems with the suite of `profile`: files against the manifest, every case against the
    reference, and every registered op present. Empty when all is well."""
    try:
        manifest = load_manifest(root, profile)
    except FileNotFoundError as e:
        return [str(e)]
    problems = []
    base = root / profile
    listed = set(manifest["files"])
    for path in sorted(base.glob("*/*.jsonl")):
        if str(path.relative_to(base)) not in listed:
            problems.append(f"{path}: not in the manifest")
    impl = Implementation("reference", profile_errata(profile))
    for rel, info in sorted(manifest["files"].items()):
        path = base / rel
        if not path.exists():
            problems.append(f"{path}: listed in the manifest but missing")
            continue
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != info["sha256"]:
            problems.append(f"{path}: sha256 differs from the manifest")
        lines = case_lines(data)
        if len(lines) != info["count"]:
            problems.append(f"{path}: {len(lines)} cases, the manifest says {info['count']}")
        op = REGISTRY.ops.get(info["op"])
        if op is None:
            problems.append(f"{path}: op {info['op']!r} is not registered")
            continue
        for i, line in enumerate(lines):
            try:
                case = Case.from_line(line)
            except (ValueError, KeyError) as e:
                problems.append(f"{path}:{i + 1}: not a case: {e}")
                continue
            again = expected(impl, op, case.args, case.source)
            if (again.result, again.error) != (case.result, case.error):
                problems.append(f"{path}:{i + 1}: the reference now answers "
                                f"{again.error or again.result}")
    for name, op in sorted(REGISTRY.ops.items()):
        if op_path(op) not in listed:
            problems.append(f"{profile}: op {name} has no vectors (regenerate)")
    return problems
