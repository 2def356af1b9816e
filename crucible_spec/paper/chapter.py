"""One chapter of the paper: its modules' prose, layouts, constants, ops, errata, proof
obligations and the source of every definition, then what is not yet specified."""

from __future__ import annotations

import enum

from ..spec.core.errata import FLAGS
from ..spec.core.registry import REGISTRY, Erratum, po_sort_key
from .chapters import Chapter
from .layouts import layout_section
from .links import fn_id, po_id, to_op
from .markdown import as_json, code, heading, table
from .op_section import OBLIGATION_HEAD, op_section
from .source import Definition, constants, definitions, module_doc, module_path, tool_doc
from .status import ProveStatus


def _number(value: object) -> str:
    if isinstance(value, bytes):
        return f"{len(value)} bytes: `{value.hex()}`" if len(value) <= 32 else \
            f"{len(value)} bytes"
    if isinstance(value, int) and abs(value) > 255:
        return f"{value} (0x{value & ((1 << 64) - 1):x})" if value < 0 else f"{value} (0x{value:x})"
    return str(value)


def _constants(ch: Chapter) -> str:
    rows = [(f"`{c.name}`", _number(c.value), c.doc, f"{module_path(c.module)}:{c.line}")
            for m in ch.modules for c in constants(m)]
    return table(("constant", "value", "meaning and source", "spec"), rows) if rows else ""


def _enum_table(e: type[enum.Enum]) -> str:
    return table(("name", "value"), [(f"`{m.name}`", m.value) for m in e])


def _definition(d: Definition, here: str) -> str:
    kind = "enum" if isinstance(d.obj, type) and issubclass(d.obj, enum.Enum) else \
        "class" if isinstance(d.obj, type) else "function"
    where = f"{module_path(d.module)}, line {d.line}"
    parts = [heading(4, f"`{d.name}` ({kind})", fn_id(d.module, d.name)), f"*{where}*"]
    if kind == "enum":
        parts += [d.doc, _enum_table(d.obj)]
    else:
        parts.append(code(d.source, "python", d.line))
    return "\n\n".join(p for p in parts if p)


def _erratum(e: Erratum, here: str) -> str:
    witness = as_json(e.witness)
    parts = [heading(3, f"{e.id}: {e.title}", po_id(e.id)),
             table(("seed", "where in the seed", "flag", "ops"),
                   [(f"`{e.seed}`", e.location, f"{e.flag}: {FLAGS[e.flag]}",
                     ", ".join(to_op(o, here) for o in e.ops))]),
             e.detail, "Witness:", code(witness, "json")]
    if e.also:
        parts += ["Witnesses for the other ops it reaches:",
                  code("\n".join(as_json(w) for w in e.also), "json")]
    profiles = " and ".join(f"`{p}`" for p in (e.seed, *e.also_seeds))
    parts.append(f"The profile{'s' if e.also_seeds else ''} {profiles} turn"
                 f"{'' if e.also_seeds else 's'} it on; the default profile states the intended "
                 "behaviour.")
    return "\n\n".join(parts)


def _obligations(number: int, here: str, status: ProveStatus) -> str:
    ids = sorted((i for i in REGISTRY.obligations if po_sort_key(i)[1] == number),
                 key=po_sort_key)
    rows = []
    for ident in ids:
        po = REGISTRY.obligations[ident]
        covers = ", ".join(to_op(c, here) if c in REGISTRY.ops else f"`{c}`" for c in po.covers)
        rows.append((f'<a id="{po_id(ident)}"></a>{ident}', po.kind, po.statement,
                     "; ".join(f"{m.name}: {m.description}" for m in po.mutants),
                     covers, *status.shown(ident)))
    head = (*OBLIGATION_HEAD[:3], "mutants it kills", "covers", *OBLIGATION_HEAD[4:])
    return table(head, rows) if rows else ""


def _by_chapter() -> str:
    """How many obligations of each kind each chapter has, and the mutants they must kill."""
    from .chapters import CHAPTERS
    from .links import chapter as chapter_of

    counts: dict[int, dict[str, int]] = {}
    for ident, po in REGISTRY.obligations.items():
        row = counts.setdefault(po_sort_key(ident)[1], {})
        row[po.kind] = row.get(po.kind, 0) + 1
        row["mutants"] = row.get("mutants", 0) + len(po.mutants)
    kinds = ("z3", "model", "property", "contract")
    rows = [(f"[{n}. {chapter_of(n).title}]({chapter_of(n).filename}#proof-obligations)",
             *(counts[n].get(k, 0) for k in kinds), counts[n]["mutants"])
            for n in sorted(counts) if any(c.number == n for c in CHAPTERS)]
    total = [sum(r[i] for r in rows) for i in range(1, len(kinds) + 2)]
    return table(("chapter", *kinds, "mutants"), [*rows, ("all", *total)])


def render_chapter(ch: Chapter, status: ProveStatus, figures: list[tuple[str, str]]) -> str:
    """The whole chapter as Markdown."""
    here = ch.filename
    out = [f"# {ch.number}. {ch.title}"]
    for m in ch.modules:
        out += [f"**{module_path(m)}.** {module_doc(m)}"]
    for m in ch.about:
        path, doc = tool_doc(m)
        out += [f"**{path}.** {doc}"]
    if ch.about:
        out += ["## Obligations by chapter", _by_chapter()]
    layouts = sorted({s.name: s for s in REGISTRY.layouts.values() if s.chapter == ch.number}
                     .values(), key=lambda s: s.name)
    if layouts:
        out += ["## Layouts"] + [layout_section(s, here, layout_figure(s.name))
                                 for s in layouts]
    consts = _constants(ch)
    if consts:
        out += ["## Constants", consts]
    ops = sorted((o for o in REGISTRY.ops.values() if o.chapter == ch.number),
                 key=lambda o: o.name)
    if ops:
        out += ["## Ops"] + [op_section(o, here, status) for o in ops]
    errata = sorted((e for e in REGISTRY.errata.values() if po_sort_key(e.id)[1] == ch.number),
                    key=lambda e: po_sort_key(e.id))
    if errata:
        out += ["## Errata"] + [_erratum(e, here) for e in errata]
    pos = _obligations(ch.number, here, status)
    if pos:
        out += [heading(2, "Proof obligations", "proof-obligations"), pos]
    if figures:
        out += ["## Figures"] + [f"![{title}](figures/{name})" for title, name in figures]
    defs = [(m, definitions(m)) for m in ch.modules]
    if any(d for _, d in defs):
        out += ["## Definitions",
                "The code that runs, module by module, in source order."]
        for m, ds in defs:
            if ds:
                out += [f"### {module_path(m)}"] + [_definition(d, here) for d in ds]
    if ch.pending:
        out += ["## Not yet specified",
                "These parts of the seed systems are described in the facts sheets but not yet "
                "stated by this spec: no op, layout or obligation covers them.",
                table(("what", "facts"), [(p.what, p.facts) for p in ch.pending])]
    return "\n\n".join(out) + "\n"



def layout_figure(name: str) -> str:
    """The file name of a struct's byte map."""
    return "layout-" + "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-") + ".svg"
