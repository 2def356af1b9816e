"""Chapter 9: the Merkle DAG of regions, branches, loops and terminals.

A DAG on the wire is {"nodes": [...], "root": k}; nodes refer to each other by index:
  {"kind": "region", "content_hash" | "ops", "next"}
  {"kind": "branch", "guard": {kind, op_index, arg_index, dim_index},
   "arms": [{"value", "target"}], "next"}
  {"kind": "loop", "body", "body_content_hash"?, "feedback": [[out, in]], "term_kind",
   "repeat_count", "epsilon_bits", "next"}
  {"kind": "terminal"}  ("next", if given, must be null: a terminal ends the walk)
A node's Merkle hash covers its own hash and everything reachable through its continuation;
a terminal's is 0; a region with no continuation has merkle = content.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.layout import f32, hash64, i64, id32, u8, u16, u32
from ..core.layout_ops import scalar_from_wire, wire_schema
from .content_hash import TRACE_OPS, compute_content_hash, trace_ops_from_wire
from .hashing import PHI, fmix64, wymix
from .merkle_dag import (
    DagDiffKind,
    GuardKind,
    LoopTermKind,
    TraceNodeKind,
    branch_hash,
    chained,
    feedback_signature,
    guard_hash,
    loop_hash,
    loopterm_hash,
)

E9_3 = "E9.3"

KINDS = {"region": TraceNodeKind.REGION, "branch": TraceNodeKind.BRANCH,
         "loop": TraceNodeKind.LOOP, "terminal": TraceNodeKind.TERMINAL}
_FIELDS = {
    "region": {"kind", "content_hash", "num_ops", "ops", "next"},
    "branch": {"kind", "guard", "arms", "next"},
    "loop": {"kind", "body", "body_content_hash", "feedback", "term_kind", "repeat_count",
             "epsilon_bits", "next"},
    "terminal": {"kind", "next"},
}


@dataclass
class Node:
    """One DAG node; fields beyond `kind` and `next` belong to its kind."""

    kind: TraceNodeKind
    next: int | None = None
    content_hash: int = 0
    num_ops: int = 0
    guard: tuple[int, int, int, int] = (GuardKind.SHAPE_DIM, 0xFFFFFFFF, 0, 0)
    arms: list[tuple[int, int]] = field(default_factory=list)
    body: int | None = None
    body_content_hash: int | None = None
    feedback: list[tuple[int, int]] = field(default_factory=list)
    term_kind: int = LoopTermKind.REPEAT
    repeat_count: int = 0
    epsilon_bits: int = 0


@dataclass
class Dag:
    nodes: list[Node]
    root: int | None

    def children(self, k: int) -> list[int]:
        n = self.nodes[k]
        out = [t for _, t in n.arms] + ([n.body] if n.body is not None else [])
        return out + ([n.next] if n.next is not None else [])


def _ref(obj: dict, name: str, count: int, path: str) -> int | None:
    v = obj.get(name)
    if v is None:
        return None
    if type(v) is not int or not 0 <= v < count:
        raise InvalidInput(f"{path}.{name}: a node index below {count}, or null")
    return v


def guard_from_wire(g: Any, path: str) -> tuple[int, int, int, int]:
    """A branch guard {kind, op_index, arg_index, dim_index} as (kind, op, arg, dim)."""
    if not isinstance(g, dict) or set(g) - {"kind", "op_index", "arg_index", "dim_index"}:
        raise InvalidInput(f"{path}: {{kind, op_index, arg_index, dim_index}}")
    return (scalar_from_wire(u8, g.get("kind", 0), f"{path}.kind"),
            scalar_from_wire(id32, g.get("op_index", 0xFFFFFFFF), path),
            scalar_from_wire(u16, g.get("arg_index", 0), path),
            scalar_from_wire(u16, g.get("dim_index", 0), path))


def _node(obj: Any, count: int, path: str, errata: frozenset[str] = NO_ERRATA) -> Node:
    if not isinstance(obj, dict) or obj.get("kind") not in KINDS:
        raise InvalidInput(f"{path}: a node with kind region, branch, loop or terminal")
    extra = sorted(set(obj) - _FIELDS[obj["kind"]])
    if extra:
        raise InvalidInput(f"{path}: a {obj['kind']} node has no field {extra[0]!r}")
    n = Node(KINDS[obj["kind"]], _ref(obj, "next", count, path))
    if n.kind == TraceNodeKind.TERMINAL and n.next is not None:
        raise InvalidInput(f"{path}.next: a terminal ends the walk; its next must be null")
    if obj["kind"] == "region":
        if "ops" in obj:
            ops = trace_ops_from_wire(obj["ops"])
            n.content_hash, n.num_ops = compute_content_hash(ops, errata), len(ops)
        n.content_hash = scalar_from_wire(hash64, obj.get("content_hash", n.content_hash),
                                          f"{path}.content_hash")
        n.num_ops = scalar_from_wire(u32, obj.get("num_ops", n.num_ops), f"{path}.num_ops")
    elif obj["kind"] == "branch":
        n.guard = guard_from_wire(obj.get("guard", {}), f"{path}.guard")
        arms = obj.get("arms", [])
        if not isinstance(arms, list):
            raise InvalidInput(f"{path}.arms: a list of {{value, target}}")
        for k, a in enumerate(arms):
            if not isinstance(a, dict) or set(a) != {"value", "target"}:
                raise InvalidInput(f"{path}.arms[{k}]: {{value, target}}")
            target = _ref(a, "target", count, f"{path}.arms[{k}]")
            if target is None:
                raise InvalidInput(f"{path}.arms[{k}].target: an arm needs a target")
            n.arms.append((scalar_from_wire(i64, a["value"], f"{path}.arms[{k}]"), target))
    elif obj["kind"] == "loop":
        n.body = _ref(obj, "body", count, path)
        if n.body is None:
            raise InvalidInput(f"{path}.body: a loop needs a body")
        if "body_content_hash" in obj:
            n.body_content_hash = scalar_from_wire(hash64, obj["body_content_hash"], path)
        fb = obj.get("feedback", [])
        if not isinstance(fb, list) or not all(isinstance(e, list) and len(e) == 2 for e in fb):
            raise InvalidInput(f"{path}.feedback: a list of [output_idx, input_idx]")
        n.feedback = [(scalar_from_wire(u16, o, path), scalar_from_wire(u16, i, path))
                      for o, i in fb]
        n.term_kind = scalar_from_wire(u8, obj.get("term_kind", 0), f"{path}.term_kind")
        n.repeat_count = scalar_from_wire(u32, obj.get("repeat_count", 0), path)
        n.epsilon_bits = scalar_from_wire(f32, obj.get("epsilon_bits", 0), path)
    return n


GUARD_WIRE = js.obj(optional={"kind": wire_schema(u8), "op_index": wire_schema(id32),
                               "arg_index": wire_schema(u16), "dim_index": wire_schema(u16)})
"""What `guard_from_wire` accepts."""


def dag_schema(result: bool = False) -> dict:
    """The JSON Schema of what `dag_from_wire` accepts, or of what `dag_to_wire` writes."""
    index, u = js.or_null(js.integer(0)), (lambda t: wire_schema(t, result))
    if result:
        guard = js.obj({n: wire_schema(t, True) for n, t in
                        (("kind", u8), ("op_index", id32), ("arg_index", u16), ("dim_index", u16))})
        shapes = {
            "region": js.obj({"content_hash": js.HEX64_OUT, "num_ops": u(u32), "next": index}),
            "branch": js.obj({"guard": guard, "arms": js.array(js.obj(
                {"value": u(i64), "target": js.integer(0)})), "next": index}),
            "loop": js.obj({"body": js.integer(0), "feedback": js.array(js.pair(u(u16))),
                            "term_kind": u(u8), "repeat_count": u(u32), "epsilon_bits": u(f32),
                            "next": index}, {"body_content_hash": js.HEX64_OUT}),
            "terminal": js.obj()}
        return js.obj({"nodes": js.array(js.tagged("kind", shapes)), "root": index})
    shapes = {
        "region": js.obj(optional={"content_hash": u(hash64), "num_ops": u(u32),
                                   "ops": TRACE_OPS, "next": index}),
        "branch": js.obj(optional={"guard": GUARD_WIRE, "next": index, "arms": js.array(js.obj(
            {"value": u(i64), "target": js.integer(0)}))}),
        "loop": js.obj({"body": js.integer(0)}, {
            "body_content_hash": u(hash64), "feedback": js.array(js.pair(u(u16))),
            "term_kind": u(u8), "repeat_count": u(u32), "epsilon_bits": u(f32), "next": index}),
        "terminal": js.obj(optional={"next": js.NULL})}
    return js.obj({"nodes": js.array(js.tagged("kind", shapes))}, {"root": index})


def dag_from_wire(obj: Any, path: str = "args.dag", errata: frozenset[str] = NO_ERRATA) -> Dag:
    """A DAG from the wire, checked: indices in range, no cycle, no terminal with a next."""
    if not isinstance(obj, dict) or not isinstance(obj.get("nodes"), list):
        raise InvalidInput(f"{path}: expected {{nodes: [...], root}}")
    count = len(obj["nodes"])
    nodes = [_node(o, count, f"{path}.nodes[{k}]", errata) for k, o in enumerate(obj["nodes"])]
    dag = Dag(nodes, _ref(obj, "root", count, path))
    state = [0] * count  # 0 unseen, 1 on the stack, 2 done
    for start in range(count):
        stack = [(start, iter(dag.children(start)))]
        state[start] = state[start] or 1
        while stack and state[start] != 2:
            k, it = stack[-1]
            child = next(it, None)
            if child is None:
                state[k] = 2
                stack.pop()
            elif state[child] == 1:
                raise InvalidInput(f"{path}: node {child} is on a cycle")
            elif state[child] == 0:
                state[child] = 1
                stack.append((child, iter(dag.children(child))))
    return dag


def body_content_hash(dag: Dag, body: int | None) -> int:
    """fmix64 of the chain PHI, wymix'ed with each region's content along the body's
    continuation (branches and loops on it are skipped, not entered)."""
    h, k = PHI, body
    while k is not None:
        n = dag.nodes[k]
        if n.kind == TraceNodeKind.REGION:
            h = wymix(h, n.content_hash)
        k = n.next
    return fmix64(h)


def loop_body_hash(dag: Dag, n: Node) -> int:
    """A loop's body hash: its given body_content_hash, else computed from its body."""
    return n.body_content_hash if n.body_content_hash is not None else \
        body_content_hash(dag, n.body)


def merkle_hashes(dag: Dag, errata: frozenset[str] = NO_ERRATA) -> list[int]:
    """Every node's Merkle hash (children before parents)."""
    memo: dict[int, int] = {}

    def merkle(k: int) -> int:
        if k in memo:
            return memo[k]
        n = dag.nodes[k]
        if n.kind == TraceNodeKind.TERMINAL:
            memo[k] = 0
            return 0
        if n.kind == TraceNodeKind.REGION:
            own = n.content_hash
        elif n.kind == TraceNodeKind.BRANCH:
            own = branch_hash(guard_hash(*n.guard, errata),
                              [(v, merkle(t)) for v, t in n.arms], errata)
        else:
            own = loop_hash(loop_body_hash(dag, n), feedback_signature(n.feedback),
                            loopterm_hash(n.term_kind, n.repeat_count, n.epsilon_bits))
        memo[k] = chained(own, None if n.next is None else merkle(n.next))
        return memo[k]

    for k in _post_order(dag):  # children first, so the recursion stays one level deep
        merkle(k)
    return [memo[k] for k in range(len(dag.nodes))]


def _post_order(dag: Dag) -> list[int]:
    """Node indices, every node after all it reaches (so recursion stays shallow)."""
    seen: set[int] = set()
    out: list[int] = []
    for start in range(len(dag.nodes)):
        stack = [(start, False)]
        while stack:
            k, expanded = stack.pop()
            if expanded:
                out.append(k)
            elif k not in seen:
                seen.add(k)
                stack.append((k, True))
                stack.extend((c, False) for c in dag.children(k) if c not in seen)
    return out


def node_count(dag: Dag, k: int | None) -> int:
    """Nodes reached along the continuation, arms and bodies, terminals included; a shared
    node counts each time it is reached."""
    total = 0
    while k is not None:
        n = dag.nodes[k]
        total += 1
        if n.kind == TraceNodeKind.TERMINAL:
            break
        total += sum(node_count(dag, t) for _, t in n.arms)
        total += node_count(dag, n.body)
        k = n.next
    return total


def dag_diff(a: Dag, ka: int | None, b: Dag, kb: int | None,
             ma: list[int], mb: list[int], depth: int = 0, errata: frozenset[str] = NO_ERRATA
             ) -> tuple[int, int, int | None, int | None]:
    """(kind, depth, node of a, node of b) of the first divergence of two DAGs walked in
    lockstep (the DagDiff record); identical subtrees (equal Merkle hashes) are skipped."""
    while ka is not None and kb is not None:
        x, y = a.nodes[ka], b.nodes[kb]
        if ma[ka] == mb[kb]:
            return DagDiffKind.IDENTICAL, depth, ka, kb
        if x.kind != y.kind:
            return DagDiffKind.KIND_MISMATCH, depth, ka, kb
        if x.kind == TraceNodeKind.REGION and x.content_hash != y.content_hash:
            return DagDiffKind.CONTENT_MISMATCH, depth, ka, kb
        if x.kind == TraceNodeKind.BRANCH:
            if guard_hash(*x.guard, errata) != guard_hash(*y.guard, errata) or \
                    len(x.arms) != len(y.arms):
                return DagDiffKind.BRANCH_MISMATCH, depth, ka, kb
            for (va, ta), (vb, tb) in zip(x.arms, y.arms, strict=True):
                if va != vb:
                    return DagDiffKind.BRANCH_MISMATCH, depth, ka, kb
                sub = dag_diff(a, ta, b, tb, ma, mb, depth + 1, errata)
                if sub[0] != DagDiffKind.IDENTICAL:
                    return sub
        if x.kind == TraceNodeKind.LOOP:
            if (loop_body_hash(a, x), x.feedback, x.term_kind, x.repeat_count,
                    x.epsilon_bits) != (loop_body_hash(b, y), y.feedback, y.term_kind,
                                        y.repeat_count, y.epsilon_bits):
                return DagDiffKind.LOOP_MISMATCH, depth, ka, kb
            sub = dag_diff(a, x.body, b, y.body, ma, mb, depth + 1, errata)
            if sub[0] != DagDiffKind.IDENTICAL:
                return sub
        ka, kb, depth = x.next, y.next, depth + 1
    if ka is None and kb is None:
        return DagDiffKind.IDENTICAL, depth, ka, kb
    return DagDiffKind.STRUCTURE_MISMATCH, depth, ka, kb


def replay(dag: Dag, k: int | None, choose: dict[int, int], out: list[int]) -> bool:
    """Run the DAG from k: regions append their index to out; a branch takes the arm whose
    value is choose[branch index] (False if none); a loop runs its body repeat_count times."""
    while k is not None:
        n = dag.nodes[k]
        if n.kind == TraceNodeKind.TERMINAL:
            return True
        if n.kind == TraceNodeKind.REGION:
            out.append(k)
        elif n.kind == TraceNodeKind.BRANCH:
            arm = dict(n.arms).get(choose.get(k))
            if arm is None or not replay(dag, arm, choose, out):
                return False
        else:
            for _ in range(n.repeat_count):
                if not replay(dag, n.body, choose, out):
                    return False
        k = n.next
    return True



MERGE_SCAN = 1024
"""find_merge_point looks at most this many regions of the existing chain. Real code:
`MerkleDag.h`, `find_merge_point`."""


def find_merge_point(new_ops: list, dag: Dag, existing: int | None,
                     errata: frozenset[str] = NO_ERRATA) -> tuple[int | None, int]:
    """The first region of the longest run of `existing`'s regions whose ops end `new_ops`
    (matched by content hash, last region first), and how many new ops precede it."""
    chain, k = [], existing
    while k is not None and len(chain) < MERGE_SCAN and \
            dag.nodes[k].kind == TraceNodeKind.REGION:
        chain.append(k)
        k = dag.nodes[k].next
    merge, pos = None, len(new_ops)
    for r in reversed(chain):
        n = dag.nodes[r]
        if pos < n.num_ops or compute_content_hash(new_ops[pos - n.num_ops:pos], errata) != \
                n.content_hash:
            break
        merge, pos = r, pos - n.num_ops
    return merge, pos


def add_branch(dag: Dag, divergence: int, new_ops: list, old_value: int, new_value: int,
               guard: tuple[int, int, int, int], existing: int | None,
               errata: frozenset[str] = NO_ERRATA) -> int:
    """Add to `dag` a branch between the old path from `divergence` and a region of the new
    ops, both rejoining at the merge point; return the branch's index. The arms are sorted by
    value. The spec cuts each arm where the shared suffix begins; the code leaves both arms
    whole, so replay runs the suffix twice (erratum E9.3)."""
    merge, prefix = find_merge_point(new_ops, dag, existing, errata)
    if E9_3 in errata:
        new_arm = _append(dag, Node(TraceNodeKind.REGION, merge,
                                    compute_content_hash(new_ops, errata), len(new_ops)))
        old_arm = divergence
    else:
        new_arm = _append(dag, Node(TraceNodeKind.REGION, None,
                                    compute_content_hash(new_ops[:prefix], errata), prefix)) \
            if prefix else _append(dag, Node(TraceNodeKind.TERMINAL))
        old_arm = _copy_until(dag, divergence, merge)
    arms = sorted([(old_value, old_arm), (new_value, new_arm)], key=lambda a: a[0])
    return _append(dag, Node(TraceNodeKind.BRANCH, merge, guard=guard, arms=arms))


def _append(dag: Dag, node: Node) -> int:
    dag.nodes.append(node)
    return len(dag.nodes) - 1


def _copy_until(dag: Dag, start: int, stop: int | None) -> int:
    """A copy of the continuation chain from `start` up to (not including) `stop`, ending in
    no continuation; a terminal when the chain is empty."""
    chain, k = [], start
    while k is not None and k != stop and dag.nodes[k].kind != TraceNodeKind.TERMINAL:
        chain.append(k)
        k = dag.nodes[k].next
    if not chain:
        return _append(dag, Node(TraceNodeKind.TERMINAL))
    first = prev = None
    for k in chain:
        copy = _append(dag, replace(dag.nodes[k], next=None))
        if prev is None:
            first = copy
        else:
            dag.nodes[prev].next = copy
        prev = copy
    return first


def dag_to_wire(dag: Dag) -> dict:
    """The wire form (regions by content hash and op count)."""
    names = {v: k for k, v in KINDS.items()}
    out = []
    for n in dag.nodes:
        kind = names[n.kind]
        node: dict[str, Any] = {"kind": kind}
        if kind == "region":
            node |= {"content_hash": f"0x{n.content_hash:016x}", "num_ops": n.num_ops}
        elif kind == "branch":
            node |= {"guard": dict(zip(("kind", "op_index", "arg_index", "dim_index"), n.guard,
                                       strict=True)),
                     "arms": [{"value": v, "target": t} for v, t in n.arms]}
        elif kind == "loop":
            node |= {"body": n.body, "feedback": [list(e) for e in n.feedback],
                     "term_kind": n.term_kind, "repeat_count": n.repeat_count,
                     "epsilon_bits": f"0x{n.epsilon_bits:08x}"}
            if n.body_content_hash is not None:
                node["body_content_hash"] = f"0x{n.body_content_hash:016x}"
        if kind != "terminal":
            node["next"] = n.next
        out.append(node)
    return {"nodes": out, "root": dag.root}
