"""Chapter 14: the mutable Graph IR: nodes on the wire, use counts, RAUW, DCE and toposort.

A graph is its nodes (ids dense 0..n-1, G1) and its output ids. Node fields are the ones the
algorithms read; pointers become values (interned size Exprs are their integers, bodies their
bytes), so pointer equality is value equality.
1. replace_all_uses(old, new): every input slot of a live node naming old names new (old loses
   a use, new gains one per slot); every graph output naming old names new; old stays live.
2. recompute_uses: per node, its occurrences among live nodes' inputs plus, for a live node,
   the graph output entries naming it.
3. eliminate_dead_nodes: recompute_uses; then, until a pass changes nothing, for ids from high
   to low: a live node with no use that is not MUTATION dies and each input loses a use.
4. topological_sort: Kahn over live nodes and live edges, one edge per input occurrence; the
   queue is seeded with the in-degree-0 nodes in ascending id and is FIFO; successors of a
   node come in ascending consumer id. Dead nodes keep no order here (None).
Every loop is iterative, so 10^5-node graphs need no recursion.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

from ..core import shapes as js
from ..core.errors import InvalidInput
from .graph import MicroOp, NodeKind, ReduceHint, ReduceOp, inst_word

MAX_NODES = 1 << 20
"""The spec's own bound on the nodes of one graph on the wire."""
MAX_INPUTS = 0xFFFF
"""GraphNode.num_inputs is a u16."""
U16 = 0xFFFF


@dataclass(frozen=True)
class ExternBody:
    """An ExternInfo as CSE reads it: the python kernel name (None: null) and constant args."""

    name: str | None
    constant_args: tuple[int, ...] = ()


@dataclass
class IrNode:
    """A GraphNode's fields the graph passes read; `sizes` holds ndim + nred interned Exprs
    (output ranges first), `body` the Inst words of a ComputeBody, `aux` its aux array."""

    id: int
    kind: int
    inputs: list[int]
    dead: bool = False
    dtype: int = -1
    device_idx: int = -1
    sizes: tuple[int, ...] = ()
    nred: int = 0
    body: tuple[int, ...] | None = None
    aux: tuple[int, ...] | None = None
    reduce_op: int = 0
    reduce_hint: int = 0
    src_dtype: int = -1
    extern: ExternBody | None = None
    num_uses: int = 0

    @property
    def ndim(self) -> int:
        return len(self.sizes) - self.nred


@dataclass
class IrGraph:
    nodes: list[IrNode]
    outputs: list[int] = field(default_factory=list)

    def live(self) -> list[IrNode]:
        return [n for n in self.nodes if not n.dead]

    def copy(self) -> IrGraph:
        return IrGraph([replace(n, inputs=list(n.inputs)) for n in self.nodes], list(self.outputs))


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

_INT_FIELDS = {"dtype": (-128, 127), "device_idx": (-128, 127), "nred": (0, 255),
               "reduce_op": (0, len(ReduceOp) - 1), "reduce_hint": (0, len(ReduceHint) - 1),
               "src_dtype": (-128, 127), "num_uses": (0, U16)}
_IGNORED = {"num_outputs", "input_slots", "output_slots"}
_KEYS = {"id", "kind", "inputs", "dead", "sizes", "body", "aux", "extern", *_INT_FIELDS, *_IGNORED}
I64 = js.integer(-(2**63), 2**63 - 1)
INST_SHAPE = js.obj({"op": js.integer(0, len(MicroOp) - 1)},
                    {"dtype": js.integer(-128, 127), "operands": js.array(js.uint(16), 3)})
NODE_SHAPE = js.obj({"id": js.uint(32), "kind": js.integer(0, len(NodeKind) - 1),
                     "inputs": js.array(js.uint(32), MAX_INPUTS)},
                    {"dead": js.BOOLEAN, "sizes": js.array(I64, 255 * 2),
                     "body": js.or_null(js.array(INST_SHAPE, U16)),
                     "aux": js.or_null(js.array(I64, U16)),
                     "extern": js.or_null(js.obj(optional={
                         "name": js.or_null(js.STRING), "constant_args": js.or_null(
                             js.array(I64, U16))})),
                     **{k: js.integer(lo, hi) for k, (lo, hi) in _INT_FIELDS.items()},
                     **dict.fromkeys(_IGNORED, js.ANY)})
GRAPH_SHAPE = js.obj({"nodes": js.array(NODE_SHAPE, MAX_NODES)},
                     {"outputs": js.array(js.uint(32), MAX_NODES)})
"""What `graph_from_wire` accepts (the cross-field rules are its own)."""


def _int(value: Any, path: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise InvalidInput(f"{path}: expected an integer in [{lo}, {hi}]")
    return value


def _ints(value: Any, path: str, lo: int, hi: int, limit: int) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > limit:
        raise InvalidInput(f"{path}: expected a list of at most {limit} integers")
    return tuple(_int(v, f"{path}[{k}]", lo, hi) for k, v in enumerate(value))


def _inst(obj: Any, path: str) -> int:
    if not isinstance(obj, dict) or set(obj) - {"op", "dtype", "operands"} or "op" not in obj:
        raise InvalidInput(f"{path}: expected an Inst {{op, dtype, operands}}")
    ops = _ints(obj.get("operands", [0, 0, 0]), f"{path}.operands", 0, U16, 3)
    if len(ops) != 3:
        raise InvalidInput(f"{path}.operands: expected 3 operands")
    return inst_word(_int(obj["op"], f"{path}.op", 0, len(MicroOp) - 1),
                     _int(obj.get("dtype", -1), f"{path}.dtype", -128, 127), ops)


def _extern(obj: Any, path: str) -> ExternBody | None:
    if obj is None:
        return None
    if not isinstance(obj, dict) or set(obj) - {"name", "constant_args"}:
        raise InvalidInput(f"{path}: expected an ExternInfo {{name, constant_args}}")
    name = obj.get("name")
    if name is not None and (not isinstance(name, str) or "\0" in name):
        raise InvalidInput(f"{path}.name: expected a string without NUL, or null")
    args = obj.get("constant_args")
    return ExternBody(name, () if args is None else
                      _ints(args, f"{path}.constant_args", -(2**63), 2**63 - 1, U16))


def node_from_wire(obj: Any, i: int, n: int) -> IrNode:
    """Node i of n: its fields checked one by one (G1: its id is i)."""
    path = f"args.graph.nodes[{i}]"
    if not isinstance(obj, dict) or set(obj) - _KEYS or not {"id", "kind", "inputs"} <= set(obj):
        extra = sorted(set(obj) - _KEYS) if isinstance(obj, dict) else []
        raise InvalidInput(f"{path}: " + (f"no field {extra[0]!r}" if extra else
                                          "expected a node {id, kind, inputs, ...}"))
    if _int(obj["id"], f"{path}.id", 0, 2**32 - 1) != i:
        raise InvalidInput(f"{path}.id: {obj['id']} is not the node's index {i}")
    kind = _int(obj["kind"], f"{path}.kind", 0, len(NodeKind) - 1)
    node = IrNode(i, kind, list(_ints(obj["inputs"], f"{path}.inputs", 0, 2**32 - 1, MAX_INPUTS)))
    for k, v in enumerate(node.inputs):
        if v >= n:
            raise InvalidInput(f"{path}.inputs[{k}]: node {v} out of range (graph of {n})")
    for name, (lo, hi) in _INT_FIELDS.items():
        if name in obj:
            setattr(node, name, _int(obj[name], f"{path}.{name}", lo, hi))
    if "dead" in obj:
        if not isinstance(obj["dead"], bool):
            raise InvalidInput(f"{path}.dead: expected a boolean")
        node.dead = obj["dead"]
    node.sizes = _ints(obj.get("sizes", []), f"{path}.sizes", -(2**63), 2**63 - 1, 510)
    if node.nred > len(node.sizes) or node.ndim > 255:
        raise InvalidInput(f"{path}.nred: ndim + nred must be len(sizes), each at most 255")
    if obj.get("body") is not None:
        if kind not in (NodeKind.POINTWISE, NodeKind.REDUCTION):
            raise InvalidInput(f"{path}.body: only POINTWISE and REDUCTION nodes have one")
        body = obj["body"]
        if not isinstance(body, list) or len(body) > U16:
            raise InvalidInput(f"{path}.body: expected a list of at most 65535 Insts")
        node.body = tuple(_inst(x, f"{path}.body[{k}]") for k, x in enumerate(body))
    if obj.get("aux") is not None:
        node.aux = _ints(obj["aux"], f"{path}.aux", -(2**63), 2**63 - 1, U16)
        if node.body is None or len(node.aux) != len(node.body):
            raise InvalidInput(f"{path}.aux: one int64 per Inst of a body")
    node.extern = _extern(obj.get("extern"), f"{path}.extern")
    if node.extern is not None and (kind == NodeKind.POINTWISE or node.body is not None):
        raise InvalidInput(f"{path}.extern: a POINTWISE node or one with a body has none")
    return node


def graph_from_wire(obj: Any) -> IrGraph:
    """The graph, every field checked; num_uses defaults to the count set_inputs_ leaves
    (one per input occurrence over all nodes)."""
    if not isinstance(obj, dict) or set(obj) - {"nodes", "outputs"} or "nodes" not in obj:
        raise InvalidInput("args.graph: expected {nodes, outputs}")
    raw = obj["nodes"]
    if not isinstance(raw, list) or len(raw) > MAX_NODES:
        raise InvalidInput(f"args.graph.nodes: expected a list of at most {MAX_NODES} nodes")
    nodes = [node_from_wire(x, i, len(raw)) for i, x in enumerate(raw)]
    outputs = list(_ints(obj.get("outputs", []), "args.graph.outputs", 0, 2**32 - 1, MAX_NODES))
    for k, v in enumerate(outputs):
        if v >= len(nodes):
            raise InvalidInput(f"args.graph.outputs[{k}]: node {v} out of range")
    counts = [0] * len(nodes)
    for n in nodes:
        for v in n.inputs:
            counts[v] += 1
    for n, c, x in zip(nodes, counts, raw, strict=True):
        if "num_uses" not in x:
            n.num_uses = c & U16
    return IrGraph(nodes, outputs)


def require_acyclic(g: IrGraph) -> None:
    """The passes that sort need the live nodes and live edges to form a DAG."""
    order = topological_sort(g)
    stuck = next((n.id for n, o in zip(g.nodes, order, strict=True)
                  if o is None and not n.dead), None)
    if stuck is not None:
        raise InvalidInput(f"args.graph.nodes[{stuck}].inputs: node {stuck} lies on a cycle "
                           f"of live nodes (or after one)")


# ── the passes ────────────────────────────────────────────────────────────────────────────────

def replace_all_uses(g: IrGraph, old: int, new: int) -> None:
    """Step 1 (RAUW), in place."""
    if old == new:
        return
    for n in g.nodes:
        if n.dead:
            continue
        for j, v in enumerate(n.inputs):
            if v == old:
                n.inputs[j] = new
                g.nodes[old].num_uses = (g.nodes[old].num_uses - 1) & U16
                g.nodes[new].num_uses = (g.nodes[new].num_uses + 1) & U16
    g.outputs = [new if v == old else v for v in g.outputs]


def recompute_uses(g: IrGraph) -> None:
    """Step 2, in place."""
    for n in g.nodes:
        n.num_uses = 0
    for n in g.live():
        for v in n.inputs:
            g.nodes[v].num_uses = (g.nodes[v].num_uses + 1) & U16
    for v in g.outputs:
        if not g.nodes[v].dead:
            g.nodes[v].num_uses = (g.nodes[v].num_uses + 1) & U16


def eliminate_dead_nodes(g: IrGraph) -> None:
    """Step 3, in place."""
    recompute_uses(g)
    changed = True
    while changed:
        changed = False
        for n in reversed(g.nodes):
            if n.dead or n.num_uses != 0 or n.kind == NodeKind.MUTATION:
                continue
            n.dead = changed = True
            for v in n.inputs:
                g.nodes[v].num_uses = (g.nodes[v].num_uses - 1) & U16


def topological_sort(g: IrGraph) -> list[int | None]:
    """Step 4: each node's schedule_order (None: dead, or never freed by a cycle)."""
    count = len(g.nodes)
    in_deg = [0] * count
    succ_cnt = [0] * count
    for n in g.live():
        for v in n.inputs:
            if not g.nodes[v].dead:
                in_deg[n.id] += 1
                succ_cnt[v] += 1
    offsets = [0] * (count + 1)
    for i in range(count):
        offsets[i + 1] = offsets[i] + succ_cnt[i]
    succ = [0] * offsets[count]
    fill = offsets[:count]
    for n in g.live():
        for v in n.inputs:
            if not g.nodes[v].dead:
                succ[fill[v]] = n.id
                fill[v] += 1
    order: list[int | None] = [None] * count
    queue = deque(n.id for n in g.live() if in_deg[n.id] == 0)
    nxt = 0
    while queue:
        u = queue.popleft()
        order[u] = nxt
        nxt += 1
        for s in succ[offsets[u]:offsets[u + 1]]:
            in_deg[s] -= 1
            if in_deg[s] == 0:
                queue.append(s)
    return order


def in_schedule(g: IrGraph, order: list[int | None]) -> list[IrNode]:
    """The live nodes in schedule order."""
    ranked = [(o, n.id) for n, o in zip(g.nodes, order, strict=True) if o is not None]
    return [g.nodes[i] for _, i in sorted(ranked)]
