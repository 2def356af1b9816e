"""Shared fixtures: the loaded registry and the implementations under test."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

import crucible_spec

crucible_spec.load_all()

settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True,
                          print_blob=True)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked `slow` run first, so that the longest start at once on every worker and
    the quick ones fill the gaps; tests marked `dot` are skipped, saying why, where Graphviz's
    dot is not on PATH."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if shutil.which("dot") is not None:
        return
    skip = pytest.mark.skip(reason="needs Graphviz's dot program (Debian package graphviz), "
                                   "which is not on PATH")
    for item in items:
        if item.get_closest_marker("dot") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def registry():
    from crucible_spec.spec.core.registry import REGISTRY

    return REGISTRY
