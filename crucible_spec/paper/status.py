"""The proof status the paper prints: a snapshot of a `prove` report, kept in `papers/`, so
the paper is the same on every checkout and changes only when the snapshot is refreshed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..spec.core.registry import REGISTRY, po_sort_key

STATUS_FILE = "prove-status.json"


@dataclass
class ProveStatus:
    """Per obligation: the verdict and seconds of its last recorded run."""

    z3_version: str = ""
    results: dict[str, dict] = field(default_factory=dict)

    def shown(self, ident: str) -> tuple[str, str]:
        r = self.results.get(ident)
        if r is None:
            return "not in the recorded run", ""
        return r["status"], f"{r['seconds']:.2f}"

    def merged(self, report: dict) -> ProveStatus:
        """This snapshot with a prove report's verdicts laid over it; obligations no longer
        registered are dropped."""
        results = dict(self.results)
        for r in report.get("results", []):
            if r.get("mutant") is None:
                results[r["id"]] = {"status": r["status"], "seconds": round(r["seconds"], 2)}
        keep = {k: results[k] for k in sorted(results, key=po_sort_key)
                if k in REGISTRY.obligations}
        return ProveStatus(report.get("z3_version", self.z3_version), keep)

    def to_json(self) -> str:
        return json.dumps({"z3_version": self.z3_version, "obligations": self.results},
                          indent=1, sort_keys=False) + "\n"


def read_status(papers: Path) -> ProveStatus:
    """The snapshot in `papers/`, or an empty one."""
    path = papers / STATUS_FILE
    if not path.exists():
        return ProveStatus()
    data = json.loads(path.read_text())
    return ProveStatus(data.get("z3_version", ""), data.get("obligations", {}))
