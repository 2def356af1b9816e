"""Where each registered item is written in the paper, so every mention links to it."""

from __future__ import annotations

import re

from ..spec.core.registry import REGISTRY
from .chapters import CHAPTERS, Chapter
from .markdown import anchor, link

APPENDIX = "appendix.md"
INDEX = "index.md"


def chapter(number: int) -> Chapter:
    return next(c for c in CHAPTERS if c.number == number)


def _id_chapter(ident: str) -> int:
    """PO8.3 and E8.3 are written in chapter 8."""
    return int(re.findall(r"\d+", ident)[0])


def module_chapter(module: str) -> Chapter | None:
    return next((c for c in CHAPTERS if module in c.modules), None)


def op_id(name: str) -> str:
    return "op-" + anchor(name)


def layout_id(name: str) -> str:
    return "layout-" + anchor(name)


def po_id(ident: str) -> str:
    return anchor(ident)


def fn_id(module: str, name: str) -> str:
    return f"def-{anchor(module)}-{anchor(name)}"


def to_op(name: str, here: str = "") -> str:
    return _ref(name, chapter(REGISTRY.op(name).chapter).filename, op_id(name), here)


def to_layout(name: str, here: str = "") -> str:
    s = REGISTRY.layout(name)
    return _ref(s.name, chapter(s.chapter).filename, layout_id(s.name), here)


def to_po(ident: str, here: str = "") -> str:
    return _ref(ident, chapter(_id_chapter(ident)).filename, po_id(ident), here)


def to_erratum(ident: str, here: str = "") -> str:
    return _ref(ident, chapter(_id_chapter(ident)).filename, po_id(ident), here)


def to_fn(module: str, name: str, here: str = "") -> str:
    ch = module_chapter(module)
    text = f"`{module}.{name}`"
    return _ref(text, ch.filename, fn_id(module, name), here) if ch else text


def _ref(text: str, filename: str, ident: str, here: str) -> str:
    target = f"#{ident}" if filename == here else f"{filename}#{ident}"
    return link(text, target)
