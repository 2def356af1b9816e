"""pytest plugin of `crucible-spec mutate`: plants the mutant named by $CRUCIBLE_SPEC_MUTANT
for the whole session, or, with $CRUCIBLE_SPEC_TRACE_TESTS=FILE, records which spec functions
each test calls and whether it passed, and writes {test node id: {functions, passed}} to
FILE."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest

_session = contextlib.ExitStack()
_traced: dict[str, dict] = {}


def pytest_configure(config: pytest.Config) -> None:
    from . import load_all, mutants

    load_all()
    _session.enter_context(mutants.planted_from_environment())


def pytest_unconfigure(config: pytest.Config) -> None:
    _session.close()
    out = os.environ.get("CRUCIBLE_SPEC_TRACE_TESTS")
    if out:
        Path(out).write_text(json.dumps(_traced, sort_keys=True))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    if not os.environ.get("CRUCIBLE_SPEC_TRACE_TESTS"):
        yield
        return
    from .mutants import calls

    with calls() as found:
        yield
    _traced[item.nodeid] = {"functions": sorted(found), "passed": True}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if item.nodeid in _traced and report.when == "call" and not report.passed:
        _traced[item.nodeid]["passed"] = False
