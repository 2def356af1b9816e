"""An op as the paper states it: wire name, argument and result fields, one worked example
from the vectors, the spec functions that define it, its proof obligations and its errata."""

from __future__ import annotations

from ..conformance.vectors import VECTORS_DIR, Case, op_path
from ..spec.core.errata import DEFAULT_PROFILE
from ..spec.core.registry import REGISTRY, Op
from ..spec.core.schema import Record
from .links import op_id, to_erratum, to_fn, to_po
from .markdown import as_json, code, heading, table, typeset
from .source import defined_in
from .status import ProveStatus

EXAMPLE_MAX_CHARS = 4000
"""A worked example longer than this is shown by its size and case id instead."""
_GOLDEN = "crucible "


def _fields(rec: Record) -> list[tuple[str, str, str, str]]:
    return [(f"`{name}`", f.type.describe(), "yes" if f.required else "no", f.doc)
            for name, f in rec.fields.items()]


def _trivial(value: object) -> bool:
    """Whether a JSON value shows nothing: every number in it zero, every string empty or an
    all-zero hex word or bytes, every tensor empty, every list or object empty or trivial."""
    if isinstance(value, dict) and value.get("data") == "" and "shape" in value:
        return True
    if isinstance(value, dict):
        return all(_trivial(v) for v in value.values())
    if isinstance(value, list):
        return all(_trivial(v) for v in value)
    if isinstance(value, str):
        return not value.removeprefix("0x").strip("0")
    return not value


def _shows_nothing(case: Case) -> bool:
    """A case whose arguments or answer are all zero or empty, or that answers its argument."""
    result = case.result if case.error is None else None
    echoes = isinstance(result, dict) and sorted(map(str, result.values())) == sorted(
        map(str, case.args.values()))
    return _trivial(case.args) or (result is not None and _trivial(result)) or echoes


def example_case(op: Op) -> tuple[int, Case] | None:
    """The op's worked example: a case that shows what the op computes (not all zeros or
    empty, not its argument echoed), the shortest golden case of the real code, else the
    shortest edge case, else the shortest case; answers before errors. (line number, case)."""
    path = VECTORS_DIR / DEFAULT_PROFILE / op_path(op)
    if not path.exists():
        return None
    lines = [ln for ln in path.read_text().split("\n") if ln]

    def rank(item: tuple[int, str]) -> tuple:
        case = Case.from_line(item[1])
        family = 0 if case.source.startswith(_GOLDEN) else 1 if case.source == "edge" else 2
        return (case.error is not None, _shows_nothing(case), family, len(item[1]), item[0])

    number, line = min(enumerate(lines, 1), key=rank)
    return number, Case.from_line(line)


def _example(op: Op) -> str:
    found = example_case(op)
    if found is None:
        return "No vector yet."
    number, case = found
    case_id = f"{DEFAULT_PROFILE}/{op_path(op)}:{number}"
    request = as_json({"id": 1, "op": op.name, "args": case.args})
    answer = as_json({"id": 1, "ok": True, "result": case.result} if case.error is None
                     else {"id": 1, "ok": False, "error": {"code": case.error}})
    if len(request) + len(answer) > EXAMPLE_MAX_CHARS:
        return (f"Worked example: case `{case_id}` ({case.source}); its request is "
                f"{len(request):,} characters long, so it is not printed here.")
    return (f"Worked example, case `{case_id}` ({case.source}): the request, then the answer.\n\n"
            + code(f"{request}\n{answer}", "json"))


def _spec_functions(op: Op, here: str) -> str:
    names = []
    for fn in op.spec:
        where = defined_in(fn)
        names.append(to_fn(*where, here) if where else f"`{fn.__module__}.{fn.__qualname__}`")
    return ", ".join(names)


def _obligation_list(ids: list[str], status: ProveStatus, here: str) -> str:
    return ", ".join(f"{to_po(i, here)} ({REGISTRY.obligations[i].kind}, "
                     f"{status.shown(i)[0]})" for i in ids)


OBLIGATION_HEAD = ("obligation", "kind", "statement", "mutants", "status", "seconds")


def op_section(op: Op, here: str, status: ProveStatus) -> str:
    """The op's heading and everything a reader or an implementer needs to answer it."""
    parts = [heading(3, f"`{op.name}`", op_id(op.name)), typeset(op.summary),
             f"Defined by {_spec_functions(op, here)}. Compared "
             + ("exactly." if op.compare == "exact" else f"within the envelope `{op.compare}`."),
             "**Arguments**", table(("field", "type", "required", "meaning"), _fields(op.args)),
             "**Result**", table(("field", "type", "required", "meaning"), _fields(op.result)),
             f"JSON Schemas: `conformance/schemas/{op.name}.json`.", _example(op)]
    if op.invalid:
        parts.append("Refused inputs: " + "; ".join(
            f"{c.description} (`{c.code}`)" for c in op.invalid) + ".")
    ids = REGISTRY.obligations_for(op.name)
    if ids:
        parts.append(f"**Proof obligations:** {_obligation_list(ids, status, here)}; their "
                     "statements are in the chapter's table of obligations.")
    elif op.proof_note:
        parts.append(f"No proof obligation: {op.proof_note}")
    errata = REGISTRY.errata_for(op.name)
    if errata:
        parts.append("**Errata:** " + ", ".join(
            f"{to_erratum(e, here)} ({REGISTRY.errata[e].title})" for e in errata) + ".")
    return "\n\n".join(parts)

