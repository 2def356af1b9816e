"""`crucible-spec ops`: the coverage table of every registered op (design §2).

One row per op: its chapter, whether the reference, numba and cupy implementations exist (or
why a backend is not applicable, or which package they need that is not installed here), how
many conformance cases cover it, its proof obligations and its errata. A hole shows as MISSING
the moment it exists.
"""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass, field

from .commands.console import render as render_table
from .commands.console import table as console_table
from .conformance import vectors
from .spec.core.optional import installed
from .spec.core.registry import BACKENDS, REGISTRY

YES, NA, MISSING = "yes", "n/a", "MISSING"


@dataclass
class Row:
    op: str
    chapter: int
    reference: str
    numba: str
    cupy: str
    vectors: int
    obligations: list[str]
    errata: list[str]
    reasons: dict[str, str]
    proof_note: str = ""
    modules: dict = field(default_factory=dict)
    """Repository paths of the op's spec, reference, kernel and proof modules."""
    needs: list[str] = field(default_factory=list)
    """Optional packages the op needs (a cell shows `needs X` where X is not installed)."""

    @property
    def holes(self) -> list[str]:
        cells = {"reference": self.reference, "numba": self.numba, "cupy": self.cupy}
        holes = [k for k, v in cells.items() if v == MISSING]
        return holes + (["vectors"] if self.vectors == 0 else [])


def vector_counts() -> dict[str, int]:
    """Cases per op in the bundled suite of the default profile (none if it is missing)."""
    try:
        manifest = vectors.load_manifest(vectors.VECTORS_DIR, "crucible")
    except FileNotFoundError:
        return {}
    return {f["op"]: f["count"] for f in manifest["files"].values()}


def rows() -> list[Row]:
    counts = vector_counts()
    out = []
    for name in sorted(REGISTRY.ops, key=lambda n: (REGISTRY.ops[n].chapter, n)):
        op = REGISTRY.ops[name]
        cells, reasons = {}, {}
        absent = [p for p in op.needs if not installed(p)]
        present = f"needs {', '.join(absent)}" if absent else YES
        for b in BACKENDS:
            if b in op.not_applicable:
                cells[b], reasons[b] = NA, op.not_applicable[b]
            else:
                cells[b] = present if name in REGISTRY.kernels[b] else MISSING
        out.append(Row(name, op.chapter, present if name in REGISTRY.references else MISSING,
                       cells["numba"], cells["cupy"], counts.get(name, 0),
                       REGISTRY.obligations_for(name), REGISTRY.errata_for(name), reasons,
                       op.proof_note, module_paths(name), list(op.needs)))
    return out


def repo_path(dotted: str) -> str:
    """`crucible_spec.spec.ringkernel.hlc.ops` -> `spec/ringkernel/hlc/ops.py` (the layer
    folders sit at the repository's root)."""
    return dotted.removeprefix("crucible_spec.").replace(".", "/") + ".py"


def module_paths(name: str) -> dict:
    """Where op `name` lives in each layer: spec, reference, numba, cupy (None where the layer
    has no implementation) and the modules of its proof obligations."""
    out = {"spec": repo_path(REGISTRY.ops[name].module)}
    for layer in ("reference", *BACKENDS):
        module = REGISTRY.modules.get((name, layer))
        out[layer] = repo_path(module) if module else None
    proofs = {inspect.unwrap(getattr(po.build, "func", po.build)).__module__
              for po in map(REGISTRY.obligations.get, REGISTRY.obligations_for(name)) if po}
    out["proofs"] = sorted(repo_path(m) for m in proofs)
    return out


def render(table: list[Row]) -> str:
    """The table as aligned text, with a numbered note for every n/a cell."""
    notes: dict[str, int] = {}

    def cell(row: Row, backend: str) -> str:
        value = getattr(row, backend)
        if value != NA:
            return value
        return f"n/a {note(row.reasons[backend])}"

    def note(reason: str) -> str:
        notes.setdefault(reason, len(notes) + 1)
        return f"[{notes[reason]}]"

    def pos(row: Row) -> str:
        ids = row.obligations
        if not ids:
            return f"- {note(row.proof_note)}" if row.proof_note else "-"
        return ", ".join(ids) if len(ids) <= 3 else f"{len(ids)} ({ids[0]} .. {ids[-1]})"

    header = ["op", "ch", "reference", "numba", "cupy", "vectors", "POs", "errata"]
    body = [[r.op, str(r.chapter), r.reference, cell(r, "numba"), cell(r, "cupy"),
             str(r.vectors), pos(r), ", ".join(r.errata) or "-"]
            for r in table]
    lines = [render_table(console_table(header, body))]
    holes = [f"{r.op}: {', '.join(r.holes)}" for r in table if r.holes]
    lines.append("")
    lines += [f"[{n}] {reason}" for reason, n in notes.items()]
    lines.append(f"{len(table)} ops; " + (f"{len(holes)} with holes: " + "; ".join(holes)
                                          if holes else "no coverage holes"))
    return "\n".join(lines)


def as_json(table: list[Row]) -> list[dict]:
    return [asdict(r) | {"holes": r.holes} for r in table]
