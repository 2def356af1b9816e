"""Figures drawn by Graphviz: the protocol state machines, explored from their spec
definitions and folded onto the state the reader cares about (a mode, a count), and the
Merkle DAG the background thread builds from a trace."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..commands.common import UsageError
from ..spec.core.machine import Machine
from ..spec.crucible import replay_machines as rm
from ..spec.crucible.pipeline import PipelineRun
from ..spec.crucible.replay_region import Guard
from ..spec.crucible.ring_protocol import meta_log_model, trace_ring_model
from .figure import Figure
from .plots import bundled_run

MAX_STATES = 20_000
"""Exploration bound for a figure: the machines below stay well under it."""


@dataclass(frozen=True)
class FoldedMachine:
    """A machine's reachable states folded by `label`: nodes, and labelled edges between them."""

    name: str
    initial: str
    nodes: tuple[str, ...]
    edges: tuple[tuple[str, str, str], ...]
    states: int


def fold(m: Machine, label: Callable, action: Callable[[str], str]) -> FoldedMachine:
    """Every state reachable from the initial one (breadth first), each shown as `label(s)`;
    a step between two shown states is an edge named `action(step label)`."""
    seen, queue = {m.initial}, deque([m.initial])
    nodes, edges = {label(m.initial)}, set()
    while queue:
        s = queue.popleft()
        for step, t in m.steps(s):
            a, b = label(s), label(t)
            nodes.add(b)
            if a != b:
                edges.add((a, action(step), b))
            if t not in seen and len(seen) < MAX_STATES:
                seen.add(t)
                queue.append(t)
    return FoldedMachine(m.name, label(m.initial), tuple(sorted(nodes)), tuple(sorted(edges)),
                         len(seen))


def quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def machine_dot(f: FoldedMachine) -> str:
    """The folded machine in the DOT language; parallel edges are merged into one label."""
    merged: dict[tuple[str, str], list[str]] = {}
    for a, act, b in f.edges:
        merged.setdefault((a, b), []).append(act)
    lines = ["digraph machine {", "  rankdir=TB;", '  node [shape=box, style="rounded", '
             'fontname="DejaVu Sans", fontsize=10];', '  edge [fontname="DejaVu Sans", '
             'fontsize=8];', f"  label={quote(f'{f.name}: {f.states} states explored')};",
             '  start [shape=point];', f"  start -> {quote(f.initial)};"]
    lines += [f"  {quote(n)};" for n in f.nodes]
    lines += [f"  {quote(a)} -> {quote(b)} [label={quote(', '.join(sorted(set(acts))))}];"
              for (a, b), acts in sorted(merged.items())]
    return "\n".join([*lines, "}"]) + "\n"


def render_dot(dot: str) -> str:
    """The SVG Graphviz's dot draws from `dot`."""
    import graphviz

    try:
        return graphviz.Source(dot).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise UsageError("drawing graphs needs Graphviz's dot program: install Graphviz "
                         "(Debian: apt-get install graphviz)") from None


def dot_figure(name: str, title: str, chapter: int, dot: str) -> Figure:
    return Figure(name, title, chapter, dot, lambda: render_dot(dot))


def _verb(step: str) -> str:
    """A step label without its operands: `commit 1` -> `commit`."""
    return re.sub(r"[\s:(].*$", "", step) or step


def _side(step: str) -> str:
    return {"P": "producer", "C": "consumer"}.get(step[:1], step)


def _ring_label(capacity: int) -> Callable:
    return lambda s: f"{s.head - s.tail} of {capacity} used" + (
        " (producer mid-append)" if s.producer is not None else "")


def _context_label(s: rm.Snap) -> str:
    c = s.obj
    if c.active_region is None:
        return c.mode.name
    return f"{c.mode.name}\nregion {c.active_region.rid}, cursor {c.engine.cursor}"


def _vigil_label(s: rm.Snap) -> str:
    return s.obj.mode.name + ("\n(a region is pending)" if s.obj.pending_region else "")


_A, _B, _X = Guard(0xA, 1), Guard(0xB, 2), Guard(0xE, 9)


def _machines() -> list[tuple[str, str, int, Machine, Callable, Callable]]:
    """(file, caption, chapter, machine, state label, step label) of each drawn machine."""
    region, alt = rm.chain(0, [_A, _B]), rm.chain(1, [_A, _X])
    alphabet = {"a": _A, "b": _B, "x": _X}
    return [
        ("machine-trace-ring.svg", "TraceRing: the SPSC protocol, capacity 2", 4,
         trace_ring_model(2, 3, 1).machine(), _ring_label(2), _side),
        ("machine-meta-log.svg", "MetaLog: the SPSC protocol, capacity 4", 4,
         meta_log_model(4, (2, 1, 2), 32).machine(), _ring_label(4), _side),
        ("machine-crucible-context.svg", "CrucibleContext: its modes", 11,
         rm.context_machine([region, alt], alphabet), _context_label, _verb),
        ("machine-vigil.svg", "Vigil: the foreground's modes, two regions published", 11,
         rm.vigil_machine([region, alt], alphabet, 2), _vigil_label, _verb),
        ("machine-transaction-log.svg", "TransactionLog<2>: the status of each entry", 18,
         rm.txlog_machine(2), lambda s: " / ".join(t.status.name for t in s.obj.entries)
         + (f" (active {s.obj.active})" if s.obj.active is not None else ""), _verb),
    ]


def machine_figures() -> list[Figure]:
    out = []
    for name, title, chapter, m, label, action in _machines():
        out.append(dot_figure(name, title, chapter, machine_dot(fold(m, label, action))))
    return out


def _runs(run: PipelineRun, fold: bool) -> list[tuple[int, int]]:
    """Runs [first, last] of consecutive regions with the same content hash and pool (each
    region alone when not `fold`)."""
    if not fold:
        return [(k, k) for k in range(len(run.regions))]
    out: list[tuple[int, int]] = []

    def key(k: int) -> tuple:
        r = run.regions[k]
        return r.graph.content_hash, r.plan.pool_bytes if r.plan else 0

    for k in range(len(run.regions)):
        if out and key(out[-1][1]) == key(k):
            out[-1] = (out[-1][0], k)
        else:
            out.append((k, k))
    return out


def dag_dot(run: PipelineRun, title: str, fold: bool = True) -> str:
    """The regions the pipeline made, in order (consecutive equal ones folded into one box
    when `fold`), each pointing at the kernel its content hash compiles to: equal contents
    share one kernel (a kernel-cache hit)."""
    lines = ["digraph dag {", "  rankdir=TB;", '  node [fontname="DejaVu Sans", fontsize=9];',
             '  edge [fontname="DejaVu Sans", fontsize=8];', f"  label={quote(title)};",
             '  trace [shape=oval, label="recorded trace"];']
    previous, kernels = "trace", set()
    for first, last in _runs(run, fold):
        r, end = run.regions[first], run.regions[last]
        content = f"0x{r.graph.content_hash:016x}"
        name = f"region {first}" if first == last else f"regions {first}..{last} " \
                                                       f"(x{last - first + 1})"
        label = (f"{name}\nops {r.window.start}..{end.window.start + end.window.count - 1}\n"
                 f"merkle 0x{r.merkle_hash:016x}\npool {r.plan.pool_bytes if r.plan else 0} B")
        lines += [f"  r{first} [shape=box, label={quote(label)}];", f"  {previous} -> r{first};"]
        if content not in kernels:
            kernels.add(content)
            lines.append(f"  k{content} [shape=component, "
                         f"label={quote(f'kernel for content{chr(10)}{content}')}];")
        lines.append(f'  r{first} -> k{content} [style=dashed, label="content"];')
        previous = f"r{first}"
    return "\n".join([*lines, "}"]) + "\n"


def dag_figure() -> Figure:
    """The bundled MLP's regions one by one: their Merkle hashes chain and differ, their equal
    contents share one kernel."""
    run = bundled_run("mlp")
    title = (f"Merkle DAG of the bundled MLP trace: {len(run.regions)} regions, one kernel "
             "for their equal contents")
    return dot_figure("dag-mlp.svg", title, 9, dag_dot(run, title, fold=False))
