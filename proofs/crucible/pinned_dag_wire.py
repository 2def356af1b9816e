"""Chapter 9 wire readers pinned: what guard_from_wire accepts (an object of the four guard
fields, each optional), which node dag_from_wire's cycle error names (the first node the
depth-first walk meets again while it is on the walk), and that a DAG sharing its subtrees is
walked once per node, not once per path. Expected values are worked out by hand."""

from __future__ import annotations

from typing import Any

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible.dag import _node, dag_diff, dag_from_wire, guard_from_wire, merkle_hashes
from ...spec.crucible.merkle_dag import DagDiffKind
from ..core.obligation import Property, property_obligation
from .pinned_dag import _bounded

GUARDS = (
    ({}, (0, 0xFFFFFFFF, 0, 0)),
    ({"kind": 1, "op_index": 3, "arg_index": 2, "dim_index": 1}, (1, 3, 2, 1)),
    ({"dim_index": 7}, (0, 0xFFFFFFFF, 0, 7)),
    (5, None),
    (None, None),
    ([], None),
    (["kind"], None),
    ("kind", None),
    ({"kind": 1, "extra": 0}, None),
    ({"pad": 0}, None),
)
"""(guard on the wire, (kind, op_index, arg_index, dim_index) or None when InvalidInput):
absent fields read kind 0, op_index 0xFFFFFFFF (none), arg 0, dim 0."""


def _guard(case: tuple[Any, tuple[int, int, int, int] | None]) -> None:
    g, want = case
    try:
        got = guard_from_wire(g, "g")
    except InvalidInput:
        assert want is None, case
        return
    assert got == want, (case, got)


@property_obligation(
    "PO9.160",
    "guard_from_wire reads an object whose keys are among kind, op_index, arg_index and "
    "dim_index (absent ones 0, 0xFFFFFFFF, 0, 0); anything else, a non-object or an object "
    "with another key, is InvalidInput.",
    covers=("dag.merkle", "dag.diff"),
    subject=guard_from_wire,
    mutants=(Mutant.edit("guard check and", "the guard check needs both faults",
                         guard_from_wire, "if not isinstance(g, dict) or set(g)",
                         "if not isinstance(g, dict) and set(g)"),),
)
def guard_wire(_subject):
    return [Property("(guard, fields)", _guard, cases=lambda: GUARDS)]


def _region(nxt: int | None) -> dict:
    return {"kind": "region", "content_hash": "0x1", "num_ops": 1, "next": nxt}


CYCLES = (
    ([_region(1), _region(0)], 0, 0),
    ([_region(0)], 0, 0),
    ([_region(1), _region(2), _region(1)], 0, 1),
    ([{"kind": "terminal"}, _region(3), _region(1), _region(2)], 1, 1),
    ([_region(2), {"kind": "branch", "arms": [{"value": 1, "target": 0}], "next": None},
      _region(1)], 0, 0),
)
"""(nodes, root, the node the error names): the walk starts at node 0, then at each node not
yet walked in index order, and goes depth-first through arms, body, then next; the node named
is the first one met again while still on the walk. In the first case 0 -> 1 -> 0 meets node 0
again; in the last 0 -> 2 -> 1 -> 0 meets node 0."""


def _cycle(case: tuple[list[dict], int, int]) -> None:
    nodes, root, named = case
    try:
        dag_from_wire({"nodes": nodes, "root": root})
    except InvalidInput as e:
        assert e.message == f"args.dag: node {named} is on a cycle", (case, e.message)
        return
    raise AssertionError(f"accepted {case}")


def diamonds(n: int) -> dict:
    """n diamonds in a chain: node 0 a terminal, then for diamond i (1..n) two regions at
    3i - 2 and 3i - 1 both continuing to the branch of diamond i - 1 (the terminal for i = 1)
    and a branch at 3i with one arm to each region; the root is the last branch. The nodes
    deepest in the walk have the lowest indices, so they are walked first; there are 2^n
    paths from the root but 3n + 1 nodes."""
    nodes: list[dict] = [{"kind": "terminal"}]
    for i in range(1, n + 1):
        below = 3 * (i - 1)
        nodes += [_region(below), _region(below),
                  {"kind": "branch", "arms": [{"value": 0, "target": 3 * i - 2},
                                              {"value": 1, "target": 3 * i - 1}]}]
    return {"nodes": nodes, "root": 3 * n}


def _shared(n: int) -> None:
    dag = _bounded(lambda: dag_from_wire(diamonds(n)), 400_000)
    assert len(dag.nodes) == 3 * n + 1 and dag.root == 3 * n


@property_obligation(
    "PO9.161",
    "dag_from_wire's cycle error names the first node its depth-first walk (from node 0, then "
    "each node not yet walked) meets again while that node is still on the walk; a DAG whose "
    "subtrees are shared is walked once per node (a bounded number of steps for 2^24 paths).",
    covers=("dag.merkle", "dag.diff"),
    subject=dag_from_wire,
    mutants=(Mutant.edit("start not marked", "the walk's first node is not marked on the walk",
                         dag_from_wire, "state[start] = state[start] or 1",
                         "state[start] = state[start] and 1"),
             Mutant.edit("start marked 0", "the walk's first node is marked unseen",
                         dag_from_wire, "state[start] = state[start] or 1",
                         "state[start] = state[start] or 0"),
             Mutant.edit("walked nodes walked again", "a child is entered when it was walked, "
                         "not when it is unseen", dag_from_wire, "elif state[child] == 0:",
                         "elif state[child] != 0:")),
)
def dag_walk(_subject):
    return [Property("(nodes, root, named node)", _cycle, cases=lambda: CYCLES),
            Property("n diamonds", _shared, cases=lambda: (1, 8, 24))]


def _dag(nodes: list[dict], root: int | None):
    return dag_from_wire({"nodes": nodes, "root": root})


def _r(content: int, nxt: int | None = None) -> dict:
    return {"kind": "region", "content_hash": f"0x{content:x}", "num_ops": 1, "next": nxt}


def _b(arms: list[tuple[int, int]], kind: int = 0) -> dict:
    return {"kind": "branch", "guard": {"kind": kind},
            "arms": [{"value": v, "target": t} for v, t in arms]}


def _loop(body: int, repeat: int) -> dict:
    return {"kind": "loop", "body": body, "repeat_count": repeat}


T = {"kind": "terminal"}
MISMATCHES = (
    ("guards differ", [T, _b([(1, 0)])], 1, [_b([(1, 1)], kind=1), T], 0,
     (DagDiffKind.BRANCH_MISMATCH, 0, 1, 0)),
    ("arm counts differ", [T, _b([(1, 0)])], 1, [_b([(1, 1), (2, 1)]), T], 0,
     (DagDiffKind.BRANCH_MISMATCH, 0, 1, 0)),
    ("arm values differ", [T, _b([(1, 0)]) | {"next": 2}, _r(5)], 1,
     [_b([(2, 1)]) | {"next": 2}, T, _r(6)], 0,
     (DagDiffKind.BRANCH_MISMATCH, 0, 1, 0)),
    ("arm targets differ", [_r(5), _b([(1, 0)])], 1, [_b([(1, 1)]), _r(6)], 0,
     (DagDiffKind.CONTENT_MISMATCH, 1, 0, 1)),
    ("loop repeat counts differ", [T, _loop(2, 3), _r(5)], 1, [_loop(1, 4), _r(5), T], 0,
     (DagDiffKind.LOOP_MISMATCH, 0, 1, 0)),
    ("kinds differ", [T, _r(5)], 1, [_b([]), T], 0, (DagDiffKind.KIND_MISMATCH, 0, 1, 0)),
    ("same arm, next differs", [_r(5), _b([(1, 0)]) | {"next": 2}, _r(6)], 1,
     [_b([(1, 2)]) | {"next": 1}, _r(7), _r(5)], 0, (DagDiffKind.CONTENT_MISMATCH, 1, 2, 1)),
    ("same body, next differs", [_r(5), _loop(0, 2) | {"next": 2}, _r(6)], 1,
     [_loop(2, 2) | {"next": 1}, _r(7), _r(5)], 0, (DagDiffKind.CONTENT_MISMATCH, 1, 2, 1)),
    ("arm targets differ, other hashes cross", [_r(5), _r(6), _b([(1, 0)])], 2,
     [_r(6), _r(7), _b([(1, 1)])], 2, (DagDiffKind.CONTENT_MISMATCH, 1, 0, 1)),
    ("term_kind and repeat_count exchanged", [_r(5), _loop(0, 3) | {"term_kind": 2}], 1,
     [_loop(1, 2) | {"term_kind": 3}, _r(5)], 0, (DagDiffKind.LOOP_MISMATCH, 0, 1, 0)),
    ("repeat_count and epsilon_bits exchanged",
     [_r(5), _loop(0, 3) | {"epsilon_bits": 4}], 1,
     [_loop(1, 4) | {"epsilon_bits": 3}, _r(5)], 0, (DagDiffKind.LOOP_MISMATCH, 0, 1, 0)),
)
"""(label, nodes of a, root of a, nodes of b, root of b, DagDiff (kind, depth, node of a, node
of b)): the roots sit at different indices in a and b, so the record shows which is whose. An
arm's sub-walk is one level deeper and names the arm targets (a's 0, b's 1). Arm values are
not in a branch's Merkle hash, so where only they differ the continuations differ too. Where
an arm or a loop body is identical (a record of depth 1) the walk goes on to the next nodes;
in "arm targets differ" a's node 1 and b's node 0 (both unreached) hold the same region."""


def _mismatch(case: tuple) -> None:
    label, na, ra, nb, rb, want = case
    a, b = _dag(na, ra), _dag(nb, rb)
    got = tuple(dag_diff(a, ra, b, rb, merkle_hashes(a), merkle_hashes(b)))
    assert got == want, (label, got)


@property_obligation(
    "PO9.162",
    "dag_diff's BRANCH_MISMATCH (guards, arm counts or arm values differ), LOOP_MISMATCH and "
    "KIND_MISMATCH records name a's node then b's, at the depth of the divergence; a mismatch "
    "under an arm is the arm sub-walk's record.",
    covers=("dag.diff",),
    subject=dag_diff,
    mutants=(Mutant.edit("guard mismatch nodes swapped", "the guard/arm-count record names "
                         "b's node first", dag_diff,
                         "return DagDiffKind.BRANCH_MISMATCH, depth, ka, kb",
                         "return DagDiffKind.BRANCH_MISMATCH, depth, kb, ka"),
             Mutant.edit("arm value nodes swapped", "the arm value record names b's node "
                         "first", dag_diff, "return DagDiffKind.BRANCH_MISMATCH, depth, ka, kb",
                         "return DagDiffKind.BRANCH_MISMATCH, depth, kb, ka", occurrence=2),
             Mutant.edit("loop nodes swapped", "the LOOP_MISMATCH record names b's node first",
                         dag_diff, "return DagDiffKind.LOOP_MISMATCH, depth, ka, kb",
                         "return DagDiffKind.LOOP_MISMATCH, depth, kb, ka"),
             Mutant.edit("arm sub-walk always returned", "the arm sub-walk's depth is tested "
                         "for IDENTICAL", dag_diff, "if sub[0] != DagDiffKind.IDENTICAL:\n"
                         "                    return sub",
                         "if sub[1] != DagDiffKind.IDENTICAL:\n                    return sub"),
             Mutant.edit("arm hashes swapped", "the arm sub-walk gets b's hashes for a",
                         dag_diff, "dag_diff(a, ta, b, tb, ma, mb,",
                         "dag_diff(a, ta, b, tb, mb, ma,"),
             Mutant.edit("loop fields crossed", "a's term_kind is compared with b's "
                         "repeat_count", dag_diff, "x.feedback, x.term_kind, x.repeat_count,",
                         "x.feedback, x.repeat_count, x.term_kind,")),
)
def dag_diff_mismatches(_subject):
    return [Property("a pair of DAGs", _mismatch, cases=lambda: MISMATCHES)]


NODES = (
    (_b([(1, 1)]), ((), 0, 0, 0)),
    (_b([]) | {"arms": [{"value": 1, "target": 1, "extra": 2}]}, None),
    (_b([]) | {"arms": [5]}, None),
    (_b([]) | {"arms": [{"value": 1}]}, None),
    ({"kind": "loop", "body": 1, "feedback": [[1]]}, None),
    ({"kind": "loop", "body": 1, "feedback": 5}, None),
    ({"kind": "loop", "body": 1, "feedback": [[1, 2, 3]]}, None),
    ({"kind": "loop", "body": 1, "feedback": [[1, 2], 3]}, None),
    ({"kind": "loop", "body": 1}, ((), 0, 0, 0)),
    ({"kind": "loop", "body": 1, "feedback": [[1, 2], [3, 4]], "term_kind": 2,
      "repeat_count": 9, "epsilon_bits": 5}, (((1, 2), (3, 4)), 2, 9, 5)),
)
"""(node 0 of a DAG whose node 1 is a region, None when InvalidInput or (feedback, term_kind,
repeat_count, epsilon_bits) of the loop): an arm is exactly {value, target}, feedback a list
of pairs, and a loop's absent term_kind, repeat_count and epsilon_bits read 0."""


def _node_case(case: tuple[dict, tuple | None]) -> None:
    node, want = case
    try:
        dag = _dag([node, _r(5)], 0)
    except InvalidInput:
        assert want is None, case
        return
    assert want is not None, case
    n = dag.nodes[0]
    if node["kind"] == "branch":
        assert n.arms == [(1, 1)], (case, n.arms)
        return
    got = (tuple(tuple(e) for e in n.feedback), n.term_kind, n.repeat_count, n.epsilon_bits)
    assert got == want, (case, got)


def _golden_region(case: tuple[str, slice, str]) -> None:
    """A region node given its ops reads the golden content hash of those ops."""
    from ...conformance.golden import golden

    name, part, key = case
    c = golden()["content_merkle"]
    ops = c["region_inputs"][name]["ops"][part]
    n = _dag([{"kind": "region", "ops": ops}], 0).nodes[0]
    assert (n.content_hash, n.num_ops) == (int(c["content_hash"][key], 16), len(ops)), case


@property_obligation(
    "PO9.163",
    "A branch arm on the wire is exactly {value, target} and a loop's feedback a list of "
    "[output, input] pairs (anything else is InvalidInput); a loop's absent term_kind, "
    "repeat_count and epsilon_bits read 0; a region given its ops reads their content hash (the "
    "golden file's) and their count.",
    covers=("dag.merkle", "dag.diff"),
    subject=dag_from_wire,
    mutants=(Mutant.edit("arm check and", "the arm check needs both faults", _node,
                         'if not isinstance(a, dict) or set(a)',
                         'if not isinstance(a, dict) and set(a)'),
             Mutant.edit("feedback check and", "the feedback check needs both faults", _node,
                         "if not isinstance(fb, list) or not all(",
                         "if not isinstance(fb, list) and not all("),
             Mutant.edit("term_kind default 1", "an absent term_kind reads 1", _node,
                         'obj.get("term_kind", 0)', 'obj.get("term_kind", 1)'),
             Mutant.edit("content hash args swapped", "the errata are hashed as the ops",
                         _node, "compute_content_hash(ops, errata)",
                         "compute_content_hash(errata, ops)")),
)
def dag_node_wire(_subject):
    return [Property("(node, loop fields)", _node_case, cases=lambda: NODES),
            Property("(golden region, ops, hash key)", _golden_region,
                     cases=lambda: (("A", slice(None), "A"), ("A", slice(0, 1), "A[0:1]"),
                                    ("A", slice(1, 3), "A[1:3]"), ("B", slice(None), "B")))]
