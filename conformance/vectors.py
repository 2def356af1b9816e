"""Conformance vectors: a suite per profile, `<profile>/<chapter>/<op>.jsonl` plus a manifest,
stored under `conformance/vectors/` as the default profile's suite and an overlay per other
profile (`vector_store`); `load` and `export` give a profile's complete suite.

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from unittest.mock import patch

import hypothesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from .. import SPEC_VERSION
from ..engine import Implementation, errata_seen
from ..spec.core.errata import profile_errata, profiles, result_witnesses
from ..spec.core.errors import SpecError
from ..spec.core.optional import MissingPackage
from ..spec.core.registry import REGISTRY, InvalidCase, Op, po_sort_key
from . import golden, vector_store
from .vector_store import (
    BASE_PROFILE,
    MANIFEST,
    Suite,
    case_lines,
    file_entry,
    manifest_text,
    unlisted,
)

VECTORS_DIR = Path(__file__).parent / "vectors"
GENERATED_PER_OP = 32
INVALID_PER_CASE = 3


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
    return [name for name, errata in profiles().items() if name == BASE_PROFILE or errata]


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
    """The reference's answer for wire args `args`, as a case (never `unsupported` for a
    package missing here: MissingPackage ends the run)."""
    try:
        return Case(args, source, result=impl.call(op.name, args))
    except MissingPackage:
        raise
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


def suite(profile: str, per_op: int = GENERATED_PER_OP,
          progress: Callable[[str], None] | None = None) -> Suite:
    """Every op's vectors for `profile`, complete, with its manifest (nothing written)."""
    files, entries = {}, {}
    for name in sorted(REGISTRY.ops):
        op = REGISTRY.ops[name]
        if progress:
            progress(f"{profile} {name}")
        text = "".join(c.to_line() + "\n" for c in op_cases(op, profile, per_op)).encode()
        files[op_path(op)] = text
        entries[op_path(op)] = file_entry(name, op.chapter, text)
    manifest = {
        "spec_version": SPEC_VERSION, "profile": profile,
        "errata": sorted(profile_errata(profile)),
        "generator": {"hypothesis": hypothesis.__version__, "generated_per_op": per_op,
                      "invalid_per_case": INVALID_PER_CASE,
                      "seed": "sha256 of '<op>/domain' or '<op>/invalid/<case>'"},
        "files": entries,
    }
    return Suite(manifest, files)


def generate(root: Path, profile: str, per_op: int = GENERATED_PER_OP,
             progress: Callable[[str], None] | None = None) -> dict:
    """Write `profile`'s vectors under root/profile and return its complete manifest: the
    default profile whole (`vector_store.write_flat`), any other as an overlay on the default
    suite stored at root, generated first where there is none. Other overlays stored at root
    are rewritten against a new default suite, their complete suites unchanged; one that
    lacks an op the new default has (a new op), or no longer reads (made against another
    default), is generated afresh. Vector files no op writes are deleted only from a
    directory this run creates or one holding a manifest (a suite of ours); elsewhere they
    are kept (see `unlisted`)."""
    if profile != BASE_PROFILE and not (root / BASE_PROFILE / MANIFEST).is_file():
        generate(root, BASE_PROFILE, per_op, progress)
    made = suite(profile, per_op, progress)
    if profile != BASE_PROFILE:
        vector_store.write_overlay(root, made, vector_store.read(root, BASE_PROFILE))
        return made.manifest
    others, afresh = [], []
    for p in vector_store.stored_profiles(root):
        if vector_store.is_overlay(root, p):
            other = _readable(root, p)
            if other is None or set(made.files) - set(other.files):
                afresh.append(p)
            else:
                others.append(other)
    base = root / profile
    owned = not base.exists() or (base / MANIFEST).is_file()
    vector_store.write_flat(root, made)
    if owned:
        for old in unlisted(base, made.files):
            old.unlink()
    for other in others:
        vector_store.write_overlay(root, other, made)
    for p in afresh:
        generate(root, p, per_op, progress)
    return made.manifest


def _readable(root: Path, profile: str) -> Suite | None:
    """`profile`'s complete suite, or None where its overlay no longer reads."""
    try:
        return vector_store.read(root, profile)
    except ValueError:
        return None


def export(root: Path, profile: str, out: Path,
           write: vector_store.Writer = Path.write_bytes) -> Suite:
    """Write `profile`'s complete suite, flat, under out/<profile> (as generation wrote every
    profile before overlays), each file by `write`; vector files there no op writes are
    removed."""
    complete = vector_store.read(root, profile)
    vector_store.write_flat(out, complete, write)
    for old in unlisted(out / profile, complete.files):
        old.unlink()
    return complete


def manifest_sha256(root: Path, profile: str) -> str:
    """The sha256 of `profile`'s complete manifest (its exported manifest.json)."""
    return hashlib.sha256(manifest_text(load_manifest(root, profile))).hexdigest()


def load_manifest(root: Path, profile: str) -> dict:
    """`profile`'s complete manifest (rebuilt from the overlay where it has one)."""
    if vector_store.is_overlay(root, profile):
        return vector_store.read(root, profile).manifest
    return vector_store.read_manifest(root, profile)


def load(root: Path, profile: str) -> dict[str, list[Case]]:
    """op -> cases, for every file of the complete suite of `profile`."""
    complete = vector_store.read(root, profile)
    return {complete.manifest["files"][rel]["op"]: [Case.from_line(x) for x in case_lines(data)]
            for rel, data in sorted(complete.files.items())}


def _stored_problems(root: Path, profile: str) -> list[str]:
    """What is wrong with how `profile` is stored: files against the manifest (or the overlay
    against the default suite), files nobody lists. Empty when all is well."""
    base = root / profile
    if not vector_store.is_overlay(root, profile):
        manifest = vector_store.read_manifest(root, profile)
        problems = [f"{p}: not in the manifest" for p in unlisted(base, manifest["files"])]
        for rel, info in sorted(manifest["files"].items()):
            if not (base / rel).exists():
                problems.append(f"{base / rel}: listed in the manifest but missing")
                continue
            data = (base / rel).read_bytes()
            if hashlib.sha256(data).hexdigest() != info["sha256"]:
                problems.append(f"{base / rel}: sha256 differs from the manifest")
            if len(case_lines(data)) != info["count"]:
                problems.append(f"{base / rel}: {len(case_lines(data))} cases, the manifest "
                                f"says {info['count']}")
        return problems
    problems = [f"{p}: not part of the overlay" for p in sorted(base.rglob("*"))
                if p.is_file() and p.name not in (vector_store.OVERLAY, vector_store.OVERLAY_CASES)]
    try:
        vector_store.read(root, profile)
    except (OSError, ValueError) as e:
        problems.append(str(e))
    return problems


def _shared_with_base(root: Path, profile: str) -> set[str]:
    """The files of an overlay profile's suite that are its base's, unchanged (none for a
    whole suite)."""
    if not vector_store.is_overlay(root, profile):
        return set()
    overlay = json.loads((root / profile / vector_store.OVERLAY).read_text())
    return set(vector_store.read_manifest(root, overlay["base"])["files"]) - \
        set(overlay["files"])


def verify(root: Path, profile: str, base_verified: bool = False) -> list[str]:
    """Problems with the suite of `profile`: files against the manifest (an overlay against the
    default suite), every case against the reference, and every registered op present. Empty
    when all is well. With `base_verified` (the default suite is verified too, by the caller),
    an overlay's files it does not list, of ops the reference hands no errata, are left out:
    they are the default's bytes answered by the same call (`errata_seen`)."""
    try:
        stored = vector_store.read_manifest(root, profile)
    except FileNotFoundError as e:
        return [str(e)]
    problems = _stored_problems(root, profile)
    if vector_store.is_overlay(root, profile) and problems:
        return problems
    base = root / profile
    impl = Implementation("reference", profile_errata(profile))
    files = (vector_store.read(root, profile).files if vector_store.is_overlay(root, profile)
             else {rel: (base / rel).read_bytes() for rel in stored["files"]
                   if (base / rel).exists()})
    entries = load_manifest(root, profile)["files"]
    shared = _shared_with_base(root, profile) if base_verified else set()
    for rel, data in sorted(files.items()):
        path, name = base / rel, entries[rel]["op"]
        op = REGISTRY.ops.get(name)
        if op is None:
            problems.append(f"{path}: op {name!r} is not registered")
            continue
        if rel in shared and errata_seen(op, impl.errata) is None:
            continue
        for i, line in enumerate(case_lines(data)):
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
        if op_path(op) not in entries:
            problems.append(f"{profile}: op {name} has no vectors (regenerate)")
    return problems
