"""Where each registered item is written in the paper, so every mention links to it.

An item's page follows the module that defines it: an op its spec function's module, a layout
the module that declares it, an obligation its subject's module, an erratum its first op. The
registry's ids (PO14.3, E4.106) keep the chapter numbers they were given; where they are
written is presentation."""

from __future__ import annotations

import posixpath
import re
from functools import cache

from ..spec.core.registry import REGISTRY, Erratum
from .chapters import CHAPTERS, PARTS, Chapter
from .markdown import anchor, link
from .source import defined_in, definitions, module_source, spec_module_name

APPENDIX = "appendix.md"
INDEX = "index.md"
SOURCE_PAGE_MAX = 80_000
"""A chapter's source listings fill pages of about this many characters, module by module."""
WITNESS_INLINE_MAX = 4000
"""An erratum's witnesses longer than this (as JSON) are printed on a page of their own."""


def registry_number(ident: str) -> int:
    """PO8.3 and E8.3 carry the registry chapter 8."""
    return int(re.findall(r"\d+", ident)[0])


def crucible_chapter(number: int) -> Chapter:
    return next(c for c in PARTS["crucible"] if c.number == number)


def module_chapter(module: str) -> Chapter | None:
    return next((c for c in CHAPTERS if module in c.modules), None)


@cache
def _layout_modules() -> dict[str, str]:
    """Struct name -> the planned spec module that declares it (`struct("Name", ...)`)."""
    names = {s.name for s in REGISTRY.layouts.values()}
    out: dict[str, str] = {}
    for m in (m for ch in CHAPTERS for m in ch.modules):
        text = module_source(m)
        out.update({n: m for n in names if f'struct("{n}"' in text})
    return out


def op_chapter(name: str) -> Chapter:
    op = REGISTRY.op(name)
    where = defined_in(op.spec[0]) if op.spec else None
    return (module_chapter(where[0]) if where else None) or crucible_chapter(op.chapter)


def layout_chapter(name: str) -> Chapter:
    s = REGISTRY.layout(name)
    module = _layout_modules().get(s.name)
    return (module_chapter(module) if module else None) or crucible_chapter(s.chapter)


def _in_part(ident: str, found: Chapter | None) -> Chapter:
    """Part I numbers its chapters as the registry does: there an id's own number decides."""
    if found is None or found.system == "crucible":
        return crucible_chapter(registry_number(ident))
    return found


def obligation_chapter(ident: str) -> Chapter:
    """The chapter of the first op or layout the obligation covers, else of its subject's
    module; in Part I the chapter its id names."""
    po = REGISTRY.obligations[ident]
    for c in po.covers:
        if c in REGISTRY.ops:
            return _in_part(ident, op_chapter(c))
        if c.startswith("layout:") and REGISTRY.layout(c[7:]) is not None:
            return _in_part(ident, layout_chapter(c[7:]))
    return _in_part(ident, module_chapter(spec_module_name(po.subject)))


def erratum_chapter(ident: str) -> Chapter:
    """The chapter of the erratum's first op, else the first of its seed's part that holds
    ops of its registry chapter; in Part I the chapter its id names."""
    e = REGISTRY.errata[ident]
    if e.ops:
        return _in_part(ident, op_chapter(e.ops[0]))
    part = PARTS[e.seed.split("@")[0]]
    number = registry_number(ident)
    return next((c for c in part if any(REGISTRY.ops[o].chapter == number for o in
                                        REGISTRY.ops if op_chapter(o) == c)), part[0])


def source_pages(ch: Chapter) -> list[tuple[str, tuple[str, ...]]]:
    """The chapter's source pages: (file, modules), filled in module order up to
    SOURCE_PAGE_MAX characters of listing each."""
    groups: list[list[str]] = []
    size = 0
    for m in ch.modules:
        n = sum(len(d.source) for d in definitions(m))
        if n == 0:
            continue
        if not groups or size + n > SOURCE_PAGE_MAX:
            groups.append([])
            size = 0
        groups[-1].append(m)
        size += n
    stem = ch.filename.removesuffix(".md") + "-source"
    return [(f"{stem}.md" if len(groups) == 1 else f"{stem}-{k}.md", tuple(g))
            for k, g in enumerate(groups, 1)]


@cache
def _source_page_of() -> dict[str, str]:
    return {m: page for ch in CHAPTERS for page, mods in source_pages(ch) for m in mods}


def source_page(module: str) -> str | None:
    return _source_page_of().get(module)


def witness_page(e: Erratum) -> str:
    return f"{erratum_chapter(e.id).system}/witness-{anchor(e.id)}.md"


def op_id(name: str) -> str:
    return "op-" + anchor(name)


def layout_id(name: str) -> str:
    return "layout-" + anchor(name)


def po_id(ident: str) -> str:
    return anchor(ident)


def fn_id(module: str, name: str) -> str:
    return f"def-{anchor(module)}-{anchor(name)}"


def to_op(name: str, here: str = "") -> str:
    return _ref(name, op_chapter(name).filename, op_id(name), here)


def to_layout(name: str, here: str = "") -> str:
    s = REGISTRY.layout(name)
    return _ref(s.name, layout_chapter(s.name).filename, layout_id(s.name), here)


def to_po(ident: str, here: str = "") -> str:
    return _ref(ident, obligation_chapter(ident).filename, po_id(ident), here)


def to_erratum(ident: str, here: str = "") -> str:
    return _ref(ident, erratum_chapter(ident).filename, po_id(ident), here)


def to_fn(module: str, name: str, here: str = "") -> str:
    page = source_page(module)
    text = f"`{module}.{name}`"
    return _ref(text, page, fn_id(module, name), here) if page else text


def relative(target: str, here: str) -> str:
    """The path of page or file `target` (relative to papers/) as seen from page `here`."""
    return posixpath.relpath(target, posixpath.dirname(here) or ".")


def to_page(text: str, target: str, here: str) -> str:
    return link(text, relative(target, here))


def _ref(text: str, filename: str, ident: str, here: str) -> str:
    target = f"#{ident}" if filename == here else f"{relative(filename, here)}#{ident}"
    return link(text, target)
