"""`crucible-spec analyze`: run the background thread's pipeline over a .crtrace and report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import console
from .common import UsageError, check_output_dir, profile_errata, read_crtrace

SHOWN_BOUNDARIES = 12


def _key(r) -> tuple:
    return (r.num_ops, r.content_hash, r.num_edges, r.data_flow_edges, r.num_slots,
            r.num_external, r.pool_bytes, r.lower_bound, r.greedy_pool_bytes)


def _groups(regions: list) -> list[tuple[int, int, object]]:
    """Runs of consecutive regions that agree on everything but their position."""
    out: list[tuple[int, int, object]] = []
    for r in regions:
        if out and _key(out[-1][2]) == _key(r) and out[-1][1] == r.index - 1:
            out[-1] = (out[-1][0], r.index, out[-1][2])
        else:
            out.append((r.index, r.index, r))
    return out


def _quality(q: float | None) -> str:
    return "-" if q is None else f"{q:.3f}"


def plural(n: int, word: str) -> str:
    return word if n == 1 else ("boundaries" if word == "boundary" else word + "s")


def boundary_notes(a) -> list[str]:
    """How boundaries relate to regions (chapter 6 and 7): the detector reports a boundary
    at the op that completes the K-op signature of the next iteration, so the iteration it
    closes ends K ops before it; ops before the first region are warm-up."""
    from ..spec.crucible.iteration_detector import K

    if not a.regions:
        return []
    r = a.regions[0]
    end = r.start + r.num_ops - 1
    out = [f"  each boundary is the op that completes the {K}-op signature of the next "
           f"iteration, so the region it closes ends {K} ops before it:",
           f"  region {r.index} (ops {r.start}..{end}) is closed at op {r.boundary} = {end} + "
           f"{K}, and the next iteration starts at op {end + 1}"]
    if r.start > 0 and not any(w["start"] < r.start for w in a.skipped):
        out.append(f"  ops 0..{r.start - 1} precede region {r.index}: warm-up, seen while the "
                   f"detector learned and confirmed its signature")
    return out


def retained_note(a) -> str:
    """The ops the current trace still holds at the end: from the last boundary's signature
    on (K ops before it), or all ops when there is none."""
    if not a.retained:
        return "no op is left over"
    first = a.num_ops - a.retained
    return f"ops {first}..{a.num_ops - 1} ({a.retained}" + \
        (", from the last boundary's signature on" if a.boundaries else "") + \
        ") are not a completed iteration yet"


def render(a) -> str:
    lines = [f"{a.file}: {a.num_ops} ops, {a.num_metas} metas, {a.num_names} names "
             f"(profile {a.profile}, {a.impl})"]
    shown = ", ".join(str(b) for b in a.boundaries[:SHOWN_BOUNDARIES])
    more = f", ... ({len(a.boundaries)} in all)" if len(a.boundaries) > SHOWN_BOUNDARIES else ""
    lengths = sorted(set(a.iteration_lengths))
    lines.append(f"iterations: {len(a.boundaries)} {plural(len(a.boundaries), 'boundary')}" +
                 (f" at ops {shown}{more}" if a.boundaries else "") +
                 (f"; iteration lengths {', '.join(map(str, lengths[:6]))}" if lengths else ""))
    lines += boundary_notes(a)
    lines.append(f"regions: {len(a.regions)} built, {len(a.skipped)} skipped (MetaLog "
                 f"overflow); " + retained_note(a))
    if a.regions:
        header = ["region", "ops", "edges data/alias", "slots ext", "pool B", "lower bound B",
                  "pool/bound", "greedy B", "content = merkle"]
        right = ("pool B", "lower bound B", "pool/bound", "greedy B")
        rows = []
        for first, last, r in _groups(a.regions):
            name = str(first) if first == last else f"{first}-{last} (x{last - first + 1})"
            rows.append([name, f"{r.start}..{r.start + r.num_ops - 1}",
                         f"{r.num_edges} {r.data_flow_edges}/{r.alias_edges}",
                         f"{r.num_slots} {r.num_external}", str(r.pool_bytes),
                         str(r.lower_bound), _quality(r.quality), str(r.greedy_pool_bytes),
                         r.content_hash])
        lines += ["", console.render(console.table(header, rows, right=right))]
        rated = [r.quality for r in a.regions if r.quality is not None]
        if rated:
            lines.append(f"planner quality (pool / live-bytes lower bound): worst "
                         f"{max(rated):.3f}, mean {sum(rated) / len(rated):.3f} over "
                         f"{len(rated)} regions")
    d = a.dag
    if d:
        lines += ["", f"dag: {d['nodes']} region nodes, {d['distinct_merkle_hashes']} distinct "
                      f"Merkle hashes; kernel cache: {d['kernel_cache']['compiled']} compiled, "
                      f"{d['kernel_cache']['hits']} hits; steady state: "
                      f"{'yes' if d['steady_state'] else 'no'}"]
        why = d.get("steady_state_break")
        if why:
            lines.append(f"  regions {why['regions'][0]} and {why['regions'][1]} differ first at "
                         f"{why['text']} ({why['divergent_ops']} of their ops differ)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from ..analysis import analyze, steady_state_break
    from ..spec.core.errors import InvalidInput

    if args.plot:
        check_output_dir(args.plot)
    data = read_crtrace(args.trace)
    errata = profile_errata(args.profile)
    try:
        with console.steps("analyze", 1) as s:
            result = analyze(data, file=args.trace, profile=args.profile, errata=errata,
                             impl=args.impl, progress=lambda done, total: s.reach(
                                 done / max(total, 1), f"{done}/{total} ops"))
            if result.dag:
                result.dag["steady_state_break"] = steady_state_break(data, result, errata)
    except InvalidInput as e:
        raise UsageError(f"{args.trace}: not a valid .crtrace: {e.message}") from None
    print(json.dumps(result.to_json(), indent=2) if args.json else render(result))
    if args.plot:
        from ..paper.trace_figures import write_trace_figures

        written = write_trace_figures(data, errata, Path(args.trace).name, Path(args.plot))
        print(f"figures: {', '.join(str(p) for p in written)}", file=sys.stderr if args.json
              else sys.stdout)
    return 0


def layers(args: argparse.Namespace) -> tuple[str, ...]:
    """What analysis needs registered: the ops and their errata. The pipeline it runs (the
    spec's, or the numba kernels') is imported, not looked up, so neither the references, nor
    every kernel, nor the proof obligations are loaded (start-up stays short)."""
    return ("spec",)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "analyze", help="run the background thread's pipeline over a .crtrace",
        description="Load a .crtrace, feed its ops to the iteration detector, and build, plan "
                    "and hash every completed iteration the way the background thread does "
                    "(chapter 6). Reports the iteration boundaries; per region its ops, edges "
                    "by kind, slots, the pool against the live-bytes lower bound (the planner's "
                    "quality, pool / bound) and a "
                    "greedy-by-size planner (an extension, for comparison), its content and "
                    "Merkle hashes; and the DAG the regions form with the kernel cache they "
                    "fill. Consecutive identical regions are shown as one row.")
    p.add_argument("trace", metavar="TRACE.crtrace")
    p.add_argument("--json", action="store_true", help="the full report as JSON")
    p.add_argument("--profile", default="crucible",
                   help="errata profile (default crucible; crucible@8d2680a2 reproduces the "
                        "seed)")
    p.add_argument("--impl", choices=["numba", "reference"], default="numba",
                   help="run the pipeline through the numba kernels (default) or the reference")
    p.add_argument("--plot", metavar="DIR",
                   help="also draw the memory plan of each distinct region (the first 8) and "
                        "the regions' DAG as SVG into DIR (created if missing; files of the "
                        "same names are replaced)")
    p.set_defaults(func=run, layers=layers)
