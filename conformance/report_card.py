"""The conformance report card: a JSON document (schema: report-card.schema.json) and its text
rendering, with the run's limits and the closing line `N passed, N failed, N skipped,
N unsupported, N xfail, N resource_limit`."""

from __future__ import annotations

import json
from pathlib import Path

from .. import SPEC_VERSION
from .runner import Limits, OpResult

SCHEMA_FILE = Path(__file__).parent / "report-card.schema.json"


def totals(results: list[OpResult]) -> dict[str, int]:
    return {
        "passed": sum(r.passed for r in results if not r.unsupported),
        "failed": sum(r.failed for r in results) + sum(
            1 for r in results if r.fuzz and r.fuzz.get("failure")),
        "skipped": sum(r.skipped for r in results),
        "unsupported": sum(r.unsupported for r in results),
        "xfail": sum(r.xfailed for r in results),
        "xpass": sum(r.xpassed for r in results),
        "resource_limit": sum(r.resource_limit + (r.fuzz or {}).get("resource_limit", 0)
                              for r in results),
    }


def closing_line(results: list[OpResult]) -> str:
    t = totals(results)
    return (f"{t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped, "
            f"{t['unsupported']} unsupported, {t['xfail']} xfail, "
            f"{t['resource_limit']} resource_limit")


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


def render(results: list[OpResult], events: list[dict], greeting: dict | None,
           limits: Limits) -> str:
    """Per-op table, the failures with their first differences, events, limits, closing
    line."""
    head = "implementation: " + (
        f"{greeting.get('impl')} (profile {greeting.get('profile')}, "
        f"{greeting.get('device')})" if isinstance(greeting, dict) else "no hello")
    header = ["op", "status", "cases", "pass", "fail", "xfail", "skip", "limit", "impl ms",
              "ref ms"]
    body = [[r.op, r.status, str(r.cases), str(r.passed), str(r.failed), str(r.xfailed),
             str(r.skipped), str(r.resource_limit), f"{r.impl_seconds * 1e3:.1f}",
             f"{r.reference_seconds * 1e3:.1f}"]
            for r in results]
    widths = [max(len(x[i]) for x in [header, *body]) for i in range(len(header))]
    lines = [head] + ["  ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip()
                      for x in [header, ["-" * w for w in widths], *body]]
    for r in results:
        for f in r.failures:
            lines.append(f"FAIL {f.describe()}")
            lines.append(f"     args: {json.dumps(f.args, sort_keys=True)[:300]}")
        if r.fuzz and r.fuzz.get("failure"):
            f = r.fuzz["failure"]
            lines.append(f"FUZZ {r.op}: minimal failing input after {r.fuzz['requests']} "
                         f"requests: {json.dumps(f['args'], sort_keys=True)[:300]}")
            lines.append(f"     {f['text']}")
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
    lines.append(closing_line(results))
    return "\n".join(lines)

