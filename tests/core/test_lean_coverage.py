"""The Lean coverage table: its ids exist, the paper is current, the percentages add up."""

from __future__ import annotations

from pathlib import Path

import pytest

from crucible_spec import load_all
from crucible_spec.cli import main
from crucible_spec.proofs.crucible import lean_coverage as lc

ROOT = Path(__file__).resolve().parents[2]
INVENTORY_DENOMINATORS = {1: 12 + 69, 3: 5, 4: 9 + 18 + 39, 6: 17, 7: 27, 9: 9, 10: 15,
                          11: 16 + 19, 17: 13, 18: 21 + 23}
"""count - trivial - hard per chapter, added up by hand from the inventory's overall table."""

SMALL = """# module Toy chapter 3 count 5 trivial 1 hard 0
theorem\tmodule\tchapter\tmethod\tcovered_by
a\tToy\t3\tz3\tPO3.1
b\tToy\t3\thypothesis\t
c\tToy\t3\ttrivial\t
"""


@pytest.fixture(scope="module")
def inventory() -> lc.Inventory:
    load_all()
    return lc.load()


def test_every_row_is_well_formed_and_every_id_exists(inventory):
    assert lc.shape_problems(inventory) == []
    assert lc.unknown_ids(inventory, ROOT) == []


def test_the_paper_is_up_to_date(inventory):
    text = lc.render(inventory, lc.load_speculative())
    assert (ROOT / "papers" / "lean-coverage.md").read_text() == text


def test_denominators_follow_the_inventory_counts(inventory):
    rows = {r.chapter: r for r in lc.chapter_rows(inventory)}
    assert {ch: rows[ch].theorems for ch in INVENTORY_DENOMINATORS} == INVENTORY_DENOMINATORS
    assert sum(m.count for m in inventory.modules.values()) == 559


def test_the_yellowpaper_chapters_are_at_least_60_percent_covered(inventory):
    rows = lc.chapter_rows(inventory)
    for r in rows:
        covered = [t for t in inventory.theorems if t.chapter == r.chapter and lc.is_covered(t)]
        assert r.covered == len(covered) and r.percent == pytest.approx(
            100 * len(covered) / r.theorems)
    total = lc.scope_total(rows)
    assert total.theorems == sum(INVENTORY_DENOMINATORS.values()) == 312
    assert total.percent >= 60


def test_unnamed_theorems_count_against_coverage_and_trivial_ones_are_left_out():
    inv = lc.parse(SMALL)
    [row] = lc.chapter_rows(inv)
    assert (row.theorems, row.covered) == (4, 1)
    assert "| 2 not named by the inventory |" in lc.render(inv)
    assert "left out (trivial)" in lc.render(inv)


def test_unknown_ids_and_missing_tests_are_reported(inventory):
    inv = lc.parse(SMALL.replace("PO3.1", "PO3.1,PO99.99,vector:no.such,test:test_x.py::nope"))
    assert lc.unknown_ids(inv, ROOT) == ["a: PO99.99", "a: vector:no.such",
                                         "a: test:test_x.py::nope"]


def test_the_command_checks_the_paper(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert main(["lean-coverage", "--check"]) == 0
    assert "yellowpaper chapters:" in capsys.readouterr().out


def test_theorems_about_a_feature_the_headers_lack_are_left_out_as_the_header_counts():
    text = SMALL.replace("hard 0\n", "hard 0 absent 1\n") + "d\tToy\t3\tabsent\t\n"
    inv = lc.parse(text)
    assert inv.modules["Toy"].absent == 1 and lc.shape_problems(inv) == []
    [row] = lc.chapter_rows(inv)
    assert (row.theorems, row.covered) == (5 - 1 - 1, 1)
    worse = lc.parse(text + "e\tToy\t3\tabsent\t\n")
    assert lc.shape_problems(worse) == ["Toy: 2 rows rated absent, its header says 1"]


def test_chapters_12_14_and_15_are_at_least_80_percent_covered(inventory):
    rows = {r.chapter: r for r in lc.chapter_rows(inventory)}
    assert {ch: rows[ch].theorems for ch in (12, 14, 15)} == {12: 37, 14: 156 - 24, 15: 29}
    assert all(rows[ch].percent >= 80 for ch in (12, 14, 15))


def test_the_speculative_modules_list_every_theorem_with_a_status():
    counts, rows = lc.load_speculative()
    assert lc.speculative_problems(counts, rows) == []
    assert len(counts) == 16 and sum(counts.values()) == 737  # the inventory's §B total
    assert not set(counts) & {m.name for m in lc.load().modules.values()}


def test_a_speculative_row_of_an_unknown_status_or_a_short_module_is_a_problem(tmp_path):
    path = tmp_path / "s.tsv"
    path.write_text("# module Toy count 2\ntheorem\tmodule\tstatus\tnote\n"
                    "a\tToy\tno-code\tx\nb\tToy\ttouches\ty\n")
    assert lc.speculative_problems(*lc.load_speculative(path)) == [
        "b: unknown status 'touches'"]
    path.write_text("# module Toy count 2\ntheorem\tmodule\tstatus\tnote\na\tToy\tarithmetic\t\n")
    assert lc.speculative_problems(*lc.load_speculative(path)) == ["Toy: 1 rows, its header says 2"]
