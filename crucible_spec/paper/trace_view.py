"""The trace view (`crucible-spec render`): one iteration of a recorded trace cut into blocks
by the spec's block detector (`vis.detect_blocks`), each block coloured by its ops' main
family, laid out top to bottom by Graphviz's layered layout (dot).

The detector finds the optimizer by name only (its first OPTIM-family op: foreach, fused Adam,
addcmul, addcdiv, lerp), so an optimizer that steps parameter by parameter with plain
arithmetic (SGD's mul_ and add_) would stay in the backward pass. A .crtrace records each op's
training phase (op_flags bits 2-3), so the view starts the optimizer at the first op recorded
in the optimizer phase when that comes first (with_recorded_optimizer)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..spec.core.errata import NO_ERRATA
from ..spec.crucible.crtrace import LoadedTrace
from ..spec.crucible.pipeline import Window
from ..spec.crucible.types import OP_FLAG_PHASE_SHIFT, TrainingPhase
from ..spec.crucible.vis import (
    PARAM_OP,
    Block,
    BlockKind,
    Detection,
    OpFamily,
    Phase,
    TraceOp,
    classify_family,
    detect_blocks,
    guess_architecture,
    make_block,
)
from .graphs import quote

FILL = {
    OpFamily.GEMM: "#DBEAFE", OpFamily.CONV: "#E0E7FF", OpFamily.NORM: "#FEF3C7",
    OpFamily.ATTN: "#FCE7F3", OpFamily.ACT: "#DCFCE7", OpFamily.ELEM: "#F1F5F9",
    OpFamily.MOVE: "#F5F5F4", OpFamily.REDUCE: "#CCFBF1", OpFamily.OPTIM: "#FFEDD5",
    OpFamily.LOSS: "#FEE2E2", OpFamily.EMBED: "#EDE9FE", OpFamily.POOL: "#E0F2FE",
    OpFamily.OTHER: "#FFFFFF",
}
"""Block fill by its most frequent family (the real renderer's palette idea, our colours)."""
PHASE_TITLE = {Phase.FORWARD: "forward", Phase.BACKWARD: "backward",
               Phase.OPTIMIZER: "optimizer"}


def short_name(full: str) -> str:
    """The schema's short name: no namespace, no overload (`aten::addmm.default` -> `addmm`)."""
    return full.rsplit("::", 1)[-1].split(".", 1)[0]


def trace_ops(trace: LoadedTrace, window: Window) -> list[TraceOp]:
    """The ops of `window` as the detector reads them. A .crtrace keeps scope hashes, not
    paths, so an op's scope is its hash's hex (one component) and 0 is no scope."""
    out = []
    for i in range(window.start, window.start + window.count):
        e, start = trace.entries[i], trace.meta_starts[i]
        outputs = trace.metas[start + e["num_inputs"]:start + e["num_inputs"] + e["num_outputs"]] \
            if e["num_outputs"] and start != 0xFFFFFFFF else []
        sizes = tuple(outputs[0]["sizes"][:outputs[0]["ndim"]]) if outputs else ()
        scope = trace.scope_hashes[i]
        out.append(TraceOp(short_name(trace.names.get(e["schema_hash"], "")),
                           f"{scope:016x}" if scope else "", sizes))
    return out


def recorded_phases(trace: LoadedTrace, window: Window) -> list[int]:
    """Each op's training phase as the recorder wrote it (op_flags bits 2-3)."""
    return [trace.entries[i]["op_flags"] >> OP_FLAG_PHASE_SHIFT & 3
            for i in range(window.start, window.start + window.count)]


def with_recorded_optimizer(ops: list[TraceOp], phases: list[int], found: Detection,
                            errata: frozenset[str] = NO_ERRATA) -> Detection:
    """The detection, with the optimizer starting at the first op recorded in the optimizer
    phase when the detector's own optimizer starts later (or not at all): the ops before it
    are cut by the detector, the recorded optimizer ops form the optimizer block, and what
    follows the last of them is the epilogue."""
    first_bwd = next((i for i, op in enumerate(ops) if "backward" in op.name), len(ops))
    marked = [i for i, p in enumerate(phases) if p == TrainingPhase.OPTIMIZER and i >= first_bwd]
    if not marked or marked[0] >= found.optim_start:
        return found
    start, last = marked[0], marked[-1]
    head = detect_blocks(ops[:start], errata=errata)
    params = sum(op.name == PARAM_OP for op in ops[start:last + 1])
    blocks = [*head.blocks, make_block(ops, start, last, BlockKind.OPTIMIZER, Phase.OPTIMIZER,
                                       f"Optimizer ({params} params)" if params else
                                       "Optimizer")]
    if last + 1 < len(ops):
        blocks.append(make_block(ops, last + 1, len(ops) - 1, BlockKind.EPILOGUE,
                                 Phase.OPTIMIZER, "Epilogue"))
    return Detection(blocks, guess_architecture(blocks), head.fwd_end, start - 1, start)


@dataclass(frozen=True)
class BlockEdge:
    src: int
    dst: int
    data: bool


def block_edges(trace: LoadedTrace, window: Window, blocks: list[Block]) -> list[BlockEdge]:
    """Sequential edges between consecutive blocks, and a data edge from the block that wrote
    a storage (data_ptr) to each later, non-adjacent block that reads it."""
    owner = {}
    for k, b in enumerate(blocks):
        for i in range(b.start_op, b.end_op + 1):
            owner[i] = k
    edges = {BlockEdge(k, k + 1, False) for k in range(len(blocks) - 1)}
    writer: dict[int, int] = {}
    for i in range(window.count):
        e, start = trace.entries[window.start + i], trace.meta_starts[window.start + i]
        if start == 0xFFFFFFFF or i not in owner:
            continue
        metas = trace.metas[start:start + e["num_inputs"] + e["num_outputs"]]
        for m in metas[:e["num_inputs"]]:
            src = writer.get(m["data_ptr"])
            if src is not None and owner[i] > src + 1:
                edges.add(BlockEdge(src, owner[i], True))
        for m in metas[e["num_inputs"]:]:
            if m["data_ptr"]:
                writer[m["data_ptr"]] = owner[i]
    return sorted(edges, key=lambda x: (x.src, x.dst, x.data))


def _node(k: int, b: Block, ops: list[TraceOp], offset: int, errata: frozenset[str]) -> str:
    names = Counter(op.name or "?" for op in ops[b.start_op:b.end_op + 1])
    families = Counter(classify_family(op.name, errata) for op in ops[b.start_op:b.end_op + 1])
    main = families.most_common(1)[0][0]
    top = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in names.most_common(3))
    text = (f"{b.label}\nops {offset + b.start_op}..{offset + b.end_op} ({b.num_ops}): "
            f"{top}\n{main.name.lower()}")
    return f"    b{k} [label={quote(text)}, fillcolor=\"{FILL[main]}\"];"


def view_dot(trace: LoadedTrace, window: Window, title: str,
             errata: frozenset[str] = NO_ERRATA) -> tuple[str, Detection]:
    """The DOT source of the view, and the detection it draws."""
    ops = trace_ops(trace, window)
    found = with_recorded_optimizer(ops, recorded_phases(trace, window),
                                    detect_blocks(ops, errata=errata), errata)
    lines = ["digraph trace {", "  rankdir=TB;", "  newrank=true;",
             '  node [shape=box, style="rounded,filled", fontname="DejaVu Sans", fontsize=9];',
             '  edge [fontname="DejaVu Sans", fontsize=8];',
             f"  label={quote(f'{title}: {found.architecture.name.lower()}')};"]
    for phase, name in PHASE_TITLE.items():
        members = [k for k, b in enumerate(found.blocks) if b.phase == phase]
        if not members:
            continue
        lines += [f"  subgraph cluster_{name} {{", f"    label={quote(name)};",
                  '    style="dashed";']
        lines += [_node(k, found.blocks[k], ops, window.start, errata) for k in members]
        lines.append("  }")
    for e in block_edges(trace, window, found.blocks):
        style = '[color="#F97316", constraint=false, label="data"]' if e.data else \
            '[color="#94A3B8"]'
        lines.append(f"  b{e.src} -> b{e.dst} {style};")
    return "\n".join([*lines, "}"]) + "\n", found
