"""Chapter 14: common-subexpression elimination and fusion groups over the Graph IR.

eliminate_common_subexpressions (CSE):
1. Sort the live nodes (topological_sort); every node is its own representative.
2. An open-addressing table of cap = bit_ceil(2 n_live + 1) slots holds (hash, node).
3. In schedule order, skipping INPUT and MUTATION: probe slot ((u32)h + p) & (cap - 1) for
   p = 0, 1, ...; an empty slot takes (h, node); a slot with hash h holding a node of the same
   CSE key makes that node the representative: the node dies and counts as eliminated.
4. If any died: every live node's inputs and every graph output name representatives, and the
   use counts are recomputed.
The CSE key: kind, dtype, device, ndim, nred, the sizes, the representatives of the inputs (in
order); for POINTWISE and REDUCTION the body (Inst words, aux) or, for a lowered REDUCTION, its
ExternInfo; for REDUCTION reduce_op, reduce_hint, src_dtype; for EXTERN the python name and the
constant args. Because equal keys hash equal and the table never holds two equal keys, the
result does not depend on the hash function.

compute_fusion_groups:
1. Sort; every node's group is 0.
2. next = 1. For live POINTWISE / REDUCTION nodes in schedule order: the first input that is a
   POINTWISE / REDUCTION node already in a group, on the same device with the same ndim and the
   same first ndim sizes, gives the node its group (the node is marked FUSED); else the node
   opens group next++. The answer is next - 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from ..core.errata import NO_ERRATA, SEEDS, erratum
from .graph import NodeKind
from .graph_ir import IrGraph, IrNode, in_schedule, recompute_uses, topological_sort

E14_600 = "E14.600"
_PW_RED = (NodeKind.POINTWISE, NodeKind.REDUCTION)


def cse_key(n: IrNode, canonical: list[int], errata: frozenset[str] = NO_ERRATA) -> tuple:
    """The fields cse_equal_ compares (E14.600: a lowered REDUCTION's ExternInfo is read as a
    ComputeBody, so it equals no other node)."""
    key: tuple = (n.kind, n.dtype, n.device_idx, n.ndim, n.nred, n.sizes,
                  tuple(canonical[v] for v in n.inputs))
    if n.kind in _PW_RED:
        if n.extern is None:
            key += (("body", n.body, n.aux),)
        elif E14_600 in errata:
            key += (misread_body(n),)
        else:
            key += (("extern", n.extern.name, n.extern.constant_args),)
    if n.kind == NodeKind.REDUCTION:
        key += (n.reduce_op, n.reduce_hint, n.src_dtype)
    if n.kind == NodeKind.EXTERN:
        key += (None if n.extern is None else (n.extern.name, n.extern.constant_args),)
    return key


def misread_body(n: IrNode) -> tuple:
    """E14.600: a lowered reduction's ExternInfo read as a ComputeBody. Unnamed (both names
    null), it is an empty body whose aux is the constant-args pointer (null when there are
    none), equal to any empty body with the same aux; named, its num_ops is the low 16 bits of
    the name pointer and its Insts the bytes at and past the name: it equals no other node."""
    if n.extern.name is None:
        return ("body", (), () if n.extern.constant_args else None)
    return ("garbage", n.id)


def digest_hash(key: tuple) -> int:
    """A 64-bit hash of a CSE key (any function of the key serves)."""
    return int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(), "little")


@dataclass
class CseResult:
    eliminated: int
    canonical: list[int]


def eliminate_common_subexpressions(g: IrGraph, errata: frozenset[str] = NO_ERRATA,
                                    hash_key: Callable[[tuple], int] = digest_hash) -> CseResult:
    """Steps 1-4, in place."""
    ordered = in_schedule(g, topological_sort(g))  # 1
    canonical = list(range(len(g.nodes)))
    cap = 1 << (2 * len(ordered)).bit_length()  # 2: bit_ceil(2 n_live + 1)
    table: list[tuple[int, int, tuple] | None] = [None] * cap
    count = 0
    for n in ordered:  # 3
        if n.kind in (NodeKind.INPUT, NodeKind.MUTATION):
            continue
        key = cse_key(n, canonical, errata)
        h = hash_key(key)
        for p in range(cap):
            slot = ((h & 0xFFFFFFFF) + p) & (cap - 1)
            entry = table[slot]
            if entry is None:
                table[slot] = (h, n.id, key)
                break
            if entry[0] == h and entry[2] == key:
                canonical[n.id] = entry[1]
                n.dead = True
                count += 1
                break
    if count:  # 4
        for n in g.live():
            n.inputs = [canonical[v] for v in n.inputs]
        g.outputs = [canonical[v] for v in g.outputs]
        recompute_uses(g)
    return CseResult(count, canonical)


@dataclass
class FusionResult:
    num_groups: int
    fused_group_id: list[int]
    fused: list[int]


def ranges_compatible(a: IrNode, b: IrNode) -> bool:
    """Same device, same ndim, same output sizes (reduction ranges are not compared)."""
    return (a.device_idx == b.device_idx and a.ndim == b.ndim
            and a.sizes[:a.ndim] == b.sizes[:b.ndim])


def compute_fusion_groups(g: IrGraph) -> FusionResult:
    """Steps 1-2 of the fusion grouping."""
    ordered = in_schedule(g, topological_sort(g))  # 1
    group = [0] * len(g.nodes)
    fused = []
    nxt = 1
    for n in ordered:  # 2
        if n.kind not in _PW_RED:
            continue
        for v in n.inputs:
            p = g.nodes[v]
            if group[v] != 0 and p.kind in _PW_RED and ranges_compatible(p, n):
                group[n.id] = group[v]
                fused.append(n.id)
                break
        else:
            group[n.id] = nxt
            nxt += 1
    return FusionResult(nxt - 1, group, sorted(fused))


def _reduction(inputs: list[int]) -> dict:
    return {"id": 0, "kind": NodeKind.REDUCTION, "inputs": inputs, "dtype": 6, "sizes": [4],
            "extern": {"name": "REDUCE_SUM"}}


LOWERED_SUMS = {"nodes": [{"id": 0, "kind": NodeKind.INPUT, "inputs": [], "dtype": 6,
                           "sizes": [4, 8]},
                          {**_reduction([0]), "id": 1}, {**_reduction([0]), "id": 2}],
                "outputs": [1, 2]}
"""Two REDUCE_SUM nodes as lowering makes them (ExternInfo bodies) over one input."""

UNNAMED_SUMS = {"nodes": [LOWERED_SUMS["nodes"][0],
                          *({**n, "extern": {"name": None, "constant_args": [k]}}
                            for k, n in enumerate(LOWERED_SUMS["nodes"][1:]))],
                "outputs": [1, 2]}
"""Two such reductions with null kernel names and different constant args."""

erratum(
    E14_600, "CSE reads a lowered reduction's ExternInfo as a ComputeBody",
    seed=SEEDS["crucible"], location="include/crucible/Graph.h cse_equal_, cse_hash_",
    ops=("ir.cse",),
    witness={"args": {"graph": LOWERED_SUMS},
             "spec": {"eliminated": 1, "dead": [2]}, "seed": {"eliminated": 0, "dead": []}},
    flag="result",
    also=({"op": "ir.cse", "args": {"graph": UNNAMED_SUMS},
           "spec": {"eliminated": 0, "dead": []}, "seed": {"eliminated": 1, "dead": [2]}},),
    detail="lower_trace_to_graph gives REDUCTION nodes an ExternInfo body (add_extern, then the "
           "kind overwritten), but cse_equal_ and cse_hash_ cast every REDUCTION body to "
           "ComputeBody: the python name pointer is read as the Inst array and the low 16 bits "
           "of the cpp name pointer as num_ops, so CSE hashes and compares bytes past the name "
           "(out of bounds). Two identical lowered reductions are compared through their "
           "separately allocated names, whose addresses differ, and are never merged (the spec "
           "models that). With null names the misread body is empty (num_ops 0, aux the "
           "constant-args pointer), so two unnamed lowered reductions are merged whatever "
           "their constant args, and one equals a real empty body. The intended key compares "
           "a lowered reduction's ExternInfo as for an EXTERN node: the python names and "
           "constant args.",
)
