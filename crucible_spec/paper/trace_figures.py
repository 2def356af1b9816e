"""`analyze --plot`: the paper's memory-plan and DAG figures for any trace."""

from __future__ import annotations

from pathlib import Path

from ..commands.common import write_output
from .graphs import dag_dot, dot_figure
from .plots import pipeline_of, region_plan_figure

MAX_PLANS = 8
"""Memory plans drawn per trace: one per distinct region content, the first this many."""


def trace_figures(data: bytes, errata: frozenset[str], name: str) -> list:
    """The DAG of the trace's regions and the memory plan of each distinct region."""
    run = pipeline_of(data, errata)
    figures = [dot_figure("dag.svg", "", 9, dag_dot(run, f"Merkle DAG of {name}: "
                                                        f"{len(run.regions)} regions"))]
    seen: set[int] = set()
    for k, region in enumerate(run.regions):
        content = region.graph.content_hash
        if content in seen or len(seen) == MAX_PLANS:
            continue
        seen.add(content)
        figures.append(region_plan_figure(
            region, f"memory-plan-region-{k}.svg",
            f"Memory plan of {name}, region {k} ({region.window.count} ops)"))
    return figures


def write_trace_figures(data: bytes, errata: frozenset[str], name: str, out: Path) -> list[Path]:
    """Draw them into `out` (created if missing); the files written."""
    out.mkdir(exist_ok=True)
    written = []
    for fig in trace_figures(data, errata, name):
        path = out / fig.name
        write_output(path, fig.draw().encode(), force=True)
        written.append(path)
    return written
