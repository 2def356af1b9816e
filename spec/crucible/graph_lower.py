"""Chapter 14: lowering a trace graph to the Graph IR (lower_trace_to_graph).

For a trace of num_ops > 0 ops over num_slots slots, into an empty graph:
1. INPUT nodes: for ops ascending and their inputs ascending, an input with no producer op whose
   slot id is valid, below num_slots and not yet mapped becomes an INPUT node (dtype, device and
   up to 8 sizes from that input's meta; output slot = the slot). INPUT ids are 0..E-1.
2. One node per op, ops ascending (op i is node E + i): kind = classify_node_kind(kernel_id);
   dtype, device and sizes from output meta 0 (none: ndim 0, dtype Undefined, device -1). Each
   input depends on its producer op's node if it has one, else on the INPUT node of its slot;
   an input with neither is dropped, the others keep their order (with their slot ids).
   POINTWISE nodes have no body; every other node an ExternInfo naming the CKernel.
3. Graph inputs: the INPUT nodes by ascending slot id. Graph outputs: the nodes of ops with
   no outgoing DATA_FLOW edge (ALIAS edges do not count), ascending.
A producer always precedes its consumer in a built trace, so the lowered graph is acyclic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .build_trace import TraceGraph
from .ckernel import CKernelId
from .graph import NodeKind, classify_node_kind
from .tensor_meta import MAX_DIMS
from .trace_graph import EdgeKind
from .types import NONE32, ScalarType


@dataclass
class LoweredNode:
    """A lowered GraphNode: its kind, inputs, output metadata, ExternInfo name and slots."""

    id: int
    kind: int
    inputs: list[int]
    dtype: int = ScalarType.Undefined
    device_idx: int = -1
    sizes: list[int] = field(default_factory=list)
    name: str | None = None
    num_outputs: int = 1
    input_slots: list[int] | None = None
    output_slots: list[int] | None = None


@dataclass
class LoweredGraph:
    nodes: list[LoweredNode]
    graph_inputs: list[int]
    graph_outputs: list[int]
    num_input_nodes: int


def _meta_fields(meta: dict) -> tuple[int, int, list[int]]:
    ndim = min(meta["ndim"], MAX_DIMS)
    return meta["dtype"], meta["device_idx"], list(meta["sizes"][:ndim])


def lower_trace_to_graph(tg: TraceGraph) -> LoweredGraph:
    """Steps 1-3."""
    num_ops, num_slots = len(tg.ops), len(tg.slots)
    nodes: list[LoweredNode] = []
    if num_ops == 0:
        return LoweredGraph(nodes, [], [], 0)
    extern_map: dict[int, int] = {}
    for op in tg.ops:  # 1
        if op.input_trace_indices is None or op.input_slot_ids is None:
            continue
        for j, meta in enumerate(op.inputs):
            sid = op.input_slot_ids[j]
            if op.input_trace_indices[j] != NONE32 or sid >= num_slots or sid in extern_map:
                continue
            dtype, dev, sizes = _meta_fields(meta)
            extern_map[sid] = len(nodes)
            nodes.append(LoweredNode(len(nodes), NodeKind.INPUT, [], dtype, dev, sizes,
                                     output_slots=[sid]))
    e = len(nodes)
    for i, op in enumerate(tg.ops):  # 2
        kind = classify_node_kind(op.kernel_id)
        dtype, dev, sizes = (_meta_fields(op.outputs[0]) if op.outputs
                             else (ScalarType.Undefined, -1, []))
        deps, sids = [], []
        for j in range(len(op.inputs)):
            tidx = NONE32 if op.input_trace_indices is None else op.input_trace_indices[j]
            sid = NONE32 if op.input_slot_ids is None else op.input_slot_ids[j]
            if tidx != NONE32 and tidx < num_ops:
                dep = e + tidx
            elif sid != NONE32 and sid < num_slots:
                dep = extern_map.get(sid)
            else:
                dep = None
            if dep is not None:
                deps.append(dep)
                sids.append(sid)
        name = None if kind == NodeKind.POINTWISE else CKernelId(op.kernel_id).name
        out_slots = list(op.output_slot_ids) if op.output_slot_ids and op.outputs else None
        nodes.append(LoweredNode(e + i, kind, deps, dtype, dev, sizes, name,
                                 max(1, len(op.outputs)), sids or None, out_slots))
    graph_inputs = sorted(range(e), key=lambda k: nodes[k].output_slots[0])  # 3
    has_data_out = {ed.src for ed in tg.edges if ed.kind == EdgeKind.DATA_FLOW}
    outputs = [e + i for i in range(num_ops) if i not in has_data_out]
    return LoweredGraph(nodes, graph_inputs, outputs, e)
