"""The order the tests are handed to pytest-xdist's workers: the slow ones shared out so that
no two long tests queue on one worker, longest first."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import SLOW_SECONDS, chunk_sizes, estimate, scheduled


@dataclass
class Item:
    """What the ordering reads of a collected test: its name and its `slow` marker."""

    name: str
    marker: object = None

    def get_closest_marker(self, name: str):
        return self.marker if name == "slow" else None


def _slow(name: str, seconds: float | None = None) -> Item:
    mark = pytest.mark.slow if seconds is None else pytest.mark.slow(seconds=seconds)
    return Item(name, mark.mark)


def _names(items) -> list[str]:
    return [i.name for i in items]


def test_the_first_split_is_work_stealing_s_fair_shares():
    assert chunk_sizes(8, 2) == [4, 4]
    assert chunk_sizes(5, 2) == [2, 3]
    assert chunk_sizes(7, 3) == [2, 2, 3]
    assert chunk_sizes(3, 1) == [3]


def test_long_tests_go_to_different_workers_longest_first():
    items = [Item("q1"), _slow("c", 10), Item("q2"), _slow("a", 100), Item("q3"),
             _slow("b", 90), Item("q4"), Item("q5")]
    # a (100) to the first chunk; b (90) to the second; c (10) joins b (90 < 100)
    assert _names(scheduled(items, 2)) == ["a", "q1", "q2", "q3", "b", "c", "q4", "q5"]


def test_one_worker_runs_the_slow_tests_first_longest_first():
    items = [Item("q1"), _slow("default"), _slow("long", 50), Item("q2"), _slow("short", 2)]
    assert estimate(items[1]) == SLOW_SECONDS and estimate(items[0]) == 0
    assert _names(scheduled(items, 1)) == ["long", "default", "short", "q1", "q2"]


def test_a_small_selection_fills_every_chunk():
    items = [_slow("a", 3), _slow("b", 2), _slow("c", 1)]
    assert _names(scheduled(items, 2)) == ["a", "b", "c"]
