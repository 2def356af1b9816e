"""The memory plan of a region as a picture: every internal slot a rectangle over its
lifetime (op index) and its bytes (pool offset), with the live bytes and their lower bound."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..spec.core.errata import NO_ERRATA
from ..spec.crucible.memory_plan import align256, live_lower_bound
from ..spec.crucible.pipeline import PipelineRun, Region, plan_slots_of, recorded_of, run_pipeline
from .figure import Figure, pyplot, svg_of

BUNDLED = Path(__file__).resolve().parents[2] / "examples" / "traces"
"""Traces recorded once from the bundled examples and committed, so figures are stable."""


@dataclass(frozen=True)
class PlannedSlot:
    offset: int
    nbytes: int
    birth: int
    death: int


def pipeline_of(data: bytes, errata: frozenset[str] = NO_ERRATA) -> PipelineRun:
    """What the background thread makes of a .crtrace image (the reference pipeline)."""
    from ..spec.crucible.crtrace import parse_crtrace

    return run_pipeline(recorded_of(parse_crtrace(data, errata)), None, errata)


@cache
def bundled_run(name: str) -> PipelineRun:
    return pipeline_of((BUNDLED / f"{name}.crtrace").read_bytes())


def planned_slots(region: Region) -> list[PlannedSlot]:
    """The region's internal slots with the offsets its plan gives them."""
    if region.plan is None:
        return []
    return [PlannedSlot(off, s.nbytes, s.birth_op, s.death_op)
            for s, off in zip(plan_slots_of(region.graph), region.plan.offsets, strict=True)
            if not s.is_external]


def live_bytes(slots: list[PlannedSlot], num_ops: int) -> list[int]:
    """Bytes (each slot rounded to 256) alive at each op of the region."""
    live = [0] * max(num_ops, 1)
    for s in slots:
        for i in range(s.birth, min(s.death, num_ops - 1) + 1):
            live[i] += align256(s.nbytes)
    return live


def plan_source(region: Region, title: str) -> str:
    slots = planned_slots(region)
    return json.dumps({"title": title, "ops": region.window.count,
                       "pool_bytes": region.plan.pool_bytes if region.plan else 0,
                       "slots": [[s.offset, s.nbytes, s.birth, s.death] for s in slots]})


def draw_plan(region: Region, title: str) -> str:
    """Slots as rectangles over [birth, death + 1) x [offset, offset + nbytes)."""
    plt = pyplot()
    slots, n = planned_slots(region), region.window.count
    pool = region.plan.pool_bytes if region.plan else 0
    bound = live_lower_bound(plan_slots_of(region.graph))
    fig, ax = plt.subplots(figsize=(7.5, 4))
    from matplotlib import colormaps

    cmap = colormaps["tab20"]
    for k, s in enumerate(slots):
        ax.add_patch(plt.Rectangle((s.birth, s.offset), s.death - s.birth + 1, align256(s.nbytes),
                                   facecolor=cmap(k % 20), edgecolor="black", linewidth=0.3))
    live = live_bytes(slots, n)
    ax.step(range(len(live) + 1), [*live, live[-1]], where="post", color="black",
            linewidth=1, label="live bytes")
    ax.axhline(bound, color="red", linestyle="--", linewidth=1,
               label=f"lower bound {bound:,} B")
    ax.axhline(pool, color="blue", linestyle=":", linewidth=1, label=f"pool {pool:,} B")
    ax.set_xlim(0, max(n, 1))
    ax.set_ylim(0, max(pool, bound, 1) * 1.08)
    ax.set_xlabel("op index in the region")
    ax.set_ylabel("pool offset (bytes)")
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7)
    return svg_of(fig)


def region_plan_figure(region: Region, name: str, title: str, chapter: int = 10) -> Figure:
    return Figure(name, title, chapter, plan_source(region, title),
                  lambda: draw_plan(region, title))


def memory_plan_figure() -> Figure:
    """The plan of the bundled MLP recording's last region (its steady state)."""
    run = bundled_run("mlp")
    region = run.regions[-1]
    title = (f"Memory plan of the bundled MLP trace, region {len(run.regions) - 1} "
             f"({region.window.count} ops)")
    return region_plan_figure(region, "memory-plan-mlp.svg", title)
