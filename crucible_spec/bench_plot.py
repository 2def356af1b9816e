"""`crucible-spec bench --plot FILE.svg`: seconds per implementation per op and size, as a
log-scale bar chart in plain SVG (no plotting library; the same rows give the same bytes).

1. Cells: for each row (an op at a size), each measured implementation and its seconds, in
   the order reference, kernels, end to end, wire implementations.
2. Scale: y is log10 seconds between the decades around the smallest and largest cell.
3. Layout: one group of bars per row along x, one colour per implementation (legend on the
   right); an extrapolated reference is drawn half transparent.
"""

from __future__ import annotations

import math
from html import escape

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")
BAR_W, GAP, PLOT_H, LEFT, TOP, BOTTOM = 14, 18, 320, 70, 20, 110


def cells(row) -> list[tuple[str, float, bool]]:
    """(implementation, seconds, extrapolated) for every implementation the row measured."""
    out = []
    if row.reference is not None:
        out.append(("reference", row.reference, row.reference_from is not None))
    out += [(f"{b} kernel", s, False) for b, s in row.kernel.items()]
    out += [(f"{b} e2e", s, False) for b, s in row.end_to_end.items()]
    out += [(name, s, False) for name, s in row.wire.items()]
    return [c for c in out if c[1] > 0]


def _decades(values: list[float]) -> tuple[int, int]:
    lo = math.floor(math.log10(min(values)))
    hi = math.ceil(math.log10(max(values)))
    return lo, max(hi, lo + 1)


def _label_s(decade: int) -> str:
    return f"1e{decade} s"


def render_svg(rows: list) -> str:
    """The chart of `rows` as an SVG document; each bar is a <rect class="bar">."""
    groups = [(f"{r.op} n={r.n}", cells(r)) for r in rows]
    series = list(dict.fromkeys(name for _, cs in groups for name, _, _ in cs))
    colour = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    values = [s for _, cs in groups for _, s, _ in cs] or [1.0]
    lo, hi = _decades(values)
    widths = [max(len(cs), 1) * BAR_W + GAP for _, cs in groups]
    plot_w = sum(widths) + GAP
    width, height = LEFT + plot_w + 200, TOP + PLOT_H + BOTTOM

    def y_of(sec: float) -> float:
        return TOP + PLOT_H * (hi - math.log10(sec)) / (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for d in range(lo, hi + 1):
        y = y_of(10.0 ** d)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">'
                   f'{_label_s(d)}</text>')
    x = LEFT + GAP
    for (label, cs), w in zip(groups, widths, strict=True):
        for i, (name, sec, extrapolated) in enumerate(cs):
            y = y_of(sec)
            opacity = ' fill-opacity="0.5"' if extrapolated else ""
            note = " (extrapolated)" if extrapolated else ""
            out.append(f'<rect class="bar" x="{x + i * BAR_W}" y="{y:.1f}" width="{BAR_W - 2}" '
                       f'height="{TOP + PLOT_H - y:.1f}" fill="{colour[name]}"{opacity}>'
                       f'<title>{escape(f"{label} {name}: {sec:.6g} s{note}")}</title></rect>')
        cx, cy = x + (w - GAP) / 2, TOP + PLOT_H + 8
        out.append(f'<text x="{cx:.1f}" y="{cy}" transform="rotate(40 {cx:.1f} {cy})">'
                   f'{escape(label)}</text>')
        x += w
    out.append(f'<line x1="{LEFT}" y1="{TOP + PLOT_H}" x2="{LEFT + plot_w}" '
               f'y2="{TOP + PLOT_H}" stroke="black"/>')
    for i, name in enumerate(series):
        ly = TOP + 14 * i
        out.append(f'<rect x="{LEFT + plot_w + 12}" y="{ly}" width="10" height="10" '
                   f'fill="{colour[name]}"/>')
        out.append(f'<text x="{LEFT + plot_w + 26}" y="{ly + 9}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
