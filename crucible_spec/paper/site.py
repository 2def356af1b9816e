"""The paper as a static site, built by MkDocs with the Material theme: navigation by part and
chapter, search, the maths typeset as MathML at build time, figures at a legible size, wide
tables that scroll, and every cross-link resolved."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..commands.common import UsageError
from .appendix import obligations_page, part_title
from .chapters import PARTS, part_index
from .links import APPENDIX, INDEX
from .systems import SYSTEMS

SITE_NAME = "The Crucible yellowpaper"
STYLE = "paper.css"
CSS = """\
.md-grid { max-width: 90rem; }
.md-typeset p:has(> img[src*="figures/"]) { overflow-x: auto; text-align: center; }
.md-typeset img[src*="figures/"] { max-width: 100%; height: auto; }
.md-typeset__scrollwrap { overflow-x: auto; scrollbar-width: auto;
  scrollbar-color: var(--md-default-fg-color--light) var(--md-default-fg-color--lightest); }
.md-typeset table:not([class]) td code { white-space: nowrap; word-break: keep-all; }
.md-typeset math { font-size: 1.05em; }
"""
"""Figures fit the column (the state machines are drawn top to bottom, so they shrink little)
and a wide table scrolls inside its frame, its scroll bar always shown, instead of looking
cut off; names in a table are never broken inside."""


def nav() -> list[dict]:
    """The navigation: the index, a section per part (its index, then its chapters), the
    appendix and the Lean coverage."""
    out: list[dict] = [{"Index": INDEX}]
    for k, s in enumerate(SYSTEMS):
        chapters = [{c.label: c.filename} for c in PARTS[s.key]]
        out.append({part_title(k, s): [{f"About {s.name}": part_index(s)}, *chapters]})
    pages = [{part_title(k, s): obligations_page(s)} for k, s in enumerate(SYSTEMS)]
    return [*out, {"Appendix": [{"Coverage and errata": APPENDIX}, *pages]},
            {"Lean coverage": "lean-coverage.md"}]


def mkdocs_config(docs: Path, site: Path) -> dict:
    """The MkDocs configuration: Material theme, search, anchors, numbered code lines and
    the maths extension."""
    return {
        "site_name": SITE_NAME, "docs_dir": str(docs), "site_dir": str(site),
        "use_directory_urls": False, "nav": nav(),
        "theme": {"name": "material", "font": False,
                  "features": ["search.highlight", "navigation.indexes"]},
        "plugins": ["search"], "extra_css": [STYLE],
        "markdown_extensions": ["tables", "attr_list", "md_in_html", "toc",
                                {"pymdownx.highlight": {"anchor_linenums": True}},
                                "pymdownx.superfences", "crucible_spec.paper.mathml"],
        "validation": {"links": {"anchors": "warn"}, "omitted_files": "info"},
    }


def build_site(papers: Path, out: Path) -> int:
    """Build the site from `papers` into `out` (replacing it); the number of HTML pages."""
    try:
        import latex2mathml  # noqa: F401 (the maths extension needs it)
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
    except ImportError:
        raise UsageError("--html needs MkDocs, its Material theme and latex2mathml: "
                         "python -m pip install -e '.[paper]'") from None
    import yaml

    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(papers, docs, ignore=shutil.ignore_patterns("*.json"))
        (docs / STYLE).write_text(CSS)
        cfg_file = Path(tmp) / "mkdocs.yml"
        cfg_file.write_text(yaml.safe_dump(mkdocs_config(docs, out.resolve())))
        cfg = load_config(str(cfg_file))
        build(cfg)
    return sum(1 for _ in out.rglob("*.html"))
