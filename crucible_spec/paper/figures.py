"""The paper's figures: each is what it draws (its data as text, whose digest the SVG
carries) and how to draw it. Byte maps of every struct are drawn here with matplotlib; the
memory plan in `plots`, the state machines and the DAG with Graphviz in `graphs`."""

from __future__ import annotations

import json

from ..spec.core.registry import REGISTRY
from .chapter import layout_figure
from .figure import Figure, pyplot, svg_of
from .graphs import dag_figure, machine_figures
from .layouts import ByteRow, byte_rows
from .plots import memory_plan_figure

GRID_MAX_BYTES = 256
"""Structs up to this size are drawn as a grid of bytes; larger ones as one bar per member."""


def _colour(k: int) -> tuple:
    from matplotlib import colormaps

    return colormaps["tab20"](k % 20)


def _draw_grid(name: str, rows: list[ByteRow], size: int) -> str:
    plt = pyplot()
    per_row = 8 if size <= 32 else 16
    lines = -(-size // per_row)
    fig, ax = plt.subplots(figsize=(per_row * 0.55 + 1.2, lines * 0.7 + 0.6))
    for k, r in enumerate(rows):
        colour = (0.85, 0.85, 0.85, 1) if r.padding else _colour(k)
        start, end, first = r.offset, r.offset + r.size, True
        while start < end:
            line, col = divmod(start, per_row)
            width = min(end - start, per_row - col)
            ax.add_patch(plt.Rectangle((col, line), width, 1, facecolor=colour,
                                       edgecolor="white", hatch="//" if r.padding else None))
            if first and not r.padding:
                across = len(r.field) <= width * 3.5
                ax.text(col + width / 2, line + 0.5, r.field, ha="center", va="center",
                        fontsize=6.5 if across else 5, rotation=0 if across else 90)
            first, start = False, start + width
    ax.set_xlim(0, per_row)
    ax.set_ylim(lines, 0)
    ax.set_xticks([c + 0.5 for c in range(per_row)], [str(c) for c in range(per_row)],
                  fontsize=6)
    ax.set_yticks([k + 0.5 for k in range(lines)], [str(k * per_row) for k in range(lines)],
                  fontsize=6)
    ax.set_title(f"{name}: {size} bytes", fontsize=8)
    ax.tick_params(length=0)
    return svg_of(fig)


def _draw_bars(name: str, rows: list[ByteRow], size: int) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, len(rows) * 0.3 + 0.8))
    for k, r in enumerate(rows):
        ax.barh(k, r.size, left=r.offset, color=(0.85, 0.85, 0.85, 1) if r.padding else _colour(k))
        ax.text(size * 1.01, k, f"{r.field} @{r.offset} ({r.size} B)", va="center", fontsize=6.5)
    ax.set_xscale("symlog", linthresh=64)
    ax.set_xlim(0, size)
    ax.set_yticks([])
    ax.invert_yaxis()
    ax.set_xlabel("byte offset (linear to 64, logarithmic after)")
    ax.set_title(f"{name}: {size} bytes", fontsize=8)
    return svg_of(fig)


def byte_map(struct) -> Figure:
    """The struct's bytes coloured by member, padding hatched."""
    rows = byte_rows(struct)
    source = json.dumps({"struct": struct.name, "size": struct.size, "rows": [
        [r.offset, r.size, r.field, r.padding] for r in rows]})
    draw = _draw_grid if struct.size <= GRID_MAX_BYTES else _draw_bars
    return Figure(layout_figure(struct.name), f"Byte map of {struct.name}", struct.chapter, source,
                  lambda: draw(struct.name, rows, struct.size))


def chapter_figures() -> dict[str, Figure]:
    """Every figure of the paper by file name."""
    structs = {id(s): s for s in REGISTRY.layouts.values()}.values()
    figs = [byte_map(s) for s in sorted(structs, key=lambda s: s.name)]
    figs += [memory_plan_figure(), dag_figure(), *machine_figures()]
    return {f.name: f for f in figs}
