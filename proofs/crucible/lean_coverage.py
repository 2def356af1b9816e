"""Coverage of the Lean formalization's theorems by this project's checks.

`lean_theorems.tsv` lists the theorems of the Lean modules that model real C++ headers (the
inventory's A modules), one row each: name, Lean module, yellowpaper chapter, best method
(z3, hypothesis, bfs, unit, trivial, hard, absent) and `covered_by`, the checks that fail when the
statement is false of the spec: proof obligation ids (PO..), `vector:<op>`, `golden:<group>`
or `test:<file>::<name>`. A name with a bracketed suffix (`bvAddSat_*[2/6]`,
`bitmask_eq_mod_*[cap=64]`) is one member of a group the inventory names only as a whole.

Denominator. The inventory names most theorems but, for some modules, only counts part of
them (a group such as "the 4..8192 siblings", a wildcard with no count, private helpers).
Each module's header line in the TSV carries its full theorem count and how many of them the
inventory rates trivial in Python or not cheaply mechanizable, and how many are absent: about
a feature the C++ headers do not have (Algebra's dtype promotion, XOR hash group and gradient
sums, which the inventory calls speculative). A chapter's denominator is the sum over its
modules of count - trivial - hard - absent: the unnamed theorems count as not covered, so a
percentage never looks better for the inventory being vague. Named rows rated trivial, hard
or absent are listed but left out of both sides.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

TSV = Path(__file__).parents[1] / "lean_theorems.tsv"
"""The inventory lies at the root of the proofs package, as its package data."""
SPECULATIVE_TSV = Path(__file__).parents[1] / "lean_speculative.tsv"
"""The theorems of the speculative modules (design-document features), each with a status."""
SPECULATIVE_STATUSES = ("no-code", "touches", "arithmetic")
"""A feature the C++ headers lack; one a header has in part (`touches:<Header.h>`); a closed
form about numbers that holds whatever the code."""
EXCLUDED = ("trivial", "hard", "absent")
METHODS = ("z3", "hypothesis", "bfs", "unit", *EXCLUDED)
SPEC_CHAPTERS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 17, 18)
CHAPTERS = {
    1: "Notation and bits", 2: "Types", 3: "Arena", 4: "SPSC ring and MetaLog",
    5: "TensorMeta and slots", 6: "Trace graph", 7: "Iteration detection", 8: "Hashing",
    9: "Merkle DAG", 10: "Memory plan", 11: "Compiled replay", 12: "Kernels",
    13: "Cost model", 14: "Graph IR and symbolic algebra", 15: "Effects", 16: "Reflection",
    17: "Determinism", 18: "Persistence",
}
_SPECULATIVE_MODULE = re.compile(r"^# module (\S+) count (\d+)$")
_MODULE_LINE = re.compile(
    r"^# module (\S+) chapter (\d+) count (\d+) trivial (\d+) hard (\d+)(?: absent (\d+))?$")


@dataclass(frozen=True)
class Theorem:
    """One row: a Lean theorem and the checks that cover it."""

    name: str
    module: str
    chapter: int
    method: str
    covered_by: tuple[str, ...]

    @property
    def counted(self) -> bool:
        """Part of the denominator: neither trivial in Python, nor hard, nor absent."""
        return self.method not in EXCLUDED


@dataclass(frozen=True)
class Module:
    """A Lean module's header: chapter, theorem count, trivial, hard and absent counts."""

    name: str
    chapter: int
    count: int
    trivial: int
    hard: int
    absent: int = 0

    @property
    def mechanizable(self) -> int:
        return self.count - self.trivial - self.hard - self.absent


@dataclass
class Inventory:
    modules: dict[str, Module] = field(default_factory=dict)
    theorems: list[Theorem] = field(default_factory=list)


def parse(text: str) -> Inventory:
    """The modules and theorem rows of the TSV text."""
    inv = Inventory()
    header_seen = False
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("#"):
            m = _MODULE_LINE.match(line)
            if m:
                name, *nums = m.groups()
                inv.modules[name] = Module(name, *(int(n or 0) for n in nums))
            continue
        cols = line.split("\t")
        if not header_seen:
            header_seen = True
            continue
        name, module, chapter, method, covered = (cols + [""] * 5)[:5]
        ids = tuple(i.strip() for i in covered.split(",") if i.strip())
        inv.theorems.append(Theorem(name, module, int(chapter), method, ids))
    return inv


def load(path: Path = TSV) -> Inventory:
    return parse(path.read_text())


def shape_problems(inv: Inventory) -> list[str]:
    """Rows that contradict their module header, an unknown method, duplicated names."""
    out, seen = [], set()
    for t in inv.theorems:
        mod = inv.modules.get(t.module)
        if mod is None:
            out.append(f"{t.name}: module {t.module} has no header line")
        elif mod.chapter != t.chapter:
            out.append(f"{t.name}: chapter {t.chapter}, its module says {mod.chapter}")
        if t.method not in METHODS:
            out.append(f"{t.name}: unknown method {t.method!r}")
        if (t.module, t.name) in seen:
            out.append(f"{t.name}: listed twice in {t.module}")
        seen.add((t.module, t.name))
        if not t.counted and t.covered_by:
            out.append(f"{t.name}: rated {t.method}, so it needs no cover")
    for mod in inv.modules.values():
        named = sum(t.counted for t in inv.theorems if t.module == mod.name)
        if named > mod.mechanizable:
            out.append(f"{mod.name}: {named} counted rows exceed count - trivial - hard - absent")
        for method in EXCLUDED:
            rated = sum(t.method == method for t in inv.theorems if t.module == mod.name)
            if rated > getattr(mod, method):
                out.append(f"{mod.name}: {rated} rows rated {method}, its header says "
                           f"{getattr(mod, method)}")
    return out


def golden_groups() -> frozenset[str]:
    from ...conformance.golden import GOLDEN_FILE

    return frozenset(json.loads(GOLDEN_FILE.read_text()))


def names_a_test(ref: str, root: Path) -> bool:
    """`file::name` names a test function defined in tests/file."""
    file, _, name = ref.partition("::")
    path = root / "tests" / file
    return bool(name) and path.is_file() and re.search(
        rf"^\s*def {re.escape(name)}\(", path.read_text(), re.M) is not None


def unknown_ids(inv: Inventory, root: Path) -> list[str]:
    """covered_by entries that name no registered obligation, op, golden group or test."""
    from ...spec.core.registry import REGISTRY

    groups = golden_groups()
    bad = []
    for t in inv.theorems:
        for ref in t.covered_by:
            kind, _, rest = ref.partition(":")
            ok = (ref in REGISTRY.obligations if ref.startswith("PO")
                  else rest in REGISTRY.ops if kind == "vector"
                  else rest in groups if kind == "golden"
                  else names_a_test(rest, root) if kind == "test" else False)
            if not ok:
                bad.append(f"{t.name}: {ref}")
    return bad


@dataclass(frozen=True)
class ChapterRow:
    chapter: int
    modules: tuple[str, ...]
    theorems: int
    covered: int

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.theorems if self.theorems else 0.0


def is_covered(t: Theorem, ignore: Iterable[str] = ()) -> bool:
    skip = set(ignore)
    return t.counted and any(ref not in skip for ref in t.covered_by)


def chapter_rows(inv: Inventory, ignore: Iterable[str] = ()) -> list[ChapterRow]:
    """Per chapter with modules: the denominator and how many theorems are covered."""
    ignore = tuple(ignore)
    rows = []
    for ch in sorted({m.chapter for m in inv.modules.values()}):
        mods = tuple(m.name for m in inv.modules.values() if m.chapter == ch)
        total = sum(inv.modules[m].mechanizable for m in mods)
        covered = sum(is_covered(t, ignore) for t in inv.theorems if t.module in mods)
        rows.append(ChapterRow(ch, mods, total, covered))
    return rows


def scope_total(rows: list[ChapterRow], chapters: Iterable[int] = SPEC_CHAPTERS) -> ChapterRow:
    """The chapters the yellowpaper has, summed."""
    chosen = [r for r in rows if r.chapter in set(chapters)]
    return ChapterRow(0, tuple(m for r in chosen for m in r.modules),
                      sum(r.theorems for r in chosen), sum(r.covered for r in chosen))


def _cover_text(t: Theorem) -> str:
    if not t.counted:
        return f"left out ({t.method})"
    if t.covered_by:
        return ", ".join(f"`{ref}`" for ref in t.covered_by)
    return f"not yet (chapter {t.chapter})"


def render(inv: Inventory,
           speculative: tuple[dict[str, int], list[Speculative]] | None = None) -> str:
    """The Markdown report: the chapter table, every theorem with what covers it, then the
    speculative modules' theorems with their status."""
    rows = chapter_rows(inv)
    total = scope_total(rows)
    lines = [
        "# Coverage of the Lean theorems",
        "",
        "Generated by `crucible-spec lean-coverage` from `proofs/lean_theorems.tsv`; do not edit.",
        "",
        "A theorem of a Lean module that models a real C++ header counts as covered when a "
        "proof obligation, a vector, a golden group or a test fails if the statement is false "
        "of the spec. Each module's denominator is its theorem count less those rated trivial "
        "in Python, not cheaply mechanizable, or about a feature the C++ headers lack; "
        "theorems the inventory counts without naming them count as not covered.",
        "",
        "| chapter | title | Lean modules | theorems | covered | % |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.chapter} | {CHAPTERS[r.chapter]} | {', '.join(r.modules)} | "
                     f"{r.theorems} | {r.covered} | {r.percent:.0f} |")
    lines.append(f"| {', '.join(map(str, SPEC_CHAPTERS))} | the yellowpaper's chapters "
                 "(2, 5 and 8 have no Lean module) | | "
                 f"{total.theorems} | {total.covered} | {total.percent:.0f} |")
    for r in rows:
        lines += ["", f"## Chapter {r.chapter}: {CHAPTERS[r.chapter]}"]
        for name in r.modules:
            mod = inv.modules[name]
            named = [t for t in inv.theorems if t.module == name]
            unnamed = mod.mechanizable - sum(t.counted for t in named)
            absent = f", {mod.absent} absent" if mod.absent else ""
            lines += ["", f"### {name} ({mod.count} theorems, {mod.trivial} trivial, "
                          f"{mod.hard} hard{absent})", "",
                      "| theorem | method | covered by |", "|---|---|---|"]
            lines += [f"| `{t.name}` | {t.method} | {_cover_text(t)} |" for t in named]
            if unnamed:
                lines.append(f"| {unnamed} not named by the inventory | | "
                             f"not yet (chapter {r.chapter}) |")
    if speculative is not None:
        lines += render_speculative(*speculative)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Speculative:
    """One theorem of a speculative module and its status."""

    name: str
    module: str
    status: str
    note: str

    @property
    def kind(self) -> str:
        return self.status.partition(":")[0]


def load_speculative(path: Path = SPECULATIVE_TSV) -> tuple[dict[str, int], list[Speculative]]:
    """The speculative modules' theorem counts and their rows."""
    counts: dict[str, int] = {}
    rows: list[Speculative] = []
    header_seen = False
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            m = _SPECULATIVE_MODULE.match(line)
            if m:
                counts[m.group(1)] = int(m.group(2))
            continue
        if not line.strip():
            continue
        if not header_seen:
            header_seen = True
            continue
        rows.append(Speculative(*(line.split("\t") + [""] * 4)[:4]))
    return counts, rows


def speculative_problems(counts: dict[str, int], rows: list[Speculative]) -> list[str]:
    """Rows of an unknown status or module, and modules whose rows miss their count."""
    out = [f"{r.name}: unknown status {r.status!r}" for r in rows
           if r.kind not in SPECULATIVE_STATUSES or (r.kind == "touches") != (":" in r.status)]
    out += [f"{r.name}: module {r.module} has no header line" for r in rows
            if r.module not in counts]
    for module, count in counts.items():
        named = sum(r.module == module for r in rows)
        if named != count:
            out.append(f"{module}: {named} rows, its header says {count}")
    return out


def render_speculative(counts: dict[str, int], rows: list[Speculative]) -> list[str]:
    """The speculative modules: per module, theorems by status, then every theorem."""
    lines = ["", "## The speculative modules", "",
             "Modules of the Lean formalization that model features of the design documents "
             "with no or only partial C++: not in the denominators above. Each theorem's "
             "status: `no-code` (the headers lack the feature), `touches` (a header has part of "
             "it), `arithmetic` (a closed form about numbers that holds whatever the code).", "",
             "| module | theorems | " + " | ".join(SPECULATIVE_STATUSES) + " |",
             "|---|---|" + "---|" * len(SPECULATIVE_STATUSES)]
    for module, count in counts.items():
        kinds = [sum(r.module == module and r.kind == k for r in rows)
                 for k in SPECULATIVE_STATUSES]
        lines.append(f"| {module} | {count} | " + " | ".join(map(str, kinds)) + " |")
    lines.append(f"| all | {sum(counts.values())} | " + " | ".join(
        str(sum(r.kind == k for r in rows)) for k in SPECULATIVE_STATUSES) + " |")
    for module in counts:
        lines += ["", f"### {module}", "", "| theorem | status | note |", "|---|---|---|"]
        lines += [f"| `{r.name}` | {r.status} | {r.note} |" for r in rows if r.module == module]
    return lines


def summary(inv: Inventory, ignore: Iterable[str] = ()) -> dict:
    """Per chapter and in total (the yellowpaper's chapters): theorems, covered, percent."""
    rows = chapter_rows(inv, ignore)
    total = scope_total(rows)
    return {"chapters": [{"chapter": r.chapter, "modules": list(r.modules),
                          "theorems": r.theorems, "covered": r.covered,
                          "percent": round(r.percent, 1)} for r in rows],
            "spec_chapters": {"theorems": total.theorems, "covered": total.covered,
                              "percent": round(total.percent, 1)}}
