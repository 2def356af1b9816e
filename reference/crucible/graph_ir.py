"""Reference for the Graph IR passes, written from their characterisations rather than the
spec's loops: DCE as backward reachability, toposort by rescanning, CSE with a Python dict of
keys, fusion by a plain scan, lowering and RAUW as list rewrites. Only the wire decoding (and
its checks) is the spec's."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import reference
from ...spec.crucible.build_trace import build_trace
from ...spec.crucible.ckernel import CKernelId
from ...spec.crucible.graph import NodeKind, classify_node_kind
from ...spec.crucible.graph_ir import IrGraph, graph_from_wire
from ...spec.crucible.trace_build_ops import kernels_from_wire, recorded_ops
from ...spec.crucible.types import NONE32

PW, RED = NodeKind.POINTWISE, NodeKind.REDUCTION
EXTERN_KIND = NodeKind.EXTERN


def _schedule(g: IrGraph) -> list[int]:
    """Live ids in FIFO-Kahn order: a node is ready once every live input occurrence is
    scheduled; ready nodes queue in the order they became ready (readers of one node by id)."""
    live = [n.id for n in g.nodes if not n.dead]
    readers: dict[int, Counter] = {i: Counter() for i in live}
    for c in live:
        for v in g.nodes[c].inputs:
            if not g.nodes[v].dead:
                readers[v][c] += 1
    waiting = {i: sum(1 for v in g.nodes[i].inputs if not g.nodes[v].dead) for i in live}
    queue = [i for i in live if waiting[i] == 0]
    k = 0
    while k < len(queue):
        u = queue[k]
        k += 1
        for c in sorted(readers[u]):
            waiting[c] -= readers[u][c]
            if waiting[c] == 0:
                queue.append(c)
    stuck = sorted(set(live) - set(queue))
    if stuck:
        raise InvalidInput(f"args.graph.nodes[{stuck[0]}].inputs: on or after a cycle")
    return queue


def _graph(graph: Any) -> IrGraph:
    g = graph_from_wire(graph)
    _schedule(g)
    return g


def _uses(g: IrGraph) -> list[int]:
    uses = [0] * len(g.nodes)
    for n in g.nodes:
        if not n.dead:
            for v in n.inputs:
                uses[v] += 1
    for v in g.outputs:
        if not g.nodes[v].dead:
            uses[v] += 1
    return [u & 0xFFFF for u in uses]


@reference("ir.dce")
def dce(graph: Any) -> dict:
    g = _graph(graph)
    keep = set()
    stack = [v for v in g.outputs if not g.nodes[v].dead]
    stack += [n.id for n in g.nodes if not n.dead and n.kind == NodeKind.MUTATION]
    while stack:
        v = stack.pop()
        if v in keep or g.nodes[v].dead:
            continue
        keep.add(v)
        stack.extend(g.nodes[v].inputs)
    for n in g.nodes:
        n.dead = n.id not in keep
    return {"dead": [n.id for n in g.nodes if n.dead], "num_uses": _uses(g),
            "num_live": len(keep)}


@reference("ir.toposort")
def toposort(graph: Any) -> dict:
    order = _schedule(_graph(graph))
    rank: list[int | None] = [None] * len(graph["nodes"])
    for k, v in enumerate(order):
        rank[v] = k
    return {"schedule_order": rank, "order": order}


def _misread(n, i: int) -> tuple:
    """E14.600: the ExternInfo read as a ComputeBody: empty when unnamed, else unique."""
    if n.extern.name is None:
        return ((), () if n.extern.constant_args else None)
    return ("unique", i)


def _key(g: IrGraph, i: int, rep: dict[int, int], errata: frozenset[str]) -> tuple:
    n = g.nodes[i]
    base = (n.kind, n.dtype, n.device_idx, len(n.sizes) - n.nred, n.nred, n.sizes,
            tuple(rep.get(v, v) for v in n.inputs))
    if n.kind == EXTERN_KIND:
        ext = n.extern and (n.extern.name, n.extern.constant_args)
        return (*base, ext)
    if n.kind not in (PW, RED):
        return base
    if n.extern is not None:
        body = _misread(n, i) if "E14.600" in errata else (n.extern.name, n.extern.constant_args)
    else:
        body = (n.body, n.aux)
    red = (n.reduce_op, n.reduce_hint, n.src_dtype) if n.kind == RED else ()
    return (*base, body, *red)



@reference("ir.cse")
def cse(graph: Any, errata: frozenset[str]) -> dict:
    g = _graph(graph)
    rep: dict[int, int] = {}
    seen: dict[tuple, int] = {}
    for i in _schedule(g):
        if g.nodes[i].kind in (NodeKind.INPUT, NodeKind.MUTATION):
            continue
        key = _key(g, i, rep, errata)
        if key in seen:
            rep[i] = seen[key]
            g.nodes[i].dead = True
        else:
            seen[key] = i
    uses = [n.num_uses for n in g.nodes]
    if rep:
        for n in g.nodes:
            if not n.dead:
                n.inputs = [rep.get(v, v) for v in n.inputs]
        g.outputs = [rep.get(v, v) for v in g.outputs]
        uses = _uses(g)
    return {"eliminated": len(rep), "dead": [n.id for n in g.nodes if n.dead],
            "inputs": [n.inputs for n in g.nodes], "outputs": g.outputs, "num_uses": uses}


@reference("ir.fusion_groups")
def fusion_groups(graph: Any) -> dict:
    g = _graph(graph)
    gid = [0] * len(g.nodes)
    fused = []
    groups = 0
    for i in _schedule(g):
        n = g.nodes[i]
        if n.kind not in (PW, RED):
            continue
        nd = len(n.sizes) - n.nred
        joined = [v for v in n.inputs
                  if gid[v] and g.nodes[v].kind in (PW, RED)
                  and g.nodes[v].device_idx == n.device_idx
                  and len(g.nodes[v].sizes) - g.nodes[v].nred == nd
                  and g.nodes[v].sizes[:nd] == n.sizes[:nd]]
        if joined:
            gid[i] = gid[joined[0]]
            fused.append(i)
        else:
            groups += 1
            gid[i] = groups
    return {"num_groups": groups, "fused_group_id": gid, "fused": sorted(fused)}


@reference("ir.rauw")
def rauw(graph: Any, old: int, new: int) -> dict:
    g = graph_from_wire(graph)
    for name, v in (("old", old), ("new", new)):
        if v >= len(g.nodes):
            raise InvalidInput(f"args.{name}: node {v} is not in the graph")
    uses = [n.num_uses for n in g.nodes]
    if old != new:
        moved = sum(n.inputs.count(old) for n in g.nodes if not n.dead)
        for n in g.nodes:
            if not n.dead:
                n.inputs = [new if v == old else v for v in n.inputs]
        uses[old] = (uses[old] - moved) & 0xFFFF
        uses[new] = (uses[new] + moved) & 0xFFFF
        g.outputs = [new if v == old else v for v in g.outputs]
    return {"inputs": [n.inputs for n in g.nodes], "outputs": g.outputs, "num_uses": uses}


@reference("ir.lower")
def lower(ops: Any, kernels: Any, errata: frozenset[str]) -> dict:
    table = kernels_from_wire(kernels)
    for k, pair in enumerate(kernels):
        if pair[1] >= CKernelId.NUM_KERNELS:
            raise InvalidInput(f"args.kernels[{k}]: kernel id {pair[1]} past 146")
    tg = build_trace(recorded_ops(ops), table, errata)
    if not tg.ops:
        return {"nodes": [], "graph_inputs": [], "graph_outputs": [], "num_input_nodes": 0}
    n_slots = len(tg.slots)
    first: dict[int, dict] = {}
    for op in tg.ops:
        for meta, t, s in zip(op.inputs, op.input_trace_indices or [],
                              op.input_slot_ids or [], strict=False):
            if t == NONE32 and s < n_slots and s not in first:
                first[s] = meta
    slot_node = {s: k for k, s in enumerate(first)}
    e = len(first)

    def shape(meta: dict | None) -> tuple[int, int, list[int]]:
        if meta is None:
            return -1, -1, []
        return meta["dtype"], meta["device_idx"], list(meta["sizes"][:min(meta["ndim"], 8)])

    nodes = []
    for s, meta in first.items():
        dt, dev, sizes = shape(meta)
        nodes.append({"id": slot_node[s], "kind": 0, "inputs": [], "dtype": dt,
                      "device_idx": dev, "sizes": sizes, "extern": None, "num_outputs": 1,
                      "input_slots": None, "output_slots": [s]})
    for i, op in enumerate(tg.ops):
        kind = classify_node_kind(op.kernel_id)
        kept = []
        for j in range(len(op.inputs)):
            t = op.input_trace_indices[j] if op.input_trace_indices is not None else NONE32
            s = op.input_slot_ids[j] if op.input_slot_ids is not None else NONE32
            if t != NONE32 and t < len(tg.ops):
                kept.append((e + t, s))
            elif s != NONE32 and s < n_slots and s in slot_node:
                kept.append((slot_node[s], s))
        dt, dev, sizes = shape(op.outputs[0] if op.outputs else None)
        nodes.append({"id": e + i, "kind": int(kind), "inputs": [d for d, _ in kept],
                      "dtype": dt, "device_idx": dev, "sizes": sizes,
                      "extern": None if kind == PW else {"name": CKernelId(op.kernel_id).name},
                      "num_outputs": max(1, len(op.outputs)),
                      "input_slots": [s for _, s in kept] or None,
                      "output_slots": list(op.output_slot_ids) if op.outputs else None})
    producers = {ed.src for ed in tg.edges if ed.kind == 0}
    return {"nodes": nodes, "graph_inputs": [slot_node[s] for s in sorted(first)],
            "graph_outputs": [e + i for i in range(len(tg.ops)) if i not in producers],
            "num_input_nodes": e}
