"""Checking the two kinds of obligation that are not z3 queries or machines: properties
(every case of an enumeration, or seeded hypothesis draws) and crosshair contracts. Each
returns its status, a short counterexample text and the number of cases or paths tried."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from random import Random

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample

from ...spec.core.optional import MissingPackage, load
from .obligation import Contract, Property

BACKEND_VARIABLE = "CRUCIBLE_SPEC_HYPOTHESIS_BACKEND"
"""Names the hypothesis backend of property draws for a campaign (`crosshair`: symbolic draws
through hypothesis-crosshair); unset, hypothesis's own seeded draws."""


@dataclass(frozen=True)
class Evidence:
    """What one check found: `counterexample` is None when the property or contract held."""

    counterexample: str | None
    tried: int
    confirmed: bool = False


def _fails(check, case) -> str | None:
    """None when `check(case)` holds, else why not. A missing optional package is no
    violation: it ends the check (MissingPackage propagates)."""
    try:
        check(case)
    except MissingPackage:
        raise
    except Exception as e:  # any exception in a spec function under check is a violation
        return f"{type(e).__name__}: {e}"[:400]
    return None


def _seed(label: str) -> int:
    return int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "little")


def check_property(p: Property, shrink: bool = True) -> Evidence:
    """Every enumerated case, or `examples` draws from a random source seeded by the
    property's label (the same draws on every machine and checkout), a failing draw shrunk
    unless `shrink` is false (a mutant needs a failing case, not the least one)."""
    if p.cases is not None:
        tried = 0
        for case in p.cases():
            tried += 1
            why = _fails(p.check, case)
            if why is not None:
                return Evidence(f"{case!r}: {why}"[:1500], tried)
        return Evidence(None, tried, confirmed=True)
    tried = 0

    def violated(case) -> bool:
        nonlocal tried
        tried += 1
        return _fails(p.check, case) is not None

    backend = os.environ.get(BACKEND_VARIABLE)
    config = settings(max_examples=p.examples, derandomize=False, database=None, deadline=None,
                      phases=(Phase.explicit, Phase.generate, *([Phase.shrink] * shrink)),
                      suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                      **({"backend": backend} if backend else {}))
    try:
        case = find(p.strategy(), violated, settings=config, random=Random(_seed(p.label)))
    except NoSuchExample:
        return Evidence(None, tried)
    return Evidence(f"{case!r}: {_fails(p.check, case)}"[:1500], tried)


LOAD_HEADROOM = 10
"""crosshair's time limits are wall time: they are set this many times the contract's stated
seconds, so that its iteration budget, not the machine's load, ends the search."""


def check_contract(c: Contract) -> Evidence:
    """crosshair's symbolic search over the asserts of `c.fn`, bounded by iterations. crosshair
    gives one query of a path half the path's limit."""
    core, libs = load("crosshair.core"), load("crosshair.core_and_libs")
    kinds = libs.MessageType
    per_path = (2 * c.query_seconds if c.query_seconds is not None
                else max(1.0, c.seconds) * LOAD_HEADROOM / 4)
    options = load("crosshair.options").AnalysisOptionSet(
        analysis_kind=[libs.AnalysisKind.asserts], max_iterations=c.iterations,
        per_condition_timeout=c.seconds * LOAD_HEADROOM, per_path_timeout=per_path)
    messages = list(core.run_checkables(libs.analyze_function(c.fn, options)))
    bad = [m for m in messages if m.state not in (kinds.CONFIRMED, kinds.CANNOT_CONFIRM)]
    if bad:
        return Evidence("; ".join(f"{m.state.name}: {m.message}" for m in bad)[:1500],
                        c.iterations)
    return Evidence(None, c.iterations,
                    confirmed=any(m.state == kinds.CONFIRMED for m in messages))
