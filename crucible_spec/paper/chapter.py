"""One chapter of the paper, as a specification: its modules' rules, its figures, layouts,
constants, ops, errata and proof obligations, then an index of its definitions (whose source
is on the chapter's source pages) and what is not yet specified."""

from __future__ import annotations

import enum
import re

from ..spec.core.errata import FLAGS
from ..spec.core.registry import REGISTRY, Erratum, po_sort_key
from .chapters import CHAPTERS, Chapter
from .layouts import layout_section
from .links import (
    WITNESS_INLINE_MAX,
    erratum_chapter,
    layout_chapter,
    obligation_chapter,
    op_chapter,
    po_id,
    relative,
    source_page,
    to_fn,
    to_op,
    to_page,
    witness_page,
)
from .markdown import as_json, code, folded, heading, table, typeset
from .op_section import OBLIGATION_HEAD, op_section
from .source import Definition, constants, definitions, module_doc, module_path, tool_doc
from .status import ProveStatus
from .systems import system

_CHAPTER_PREFIX = re.compile(r"^Chapter \d+(?: ops)?:\s*")


def _number(value: object) -> str:
    if isinstance(value, bytes):
        return f"{len(value)} bytes: `{value.hex()}`" if len(value) <= 32 else \
            f"{len(value)} bytes"
    if isinstance(value, int) and abs(value) > 255:
        return f"{value} (0x{value & ((1 << 64) - 1):x})" if value < 0 else f"{value} (0x{value:x})"
    return str(value)


def _constants(ch: Chapter) -> str:
    rows = [(f"`{c.name}`", _number(c.value), typeset(c.doc),
             f"{module_path(c.module)}:{c.line}")
            for m in ch.modules for c in constants(m)]
    return table(("constant", "value", "meaning and source", "spec"), rows) if rows else ""


def _enum_table(e: type[enum.Enum]) -> str:
    return table(("name", "value"), [(f"`{m.name}`", m.value) for m in e])


def _kind(d: Definition) -> str:
    return "enum" if isinstance(d.obj, type) and issubclass(d.obj, enum.Enum) else \
        "class" if isinstance(d.obj, type) else "function"


def _first_sentence(doc: str) -> str:
    text = " ".join(doc.split())
    end = re.search(r"(?<=[a-z0-9)`'\"])\.(\s|$)", text)
    return text[:end.start() + 1] if end else text


def _definitions(ch: Chapter) -> str:
    """Every definition of the chapter's modules: what it is, and a link to its source."""
    rows = [(to_fn(d.module, d.name, ch.filename), _kind(d), typeset(_first_sentence(d.doc)))
            for m in ch.modules for d in definitions(m)]
    if not rows:
        return ""
    pages = sorted({source_page(m) for m in ch.modules if source_page(m)})
    where = ", ".join(to_page(f"source page {k}" if len(pages) > 1 else "source page", p,
                              ch.filename) for k, p in enumerate(pages, 1))
    return "\n\n".join(["## Definitions", f"The code that runs, module by module, in source "
                         f"order; each name opens its listing on the chapter's {where}.",
                         table(("definition", "kind", "what it is"), rows)])


def _witnesses(e: Erratum) -> str:
    text = as_json(e.witness)
    if e.also:
        text += "\n" + "\n".join(as_json(w) for w in e.also)
    return text


def has_witness_page(e: Erratum) -> bool:
    """Whether the erratum's witnesses are too long to print in its chapter."""
    return len(_witnesses(e)) > WITNESS_INLINE_MAX


def _erratum(e: Erratum, here: str) -> str:
    witnesses = _witnesses(e)
    parts = [heading(3, f"{e.id}: {e.title}", po_id(e.id)),
             table(("seed", "where in the seed", "flag", "ops"),
                   [(f"`{e.seed}`", e.location, f"{e.flag}: {FLAGS[e.flag]}",
                     ", ".join(to_op(o, here) for o in e.ops))]),
             typeset(e.detail)]
    if has_witness_page(e):
        parts.append(f"Its witnesses ({len(witnesses):,} characters of JSON) are on "
                     f"{to_page('a page of their own', witness_page(e), here)}.")
    else:
        label = "Witness" + (" and the witnesses for the other ops it reaches" if e.also else "")
        parts.append(folded(label, code(witnesses, "json")))
    profiles = " and ".join(f"`{p}`" for p in (e.seed, *e.also_seeds))
    parts.append(f"The profile{'s' if e.also_seeds else ''} {profiles} turn"
                 f"{'' if e.also_seeds else 's'} it on; the default profile states the intended "
                 "behaviour.")
    return "\n\n".join(parts)


def witness_text(e: Erratum) -> str:
    """The page of an erratum whose witnesses are too long for its chapter."""
    here = witness_page(e)
    back = to_page(f"{e.id}", f"{erratum_chapter(e.id).filename}", here)
    return "\n\n".join([f"# Witnesses of {e.id}: {e.title}",
                         f"The JSON witnesses of erratum {back}, one a line: the first is its own "
                         "op's, the others those of the other ops it reaches.",
                         code(_witnesses(e), "json")]) + "\n"


def _obligations(ch: Chapter, here: str, status: ProveStatus) -> str:
    ids = sorted((i for i in REGISTRY.obligations if obligation_chapter(i) == ch),
                 key=po_sort_key)
    rows = []
    for ident in ids:
        po = REGISTRY.obligations[ident]
        covers = ", ".join(to_op(c, here) if c in REGISTRY.ops else f"`{c}`" for c in po.covers)
        rows.append((f'<a id="{po_id(ident)}"></a>{ident}', po.kind, typeset(po.statement),
                     "; ".join(f"{m.name}: {m.description}" for m in po.mutants),
                     covers, *status.shown(ident)))
    head = (*OBLIGATION_HEAD[:3], "mutants it kills", "covers", *OBLIGATION_HEAD[4:])
    return table(head, rows) if rows else ""


def _by_chapter(here: str) -> str:
    """How many obligations of each kind each chapter has, and the mutants they must kill."""
    counts: dict[Chapter, dict[str, int]] = {}
    for ident, po in REGISTRY.obligations.items():
        row = counts.setdefault(obligation_chapter(ident), {})
        row[po.kind] = row.get(po.kind, 0) + 1
        row["mutants"] = row.get("mutants", 0) + len(po.mutants)
    kinds = ("z3", "model", "property", "contract")
    rows = [(f"[{system(c.system).name} {c.label}]({relative(c.filename, here)}#proof-obligations)",
             *(counts[c].get(k, 0) for k in kinds), counts[c]["mutants"])
            for c in CHAPTERS if c in counts]
    total = [sum(r[i] for r in rows) for i in range(1, len(kinds) + 2)]
    return table(("chapter", *kinds, "mutants"), [*rows, ("all", *total)])


def _module_text(m: str) -> str:
    return f"**{module_path(m)}.** {typeset(_CHAPTER_PREFIX.sub('', module_doc(m)))}"


def render_chapter(ch: Chapter, status: ProveStatus, figures: list[tuple[str, str]]) -> str:
    """The whole chapter as Markdown."""
    here = ch.filename
    out = [f"# {ch.label}"]
    if ch.note:
        out.append(ch.note)
    out += [_module_text(m) for m in ch.modules]
    for m in ch.about:
        path, doc = tool_doc(m)
        out += [f"**{path}.** {typeset(doc)}"]
    if figures:
        out += ["## Figures"] + [f"![{title}]({relative(f'figures/{name}', here)})"
                                 for title, name in figures]
    if ch.about:
        out += ["## Obligations by chapter", _by_chapter(here)]
    layouts = sorted({s.name: s for s in REGISTRY.layouts.values()
                      if layout_chapter(s.name) == ch}.values(), key=lambda s: s.name)
    if layouts:
        out += ["## Layouts"] + [layout_section(s, here, relative(
            f"figures/{layout_figure(s.name)}", here)) for s in layouts]
    consts = _constants(ch)
    if consts:
        out += ["## Constants", consts]
    ops = sorted((o for o in REGISTRY.ops.values() if op_chapter(o.name) == ch),
                 key=lambda o: o.name)
    if ops:
        out += ["## Ops"] + [op_section(o, here, status) for o in ops]
    errata = sorted((e for e in REGISTRY.errata.values() if erratum_chapter(e.id) == ch),
                    key=lambda e: po_sort_key(e.id))
    if errata:
        out += ["## Errata"] + [_erratum(e, here) for e in errata]
    pos = _obligations(ch, here, status)
    if pos:
        out += [heading(2, "Proof obligations", "proof-obligations"), pos]
    defs = _definitions(ch)
    if defs:
        out.append(defs)
    if ch.pending:
        out += ["## Not yet specified",
                "These parts of the seed systems are described in the facts sheets but not yet "
                "stated by this spec: no op, layout or obligation covers them.",
                table(("what", "facts"), [(p.what, p.facts) for p in ch.pending])]
    return "\n\n".join(out) + "\n"


def layout_figure(name: str) -> str:
    """The file name of a struct's byte map."""
    return "layout-" + "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-") + ".svg"
