"""The paper as a static site, built by MkDocs with the Material theme: navigation by
chapter, search, the figures inline and every cross-link resolved."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..commands.common import UsageError
from .chapters import CHAPTERS
from .links import APPENDIX, INDEX

SITE_NAME = "The Crucible yellowpaper"


def mkdocs_config(docs: Path, site: Path) -> dict:
    """The MkDocs configuration: Material theme, search, anchors and numbered code lines."""
    nav = [{"Index": INDEX}] + [{f"{c.number}. {c.title}": c.filename} for c in CHAPTERS]
    nav += [{"Appendix": APPENDIX}, {"Lean coverage": "lean-coverage.md"}]
    return {
        "site_name": SITE_NAME, "docs_dir": str(docs), "site_dir": str(site),
        "use_directory_urls": False, "nav": nav,
        "theme": {"name": "material", "font": False,
                  "features": ["search.highlight"]},
        "plugins": ["search"],
        "markdown_extensions": ["tables", "attr_list", "md_in_html", "toc",
                                {"pymdownx.highlight": {"anchor_linenums": True}},
                                "pymdownx.superfences"],
        "validation": {"links": {"anchors": "warn"}},
    }


def build_site(papers: Path, out: Path) -> int:
    """Build the site from `papers` into `out` (replacing it); the number of HTML pages."""
    try:
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
    except ImportError:
        raise UsageError("--html needs MkDocs and its Material theme: "
                         "python -m pip install -e '.[paper]'") from None
    import yaml

    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(papers, docs, ignore=shutil.ignore_patterns("*.json"))
        cfg_file = Path(tmp) / "mkdocs.yml"
        cfg_file.write_text(yaml.safe_dump(mkdocs_config(docs, out.resolve())))
        cfg = load_config(str(cfg_file))
        build(cfg)
    return sum(1 for _ in out.glob("*.html"))
