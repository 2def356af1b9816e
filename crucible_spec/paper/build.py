"""Make every file of `papers/` in memory, write them, or say where the checkout differs.

Markdown files are compared byte for byte. A figure is compared by the digest of what it
draws (its data or Graphviz source), which the SVG carries: the pixels depend on the installed
matplotlib and Graphviz, the content must not drift."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import load_all
from ..commands.common import write_output
from ..spec.core.registry import REGISTRY
from .appendix import render_appendix, render_index, render_part_index
from .chapter import has_witness_page, render_chapter, witness_text
from .chapters import CHAPTERS, part_index
from .figure import Figure, figure_digest
from .figures import chapter_figures
from .links import INDEX, witness_page
from .listing import render_source_pages
from .status import STATUS_FILE, read_status
from .systems import SYSTEMS

FIGURES = "figures"
_CHAPTER_FILE = re.compile(r"^\d\d-[a-z0-9-]+\.md$")


@dataclass
class Paper:
    """The generated text files by path under `papers/`, and the figures to draw."""

    texts: dict[str, str]
    figures: dict[str, Figure]


def render_paper(papers: Path) -> Paper:
    """Every chapter, the index and the appendix, with the proof status recorded in `papers`."""
    load_all()
    status = read_status(papers)
    figures = chapter_figures()
    texts = {INDEX: render_index(status), **render_appendix(status)}
    for k, s in enumerate(SYSTEMS):
        texts[part_index(s)] = render_part_index(k, s)
    for ch in CHAPTERS:
        own = [(f.title, f.name) for f in figures.values() if ch.system == "crucible"
               and f.chapter == ch.number and not f.name.startswith("layout-")]
        texts[ch.filename] = render_chapter(ch, status, own)
        texts.update(render_source_pages(ch))
    for e in REGISTRY.errata.values():
        if has_witness_page(e):
            texts[witness_page(e)] = witness_text(e)
    return Paper(texts, figures)


@dataclass(frozen=True)
class Drift:
    """The first place where `papers/` is not what the registry generates."""

    path: str
    line: int
    expected: str
    found: str

    def __str__(self) -> str:
        if self.line == 0:
            return f"{self.path}: {self.found}"
        return (f"{self.path}:{self.line}: expected {self.expected!r}, found {self.found!r}")


def _first_line_diff(path: str, want: str, have: str) -> Drift:
    a, b = want.splitlines(), have.splitlines()
    for i, (x, y) in enumerate(zip(a, b, strict=False), 1):
        if x != y:
            return Drift(path, i, x, y)
    n = min(len(a), len(b)) + 1
    return Drift(path, n, a[n - 1] if len(a) >= n else "(end of file)",
                 b[n - 1] if len(b) >= n else "(end of file)")


def stale_files(papers: Path, paper: Paper) -> list[str]:
    """Generated-looking files in `papers/` that this paper no longer makes."""
    chapters = [p.name for p in papers.glob("*.md") if _CHAPTER_FILE.match(p.name)
                or p.name.startswith("appendix-")]
    chapters += [str(p.relative_to(papers)) for s in SYSTEMS for p in (papers / s.key).glob("*.md")]
    figures = [f"{FIGURES}/{p.name}" for p in (papers / FIGURES).glob("*.svg")]
    made = set(paper.texts) | {f"{FIGURES}/{n}" for n in paper.figures}
    return sorted(p for p in chapters + figures if p not in made)


def check(papers: Path) -> list[Drift]:
    """Every file of `papers` that differs from what is generated, first difference each."""
    paper = render_paper(papers)
    out = []
    for path, text in sorted(paper.texts.items()):
        file = papers / path
        if not file.exists():
            out.append(Drift(path, 0, "", "missing"))
        elif file.read_text() != text:
            out.append(_first_line_diff(path, text, file.read_text()))
    for name, fig in sorted(paper.figures.items()):
        file = papers / FIGURES / name
        if not file.exists():
            out.append(Drift(f"{FIGURES}/{name}", 0, "", "missing"))
        elif figure_digest(file.read_text()) != fig.digest:
            out.append(Drift(f"{FIGURES}/{name}", 0, "", "draws other content than the spec "
                             "gives (its source digest differs)"))
    out += [Drift(p, 0, "", "no longer generated") for p in stale_files(papers, paper)]
    return out


def _write(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_output(path, data.encode(), force=True)


def refresh_status(papers: Path, report: dict | None) -> None:
    """Lay a prove report's verdicts over the recorded proof status (create it if missing)."""
    if report is not None or not (papers / STATUS_FILE).exists():
        status = read_status(papers)
        _write(papers / STATUS_FILE, (status.merged(report) if report else status).to_json())


def write_paper(papers: Path, paper: Paper,
                progress: Callable[[str], None] = lambda _: None) -> None:
    """Write the paper into `papers`, drawing every figure, and remove the generated files it
    no longer makes."""
    for path, text in paper.texts.items():
        _write(papers / path, text)
    for name, fig in paper.figures.items():
        _write(papers / FIGURES / name, fig.draw())
        progress(name)
    for stale in stale_files(papers, paper):
        (papers / stale).unlink()
