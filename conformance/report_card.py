"""The conformance report card: a JSON document (schema: report-card.schema.json) and its text
rendering: the per-op table (chapters in numeric order, unsupported ops folded into one line),
each failure with its case id and the request line that re-runs it, the run's limits and the
closing line in one unit, cases: `N passed, N failed, N skipped, N unsupported, N xfail,
N resource_limit`, then the ops fully supported."""

from __future__ import annotations

from pathlib import Path

from .. import SPEC_VERSION
from ..commands.console import render as render_table
from ..commands.console import table
from ..spec.core.registry import REGISTRY
from .runner import Limits, OpResult

SCHEMA_FILE = Path(__file__).parent / "report-card.schema.json"


def totals(results: list[OpResult]) -> dict[str, int]:
    """Cases by outcome (a fuzz failure counts as one failed case), and ops by support."""
    return {
        "passed": sum(r.passed for r in results if not r.unsupported),
        "failed": sum(r.failed for r in results) + sum(
            1 for r in results if r.fuzz and r.fuzz.get("failure")),
        "skipped": sum(r.skipped for r in results),
        "unsupported": sum(r.cases for r in results if r.unsupported),
        "xfail": sum(r.xfailed for r in results),
        "xpass": sum(r.xpassed for r in results),
        "resource_limit": sum(r.resource_limit + (r.fuzz or {}).get("resource_limit", 0)
                              for r in results),
        "ops": len(results),
        "ops_fully_supported": sum(r.status == "pass" for r in results),
        "ops_fallback": sum(r.status == "fallback" for r in results),
    }


def closing_line(results: list[OpResult]) -> str:
    t = totals(results)
    return (f"{t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped, "
            f"{t['unsupported']} unsupported, {t['xfail']} xfail, "
            f"{t['resource_limit']} resource_limit")


def support_line(results: list[OpResult], greeting: dict | None) -> str:
    """How many ops the implementation fully supports itself, and by its reference fallback;
    and whether a GPU implementation ran without a GPU."""
    t = totals(results)
    line = f"ops fully supported: {t['ops_fully_supported']} of {t['ops']}"
    if t["ops_fallback"]:
        line += f" ({t['ops_fallback']} more answered by the reference fallback)"
    device = str(greeting.get("device", "")) if isinstance(greeting, dict) else ""
    if device.startswith("cpu-emulated"):
        line += f"; no GPU: the {greeting.get('impl')} kernels ran {device}"
    return line


def limits_line(limits: Limits) -> str:
    return (f"limits: {limits.timeout:g} s a response ({limits.first_timeout:g} s the first of "
            f"an op), {limits.op_budget:g} s an op, {limits.run_budget:g} s the run, "
            f"{limits.max_hangs} hangs an op")


def card(command: list[str], profile: str, manifest_sha256: str, greeting: dict | None,
         results: list[OpResult], events: list[dict], fuzz: int, limits: Limits) -> dict:
    """The report card as a JSON-ready dict."""
    ops = {}
    for r in results:
        ratio = r.impl_seconds / r.reference_seconds if r.reference_seconds else None
        ops[r.op] = {
            "status": r.status, "cases": r.cases, "passed": r.passed, "failed": r.failed,
            "xfail": r.xfailed, "xpass": r.xpassed, "skipped": r.skipped,
            "resource_limit": r.resource_limit, "seconds": round(r.seconds, 6),
            "impl_seconds": round(r.impl_seconds, 6),
            "reference_seconds": round(r.reference_seconds, 6),
            "ratio_to_reference": None if ratio is None else round(ratio, 3),
            "note": r.note,
            "failures": [f.to_json() for f in r.failures],
            "fuzz": r.fuzz,
        }
    return {
        "suite": {"spec_version": SPEC_VERSION, "profile": profile,
                  "manifest_sha256": manifest_sha256, "fuzz_examples_per_op": fuzz,
                  "limits": limits.to_json()},
        "implementation": {"command": command, "hello": greeting},
        "ops": ops,
        "events": events,
        "summary": totals(results),
        "ok": totals(results)["failed"] == 0,
    }


def _chapter_order(results: list[OpResult]) -> list[OpResult]:
    """Results by chapter number, then op name (chapter 2 before 10)."""
    return sorted(results, key=lambda r: (REGISTRY.ops[r.op].chapter, r.op)
                  if r.op in REGISTRY.ops else (10**6, r.op))


def _row(r: OpResult) -> list[str]:
    return [str(REGISTRY.ops[r.op].chapter) if r.op in REGISTRY.ops else "?", r.op, r.status,
            str(r.cases), str(r.passed), str(r.failed), str(r.xfailed), str(r.skipped),
            str(r.resource_limit), f"{r.impl_seconds * 1e3:.1f}",
            f"{r.reference_seconds * 1e3:.1f}" if r.reference_seconds else "-"]


def failure_lines(r: OpResult) -> list[str]:
    """Each shown failure with its case id and request line, then how many are not shown."""
    lines = []
    for f in r.failures:
        lines += [f"FAIL {f.describe()}", f"     request: {f.request}"]
    hidden = r.failed - len(r.failures)
    if hidden > 0:
        lines.append(f"     ... {hidden} more failure{'s' * (hidden != 1)} of {r.op}")
    if r.fuzz and r.fuzz.get("failure"):
        f = r.fuzz["failure"]
        lines.append(f"FUZZ {r.op} [{f.get('case_id', '')}]: minimal failing input after "
                     f"{r.fuzz['requests']} requests: {f['text']}")
        lines.append(f"     request: {f.get('request', '')}")
    return lines


def hello_line(greeting: dict | None) -> str:
    """The implementation as its hello names it: name, profile and device, each it leaves
    out said so (never a bare None)."""
    if not isinstance(greeting, dict):
        return "implementation: no hello"
    said = {k: greeting.get(k) for k in ("impl", "profile", "device")}
    missing = [k for k, v in said.items() if v is None]
    details = ([f"profile {said['profile']}"] if said["profile"] is not None else []) + \
        ([str(said["device"])] if said["device"] is not None else [])
    return (f"implementation: {said['impl'] if said['impl'] is not None else 'unnamed'}"
            + (f" ({', '.join(details)})" if details else "")
            + (f"; its hello gives no {', '.join(missing)}" if missing else ""))


def render(results: list[OpResult], events: list[dict], greeting: dict | None,
           limits: Limits, verbose: bool = False) -> str:
    """Per-op table in chapter order (unsupported ops folded into one line unless
    `verbose`), the failures, events, limits, closing line and support line."""
    ordered = _chapter_order(results)
    shown = [r for r in ordered if verbose or not r.unsupported]
    header = ["ch", "op", "status", "cases", "pass", "fail", "xfail", "skip", "limit",
              "impl ms*", "ref ms*"]
    rows = [_row(r) for r in shown]
    if any(r.fuzz for r in results):
        header.insert(4, "fuzz")
        for row, r in zip(rows, shown, strict=True):
            row.insert(4, str(r.fuzz["requests"]) if r.fuzz else "-")
    lines = [hello_line(greeting), render_table(table(header, rows, right=header[3:]))]
    lines.append("* time of every case but each op's first (an implementation may compile "
                 "then)")
    folded = [r.op for r in ordered if r.unsupported and not verbose]
    if folded:
        lines.append(f"{len(folded)} ops unsupported (--verbose lists them): "
                     f"{', '.join(folded)}")
    for r in ordered:
        lines += failure_lines(r)
        if r.note and not r.unsupported:
            lines.append(f"NOTE {r.op}: {r.note}")
        if r.resource_limit:
            lines.append(f"LIMIT {r.op}: {r.resource_limit} cases answered resource_limit "
                         f"(not passed)")
        if r.fuzz and r.fuzz.get("note"):
            lines.append(f"NOTE {r.op} fuzz: stopped after {r.fuzz['requests']} requests: "
                         f"{r.fuzz['note']}")
    for e in events:
        lines.append(f"EVENT {e['kind']} during {e['op']}: {e['detail'][:300]}")
    lines.append(limits_line(limits))
    lines.append("cases: " + closing_line(results))
    lines.append(support_line(results, greeting))
    return "\n".join(lines)
