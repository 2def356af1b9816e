"""A chapter's source pages: every definition of its modules with its source lines, so that
the chapter itself reads as rules and tables."""

from __future__ import annotations

import enum

from .chapters import Chapter
from .links import fn_id, source_pages, to_page
from .markdown import code, heading, table
from .source import Definition, definitions, module_path


def _enum_table(e: type[enum.Enum]) -> str:
    return table(("name", "value"), [(f"`{m.name}`", m.value) for m in e])


def _definition(d: Definition) -> str:
    is_enum = isinstance(d.obj, type) and issubclass(d.obj, enum.Enum)
    kind = "enum" if is_enum else "class" if isinstance(d.obj, type) else "function"
    parts = [heading(3, f"`{d.name}` ({kind})", fn_id(d.module, d.name)),
             f"*{module_path(d.module)}, line {d.line}*"]
    parts += [d.doc, _enum_table(d.obj)] if is_enum else [code(d.source, "python", d.line)]
    return "\n\n".join(p for p in parts if p)


def render_source_pages(ch: Chapter) -> dict[str, str]:
    """Each source page of the chapter by file name."""
    pages = source_pages(ch)
    out = {}
    for k, (page, modules) in enumerate(pages, 1):
        title = f"{ch.label}: source" + (f" ({k} of {len(pages)})" if len(pages) > 1 else "")
        parts = [f"# {title}",
                 f"The definitions of {to_page(ch.label, ch.filename, page)}, module by module, "
                 "in source order, with their line numbers."]
        for m in modules:
            parts += [f"## {module_path(m)}"] + [_definition(d) for d in definitions(m)]
        out[page] = "\n\n".join(parts) + "\n"
    return out
