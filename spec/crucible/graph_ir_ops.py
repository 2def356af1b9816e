"""Ops `ir.lower`, `ir.dce`, `ir.toposort`, `ir.cse`, `ir.fusion_groups`, `ir.rauw`: the Graph IR
passes over a graph on the wire.

A graph is {nodes, outputs}: node i is {id: i, kind: NodeKind ordinal, inputs: [node ids]} with,
as a pass reads them, dead, dtype, device_idx, sizes (ndim + nred interned integer Exprs), nred,
body ([Inst {op, dtype, operands}]), aux, reduce_op, reduce_hint, src_dtype, extern ({name,
constant_args}) and num_uses (default: one per input occurrence, as the graph's builders leave
it). `ir.lower` takes a trace as `trace.build` does and answers lowered nodes the other ops read.
"""

from __future__ import annotations

from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import U16, U32, Field, Int, Json, List, Optional, record
from ..core.strategies import st
from .build_trace import build_trace
from .ckernel import CKernelId
from .graph import MicroOp, NodeKind
from .graph_cse import (
    E14_600,
    LOWERED_SUMS,
    UNNAMED_SUMS,
    compute_fusion_groups,
    cse_key,
    eliminate_common_subexpressions,
)
from .graph_ir import (
    GRAPH_SHAPE,
    IrGraph,
    eliminate_dead_nodes,
    graph_from_wire,
    recompute_uses,
    replace_all_uses,
    require_acyclic,
    topological_sort,
)
from .graph_lower import lower_trace_to_graph
from .trace_build_ops import KERNELS_FIELD, OPS_FIELD, kernels_from_wire, recorded_ops, traces

GRAPH = Field(Json("{nodes, outputs}", GRAPH_SHAPE), "the graph: nodes (id = index) and outputs")
IDS = List(U32)


def _graph(graph: Any, dag: bool = True) -> IrGraph:
    g = graph_from_wire(graph)
    if dag:
        require_acyclic(g)
    return g


def _state(g: IrGraph) -> dict:
    return {"dead": [n.id for n in g.nodes if n.dead], "inputs": [n.inputs for n in g.nodes],
            "outputs": g.outputs, "num_uses": [n.num_uses for n in g.nodes]}


def dce_op(graph: Any) -> dict:
    g = _graph(graph)
    eliminate_dead_nodes(g)
    return {"dead": [n.id for n in g.nodes if n.dead], "num_uses": [n.num_uses for n in g.nodes],
            "num_live": len(g.live())}


def toposort_op(graph: Any) -> dict:
    g = _graph(graph)
    order = topological_sort(g)
    return {"schedule_order": order,
            "order": sorted((n for n in range(len(order)) if order[n] is not None),
                            key=lambda n: order[n])}


def cse_op(graph: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    g = _graph(graph)
    r = eliminate_common_subexpressions(g, errata)
    return {"eliminated": r.eliminated, **_state(g)}


def fusion_op(graph: Any) -> dict:
    r = compute_fusion_groups(_graph(graph))
    return {"num_groups": r.num_groups, "fused_group_id": r.fused_group_id, "fused": r.fused}


def rauw_op(graph: Any, old: int, new: int) -> dict:
    g = _graph(graph, dag=False)
    for name, v in (("old", old), ("new", new)):
        if v >= len(g.nodes):
            raise InvalidInput(f"args.{name}: node {v} out of range (graph of {len(g.nodes)})")
    replace_all_uses(g, old, new)
    return {k: v for k, v in _state(g).items() if k != "dead"}


def lower_op(ops: Any, kernels: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    table = kernels_from_wire(kernels)
    for k, (_, kid) in enumerate(kernels):
        if kid >= CKernelId.NUM_KERNELS:
            raise InvalidInput(f"args.kernels[{k}]: {kid} is not a CKernelId (0..146)")
    lg = lower_trace_to_graph(build_trace(recorded_ops(ops), table, errata))
    nodes = [{"id": n.id, "kind": int(n.kind), "inputs": n.inputs, "dtype": int(n.dtype),
              "device_idx": n.device_idx, "sizes": n.sizes,
              "extern": None if n.name is None else {"name": n.name},
              "num_outputs": n.num_outputs, "input_slots": n.input_slots,
              "output_slots": n.output_slots} for n in lg.nodes]
    return {"nodes": nodes, "graph_inputs": lg.graph_inputs, "graph_outputs": lg.graph_outputs,
            "num_input_nodes": lg.num_input_nodes}


# ── domains, edges ────────────────────────────────────────────────────────────────────────────

ADD_BODY = [{"op": int(MicroOp.LOAD), "dtype": 6, "operands": [0, 0, 0]},
            {"op": int(MicroOp.LOAD), "dtype": 6, "operands": [1, 0, 0]},
            {"op": int(MicroOp.ADD), "dtype": 6, "operands": [0, 1, 0]},
            {"op": int(MicroOp.STORE), "dtype": 6, "operands": [2, 0, 0]}]
"""test_graph's pointwise body: LOAD f32, LOAD f32, ADD $0 $1, STORE $2."""


def node(i: int, kind: int, inputs: list[int], **fields: Any) -> dict:
    return {"id": i, "kind": int(kind), "inputs": inputs, **fields}


def _pw(i: int, inputs: list[int], **fields: Any) -> dict:
    return node(i, NodeKind.POINTWISE, inputs, sizes=[8], **fields)


_IN8 = {"kind": int(NodeKind.INPUT), "inputs": [], "sizes": [8]}
FACTS_DAG = {"nodes": [{"id": 0, **_IN8}, {"id": 1, **_IN8},
                       _pw(2, [1]), _pw(3, [2, 0]), {"id": 4, **_IN8},
                       _pw(5, [4, 4]), _pw(6, [5, 3]), _pw(7, [0])],
             "outputs": [6]}
"""The facts' toposort example (0 IN a, 1 IN b, 2 PW(b), 3 PW(2,a), 4 IN c, 5 PW(c,c),
6 PW(5,3), 7 PW(a)), all of one shape, with output 6."""
CSE_GRAPH = {"nodes": [node(0, NodeKind.INPUT, []), node(1, NodeKind.INPUT, []),
                       node(2, NodeKind.POINTWISE, [0, 1], body=ADD_BODY),
                       node(3, NodeKind.POINTWISE, [0, 1], body=ADD_BODY),
                       node(4, NodeKind.POINTWISE, [2, 3], body=ADD_BODY)],
             "outputs": [4]}
"""test_graph's CSE graph: pw1, pw2 identical bodies over x, y; sum = PW(pw1, pw2)."""

_BODIES = [None, ADD_BODY, ADD_BODY[:2], []]
_NAMES = [None, "aten::mm", "REDUCE_SUM"]


@st.composite
def graphs(draw, max_nodes: int = 10) -> dict:
    """Acyclic graphs over few shapes, bodies and names, with duplicated nodes, so CSE and
    fusion find equal nodes; some nodes start dead; ids are shuffled, so an input may have a
    higher id."""
    nodes = []
    for i in range(draw(st.integers(0, max_nodes))):
        kind = draw(st.sampled_from([0, 2, 2, 2, 3, 3, 6, 6, 8, 9, 4, 1]))
        inputs = draw(st.lists(st.integers(0, i - 1), max_size=3)) if i and kind else []
        n = node(i, kind, inputs, sizes=draw(st.sampled_from([[], [4], [4, 8], [8]])),
                 dtype=draw(st.sampled_from([6, 7])), device_idx=draw(st.sampled_from([-1, 0])))
        if draw(st.integers(0, 9)) == 0:
            n["dead"] = True
        if kind in (NodeKind.POINTWISE, NodeKind.REDUCTION) and draw(st.booleans()):
            n["body"] = draw(st.sampled_from(_BODIES))
        elif kind != NodeKind.POINTWISE and draw(st.booleans()):
            n["extern"] = {"name": draw(st.sampled_from(_NAMES)),
                           "constant_args": draw(st.sampled_from([None, [], [1]]))}
        if kind == NodeKind.REDUCTION:
            n["nred"] = draw(st.integers(0, len(n["sizes"])))
            n["reduce_op"] = draw(st.integers(0, 1))
        if i and draw(st.integers(0, 3)) == 0:  # a duplicate of an earlier node
            n = {**nodes[draw(st.integers(0, i - 1))], "id": i}
        nodes.append(n)
    outputs = draw(st.lists(st.integers(0, len(nodes) - 1), max_size=3)) if nodes else []
    perm = draw(st.permutations(range(len(nodes))))
    moved = sorted(({**n, "id": perm[n["id"]], "inputs": [perm[v] for v in n["inputs"]]}
                    for n in nodes), key=lambda n: n["id"])
    return {"nodes": moved, "outputs": [perm[v] for v in outputs]}


def _graph_domain() -> st.SearchStrategy:
    return st.builds(lambda g: {"graph": g}, graphs())


@st.composite
def _rauw_args(draw) -> dict:
    g = draw(graphs())
    n = max(1, len(g["nodes"]))
    if not g["nodes"]:
        g = {"nodes": [node(0, NodeKind.INPUT, [])], "outputs": [0]}
    return {"graph": g, "old": draw(st.integers(0, n - 1)), "new": draw(st.integers(0, n - 1))}


def _lower_domain() -> st.SearchStrategy:
    return traces()


CYCLE = {"nodes": [node(0, NodeKind.POINTWISE, [1]), node(1, NodeKind.POINTWISE, [0])],
         "outputs": [1]}


def _invalid_graph(cycle: bool = True, **more: int) -> tuple[InvalidCase, ...]:
    bad = {"an input id out of range": [node(0, NodeKind.POINTWISE, [1])],
           "an unknown kind ordinal": [node(0, 10, [])],
           "inputs of the wrong type": [node(0, NodeKind.INPUT, "0")],
           "a node id that is not its index": [node(1, NodeKind.INPUT, [])]}
    cases = [InvalidCase(what, lambda nodes=nodes: st.just({"graph": {"nodes": nodes}, **more}))
             for what, nodes in bad.items()]
    if cycle:
        cases.append(InvalidCase("a cycle of live nodes", lambda: st.just({"graph": CYCLE})))
    return tuple(cases)


_NA = {"cupy": "a few passes over a small graph with data-dependent control: nothing to "
               "spread over a device"}
_NA_NUMBA = {"numba": "pointer-chasing over nodes of mixed fields decoded from JSON: the "
                      "interpreter spends its time decoding, not in the pass", **_NA}
_GRAPH_DOC = "ir.* graph passes"

declare(
    "ir.dce", chapter=14,
    summary="Graph::eliminate_dead_nodes: recompute use counts, then kill unused non-MUTATION "
            "nodes to a fixpoint.",
    args=record(graph=GRAPH),
    result=record(dead=Field(IDS, "dead node ids, ascending"),
                  num_uses=Field(List(U16), "num_uses per node"),
                  num_live=Field(U32, "live nodes left")),
    spec=(eliminate_dead_nodes, recompute_uses), domain=_graph_domain,
    edges=lambda: [{"graph": FACTS_DAG}, {"graph": {**FACTS_DAG, "outputs": []}},
                   {"graph": CSE_GRAPH}], invalid=_invalid_graph(), not_applicable=_NA_NUMBA)

declare(
    "ir.toposort", chapter=14,
    summary="Graph::topological_sort: FIFO Kahn over live nodes, seeded in ascending id.",
    args=record(graph=GRAPH),
    result=record(schedule_order=Field(List(Optional(U32, 0)), "per node; null when dead"),
                  order=Field(IDS, "node ids in schedule order")),
    spec=(topological_sort,), domain=_graph_domain,
    edges=lambda: [{"graph": FACTS_DAG}, {"graph": {"nodes": []}}],
    invalid=_invalid_graph(), not_applicable=_NA_NUMBA)

declare(
    "ir.cse", chapter=14,
    summary="Graph::eliminate_common_subexpressions: merge live nodes of equal CSE key in "
            "schedule order; the number eliminated.",
    args=record(graph=GRAPH),
    result=record(eliminated=U32, dead=IDS, inputs=Field(List(IDS), "inputs per node"),
                  outputs=Field(IDS, "graph output ids"),
                  num_uses=Field(List(U16), "num_uses per node")),
    spec=(eliminate_common_subexpressions, cse_key), errata=(E14_600,), domain=_graph_domain,
    edges=lambda: [{"graph": CSE_GRAPH}, {"graph": LOWERED_SUMS}, {"graph": UNNAMED_SUMS},
                   {"graph": FACTS_DAG}],
    invalid=_invalid_graph(), not_applicable=_NA_NUMBA)

declare(
    "ir.fusion_groups", chapter=14,
    summary="Graph::compute_fusion_groups: POINTWISE/REDUCTION nodes join a producer's group "
            "of equal device and output ranges; the number of groups.",
    args=record(graph=GRAPH),
    result=record(num_groups=U32, fused_group_id=Field(List(U32), "per node; 0 = unfused"),
                  fused=Field(IDS, "nodes marked FUSED")),
    spec=(compute_fusion_groups,), domain=_graph_domain,
    edges=lambda: [{"graph": FACTS_DAG}, {"graph": CSE_GRAPH}],
    invalid=_invalid_graph(), not_applicable=_NA_NUMBA)

declare(
    "ir.rauw", chapter=14,
    summary="Graph::replace_all_uses: every use of old by a live node, and every graph "
            "output, names new.",
    args=record(graph=GRAPH, old=Field(Int(32), "the node replaced"),
                new=Field(Int(32), "its replacement")),
    result=record(inputs=Field(List(IDS), "inputs per node"), outputs=IDS,
                  num_uses=Field(List(U16), "num_uses per node")),
    spec=(replace_all_uses,), domain=_rauw_args,
    edges=lambda: [{"graph": CSE_GRAPH, "old": 3, "new": 2},
                   {"graph": FACTS_DAG, "old": 6, "new": 6}],
    invalid=(*_invalid_graph(cycle=False, old=0, new=0),
             InvalidCase("old out of range", lambda: st.just(
                 {"graph": CSE_GRAPH, "old": 5, "new": 0}))),
    not_applicable=_NA_NUMBA)

_LOWERED_NODE = js.obj({"id": js.uint(32), "kind": js.uint(8), "inputs": js.array(js.uint(32)),
                        "dtype": js.integer(-128, 127), "device_idx": js.integer(-128, 127),
                        "sizes": js.array(js.integer()), "extern": js.ANY,
                        "num_outputs": js.uint(16),
                        "input_slots": js.or_null(js.array(js.uint(32))),
                        "output_slots": js.or_null(js.array(js.uint(32)))})

declare(
    "ir.lower", chapter=14,
    summary="lower_trace_to_graph: the built trace's external inputs as INPUT nodes, then one "
            "node per op of its classified kind; graph inputs and outputs.",
    args=record(ops=OPS_FIELD, kernels=KERNELS_FIELD),
    result=record(nodes=Json("[lowered node]", js.array(_LOWERED_NODE)),
                  graph_inputs=IDS, graph_outputs=IDS,
                  num_input_nodes=Field(U32, "E: INPUT nodes, ids 0..E-1")),
    spec=(lower_trace_to_graph,), errata=("E6.4", "E6.5"), domain=_lower_domain,
    edges=lambda: [{"ops": []}],
    invalid=(InvalidCase("a kernel id past the CKernelId range", lambda: st.just(
        {"ops": [{"schema_hash": "0x1"}], "kernels": [["0x1", 200]]})),),
    not_applicable={"numba": "builds the trace first: no numeric core", **_NA})
