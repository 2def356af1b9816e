"""`oracle replay`: where and why Vigil's replay of a new stream leaves compiled mode.

The recording gives the regions (a .crtrace run through the background pipeline, or JSON);
the chosen one is published and the stream dispatched through the spec's Vigil. Every exit
from compiled mode is reported with the stream index, the region op it met, the guard level
that failed (schema, shape, scope, callsite: those the profile checks), the expected and got
hashes, the levels that differ but go unchecked under the profile, and what the alternate
search found. A JSON stream may also hold Vigil API calls ({"rollback": true}, {"persist": true},
{"load": true}); each gets a line with what it returned and where the context stands after it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from ..spec.core.errors import InvalidInput
from ..spec.core.schema import HASH64
from ..spec.crucible import region_cache as cache_
from ..spec.crucible import vigil as vg
from ..spec.crucible.cipher import Cipher
from ..spec.crucible.context import ContextMode
from ..spec.crucible.crtrace import parse_crtrace
from ..spec.crucible.pipeline import recorded_of, run_pipeline
from ..spec.crucible.replay_engine import ReplayStatus
from ..spec.crucible.replay_ops import stream_from_wire
from ..spec.crucible.replay_region import (
    LEVELS,
    Guard,
    ReplayRegion,
    checked_levels,
    failed_level,
    region_from_wire,
    regions_from_recording,
    regions_of_run,
)
from ..spec.crucible.vigil_ops import call, call_name, parse_stream
from ..spec.crucible.vigil_ops import load_regions as vigil_regions


class SourceError(Exception):
    """A recording or stream file the oracle cannot use, with the reason."""


def _read(path: str) -> bytes:
    from ..commands.common import UsageError, read_input

    try:
        return read_input(path)
    except UsageError as e:
        raise SourceError(str(e)) from None


def _json(path: str) -> Any:
    try:
        return json.loads(_read(path))
    except ValueError as e:
        raise SourceError(f"{path}: not JSON ({e})") from None


def _pipeline_regions(path: str, errata: frozenset[str]) -> list[ReplayRegion]:
    try:
        return regions_of_run(run_pipeline(recorded_of(parse_crtrace(_read(path), errata)),
                                           None, errata))
    except InvalidInput as e:
        raise SourceError(f"{path}: {e.message}") from None


def _is_recorded_op(o: Any) -> bool:
    return isinstance(o, dict) and bool({"inputs", "outputs", "scalars"} & set(o))


def load_regions(path: str, errata: frozenset[str]) -> list[ReplayRegion]:
    """A .crtrace (its pipeline's regions), or JSON: a region, vigil.dispatch's regions and
    recordings ({"regions": [...], "recordings": [...]}, or a whole request), or a recorded
    stream (trace.build's ops, with inputs/outputs)."""
    if path.endswith(".crtrace"):
        return _pipeline_regions(path, errata)
    value = _json(path)
    if isinstance(value, dict) and "args" in value:
        value = value["args"]
    try:
        if isinstance(value, dict) and ("regions" in value or "recordings" in value):
            return vigil_regions(value.get("regions", []), value.get("recordings", []), errata)
        ops = value.get("ops") if isinstance(value, dict) else value
        if isinstance(ops, list) and any(_is_recorded_op(o) for o in ops):
            return regions_from_recording(ops, 0, errata)
        return [region_from_wire(value, 0, "region")]
    except InvalidInput as e:
        raise SourceError(f"{path}: {e.message}") from None


def load_stream(path: str, errata: frozenset[str]) -> list[Guard | str]:
    """A .crtrace's ops, or JSON: a list of ops and API calls, or {"stream": [...]}."""
    if path.endswith(".crtrace"):
        try:
            t = parse_crtrace(_read(path), errata)
        except InvalidInput as e:
            raise SourceError(f"{path}: {e.message}") from None
        return [Guard(e["schema_hash"], e["shape_hash"], t.scope_hashes[i],
                      t.callsite_hashes[i]) for i, e in enumerate(t.entries)]
    value = _json(path)
    if isinstance(value, dict):
        value = value.get("stream", value.get("args", {}).get("stream", value.get("ops")))
    try:
        if isinstance(value, list) and any(call_name(o) for o in value):
            items = parse_stream(value, 0, "stream")
            for i, x in enumerate(items):
                if isinstance(x, list):
                    raise InvalidInput(f"stream[{i}]: an op has no field 'publish'")
            return items
        return stream_from_wire(value, "stream")
    except InvalidInput as e:
        raise SourceError(f"{path}: {e.message}") from None


@dataclass
class Exit:
    """One divergence met in compiled mode, and what came of it."""

    index: int
    region: int
    region_op: int
    level: str
    expected: int
    got: int
    unchecked: list[str]
    alternate: int | None
    switched: bool

    def to_json(self) -> dict:
        return {"index": self.index, "region": self.region, "region_op": self.region_op,
                "level": self.level, "expected": HASH64.encode(self.expected),
                "got": HASH64.encode(self.got), "unchecked_differences": self.unchecked,
                "alternate": self.alternate, "switched": self.switched}

    def describe(self) -> str:
        head = (f"op {self.index}: region {self.region} op {self.region_op}: {self.level} guard "
                f"failed: expected {HASH64.encode(self.expected)}, got "
                f"{HASH64.encode(self.got)}")
        if self.unchecked:
            head += f" (also differs in {', '.join(self.unchecked)}, unchecked by this profile)"
        if self.switched:
            return f"{head}\n  switched to cached alternate region {self.alternate}; still " \
                   f"compiled"
        tried = "no cached alternate matches at that position" if self.alternate is None else \
            f"cached alternate region {self.alternate} matches but the switch was refused " \
            f"(its plan or prefix differs)"
        return f"{head}\n  {tried}; leaves compiled mode: RECORD, background reset requested"


@dataclass
class ReplayReport:
    region: int
    region_ops: int
    stream_ops: int
    compiled_at: int | None = None
    exits: list[Exit] = field(default_factory=list)
    unchecked: list[tuple[int, int, list[str]]] = field(default_factory=list)
    recorded: int = 0
    completed: int = 0
    calls: list[tuple[int, str, bool, int | None]] = field(default_factory=list)

    @property
    def left_compiled(self) -> bool:
        return any(not e.switched for e in self.exits)

    def to_json(self) -> dict:
        return {"region": self.region, "region_ops": self.region_ops,
                "stream_ops": self.stream_ops, "compiled_at": self.compiled_at,
                "divergences": [e.to_json() for e in self.exits],
                "unchecked_matches": [{"index": i, "region_op": p, "levels": lv}
                                      for i, p, lv in self.unchecked],
                "left_compiled_mode": self.left_compiled, "recorded": self.recorded,
                "completed_iterations": self.completed,
                "calls": [{"index": i, "call": c, "ok": ok, "active_region": r}
                          for i, c, ok, r in self.calls]}

    def describe(self) -> str:
        lines = [f"region {self.region} ({self.region_ops} ops) published; stream of "
                 f"{self.stream_ops} ops"]
        if self.compiled_at is None:
            lines.append("never compiled: the stream never showed the region's first "
                         f"{min(self.region_ops, vg.ALIGNMENT_K)} ops in a row")
        else:
            lines.append(f"aligned and compiled at op {self.compiled_at}")
        lines += [f"op {i}: matched region op {p} but differs in {', '.join(lv)} (not "
                  f"checked by this profile)" for i, p, lv in self.unchecked]
        lines += [e.describe() for e in self.exits]
        lines += [f"op {i}: {c}() returned {str(ok).lower()}; the context is "
                  + ("in RECORD" if r is None else f"compiled on region {r}")
                  for i, c, ok, r in self.calls]
        verdict = "left compiled mode" if self.left_compiled else \
            "never compiled" if self.compiled_at is None else "never left compiled mode"
        lines.append(f"{self.completed} iterations replayed, {self.recorded} ops recorded; "
                     f"{verdict}")
        return "\n".join(lines)


def _alternate(v: vg.Vigil, g: Guard, errata: frozenset[str]) -> ReplayRegion | None:
    """What handle_divergence's search will find (on a copy: it inserts the active region)."""
    active = v.ctx.active_region
    c = copy.deepcopy(v.region_cache, {id(r): r for r in v.region_cache.regions if r})
    cache_.insert(c, active)
    return cache_.find_alternate(c, v.ctx.engine.ops_matched, g, active, errata)


def replay_report(regions: list[ReplayRegion], k: int, stream: list[Guard | str],
                  errata: frozenset[str]) -> ReplayReport:
    """Publish region k, dispatch the stream (making its API calls) and note every divergence
    in compiled mode."""
    if not regions:
        raise SourceError("the recording has no region (no iteration was detected)")
    if not 0 <= k < len(regions):
        raise SourceError(f"the recording has {len(regions)} regions; no region {k}")
    r = regions[k]
    v = vg.Vigil(cipher=Cipher())
    vg.publish(v, r, errata)
    out = ReplayReport(k, r.num_ops, sum(not isinstance(g, str) for g in stream))
    for i, g in enumerate(stream):
        if isinstance(g, str):
            ok = call(v, g, errata)
            active = v.ctx.active_region
            out.calls.append((i, g, ok, None if active is None else active.rid))
            continue
        was = v.ctx.mode == ContextMode.COMPILED
        if was:
            active, pos = v.ctx.active_region, v.ctx.engine.ops_matched
            expected = active.ops[pos].guard
            level = failed_level(expected, g, errata)
            alt = _alternate(v, g, errata) if level else None
        d = vg.dispatch_op(v, g, errata)
        if not was and v.ctx.mode == ContextMode.COMPILED and out.compiled_at is None:
            out.compiled_at = i
        unchecked = [lv for j, lv in enumerate(LEVELS) if was and lv not in
                     checked_levels(errata) and expected[j] != g[j]]
        if was and not level and unchecked:
            out.unchecked.append((i, pos, unchecked))
        if was and level:
            idx = LEVELS.index(level)
            out.exits.append(Exit(i, active.rid, pos, level, expected[idx], g[idx], unchecked,
                                  None if alt is None else alt.rid,
                                  d.status != ReplayStatus.DIVERGED))
    out.recorded, out.completed = len(v.recorded), v.ctx.compiled_iterations
    return out
