"""Oracle diffs of whole trace graphs, memory plans and DAGs: the first divergent op, edge,
slot or node, named the way the spec names them.

A trace graph is compared in the wire form of `trace.build`'s result, a plan in the form of
`plan.compute`'s result (or a trace graph's slots), a DAG in the form of `dag.merkle`'s args.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..spec.core.errata import NO_ERRATA
from ..spec.core.errors import InvalidInput
from ..spec.core.schema import HASH64
from ..spec.crucible.dag import dag_diff as spec_dag_diff
from ..spec.crucible.dag import dag_from_wire, merkle_hashes
from ..spec.crucible.memory_plan import Plan, PlanSlot, align256, plan_slots
from ..spec.crucible.merkle_dag import DagDiffKind
from ..spec.crucible.plan_validity import plan_violations
from ..spec.crucible.trace_entry import trace_op_from_wire, trace_op_to_wire
from .diff import first_difference, index_runs


@dataclass(frozen=True)
class Finding:
    """One divergence: what (op 3, slot 7, node 2), and how."""

    where: str
    text: str

    def describe(self) -> str:
        return f"{self.where}: {self.text}"


def _need(obj: Any, keys: tuple[str, ...], what: str) -> dict:
    if not isinstance(obj, dict) or not set(keys) <= set(obj):
        raise InvalidInput(f"{what}: expected an object with {', '.join(keys)}")
    return obj


def _first_item(kind: str, a: list, b: list) -> Finding | None:
    """The first item (by index) that differs between two lists of records."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        d = first_difference(x, y, f"{kind}[{i}]")
        if d:
            return Finding(f"{kind} {i}", d.describe())
    if len(a) != len(b):
        return Finding(kind, f"expected {len(a)}, got {len(b)}")
    return None


def trace_diff(expected: dict, got: dict) -> list[Finding]:
    """The first divergent op, edge (forward CSR order) and slot of two trace graphs, then
    their offsets, pools and content hashes."""
    keys = ("ops", "edges", "fwd_offsets", "rev_offsets", "slots", "content_hash")
    _need(expected, keys, "expected")
    _need(got, keys, "got")
    out = []
    for kind, key in (("op", "ops"), ("edge", "edges"), ("slot", "slots")):
        f = _first_item(kind, expected[key], got[key])
        if f:
            out.append(f)
    for key in ("fwd_offsets", "rev_offsets", "pool_bytes", "num_external"):
        d = first_difference(expected.get(key), got.get(key), key)
        if d:
            out.append(Finding(key, d.describe()))
    a, b = (_hex_word(x["content_hash"]) for x in (expected, got))
    if a != b:
        out.append(Finding("content_hash", f"expected {a}, got {b}"))
    return out


def _hex_word(value: Any) -> str:
    """A hash as the spec prints it (0x and 16 hex digits), whether it came as int or text."""
    if isinstance(value, int):
        return f"0x{value:016x}"
    try:
        return f"0x{int(str(value), 16):016x}"
    except ValueError:
        return repr(value)


def plan_of(obj: dict, what: str) -> tuple[Plan, list[PlanSlot] | None]:
    """A plan from a plan.compute result ({offsets, pool_bytes}) or a trace graph's slots
    (which also give the slots themselves)."""
    if isinstance(obj, dict) and "slots" in obj and "pool_bytes" in obj:
        slots = plan_slots([{k: s[k] for k in ("nbytes", "birth_op", "death_op", "is_external")}
                            for s in obj["slots"]])
        offsets = [int(s["offset_bytes"]) for s in obj["slots"]]
        return Plan(offsets, int(obj["pool_bytes"])), slots
    _need(obj, ("offsets", "pool_bytes"), what)
    return Plan([int(x) for x in obj["offsets"]], int(obj["pool_bytes"])), None


def plan_diff(expected: dict, got: dict, slots: list[PlanSlot] | None = None) -> list[Finding]:
    """The first slot whose offset differs, the pools, and every way `got` breaks the plan
    invariants (overlap of live slots, misalignment, outside the pool) when the slots are
    known."""
    pe, se = plan_of(expected, "expected")
    pg, sg = plan_of(got, "got")
    slots = slots or se or sg
    out = []
    for i, (a, b) in enumerate(zip(pe.offsets, pg.offsets, strict=False)):
        if a != b:
            s = slots[i] if slots and i < len(slots) else None
            size = f" ({align256(s.nbytes)} B, ops {s.birth_op}..{s.death_op})" if s else ""
            out.append(Finding(f"slot {i}", f"offset expected {a}, got {b}{size}"))
            break
    if len(pe.offsets) != len(pg.offsets):
        out.append(Finding("slots", f"expected {len(pe.offsets)}, got {len(pg.offsets)}"))
    if pe.pool_bytes != pg.pool_bytes:
        out.append(Finding("pool_bytes", f"expected {pe.pool_bytes}, got {pg.pool_bytes}"))
    if slots and len(slots) == len(pg.offsets):
        out += [Finding("invariant", v) for v in plan_violations(slots, pg)]
    return out


def dag_diff(a: Any, b: Any, errata: frozenset[str] = NO_ERRATA) -> list[Finding]:
    """Where two DAGs first diverge (the spec's dag_diff walk), with the nodes' Merkle hashes;
    for two region nodes, the first op that differs and its field; then the roots' hashes."""
    da, db = dag_from_wire(a, "expected", errata), dag_from_wire(b, "got", errata)
    ma, mb = merkle_hashes(da, errata), merkle_hashes(db, errata)
    kind, depth, ka, kb = spec_dag_diff(da, da.root, db, db.root, ma, mb, 0, errata)
    if kind == DagDiffKind.IDENTICAL:
        return []

    def node(m: list[int], k: int | None) -> str:
        return "none" if k is None else f"node {k} (merkle {HASH64.encode(m[k])})"

    out = [Finding(f"depth {depth}", f"{DagDiffKind(kind).name}: expected {node(ma, ka)}, "
                                     f"got {node(mb, kb)}")]
    if ka is not None and kb is not None:
        op = _first_op(a["nodes"][ka], b["nodes"][kb])
        if op is not None:
            out.append(Finding(f"node {ka}", op))
    if da.root is not None and db.root is not None and ma[da.root] != mb[db.root]:
        out.append(Finding("root", f"Merkle hash {HASH64.encode(ma[da.root])} -> "
                                   f"{HASH64.encode(mb[db.root])}"))
    return out


def run_nodes(regions: list) -> list[dict]:
    """The region nodes of a pipeline run (spec.pipeline.Region), each given by its ops so the
    first differing op of two regions can be named."""
    return [{"kind": "region", "ops": [trace_op_to_wire(o) for o in r.graph.ops]}
            for r in regions]


def report_nodes(regions: Any) -> list[dict]:
    """The region nodes of an `analyze --json` report, each given by its content hash and op
    count."""
    if not isinstance(regions, list) or not all(
            isinstance(r, dict) and {"content_hash", "num_ops"} <= set(r) for r in regions):
        raise InvalidInput("regions: expected analyze's regions, each with content_hash and "
                           "num_ops")
    return [{"kind": "region", "content_hash": r["content_hash"], "num_ops": r["num_ops"]}
            for r in regions]


def _own_merkle(node: dict, path: str, errata: frozenset[str]) -> int:
    """The Merkle hash of a region node with no continuation (its content hash)."""
    return merkle_hashes(dag_from_wire({"nodes": [node], "root": 0}, path, errata), errata)[0]


def runs_diff(a: list[dict], b: list[dict], errata: frozenset[str] = NO_ERRATA
              ) -> list[Finding]:
    """Two pipeline runs' region nodes, each without continuation as the background thread
    makes them, paired in stream order: the first pair whose Merkle hashes differ and the
    first op that differs inside it, which other pairs differ, and the region counts."""
    ha = [_own_merkle(n, f"expected.regions[{k}]", errata) for k, n in enumerate(a)]
    hb = [_own_merkle(n, f"got.regions[{k}]", errata) for k, n in enumerate(b)]
    differ = [k for k, (x, y) in enumerate(zip(ha, hb, strict=False)) if x != y]
    out = []
    if differ:
        k = differ[0]
        out.append(Finding(f"region {k}", f"Merkle hash (its content hash: no continuation) "
                                          f"expected {HASH64.encode(ha[k])}, got "
                                          f"{HASH64.encode(hb[k])}"))
        op = _first_op(a[k], b[k])
        if op is not None:
            out.append(Finding(f"region {k}", op))
        if len(differ) > 1:
            out.append(Finding("regions", f"{len(differ)} of the {min(len(a), len(b))} pairs "
                                          f"differ: {index_runs(differ)}"))
    if len(a) != len(b):
        out.append(Finding("regions", f"expected {len(a)}, got {len(b)}"))
    return out


def _first_op(x: dict, y: dict) -> str | None:
    """The first differing op of two region nodes given with their ops, in canonical wire
    form (so 0x22 and 0x022 are the same hash)."""
    if x.get("kind") != "region" or y.get("kind") != "region":
        return None
    if "ops" not in x or "ops" not in y:
        return "the regions are given by content hash only: no ops to compare"
    ox = [trace_op_to_wire(trace_op_from_wire(o, "expected op")) for o in x["ops"]]
    oy = [trace_op_to_wire(trace_op_from_wire(o, "got op")) for o in y["ops"]]
    d = first_difference(ox, oy, "ops")
    if d is None:
        return None
    k = int(d.path.split("[", 1)[1].split("]", 1)[0]) if d.path.startswith("ops[") else None
    return (f"op {k} differs first: " if k is not None else "") + d.describe()
