"""The wire contract as files: `conformance/schemas/<op>.json` holds each op's args and result
JSON Schema (spec/core/json_schema.py), `protocol.json` the envelopes every op shares, the
batch form's included (protocol.py), and `index.json` lists the ops with their files and names
the protocol's. They are generated from the registry (`crucible-spec ops --schemas`);
`crucible-spec ops --check` fails when they are stale."""

from __future__ import annotations

import json
from pathlib import Path

from ..spec.core.json_schema import DIALECT, all_schemas
from .protocol import PROTOCOL_FILE, protocol_schema

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
INDEX = "index.json"


def _text(value: object) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def rendered() -> dict[str, str]:
    """File name -> text of every schema file, the index included."""
    files = {f"{s['op']}.json": _text(s) for s in all_schemas()}
    index = {"$schema": DIALECT, "description": "crucible-spec wire ops: name -> schema file "
             "(args and result JSON Schema, draft 2020-12); protocol: the file of the "
             "request and response envelopes, the batch form's included",
             "ops": {name[:-5]: name for name in sorted(files)}, "protocol": PROTOCOL_FILE}
    return files | {INDEX: _text(index), PROTOCOL_FILE: _text(protocol_schema())}


def stale(directory: Path = SCHEMA_DIR) -> list[str]:
    """Names of the files that are missing, different or left over in `directory`."""
    want = rendered()
    have = {p.name for p in directory.glob("*.json")} if directory.is_dir() else set()
    wrong = [n for n, text in want.items()
             if n not in have or (directory / n).read_text(encoding="utf-8") != text]
    return sorted(wrong + sorted(have - set(want)))


def write(directory: Path = SCHEMA_DIR) -> list[str]:
    """Bring `directory` up to date; the names of the files written or removed."""
    directory.mkdir(parents=True, exist_ok=True)
    changed = stale(directory)
    want = rendered()
    for name in changed:
        if name in want:
            (directory / name).write_text(want[name], encoding="utf-8")
        else:
            (directory / name).unlink()
    return changed
