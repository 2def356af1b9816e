"""Chapter 9 obligations pinning the DAG and kernel-cache details the other obligations leave
free: what dag_from_wire rejects (and that it ends on every cycle), the field order of the
DagDiff record, the Merkle lists a loop body is compared with, the 1024-region scan of
find_merge_point, and the kernel cache's slot layout, wire defaults and default capacity.

Expected values come from the facts (slot = (u32)hash & mask with linear probing, capacity
4096, a scan of at most 1024 regions) or are worked out by hand.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible import merkle_dag
from ...spec.crucible.content_hash import compute_content_hash
from ...spec.crucible.dag import (
    Dag,
    Node,
    _node,
    dag_diff,
    dag_from_wire,
    find_merge_point,
    merkle_hashes,
)
from ...spec.crucible.kernel_cache import (
    KernelCache,
    _probe,
    cache_insert,
    default_capacity,
    kernel_cache_simulate,
)
from ...spec.crucible.merkle_dag import DagDiffKind, TraceNodeKind
from ...spec.crucible.trace_entry import TraceOp
from ..core.obligation import Property, property_obligation


def _region(content: int, nxt: int | None = None) -> dict:
    return {"kind": "region", "content_hash": f"0x{content:x}", "num_ops": 1, "next": nxt}


def _wire(nodes: list[dict], root: int | None) -> Dag:
    return dag_from_wire({"nodes": nodes, "root": root})


class StepBudget(Exception):
    """The traced call ran more Python steps than its budget."""


def _bounded(fn: Callable[[], Any], budget: int = 50_000) -> Any:
    """fn() with a budget of traced Python events: StepBudget where it runs on (a hang)."""
    steps = 0

    def tracer(frame, event, arg):
        nonlocal steps
        steps += 1
        if steps > budget:
            raise StepBudget
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        return fn()
    finally:
        sys.settrace(previous)


REJECTED = (
    [],
    {"nodes": 5, "root": None},
    {"root": 0},
    {"nodes": [5], "root": 0},
    {"nodes": [{"kind": "bogus"}], "root": 0},
    {"nodes": [{"next": None}], "root": 0},
    {"nodes": [_region(1, 1), _region(2, 2), _region(3, 1)], "root": 0},
    {"nodes": [_region(1, 0)], "root": 0},
    {"nodes": [{"kind": "terminal"}, _region(1, 2), _region(2, 3), _region(3, 1)], "root": 1},
)
"""Not DAGs: not an object, nodes not a list, a node not an object or of no known kind, and
three cycles (one not through node 0, one a self-loop, one not through the first node)."""


def _rejected(obj: Any) -> None:
    try:
        _bounded(lambda: dag_from_wire(obj))
    except InvalidInput:
        return
    raise AssertionError(f"accepted {obj!r}")


def _loop_body_hash_read(_case: None) -> None:
    dag = _wire([{"kind": "loop", "body": 1, "body_content_hash": "0xabc", "next": None},
                 _region(7)], 0)
    assert dag.nodes[0].body_content_hash == 0xABC, dag.nodes[0]
    assert dag.nodes[0].body == 1 and dag.nodes[0].kind == TraceNodeKind.LOOP


@property_obligation(
    "PO9.130",
    "dag_from_wire rejects with InvalidInput (and ends: a bounded number of steps) anything "
    "but {nodes: [...], root} whose nodes are objects of a known kind forming no cycle, "
    "wherever the cycle is; a loop's body_content_hash is read as given.",
    covers=("dag.merkle", "dag.diff"),
    subject=dag_from_wire,
    mutants=(Mutant.edit("shape check and", "the DAG object check needs both faults",
                         dag_from_wire, 'if not isinstance(obj, dict) or not',
                         'if not isinstance(obj, dict) and not'),
             Mutant.edit("children not marked", "a child pushed on the walk is not marked as "
                         "on the stack", dag_from_wire, "state[child] = 1", "state[child] = 0"),
             Mutant.edit("node check and", "the node check needs both faults", _node,
                         'if not isinstance(obj, dict) or obj.get("kind")',
                         'if not isinstance(obj, dict) and obj.get("kind")'),
             Mutant.edit("body hash args swapped", "the value and the path are exchanged",
                         _node, 'scalar_from_wire(hash64, obj["body_content_hash"], path)',
                         'scalar_from_wire(hash64, path, obj["body_content_hash"])')),
)
def dag_wire_checks(_subject):
    return [Property("a malformed DAG", _rejected, cases=lambda: REJECTED),
            Property("a loop with a given body hash", _loop_body_hash_read,
                     cases=lambda: (None,))]


def _diff(a: Dag, b: Dag) -> tuple:
    return tuple(dag_diff(a, a.root, b, b.root, merkle_hashes(a), merkle_hashes(b)))


DIFFS = (
    ("same chain at other indices",
     [{"kind": "terminal"}, _region(5, 0)], 1, [_region(5, 1), {"kind": "terminal"}], 0,
     (DagDiffKind.IDENTICAL, 0, 1, 0)),
    ("b runs one region longer",
     [_region(5)], 0, [_region(5, 1), _region(6)], 0,
     (DagDiffKind.STRUCTURE_MISMATCH, 1, None, 1)),
    ("loop bodies differ, equal given body hashes",
     [{"kind": "loop", "body": 1, "body_content_hash": "0x99", "next": 3},
      _region(0xA), _region(0xB), _region(0xE)], 0,
     [{"kind": "loop", "body": 2, "body_content_hash": "0x99", "next": None},
      _region(0xB), _region(0xC)], 0,
     (DagDiffKind.CONTENT_MISMATCH, 1, 1, 2)),
    ("second region differs",
     [_region(1, 1), _region(2)], 0, [_region(1, 1), _region(3)], 0,
     (DagDiffKind.CONTENT_MISMATCH, 1, 1, 1)),
)
"""(label, nodes of a, root of a, nodes of b, root of b, the DagDiff (kind, depth, a, b))."""


def _diff_case(case: tuple) -> None:
    label, na, ra, nb, rb, want = case
    a, b = _wire(na, ra), _wire(nb, rb)
    got = _diff(a, b)
    assert got == want, (label, got)
    identical = merkle_hashes(a)[ra] == merkle_hashes(b)[rb]
    assert (got[0] == DagDiffKind.IDENTICAL) == identical, label


def _empty_diff(depth: int) -> None:
    a = _wire([], None)
    got = tuple(dag_diff(a, None, a, None, [], [], depth))
    assert got == (DagDiffKind.IDENTICAL, depth, None, None), got


@property_obligation(
    "PO9.131",
    "dag_diff returns (kind, depth, node of a, node of b) of the first divergence: kind "
    "IDENTICAL exactly when the roots' Merkle hashes are equal; a loop body is compared with "
    "a's hashes for a's nodes and b's for b's; hand-worked cases (the sub-walk of a loop body "
    "included, and two empty walks at any depth).",
    covers=("dag.diff",),
    subject=dag_diff,
    mutants=(Mutant.edit("identical nodes swapped", "the IDENTICAL record names b's node "
                         "first", dag_diff, "return DagDiffKind.IDENTICAL, depth, ka, kb",
                         "return DagDiffKind.IDENTICAL, depth, kb, ka"),
             Mutant.edit("structure kind and depth swapped", "the STRUCTURE_MISMATCH record "
                         "puts the depth first", dag_diff,
                         "return DagDiffKind.STRUCTURE_MISMATCH, depth, ka, kb",
                         "return depth, DagDiffKind.STRUCTURE_MISMATCH, ka, kb"),
             Mutant.edit("end kind and depth swapped", "the record at the end of both walks "
                         "puts the depth first", dag_diff,
                         "return DagDiffKind.IDENTICAL, depth, ka, kb",
                         "return depth, DagDiffKind.IDENTICAL, ka, kb", occurrence=2),
             Mutant.edit("body hashes swapped", "the loop body walk gets b's hashes for a",
                         dag_diff, "dag_diff(a, x.body, b, y.body, ma, mb,",
                         "dag_diff(a, x.body, b, y.body, mb, ma,")),
)
def dag_diff_record(_subject):
    return [Property("a pair of DAGs", _diff_case, cases=lambda: DIFFS),
            Property("two empty walks at a depth", _empty_diff, cases=lambda: (0, 3))]


def _merge_case(case: tuple[int, int, tuple[int | None, int]]) -> None:
    """`case[0]` chained regions of one op each; only region `case[1]` holds the new op."""
    length, match, want = case
    op = TraceOp(0x77)
    own = compute_content_hash([op])
    nodes = [Node(TraceNodeKind.REGION, k + 1 if k + 1 < length else None)
             for k in range(length)]
    for k, n in enumerate(nodes):
        n.content_hash, n.num_ops = (own if k == match else 0x1234), 1
    got = find_merge_point([op], Dag(nodes, 0), 0)
    assert got == want, (case, got)


@property_obligation(
    "PO9.132",
    "find_merge_point scans at most 1024 regions of the existing chain: with only region 1023 "
    "(the 1024th) matching the new op it merges there, with only region 1024 matching it "
    "finds no merge point.",
    covers=("dag.add_branch",),
    subject=find_merge_point,
    mutants=(Mutant.edit("scan 1022", "MERGE_SCAN is 1022", find_merge_point,
                         "len(chain) < MERGE_SCAN", "len(chain) < 1022"),
             Mutant.edit("scan one more", "the scan takes 1025 regions", find_merge_point,
                         "len(chain) < MERGE_SCAN", "len(chain) <= MERGE_SCAN")),
)
def merge_scan_bound(_subject):
    return [Property("(chain length, matching region, (merge, new ops before))", _merge_case,
                     cases=lambda: ((1024, 1023, (1023, 0)), (1025, 1024, (None, 1)),
                                    (1023, 1022, (1022, 0)), (1025, 1023, (1023, 0))))]


PLACEMENTS = (
    ((0x1_0000_0003,), (3,)),
    ((0x3, 0xB, 0x13), (3, 4, 5)),
    ((0x7, 0xF), (7, 0)),
    ((0xFFFF_FFFF_0000_0005, 0x5), (5, 6)),
)
"""(contents inserted in order into a fresh 8-slot cache, the slot each lands in):
slot = (u32)hash & 7, then the next slots upward, wrapping."""


def _default_capacity(_case: None) -> None:
    """KERNEL_CACHE_CAPACITY, read when the check runs, and a default cache's capacity."""
    assert merkle_dag.KERNEL_CACHE_CAPACITY == 4096, merkle_dag.KERNEL_CACHE_CAPACITY
    assert KernelCache().capacity == 4096, KernelCache().capacity


def _placement(case: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    contents, slots = case
    c = KernelCache(8)
    assert c.keys == [None] * 8 and c.kernels == [0] * 8 and c.size == 0
    for k, content in enumerate(contents):
        assert cache_insert(c, content, 0, 100 + k)
    for k, (content, slot) in enumerate(zip(contents, slots, strict=True)):
        assert c.keys[slot] is not None and c.keys[slot][0] == content, (case, c.keys)
        assert c.kernels[slot] == 100 + k, (case, c.kernels)


WIRE = (
    (1, [{"op": "insert", "content_hash": "0x5"}, {"op": "lookup", "content_hash": "0x5"}],
     {"results": [{"ok": True, "size": 1}, {"kernel": 1}], "size": 1}),
    (2, [{"op": "insert", "content_hash": "0x5", "kernel": "0x9"},
         {"op": "lookup", "content_hash": "0x5"}],
     {"results": [{"ok": True, "size": 1}, {"kernel": 9}], "size": 1}),
    (4, [{"op": "erase", "content_hash": "0x5"}], None),
    (4, [{"content_hash": "0x5"}], None),
    (0, [], None),
    (3, [], None),
    (1 << 20, [], {"results": [], "size": 0}),
    (1 << 21, [], None),
)
"""(capacity, steps, result or None when InvalidInput): capacity is a power of two from 1 to 2^20,
an insert without a kernel stores kernel 1, and op is insert or lookup."""


def _wire_case(case: tuple[int, list, dict | None]) -> None:
    capacity, steps, want = case
    try:
        got = kernel_cache_simulate(capacity, steps)
    except InvalidInput:
        assert want is None, case
        return
    assert got == want, (case, got)


@property_obligation(
    "PO9.133",
    "The kernel cache holds 4096 entries by default, starts zeroed (no keys, kernels 0), puts "
    "a hash in slot (u32)hash & (capacity - 1) or the next free slot upward (wrapping); the "
    "wire op accepts capacities that are powers of two from 1 to 2^20, stores kernel 1 for an "
    "insert without one, and rejects a step that is not insert or lookup.",
    covers=("dag.kernel_cache",),
    subject=kernel_cache_simulate,
    mutants=(Mutant.edit("start or-masked", "the probe starts at hash | 0xFFFFFFFF", _probe,
                         "content & 0xFFFFFFFF", "content | 0xFFFFFFFF"),
             Mutant.edit("probe downward", "linear probing walks down", _probe,
                         "(start + k)", "(start - k)"),
             Mutant.edit("default capacity 4098", "a cache made without a capacity holds 4098",
                         default_capacity, "return KERNEL_CACHE_CAPACITY",
                         "return KERNEL_CACHE_CAPACITY + 2"),
             Mutant.edit("kernels start at 1", "a fresh table's kernels are 1",
                         KernelCache.__post_init__, "[0] * self.capacity",
                         "[1] * self.capacity"),
             Mutant.edit("capacity 1 refused", "the capacity must be at least 2",
                         kernel_cache_simulate, "not 1 <= capacity", "not 2 <= capacity"),
             Mutant.edit("capacity 2^21 allowed", "the largest capacity is 2^21",
                         kernel_cache_simulate, "<= 1 << 20", "<= 2 << 20"),
             Mutant.edit("default kernel 0", "an insert without a kernel stores 0",
                         kernel_cache_simulate, 's.get("kernel", 1)', 's.get("kernel", 0)'),
             Mutant.edit("op check and", "a dict step with an unknown op passes",
                         kernel_cache_simulate, 'not isinstance(s, dict) or s.get("op")',
                         'not isinstance(s, dict) and s.get("op")')),
)
def kernel_cache_layout(_subject):
    return [Property("the default capacity", _default_capacity, cases=lambda: (None,)),
            Property("contents -> slots", _placement, cases=lambda: PLACEMENTS),
            Property("capacity, steps -> result", _wire_case, cases=lambda: WIRE)]
