"""The few Markdown forms the paper is written in: tables, code, folded blocks, anchors, links
and the typeset maths of prose."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any


def cell(value: Any) -> str:
    """One table cell: a single line, with pipes escaped."""
    text = "" if value is None else str(value)
    return " ".join(text.split()).replace("|", "\\|")


def table(head: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def code(text: str, lang: str = "", first_line: int | None = None) -> str:
    """A fenced code block; `first_line` numbers its lines from there."""
    attrs = f' linenums="{first_line}"' if first_line else ""
    fence = "````" if "```" in text else "```"
    return f"{fence}{lang}{attrs}\n{text.rstrip()}\n{fence}"


def as_json(value: Any) -> str:
    """A JSON value as the wire writes it, one line, keys in order."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def anchor(text: str) -> str:
    """The id a heading or an explicit anchor gets: lowercase, dashes for the rest."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def heading(level: int, text: str, ident: str) -> str:
    """A heading after an explicit anchor, so links to it survive rewording."""
    return f'<a id="{ident}"></a>\n\n{"#" * level} {text}'


def link(text: str, target: str) -> str:
    return f"[{text}]({target})"


def code_span(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


_CODE_SPAN = re.compile(r"(`+[^`]*`+)")
_POWER = re.compile(r"(?<![\w.^`*])(\d+|[A-Za-z])(?:\^|\*\*)"
                    r"(-?\d+|[A-Za-z]\w*|\([^()\s]{1,12}\))")
"""A power as plain text writes it: `2^64`, `2**63`, `2^(w-1)`, `2^-16`."""


_INNER_UNDERSCORE = re.compile(r"(?<=\w)_(?=\w)")


def math(tex: str) -> str:
    """Inline TeX, written as GitHub's Markdown writes it; the site typesets it as MathML."""
    return f"$`{tex}`$"


def typeset(prose: str) -> str:
    """Prose with its plain-text powers (`2^64`, `2**63`, `2^(w-1)`) as maths and the
    underscores inside names (INT64_MAX) kept from starting emphasis; code is left alone."""
    def power(m: re.Match) -> str:
        return math(f"{m.group(1)}^{{{m.group(2).removeprefix('(').removesuffix(')')}}}")

    def text(part: str) -> str:
        return _POWER.sub(power, _INNER_UNDERSCORE.sub(r"\\_", part))

    parts = _CODE_SPAN.split(prose)
    return "".join(p if k % 2 else text(p) for k, p in enumerate(parts))


def folded(summary: str, body: str) -> str:
    """A block the reader opens: `<details>` in HTML, its body Markdown."""
    return f'<details markdown="1">\n<summary>{summary}</summary>\n\n{body}\n\n</details>'
