"""A Python-Markdown extension that typesets the paper's inline maths ($`2^{64}`$, as
GitHub's Markdown writes it) as MathML when the site is built: no script, no network."""

from __future__ import annotations

from markdown import Extension, Markdown
from markdown.inlinepatterns import InlineProcessor

MATH_PATTERN = r"\$`([^`]+)`\$"
_PRIORITY = 195
"""Above code spans (190), so that the backticks around the TeX are not read as code."""


def to_mathml(tex: str) -> str:
    """The MathML of one inline TeX formula."""
    from latex2mathml.converter import convert

    return convert(tex)


class _Math(InlineProcessor):
    def handleMatch(self, m, data):
        return self.md.htmlStash.store(to_mathml(m.group(1))), m.start(0), m.end(0)


class MathExtension(Extension):
    """Registers the inline maths pattern."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.inlinePatterns.register(_Math(MATH_PATTERN, md), "crucible-math", _PRIORITY)


def makeExtension(**kwargs) -> MathExtension:
    return MathExtension(**kwargs)
