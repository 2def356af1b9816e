"""Real-code vectors: `conformance/real-vectors/<profile>/<chapter>/<op>.jsonl`, answered by a
seed's real code at the profile's commit, plus a manifest of their provenance. Each file is
stored xz-compressed (`<op>.jsonl.xz`); the manifest's digests, counts and case ids are those
of the uncompressed file, which every reader sees.

A case line has the shape of the bundled vectors ({"args", "result"|"error", "source"}); its
answer came from the real code through a wire adapter, never from the spec. Filling:

1. The cases of an op are the bundled suite's own (`vectors.case_args`: erratum witnesses,
   edges, invalid draws, then `per_op` seeded draws from the op's domain), deduplicated.
2. Each is sent, alone, to the adapter; an `unsupported` or `resource_limit` answer leaves the
   case out (counted, with the adapter's reason), and so does a crash or hang (counted, with
   the failure).
3. The answers are written in case order; the manifest records the seed's build (the adapter's
   hello: `impl`, `build`), the generator and, per op, the counts and the command.

Checking (`check`): the faithful profile of every backend answers each case exactly as the real
code did. Explaining (`explain`): each case where the default profile disagrees with the real
code is the work of an erratum of the profile on that op (turning it off alone changes the
faithful answer); a case no erratum explains is a divergence nobody has written down.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import hypothesis

from .. import SPEC_VERSION
from ..engine import Implementation
from ..spec.core.errata import NO_ERRATA, profile_errata
from ..spec.core.errors import RESOURCE_LIMIT, UNSUPPORTED, SpecError
from ..spec.core.registry import REGISTRY, Op
from . import golden
from .client import OK, Client
from .diff import Difference, compare
from .vector_store import MANIFEST, PACKED, case_lines, compressed, read_bytes, source_family
from .vectors import INVALID_PER_CASE, Case, case_args, op_path, unique

REAL_DIR = Path(__file__).parent / "real-vectors"
REAL_PER_OP = 300
BACKENDS = ("reference", "numba", "cupy")


@dataclass
class Filled:
    """One op's real answers, and the cases the real code did not answer."""

    op: Op
    cases: list[Case] = field(default_factory=list)
    unsupported: Counter = field(default_factory=Counter)
    failed: Counter = field(default_factory=Counter)


def candidate_cases(op: Op, per_op: int = REAL_PER_OP) -> list[Case]:
    """The args to ask the real code, each with its source (no answer yet), deduplicated."""
    cases = [Case(g.args, golden.PROVENANCE) for g in golden.cases() if g.op == op.name]
    cases += [Case(a, source) for source, a, _ in case_args(op, per_op)]
    return unique(cases)


def ask(client: Client, op: Op, case: Case, rid: int) -> tuple[str, Case | str]:
    """The real code's answer to one case: ('ok', the answered case), ('unsupported', why) or
    (a failure kind, its detail)."""
    reply = client.request(rid, op.name, case.args)
    if reply.kind != OK:
        return reply.kind, reply.detail
    resp = reply.response
    if resp.get("ok") is True and "result" in resp:
        return OK, Case(case.args, case.source, result=resp["result"])
    error = resp.get("error") if isinstance(resp.get("error"), dict) else {}
    code = error.get("code")
    if code in (UNSUPPORTED, RESOURCE_LIMIT):
        prefix = "resource_limit: " if code == RESOURCE_LIMIT else ""
        return UNSUPPORTED, prefix + str(error.get("message", ""))[:200]
    if not isinstance(code, str):
        return "garbage", f"neither a result nor an error code: {json.dumps(resp)[:200]}"
    return OK, Case(case.args, case.source, error=code)


def fill_op(client: Client, op: Op, per_op: int = REAL_PER_OP,
            progress: Callable[[str], None] | None = None) -> Filled:
    """Every candidate case of `op`, answered by the real code (module docstring, 2)."""
    out = Filled(op)
    for rid, case in enumerate(candidate_cases(op, per_op), start=1):
        kind, answer = ask(client, op, case, rid)
        if kind == OK:
            out.cases.append(answer)
        elif kind == UNSUPPORTED:
            out.unsupported[answer] += 1
        else:
            out.failed[f"{kind}: {answer}"[:300]] += 1
        if progress and rid % 50 == 0:
            progress(f"{op.name} {rid}")
    return out


def write(root: Path, profile: str, filled: list[Filled], seed: dict, command: str,
          per_op: int) -> dict:
    """Write each op's answered cases and the manifest under root/profile (the ops of an
    earlier fill not filled again are kept); return the manifest."""
    base = root / profile
    old = json.loads((base / MANIFEST).read_text()) if (base / MANIFEST).is_file() else {}
    files = dict(old.get("files", {}))
    for f in filled:
        text = "".join(c.to_line() + "\n" for c in f.cases).encode()
        path = base / op_path(f.op)
        packed = path.with_name(path.name + PACKED)
        path.unlink(missing_ok=True)
        if f.cases:
            packed.parent.mkdir(parents=True, exist_ok=True)
            packed.write_bytes(compressed(text))
        else:
            packed.unlink(missing_ok=True)
        files[op_path(f.op)] = {
            "op": f.op.name, "chapter": f.op.chapter, "count": len(f.cases),
            "sha256": hashlib.sha256(text).hexdigest(),
            "sources": dict(sorted(Counter(source_family(c.source) for c in f.cases).items())),
            "unsupported": dict(sorted(f.unsupported.items())),
            "failed": dict(sorted(f.failed.items())),
            "command": command, "generated_per_op": per_op,
        }
    manifest = {
        "profile": profile, "seed": seed, "spec_version": SPEC_VERSION,
        "generator": {"hypothesis": hypothesis.__version__, "invalid_per_case": INVALID_PER_CASE,
                      "seed": "sha256 of '<op>/domain' or '<op>/invalid/<case>'"},
        "files": dict(sorted(files.items())),
    }
    base.mkdir(parents=True, exist_ok=True)
    (base / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def real_profiles(root: Path = REAL_DIR) -> list[str]:
    """The profiles that have real-code vectors under root."""
    return sorted(p.parent.name for p in root.glob(f"*/{MANIFEST}"))


@dataclass(frozen=True)
class RealCase:
    """A real-code case with its stable id (`<profile>/<chapter>/<op>.jsonl:<line>`)."""

    id: str
    op: Op
    case: Case


def load(profile: str, root: Path = REAL_DIR) -> list[RealCase]:
    """Every case of `profile`'s real vectors, checked against the manifest's digests."""
    base = root / profile
    manifest = json.loads((base / MANIFEST).read_text())
    out = []
    for rel, info in sorted(manifest["files"].items()):
        if not info["count"]:
            continue
        data = read_bytes(base / rel)
        if hashlib.sha256(data).hexdigest() != info["sha256"]:
            raise ValueError(f"{base / rel}: sha256 differs from the manifest")
        op = REGISTRY.ops[info["op"]]
        out += [RealCase(f"{profile}/{rel}:{i}", op, Case.from_line(line))
                for i, line in enumerate(case_lines(data), start=1)]
    return out


def response(impl: Implementation, op: Op, args: dict) -> dict:
    """What `impl` answers on the wire for args (the shape `diff.compare` reads)."""
    try:
        return {"ok": True, "result": impl.call(op.name, args)}
    except SpecError as e:
        return {"ok": False, "error": {"code": e.code, "message": str(e)}}


def difference(impl: Implementation, rc: RealCase) -> Difference | None:
    """How `impl`'s answer to a real case differs from the real code's (None: it agrees)."""
    c = rc.case
    return compare(rc.op, c.args, c.result, c.error, response(impl, rc.op, c.args))


@dataclass(frozen=True)
class Mismatch:
    """A real case a profile answers otherwise, with its first difference and the errata that
    explain it (`unlisted`: errata that do, though they do not list the case's op)."""

    id: str
    difference: Difference
    explained_by: tuple[str, ...] = ()
    unlisted: tuple[str, ...] = ()

    def describe(self) -> str:
        d = self.difference
        why = f" (erratum {', '.join(self.explained_by)})" if self.explained_by else ""
        if self.unlisted:
            why = f" (explained by {', '.join(self.unlisted)}, which do not list this op)"
        return f"{self.id}: {d.path}: real {d.expected!r}, spec {d.got!r}{why}"


def check(profile: str, backend: str = "reference", root: Path = REAL_DIR,
          errata: frozenset[str] | None = None, ops: set[str] | None = None) -> list[Mismatch]:
    """The real cases (of `ops`, or all) that `backend` under the profile's errata (or
    `errata`) answers otherwise than the real code did."""
    impl = Implementation(backend, profile_errata(profile) if errata is None else errata)
    return [Mismatch(rc.id, d) for rc in load(profile, root)
            if (ops is None or rc.op.name in ops) and (d := difference(impl, rc)) is not None]


def explain(profile: str, root: Path = REAL_DIR) -> tuple[list[Mismatch], list[Mismatch]]:
    """(explained, unexplained): the real cases the default profile answers otherwise. A case
    is explained by the errata of the profile listing its op: those whose removal alone changes
    the faithful answer, or, where several each suffice, all of them removed together. One
    explained only by errata that do not list its op is unexplained, and names them."""
    errata = profile_errata(profile)
    default = Implementation("reference", NO_ERRATA)
    explained, unexplained = [], []
    for rc in load(profile, root):
        d = difference(default, rc)
        if d is None:
            continue
        listed = errata & set(REGISTRY.errata_for(rc.op.name))
        by = _responsible(errata, sorted(listed), rc)
        if by:
            explained.append(Mismatch(rc.id, d, by))
        else:
            unlisted = _responsible(errata, sorted(errata - listed), rc)
            unexplained.append(Mismatch(rc.id, d, (), unlisted))
    return explained, unexplained


def _responsible(errata: frozenset[str], ids: list[str], rc: RealCase) -> tuple[str, ...]:
    """The errata among `ids` that make the faithful answer to `rc`: each whose removal alone
    changes it, else all of them if removing them together does, else none."""
    alone = tuple(e for e in ids if _departs(errata - {e}, rc))
    if alone:
        return alone
    return tuple(ids) if ids and _departs(errata - set(ids), rc) else ()


@lru_cache(maxsize=64)
def _implementation(errata: frozenset[str]) -> Implementation:
    return Implementation("reference", errata)


def _departs(errata: frozenset[str], rc: RealCase) -> bool:
    """Whether the reference under `errata` answers `rc` otherwise than the real code did."""
    return difference(_implementation(errata), rc) is not None
