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


SLOW_SECONDS = 10.0
"""The estimate of a `slow` test that states none (`@pytest.mark.slow(seconds=...)`)."""


def estimate(item) -> float:
    """Seconds a test is expected to take on 2 cores: its `slow` marker's, else next to none."""
    marker = item.get_closest_marker("slow")
    return 0.0 if marker is None else float(marker.kwargs.get("seconds", SLOW_SECONDS))


def chunk_sizes(n: int, workers: int) -> list[int]:
    """How pytest-xdist's work-stealing scheduler first splits n tests over idle workers:
    contiguous chunks, each a fair share of what is left."""
    sizes = []
    for i in range(workers):
        sizes.append((n - sum(sizes)) // (workers - i))
    return sizes


def scheduled(items: list, workers: int) -> list:
    """The tests in the order that balances the first split: the slow ones shared out longest
    first, each to the chunk with the least estimated time (so two long tests do not queue on
    one worker), each chunk's slow tests first and longest first, then the quick ones, which
    the scheduler steals from the ends of the chunks to even out the rest."""
    slow = sorted((i for i in items if estimate(i) > 0), key=estimate, reverse=True)
    quick = [i for i in items if estimate(i) == 0]
    sizes = chunk_sizes(len(items), workers)
    chunks: list[list] = [[] for _ in sizes]
    for item in slow:
        open_chunks = [c for c, size in zip(chunks, sizes, strict=True) if len(c) < size]
        min(open_chunks, key=lambda c: sum(map(estimate, c))).append(item)
    for chunk, size in zip(chunks, sizes, strict=True):
        need = size - len(chunk)
        chunk.extend(quick[:need])
        del quick[:need]
    return [item for chunk in chunks for item in chunk]


def pytest_collection_modifyitems(config, items) -> None:
    """Order the tests for the workers (`scheduled`); tests marked `dot` are skipped, saying
    why, where Graphviz's dot is not on PATH."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    items[:] = scheduled(items, workers)
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
