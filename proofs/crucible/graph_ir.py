"""Chapter 14 obligations of the Graph IR: classify_node_kind's table, DCE's fixpoint (G2,
G3), toposort (G4), CSE's hash independence and key (G5), RAUW's use count, fusion groups (G6)
and acyclic lowering. Graphs come from the ops' own domain (acyclic, shuffled ids, some nodes
dead) and from hand-made cases that kill each planted bug deterministically."""

from __future__ import annotations

from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.crucible.build_trace import build_trace
from ...spec.crucible.ckernel import CKernelId
from ...spec.crucible.graph import NODE_KIND_OF, NodeKind, classify_node_kind
from ...spec.crucible.graph_cse import (
    LOWERED_SUMS,
    compute_fusion_groups,
    cse_key,
    eliminate_common_subexpressions,
    ranges_compatible,
)
from ...spec.crucible.graph_ir import (
    IrGraph,
    eliminate_dead_nodes,
    graph_from_wire,
    recompute_uses,
    replace_all_uses,
    topological_sort,
)
from ...spec.crucible.graph_ir_ops import CSE_GRAPH, FACTS_DAG, graphs, node
from ...spec.crucible.graph_lower import lower_trace_to_graph
from ...spec.crucible.trace_build_ops import kernels_from_wire, recorded_ops, traces
from ..core.obligation import Property, property_obligation

IN, PW, RED, MUT = NodeKind.INPUT, NodeKind.POINTWISE, NodeKind.REDUCTION, NodeKind.MUTATION

# ── PO14.600 classify_node_kind ──────────────────────────────────────────────────────────────

_KIND_TABLE = {NodeKind.SCAN: {63, 109}, NodeKind.MUTATION: {91},
               NodeKind.POINTWISE: set(range(25, 57)), NodeKind.REDUCTION: {57, 58, 59, 60, 61,
                                                                           62, 64},
               NodeKind.NOP: set(range(73, 89))}
"""The facts' classify_node_kind column, written as the ids of each non-EXTERN kind."""


def _kind_matches(kid: int) -> None:
    want = next((k for k, ids in _KIND_TABLE.items() if kid in ids), NodeKind.EXTERN)
    assert classify_node_kind(kid) == want, (kid, classify_node_kind(kid), want)


@property_obligation(
    "PO14.600",
    "classify_node_kind is total over the 147 CKernelIds and gives the facts' column: "
    "cumulative sum and associative scan SCAN, COPY_ MUTATION, 25..56 POINTWISE, 57..64 but "
    "63 REDUCTION, 73..88 NOP, every other id (OPAQUE included) EXTERN.",
    covers=("ir.lower",), subject=classify_node_kind,
    mutants=(
        Mutant.edit("reductions before scans", "the REDUCTION range is tested first, so "
                    "REDUCE_CUMSUM is a reduction", classify_node_kind,
                    "if kernel_id in (CKernelId.REDUCE_CUMSUM, CKernelId.ASSOC_SCAN):",
                    "if kernel_id == CKernelId.ASSOC_SCAN:"),
        Mutant.edit("copy is extern", "COPY_ is not a mutation", classify_node_kind,
                    "if kernel_id == CKernelId.COPY_:", "if False:"),
        Mutant.edit("fill not pointwise", "the pointwise range stops before EWISE_FILL",
                    classify_node_kind, "kernel_id <= CKernelId.EWISE_FILL",
                    "kernel_id < CKernelId.EWISE_FILL"),
        Mutant.edit("unfold is extern", "the view range stops before UNFOLD",
                    classify_node_kind, "kernel_id <= CKernelId.UNFOLD",
                    "kernel_id < CKernelId.UNFOLD"),
    ),
)
def node_kind_table(_subject):
    return [Property("every CKernelId", _kind_matches,
                     cases=lambda: range(CKernelId.NUM_KERNELS)),
            Property("the module's table", lambda _: _table_is_total(), cases=lambda: [0])]


def _table_is_total() -> None:
    assert len(NODE_KIND_OF) == CKernelId.NUM_KERNELS


# ── helpers ─────────────────────────────────────────────────────────────────────────────────

def _uses_consistent(g: IrGraph) -> None:
    """G2: a node's num_uses counts its occurrences among live nodes' inputs and, for a live
    node, the graph output entries naming it."""
    for n in g.nodes:
        want = sum(m.inputs.count(n.id) for m in g.live()) + \
            (0 if n.dead else g.outputs.count(n.id))
        assert n.num_uses == want & 0xFFFF, (n.id, n.num_uses, want)


def _reachable(g: IrGraph) -> set[int]:
    seen, stack = set(), [v for v in g.outputs if not g.nodes[v].dead]
    stack += [n.id for n in g.live() if n.kind == MUT]
    while stack:
        v = stack.pop()
        if v not in seen and not g.nodes[v].dead:
            seen.add(v)
            stack.extend(g.nodes[v].inputs)
    return seen


CHAINED = {"nodes": [*CSE_GRAPH["nodes"][:4], node(4, PW, [2]), node(5, PW, [3])],
           "outputs": [4, 5]}
"""test_graph's duplicates pw1, pw2, each read by one more pointwise node."""


def _graph_cases() -> list[dict]:
    chain = {"nodes": [node(0, PW, [1]), node(1, PW, [2]), node(2, IN, [])], "outputs": []}
    mut = {"nodes": [node(0, IN, []), node(1, MUT, [0]), node(2, PW, [0])], "outputs": []}
    dead_in = {"nodes": [node(0, IN, [], dead=True), node(1, PW, [0])], "outputs": [1, 0]}
    return [FACTS_DAG, {**FACTS_DAG, "outputs": []}, CSE_GRAPH, CHAINED, chain, mut, dead_in,
            LOWERED_SUMS]


# ── PO14.601 DCE ──────────────────────────────────────────────────────────────────────────────

def _dce_fixpoint(wire: dict) -> None:
    g = graph_from_wire(wire)
    want = _reachable(g)
    eliminate_dead_nodes(g)
    assert {n.id for n in g.live()} == want, ({n.id for n in g.live()}, want)
    assert all(not g.nodes[v].dead for n in g.live() for v in n.inputs
               if v in want), "a live node reads a node DCE killed"
    _uses_consistent(g)
    before = [(n.dead, n.num_uses) for n in g.nodes]
    eliminate_dead_nodes(g)
    assert [(n.dead, n.num_uses) for n in g.nodes] == before, "DCE is not idempotent"


@property_obligation(
    "PO14.601",
    "DCE is idempotent and leaves exactly the least fixpoint (G3): the nodes reachable through "
    "live nodes from a live graph output or a live MUTATION node; only MUTATION is protected "
    "(unused INPUT nodes die); live use counts are exact afterwards (G2).",
    covers=("ir.dce",), subject=eliminate_dead_nodes,
    mutants=(
        Mutant.edit("inputs protected", "unused INPUT nodes survive", eliminate_dead_nodes,
                    "n.kind == NodeKind.MUTATION", "n.kind in (NodeKind.MUTATION, "
                    "NodeKind.INPUT)"),
        Mutant.edit("one pass", "a single high-to-low pass, no fixpoint", eliminate_dead_nodes,
                    "n.dead = changed = True", "n.dead = True"),
        Mutant.edit("uses kept", "a dying node does not release its inputs",
                    eliminate_dead_nodes, "g.nodes[v].num_uses = (g.nodes[v].num_uses - 1)",
                    "g.nodes[v].num_uses = (g.nodes[v].num_uses - 0)"),
        Mutant.edit("dead outputs count", "recompute counts output entries of dead nodes",
                    recompute_uses, "if not g.nodes[v].dead:", "if True:"),
    ),
)
def dce_properties(_subject):
    return [Property("hand-made graphs", _dce_fixpoint, cases=_graph_cases),
            Property("generated graphs", _dce_fixpoint, strategy=graphs, examples=300)]


# ── PO14.602 toposort ─────────────────────────────────────────────────────────────────────────

def _toposort_respects_edges(wire: dict) -> None:
    g = graph_from_wire(wire)
    order = topological_sort(g)
    live = [n.id for n in g.live()]
    assert sorted(order[i] for i in live) == list(range(len(live))), order  # bijection
    assert all(order[n.id] is None for n in g.nodes if n.dead)
    for n in g.live():
        for v in n.inputs:
            if not g.nodes[v].dead:
                assert order[v] < order[n.id], (v, n.id, order)


def _facts_order(_case: int) -> None:
    assert topological_sort(graph_from_wire(FACTS_DAG)) == [0, 1, 4, 6, 2, 5, 7, 3]


@property_obligation(
    "PO14.602",
    "toposort is a bijection of the live nodes onto 0..n_live-1 that respects every live edge "
    "(G4) and leaves dead nodes unordered; on the facts' example it is FIFO Kahn seeded in "
    "ascending id: [0, 1, 4, 6, 2, 5, 7, 3].",
    covers=("ir.toposort",), subject=topological_sort,
    mutants=(
        Mutant.edit("LIFO", "a stack instead of a queue", topological_sort,
                    "u = queue.popleft()", "u = queue.pop()"),
        Mutant.edit("dead producers count", "edges from dead nodes hold consumers back",
                    topological_sort, "if not g.nodes[v].dead:\n                in_deg",
                    "if True:\n                in_deg"),
        Mutant.edit("seeded descending", "the queue is seeded from the highest id",
                    topological_sort, "queue = deque(n.id for n in g.live() if",
                    "queue = deque(n.id for n in reversed(g.live()) if"),
    ),
)
def toposort_properties(_subject):
    return [Property("the facts' example", _facts_order, cases=lambda: [0]),
            Property("hand-made graphs", _toposort_respects_edges, cases=_graph_cases),
            Property("generated graphs", _toposort_respects_edges, strategy=graphs,
                     examples=300)]


# ── PO14.603 CSE ──────────────────────────────────────────────────────────────────────────────

_HASHES = (None, lambda key: 0, lambda key: key[0] * 0x9E3779B9)
"""The spec's digest, a constant (every key collides) and one of the kind alone."""


def _cse_outcome(wire: dict, hash_key) -> tuple:
    g = graph_from_wire(wire)
    r = (eliminate_common_subexpressions(g) if hash_key is None
         else eliminate_common_subexpressions(g, hash_key=hash_key))
    return r.eliminated, [(n.dead, n.inputs, n.num_uses) for n in g.nodes], g.outputs, r


def _cse_sound(wire: dict) -> None:
    outcomes = [_cse_outcome(wire, h) for h in _HASHES]
    assert all(o[:3] == outcomes[0][:3] for o in outcomes), "CSE depends on the hash"
    before = graph_from_wire(wire)
    g = graph_from_wire(wire)
    r = eliminate_common_subexpressions(g)
    order = topological_sort(before)
    for n in before.nodes:
        rep = r.canonical[n.id]
        if rep == n.id:
            continue
        assert n.kind not in (IN, MUT), "CSE eliminated an INPUT or MUTATION node"
        assert not n.dead and order[rep] < order[n.id]
        assert cse_key(before.nodes[rep], r.canonical) == cse_key(n, r.canonical), n.id
    if r.eliminated:
        _uses_consistent(g)
    assert all(r.canonical[v] == v for v in g.outputs)


@property_obligation(
    "PO14.603",
    "CSE's result (count, dead set, inputs, outputs, use counts) is the same under three hash "
    "functions, one constant; an eliminated node is never INPUT or MUTATION, was live, comes "
    "after its representative in schedule order and has its key (G5); after an elimination "
    "no input or output names an eliminated node and use counts are exact (G2).",
    covers=("ir.cse",), subject=eliminate_common_subexpressions,
    mutants=(
        Mutant.edit("hash only", "a slot with an equal hash is taken as an equal node",
                    eliminate_common_subexpressions,
                    "entry[0] == h and entry[2] == key", "entry[0] == h"),
        Mutant.edit("first probe only", "a collision inserts nothing and stops",
                    eliminate_common_subexpressions, "for p in range(cap):",
                    "for p in range(1):"),
        Mutant.edit("mutations merged", "MUTATION nodes take part",
                    eliminate_common_subexpressions,
                    "(NodeKind.INPUT, NodeKind.MUTATION)", "(NodeKind.INPUT,)"),
        Mutant.edit("inputs not canonical", "the key reads the inputs as they are", cse_key,
                    "tuple(canonical[v] for v in n.inputs)", "tuple(n.inputs)"),
        Mutant.edit("no aux", "the aux array is not compared", cse_key,
                    '("body", n.body, n.aux)', '("body", n.body)'),
    ),
)
def cse_properties(_subject):
    def chained(_case: int) -> None:
        """pw1 == pw2 makes f(pw1) == f(pw2), through the canonical inputs."""
        assert _cse_outcome(CHAINED, None)[0] == 2

    def aux(_case: int) -> None:
        body = CSE_GRAPH["nodes"][2]["body"]
        wire = {"nodes": [node(0, IN, []), node(1, PW, [0], body=body, aux=[0, 0, 0, 0]),
                          node(2, PW, [0], body=body, aux=[0, 0, 0, 1])], "outputs": [1, 2]}
        assert _cse_outcome(wire, None)[0] == 0

    def mutation(_case: int) -> None:
        wire = {"nodes": [node(0, IN, []), node(1, MUT, [0]), node(2, MUT, [0])]}
        assert _cse_outcome(wire, None)[0] == 0

    return [Property("a chain of duplicates", chained, cases=lambda: [0]),
            Property("aux arrays", aux, cases=lambda: [0]),
            Property("mutations", mutation, cases=lambda: [0]),
            Property("hand-made graphs", _cse_sound, cases=_graph_cases),
            Property("generated graphs", _cse_sound, strategy=graphs, examples=300)]


# ── PO14.604 RAUW ─────────────────────────────────────────────────────────────────────────────

def _rauw_keeps_uses(case: tuple) -> None:
    wire, old, new = case
    g = graph_from_wire(wire)
    if not g.nodes:
        return
    old, new = old % len(g.nodes), new % len(g.nodes)
    total = sum(n.num_uses for n in g.nodes)
    outs = g.outputs.count(old) + g.outputs.count(new)
    replace_all_uses(g, old, new)
    assert sum(n.num_uses for n in g.nodes) == total, "RAUW changed the total use count"
    if old != new:
        assert all(old not in n.inputs for n in g.live()) and old not in g.outputs
        assert g.outputs.count(new) == outs


@property_obligation(
    "PO14.604",
    "RAUW keeps the total use count (no count wraps in these graphs) and, old != new, leaves "
    "no live node's input and no graph output naming old.",
    covers=("ir.rauw",), subject=replace_all_uses,
    mutants=(
        Mutant.edit("old keeps its use", "the replaced node's count is not decremented",
                    replace_all_uses, "(g.nodes[old].num_uses - 1)", "(g.nodes[old].num_uses)"),
        Mutant.edit("outputs kept", "graph outputs still name old", replace_all_uses,
                    "g.outputs = [new if v == old else v for v in g.outputs]", "pass"),
    ),
)
def rauw_properties(_subject):
    return [Property("hand-made cases", _rauw_keeps_uses,
                     cases=lambda: [(CSE_GRAPH, 3, 2), (CSE_GRAPH, 4, 0), (FACTS_DAG, 0, 4)]),
            Property("generated graphs", _rauw_keeps_uses,
                     strategy=lambda: st.tuples(graphs(), st.integers(0, 9),
                                                st.integers(0, 9)), examples=300)]


# ── PO14.605 lowering ─────────────────────────────────────────────────────────────────────────

def _lowering_acyclic(args: dict) -> None:
    tg = build_trace(recorded_ops(args["ops"]), kernels_from_wire(args.get("kernels", [])))
    lg = lower_trace_to_graph(tg)
    if not tg.ops:
        assert not lg.nodes
        return
    ext = {s for op in tg.ops for t, s in zip(op.input_trace_indices or [],
                                              op.input_slot_ids or [], strict=False)
           if t == 0xFFFFFFFF and s < len(tg.slots)}
    e = lg.num_input_nodes
    assert e == len(ext) and len(lg.nodes) == e + len(tg.ops), (e, len(ext), len(lg.nodes))
    assert all((n.kind == IN) == (n.id < e) for n in lg.nodes)
    for n in lg.nodes:
        assert all(v < n.id for v in n.inputs), (n.id, n.inputs)
    assert sorted(lg.nodes[k].output_slots[0] for k in lg.graph_inputs) == \
        [lg.nodes[k].output_slots[0] for k in lg.graph_inputs]
    used = {v for n in lg.nodes for v in n.inputs}
    assert lg.graph_outputs == [k for k in range(e, len(lg.nodes)) if k not in used]
    wire = {"nodes": [{"id": n.id, "kind": int(n.kind), "inputs": n.inputs}
                      for n in lg.nodes], "outputs": lg.graph_outputs}
    assert None not in topological_sort(graph_from_wire(wire))


def _test_lower_case(_case: int) -> None:
    def m(ptr: int) -> dict:
        return {"ndim": 2, "sizes": [4, 16], "strides": [16, 1], "dtype": 6,
                "data_ptr": hex(ptr)}
    ops = [{"schema_hash": "0xa", "inputs": [m(0x10), m(0x20)], "outputs": [m(0x30)]},
           {"schema_hash": "0xb", "inputs": [m(0x30)], "outputs": [m(0x40)]},
           {"schema_hash": "0xc", "inputs": [m(0x40), m(0x50)], "outputs": [m(0x60)]}]
    _lowering_acyclic({"ops": ops, "kernels": [["0xa", 38], ["0xb", 25], ["0xc", 1]]})
    lg = lower_trace_to_graph(build_trace(recorded_ops(ops), {0xa: 38, 0xb: 25, 0xc: 1}))
    assert [n.inputs for n in lg.nodes] == [[], [], [], [0, 1], [3], [4, 2]]
    assert lg.graph_outputs == [5]
    twice = [{"schema_hash": "0xa", "inputs": [m(0x10)], "outputs": [m(0x20)]},
             {"schema_hash": "0xa", "inputs": [m(0x10)], "outputs": [m(0x20)]}]
    _lowering_acyclic({"ops": twice})
    lg = lower_trace_to_graph(build_trace(recorded_ops(twice)))
    assert (lg.num_input_nodes, lg.graph_outputs) == (1, [1, 2])


@property_obligation(
    "PO14.605",
    "Lowering a built trace gives E + num_ops nodes, E the distinct valid slots of inputs "
    "without a producer; the INPUT nodes are ids 0..E-1 and the graph inputs are in ascending "
    "slot; the graph outputs are the compute nodes no node reads; every dependency has a "
    "smaller id than its consumer, so the graph is acyclic and "
    "toposort orders every node.",
    covers=("ir.lower",), subject=lower_trace_to_graph,
    mutants=(
        Mutant.edit("inputs per use", "an already mapped slot makes another INPUT node",
                    lower_trace_to_graph, "or sid in extern_map:", ":"),
        Mutant.edit("producer off by one", "a dependency names the node after its producer",
                    lower_trace_to_graph, "dep = e + tidx", "dep = e + tidx + 1"),
        Mutant.edit("alias edges count", "an op overwritten in place is not an output",
                    lower_trace_to_graph, "if ed.kind == EdgeKind.DATA_FLOW}", "}"),
    ),
)
def lowering_properties(_subject):
    return [Property("test_lower's trace", _test_lower_case, cases=lambda: [0]),
            Property("built traces", _lowering_acyclic, strategy=traces, examples=200)]


# ── PO14.606 fusion groups ────────────────────────────────────────────────────────────────────

def _groups_valid(wire: dict) -> None:
    g = graph_from_wire(wire)
    r = compute_fusion_groups(g)
    order = topological_sort(g)
    ids = sorted({k for k in r.fused_group_id if k})
    assert ids == list(range(1, r.num_groups + 1)), (ids, r.num_groups)
    for gid in ids:
        members = [n for n in g.nodes if r.fused_group_id[n.id] == gid]
        head = min(members, key=lambda n: order[n.id])
        for n in members:
            assert not n.dead and n.kind in (PW, RED) and ranges_compatible(n, head)
            if n is not head:
                assert n.id in r.fused and any(r.fused_group_id[v] == gid for v in n.inputs)
        assert head.id not in r.fused
    for n in g.nodes:
        assert (r.fused_group_id[n.id] != 0) == (not n.dead and n.kind in (PW, RED))


@property_obligation(
    "PO14.606",
    "Fusion groups are numbered 1..num_groups; each is a set of live POINTWISE/REDUCTION nodes "
    "with the device and output ranges of its first node in schedule order, every later "
    "member FUSED and fed by a member (G6); every live POINTWISE/REDUCTION node has a group "
    "and no other node does. On the facts' example after DCE: 2 groups.",
    covers=("ir.fusion_groups",), subject=compute_fusion_groups,
    mutants=(
        Mutant.edit("any device", "the device is not compared", ranges_compatible,
                    "a.device_idx == b.device_idx and ", ""),
        Mutant.edit("first input only", "only a node's first input can give it a group",
                    compute_fusion_groups, "for v in n.inputs:", "for v in n.inputs[:1]:"),
        Mutant.edit("reduction ranges", "the sizes compared include reduction ranges",
                    ranges_compatible, "a.sizes[:a.ndim] == b.sizes[:b.ndim]",
                    "a.sizes == b.sizes"),
    ),
)
def fusion_properties(_subject):
    def facts(_case: int) -> None:
        wire = {**FACTS_DAG, "nodes": [*FACTS_DAG["nodes"][:7], {**FACTS_DAG["nodes"][7],
                                                                 "dead": True}]}
        r = compute_fusion_groups(graph_from_wire(wire))
        assert (r.num_groups, r.fused_group_id, r.fused) == (2, [0, 0, 1, 1, 0, 2, 2, 0],
                                                             [3, 6])

    def devices_and_ranges(_case: int) -> None:
        wire = {"nodes": [node(0, IN, [], sizes=[4]), node(1, PW, [0], sizes=[4]),
                          node(2, PW, [1], sizes=[4], device_idx=0),
                          node(3, RED, [1], sizes=[4, 8], nred=1),
                          node(4, MUT, [1], sizes=[4]), node(5, PW, [4], sizes=[4]),
                          node(6, PW, [0, 1], sizes=[4])],
                "outputs": [2, 3, 5, 6]}
        r = compute_fusion_groups(graph_from_wire(wire))
        assert r.fused_group_id == [0, 1, 2, 1, 0, 3, 1], r.fused_group_id

    return [Property("the facts' example", facts, cases=lambda: [0]),
            Property("devices, reduction ranges, a mutation", devices_and_ranges,
                     cases=lambda: [0]),
            Property("hand-made graphs", _groups_valid, cases=_graph_cases),
            Property("generated graphs", _groups_valid, strategy=graphs, examples=300)]
