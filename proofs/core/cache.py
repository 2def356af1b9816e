"""Result cache for z3 queries, keyed by the sha256 of the exact query (its canonical SMT-LIB
text, the expected answer and the z3 version). Only definite answers are stored, never
'unknown'."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

DEFAULT_DIR = Path(".crucible-spec") / "cache" / "proofs"


def cache_dir(explicit: str | None = None) -> Path:
    """--cache DIR, else $CRUCIBLE_SPEC_CACHE, else .crucible-spec/cache/proofs."""
    return Path(explicit or os.environ.get("CRUCIBLE_SPEC_CACHE") or DEFAULT_DIR)


def query_key(smt2: str, expect: str, z3_version: str) -> str:
    return hashlib.sha256(f"{z3_version}\n{expect}\n{smt2}".encode()).hexdigest()


def load(root: Path, key: str) -> dict | None:
    path = root / key[:2] / f"{key}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def store(root: Path, key: str, entry: dict) -> None:
    """Write atomically, so parallel workers never see a half-written entry."""
    path = root / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entry, sort_keys=True))
    os.replace(tmp, path)
