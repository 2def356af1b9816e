"""pytest plugin: `pytest --crucible-impl="CMD"` runs the conformance suite as pytest items,
one per op, so an implementation can drop the suite into its own test run.

Options: --crucible-profile (default crucible), --crucible-ops (comma-separated globs),
--crucible-timeout (seconds per response). Without --crucible-impl the plugin does nothing.
"""

from __future__ import annotations

import fnmatch
import shlex

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("crucible-spec", "crucible-spec conformance suite")
    group.addoption("--crucible-impl", metavar="CMD", default=None,
                    help="run the conformance vectors against this wire-protocol command")
    group.addoption("--crucible-profile", default="crucible", help="errata profile")
    group.addoption("--crucible-ops", default="", metavar="GLOBS",
                    help="comma-separated op globs (default: all)")
    group.addoption("--crucible-timeout", type=float, default=10.0,
                    help="seconds to wait for each response")


class ConformanceFailure(Exception):
    """The implementation answered some cases of an op wrongly."""


class OpItem(pytest.Item):
    """All vectors of one op."""

    def __init__(self, *, op_name, cases, **kw):
        super().__init__(**kw)
        self.op_name = op_name
        self.cases = cases

    def runtest(self):
        from ..spec.core.registry import REGISTRY
        from .runner import Run, Xfail, run_op

        shared = self.config._crucible
        run = Run(shared["client"], shared["errata"], Xfail(), next_id=shared["next_id"])
        result = run_op(run, REGISTRY.ops[self.op_name], self.cases)
        shared["next_id"] = run.next_id
        if result.unsupported:
            pytest.skip(f"unsupported: {result.note}")
        if result.failed or result.skipped:
            lines = [f.describe() for f in result.failures]
            lines += [f"{e['kind']}: {e['detail']}" for e in run.events]
            if result.skipped:
                lines.append(f"{result.skipped} cases not run: {result.note}")
            raise ConformanceFailure(f"{result.failed} of {result.cases} cases failed\n"
                                     + "\n".join(lines))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return "crucible-spec vectors", None, f"conformance: {self.op_name}"


def pytest_collection_modifyitems(session, config, items):
    command = config.getoption("crucible_impl")
    if not command:
        return
    import crucible_spec

    from ..spec.core.errata import profile_errata
    from . import vectors
    from .client import Client

    crucible_spec.load_all()
    profile = config.getoption("crucible_profile")
    client = Client(shlex.split(command), timeout=config.getoption("crucible_timeout"))
    config._crucible = {"client": client, "errata": profile_errata(profile), "next_id": 1}
    config.add_cleanup(client.close)
    globs = [g for g in config.getoption("crucible_ops").split(",") if g]
    for name, cases in vectors.load(vectors.VECTORS_DIR, profile).items():
        if globs and not any(fnmatch.fnmatch(name, g) for g in globs):
            continue
        items.append(OpItem.from_parent(session, name=f"conformance[{name}]", op_name=name,
                                        cases=cases))
