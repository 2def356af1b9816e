"""The conformance run as JUnit XML, which CI systems read: one test suite per chapter, one
test case per vector case (named by its case id), failures with the first difference and the
request line, unsupported and skipped cases as skipped. Times are in seconds to the
millisecond (plain decimals, as the JUnit schema's xs:decimal wants)."""

from __future__ import annotations

from junitparser import Failure as JFailure
from junitparser import JUnitXml, Skipped, TestCase, TestSuite

from ..spec.core.registry import REGISTRY
from .runner import OpResult, case_id


def _op_cases(r: OpResult, profile: str) -> list[TestCase]:
    """One test case per vector of the op: failed ones with their difference, the rest
    passed, or skipped (unsupported, skipped after a give-up, resource_limit)."""
    op = REGISTRY.ops[r.op]
    per_case = round(r.seconds / r.cases, 3) if r.cases else 0.0
    failures = {f.index: f for f in r.failures}
    failed = set(r.failed_cases)
    base = r.first_case
    out = []
    for k in range(base, base + r.cases):
        c = TestCase(case_id(profile, op, k), f"{profile}.{op.chapter}.{r.op}", per_case)
        f = failures.get(k)
        if r.unsupported:
            c.result = [Skipped(r.note or "unsupported")]
        elif f is not None:
            failure = JFailure(f.describe(), f.kind)
            failure.text = f"request: {f.request}"
            c.result = [failure]
        elif k in failed:
            c.result = [JFailure("failed (the report details the first "
                                 f"{len(r.failures)} failures of {r.op})", "mismatch")]
        elif k - base >= r.cases - r.skipped:
            c.result = [Skipped(r.note or "skipped")]
        out.append(c)
    if r.fuzz and r.fuzz.get("failure"):
        f = r.fuzz["failure"]
        c = TestCase(f.get("case_id") or case_id(profile, op, -1),
                     f"{profile}.{op.chapter}.{r.op}")
        failure = JFailure(f["text"], f["kind"])
        failure.text = f"request: {f.get('request', '')}"
        c.result = [failure]
        out.append(c)
    return out


def junit_xml(results: list[OpResult], profile: str) -> bytes:
    """The whole run as a JUnit XML document (UTF-8, with its declaration)."""
    suites: dict[int, TestSuite] = {}
    for r in sorted(results, key=lambda r: (REGISTRY.ops[r.op].chapter, r.op)):
        chapter = REGISTRY.ops[r.op].chapter
        suite = suites.setdefault(chapter, TestSuite(f"{profile} chapter {chapter}"))
        for c in _op_cases(r, profile):
            suite.add_testcase(c)
    xml = JUnitXml("crucible-spec conform")
    for suite in suites.values():
        suite.update_statistics()
        suite.time = round(suite.time, 3)
        xml.add_testsuite(suite)
    xml.update_statistics()
    xml.time = round(xml.time, 3)
    return xml.tostring()
