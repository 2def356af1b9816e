"""Rendering of `crucible-spec prove` results: the table, the summary and the JSON report."""

from __future__ import annotations

import json
from collections import Counter

from ... import SPEC_VERSION
from ...commands.console import render
from ...commands.console import table as console_table
from .runner import KILLED, PROVED, SKIPPED, Outcome, z3_version

STATEMENT_WIDTH = 72


def _seconds(o: Outcome) -> str:
    return f"{o.seconds:.2f}" + (" cached" if o.cached else "")


def table(outcomes: list[Outcome], mutants: bool) -> str:
    if mutants:
        header = ["id", "mutant", "verdict", "seconds"]
        body = [[o.id, o.mutant or "", o.verdict, _seconds(o)] for o in outcomes]
    else:
        header = ["id", "statement", "result", "seconds"]
        body = [[o.id, _clip(o.statement), _result(o), _seconds(o)] for o in outcomes]
    lines = [render(console_table(header, body, right=("seconds",)))]
    for o in outcomes:
        lines += _details(o)
    return "\n".join(lines)


COUNTED = {"model": "states", "property": "cases", "contract": "iterations"}
"""What a check of each kind counts: states explored, cases tried, crosshair's iterations."""


def _result(o: Outcome) -> str:
    """An obligation's result cell: `proved (N states)`, `skipped: needs egglog`, ..."""
    if o.status == SKIPPED:
        return f"{SKIPPED}: needs {', '.join(o.needs)}"
    if o.states is None:
        return o.status
    return f"{o.status} ({o.states:,} {COUNTED.get(o.kind, 'states')})"


def _clip(text: str) -> str:
    return text if len(text) <= STATEMENT_WIDTH else text[: STATEMENT_WIDTH - 3] + "..."


def _details(o: Outcome) -> list[str]:
    """Why an obligation failed (or a mutant survived): the failing queries and their models."""
    good = KILLED if o.mutant else PROVED
    if o.verdict in (good, SKIPPED):
        return []
    head = f"{o.id}" + (f" [{o.mutant}]" if o.mutant else "") + f": {o.verdict}"
    out = [f"\n{head}", f"  {o.statement}"]
    if o.error:
        out.append(f"  error: {o.error}")
    for q in o.queries:
        if o.mutant or q.status != PROVED:
            out.append(f"  - {q.label}: {q.status}" + (f"\n    model: {q.model}" if q.model
                                                      else ""))
    return out


def summary(outcomes: list[Outcome], mutants: bool, wall: float) -> str:
    counts = Counter(o.verdict for o in outcomes)
    cached = sum(o.cached for o in outcomes)
    order = ["killed", "survived", "unknown", "error"] if mutants else \
        ["proved", "refuted", "unknown", "error"]
    parts = [f"{counts.get(k, 0)} {k}" for k in order]
    if counts.get(SKIPPED):
        needs = sorted({p for o in outcomes for p in o.needs})
        parts.append(f"{counts[SKIPPED]} skipped (needs {', '.join(needs)})")
    return f"{', '.join(parts)} ({cached} cached) in {wall:.1f} s"


MOST_EXPENSIVE = 20


def most_expensive(outcomes: list[Outcome], count: int = MOST_EXPENSIVE) -> list[Outcome]:
    """The `count` outcomes that took longest (ties in id order): where a run's time went."""
    return sorted(outcomes, key=lambda o: (-o.seconds, o.id, o.mutant or ""))[:count]


def expensive_table(outcomes: list[Outcome], count: int = MOST_EXPENSIVE) -> str:
    """The most expensive outcomes, with their kind and share of the summed seconds."""
    total = sum(o.seconds for o in outcomes) or 1.0
    body = [[o.id, o.mutant or "", o.kind, f"{o.seconds:.2f}", f"{100 * o.seconds / total:.1f}%"]
            for o in most_expensive(outcomes, count)]
    header = ["id", "mutant", "kind", "seconds", "share"]
    return render(console_table(header, body, right=("seconds", "share")))


def ok(outcomes: list[Outcome], mutants: bool, require_all: bool = False) -> bool:
    """Every obligation proved (every mutant killed); one skipped for a missing package
    counts as neither, unless `require_all`."""
    allowed = {KILLED if mutants else PROVED} | (set() if require_all else {SKIPPED})
    return all(o.verdict in allowed for o in outcomes)


def report_json(outcomes: list[Outcome], mutants: bool, wall: float, jobs: int,
                require_all: bool = False) -> str:
    """The JSON report of a run: versions, mode, summary and each outcome."""
    report = {
        "spec_version": SPEC_VERSION,
        "z3_version": z3_version(),
        "mode": "mutants" if mutants else "obligations",
        "jobs": jobs,
        "wall_seconds": round(wall, 3),
        "summary": dict(Counter(o.verdict for o in outcomes)),
        "ok": ok(outcomes, mutants, require_all),
        "results": [o.to_json() for o in outcomes],
        "most_expensive": [{"id": o.id, "mutant": o.mutant, "kind": o.kind,
                            "seconds": o.seconds} for o in most_expensive(outcomes)],
    }
    return json.dumps(report, indent=2, sort_keys=True) + "\n"
