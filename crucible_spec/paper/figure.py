"""A figure of the paper: the text of what it shows (whose digest its SVG carries) and how to
draw it, and matplotlib set up to draw the same bytes on every run."""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Callable
from dataclasses import dataclass

_DIGEST = re.compile(r"<!-- crucible-spec figure source sha256:([0-9a-f]{64}) -->")

@dataclass(frozen=True)
class Figure:
    """A figure: file name, caption, chapter, the text of what it shows, and its renderer."""

    name: str
    title: str
    chapter: int
    source: str
    render: Callable[[], str]

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    def draw(self) -> str:
        """The SVG, with the digest of its source as a comment after the prologue."""
        svg = self.render()
        mark = f"<!-- crucible-spec figure source sha256:{self.digest} -->\n"
        start = svg.find("<svg")
        return svg[:start] + mark + svg[start:]


def figure_digest(svg: str) -> str | None:
    found = _DIGEST.search(svg)
    return found.group(1) if found else None


def pyplot():
    """matplotlib's pyplot, set to write the same SVG bytes on every run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "crucible-spec", "svg.fonttype": "none",
                         "font.family": "DejaVu Sans", "font.size": 8})
    return plt


def svg_of(fig) -> str:
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight",
                metadata={"Date": None, "Creator": "crucible-spec"})
    pyplot().close(fig)
    return out.getvalue()
