"""Merkle DAG ops: the guard, feedback and loop-termination hashes, every node's Merkle hash,
the first divergence of two DAGs, replay, and adding a branch."""

from __future__ import annotations

from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.layout import i64, id32
from ..core.layout_ops import scalar_from_wire, wire_schema
from ..core.registry import InvalidCase, declare
from ..core.schema import BITS32, BOOL, HASH64, U8, U16, U32, Field, Json, List, record
from ..core.strategies import st
from .content_hash import E8_3, E8_4, TRACE_OPS, trace_ops_from_wire
from .dag import (
    E9_3,
    GUARD_WIRE,
    Dag,
    add_branch,
    dag_diff,
    dag_from_wire,
    dag_schema,
    dag_to_wire,
    guard_from_wire,
    merkle_hashes,
    node_count,
    replay,
)
from .merkle_dag import E9_1, E9_2, feedback_signature, guard_hash, loopterm_hash


def merkle_op(dag: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    d = dag_from_wire(dag, errata=errata)
    return {"merkle": merkle_hashes(d, errata), "node_count": node_count(d, d.root)}


def diff_op(a: Any, b: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """dag_diff of the two DAGs, their Merkle and guard hashes under the active errata."""
    da, db = dag_from_wire(a, "args.a", errata), dag_from_wire(b, "args.b", errata)
    kind, depth, _, _ = dag_diff(da, da.root, db, db.root, merkle_hashes(da, errata),
                                 merkle_hashes(db, errata), 0, errata)
    return {"kind": int(kind), "depth": depth}


def _choices(choices: Any, dag: Dag) -> dict[int, int]:
    if not isinstance(choices, dict):
        raise InvalidInput("args.choices: {branch node index: value}")
    out = {}
    for key, value in choices.items():
        if not key.isdigit() or int(key) >= len(dag.nodes):
            raise InvalidInput(f"args.choices: {key!r} is not a node index")
        out[int(key)] = scalar_from_wire(i64, value, f"args.choices[{key}]")
    return out


def replay_op(dag: Any, choices: Any) -> dict:
    d = dag_from_wire(dag)
    out: list[int] = []
    ok = replay(d, d.root, _choices(choices, d), out)
    return {"ok": ok, "regions": out}


def add_branch_op(dag: Any, divergence_point: int, existing_suffix: int | None, new_ops: Any,
                  old_value: int, new_value: int, guard: Any,
                  errata: frozenset[str] = NO_ERRATA) -> dict:
    d = dag_from_wire(dag, errata=errata)
    for name, k in (("divergence_point", divergence_point), ("existing_suffix", existing_suffix)):
        if k is not None and k >= len(d.nodes):
            raise InvalidInput(f"args.{name}: not a node index")
    branch = add_branch(d, divergence_point, trace_ops_from_wire(new_ops), old_value, new_value,
                        guard_from_wire(guard, "args.guard"), existing_suffix, errata)
    replays = {}
    for value, _ in d.nodes[branch].arms:
        out: list[int] = []
        replay(d, branch, {branch: value}, out)
        replays[str(value)] = [HASH64.encode(d.nodes[k].content_hash) for k in out]
    return {"dag": dag_to_wire(d), "branch": branch, "replays": replays}


@st.composite
def dags(draw, with_ops: bool = False) -> dict:
    """A chain of regions, possibly with a branch and a loop on it, ending in a terminal."""
    nodes: list[dict] = []

    def region() -> dict:
        if with_ops:
            return {"kind": "region", "ops": [{"schema_hash": hex(draw(st.integers(1, 4)))}
                                              for _ in range(draw(st.integers(1, 3)))]}
        return {"kind": "region", "content_hash": hex(draw(st.integers(0, 2**64 - 1)))}

    def chain(length: int, end: int | None) -> int | None:
        nxt = end
        for _ in range(length):
            nodes.append(region() | {"next": nxt})
            nxt = len(nodes) - 1
        return nxt

    nodes.append({"kind": "terminal"})
    head = chain(draw(st.integers(0, 3)), 0)
    if not with_ops and draw(st.booleans()):
        arms = [{"value": draw(st.integers(-9, 9)), "target": chain(draw(st.integers(1, 2)), None)}
                for _ in range(draw(st.integers(1, 3)))]
        nodes.append({"kind": "branch", "arms": arms, "next": head,
                      "guard": {"kind": draw(st.integers(0, 4)), "op_index": draw(
                          st.integers(0, 9)), "dim_index": draw(st.integers(0, 600))}})
        head = len(nodes) - 1
    if not with_ops and draw(st.booleans()):
        body = chain(draw(st.integers(1, 2)), None)
        nodes.append({"kind": "loop", "body": body, "next": head,
                      "feedback": [[draw(st.integers(0, 3)), draw(st.integers(0, 3))]],
                      "term_kind": draw(st.integers(0, 1)),
                      "repeat_count": draw(st.integers(0, 3)),
                      "epsilon_bits": hex(draw(st.integers(0, 2**32 - 1)))})
        head = len(nodes) - 1
    head = chain(draw(st.integers(0, 2)), head)
    return {"nodes": nodes, "root": head}


def _add_branch_domain() -> st.SearchStrategy:
    def case(d: dict, new: list[int], values: tuple[int, int]) -> dict:
        return {"dag": d, "divergence_point": d["root"] or 0, "existing_suffix": d["root"],
                "new_ops": [{"schema_hash": hex(h)} for h in new], "old_value": values[0],
                "new_value": values[1], "guard": {"kind": 1, "op_index": 0}}
    return st.builds(case, dags(with_ops=True), st.lists(st.integers(1, 4), max_size=6),
                     st.tuples(st.integers(-5, 5), st.integers(-5, 5)))


_GUARD = {"kind": Field(U8, "GuardKind"), "op_index": Field(U32, "op index"),
          "arg_index": Field(U16, "argument index", default=0),
          "dim_index": Field(U16, "dimension index", default=0)}
_DAG = Json("{nodes: [...], root}", dag_schema())
_DAG_OUT = Json("{nodes: [...], root}", dag_schema(True))
_WALK = "a walk over a few pointer-linked nodes: nothing to batch"

declare(
    "dag.guard_hash", chapter=9, summary="A branch guard's hash: fmix64 of its packed fields.",
    args=record(**_GUARD), result=record(out=HASH64), spec=(guard_hash,), errata=(E9_1,),
)

declare(
    "dag.feedback_signature", chapter=9,
    summary="A loop's feedback signature: fmix64 over its (output, input) edges and count.",
    args=record(edges=Field(List(List(U16)), "[[output_idx, input_idx], ...]")),
    result=record(out=HASH64), spec=(feedback_signature,),
    check=lambda a: _pairs(a["edges"]),
    domain=lambda: st.fixed_dictionaries({"edges": st.lists(
        st.lists(st.integers(0, 65535), min_size=2, max_size=2), max_size=6)}),
    invalid=(InvalidCase("an edge of three indices", lambda: st.just({"edges": [[1, 2, 3]]})),),
)


def _pairs(edges: list[list[int]]) -> None:
    if any(len(e) != 2 for e in edges):
        raise InvalidInput("args.edges: each edge is [output_idx, input_idx]")


declare(
    "dag.loopterm_hash", chapter=9,
    summary="A loop's termination hash over its kind, repeat count and epsilon bits.",
    args=record(term_kind=Field(U8, "REPEAT 0, UNTIL 1"), repeat_count=Field(U32, "repeats"),
                epsilon_bits=Field(BITS32, "the float32 bits of epsilon")),
    result=record(out=HASH64), spec=(loopterm_hash,),
)

declare(
    "dag.merkle", chapter=9,
    summary="Every node's Merkle hash, and the node count reached from the root.",
    args=record(dag=Field(_DAG, "the DAG")),
    result=record(merkle=List(HASH64), node_count=U32),
    spec=(merkle_hashes,), errata=(E8_3, E8_4, E9_1, E9_2),
    domain=lambda: dags().map(lambda d: {"dag": d}),
    not_applicable={"numba": _WALK, "cupy": _WALK},
    invalid=(InvalidCase("a cycle", lambda: st.just({"dag": {"nodes": [
        {"kind": "region", "content_hash": "0x1", "next": 0}], "root": 0}})),
             InvalidCase("a terminal with a next", lambda: st.just({"dag": {"nodes": [
                 {"kind": "terminal", "next": 1}, {"kind": "region", "content_hash": "0x1"}],
                 "root": 0}}))),
)

declare(
    "dag.diff", chapter=9,
    summary="Where two DAGs first differ (DagDiffKind) and at what depth.",
    args=record(a=Field(_DAG, "one DAG"), b=Field(_DAG, "the other")),
    result=record(kind=U8, depth=U32), spec=(dag_diff,), errata=(E8_3, E8_4, E9_1, E9_2),
    domain=lambda: st.builds(lambda a, b: {"a": a, "b": b}, dags(), dags()),
    not_applicable={"numba": _WALK, "cupy": _WALK},
)

declare(
    "dag.replay", chapter=9,
    summary="Replay a DAG: the regions run, taking each branch's arm by the value chosen.",
    args=record(dag=Field(_DAG, "the DAG"),
                choices=Field(Json("{branch index: value}",
                                   js.mapping(wire_schema(i64), "^[0-9]+$")),
                              "guard outcomes", default={})),
    result=record(ok=Field(BOOL, "every branch met had an arm for its value"),
                  regions=List(U32)),
    spec=(replay,), domain=lambda: dags().map(lambda d: {"dag": d, "choices": {}}),
    not_applicable={"numba": _WALK, "cupy": _WALK},
)

declare(
    "dag.add_branch", chapter=9,
    summary="Add a branch at a divergence point: the new DAG, the branch, each arm's replay.",
    args=record(dag=Field(_DAG, "the DAG"), divergence_point=Field(U32, "node index"),
                existing_suffix=Field(Json("node index or null", js.or_null(wire_schema(id32))),
                                      "the chain after it"),
                new_ops=Field(Json("[trace op]", TRACE_OPS), "the ops recorded instead"),
                old_value=Field(Json("int64", wire_schema(i64)), "guard value of the old path"),
                new_value=Field(Json("int64", wire_schema(i64)), "guard value of the new ops"),
                guard=Field(Json("{kind, op_index, arg_index, dim_index}", GUARD_WIRE),
                            "the guard")),
    result=record(dag=_DAG_OUT, branch=U32, replays=Json("{value: [content hash]}", js.mapping(
        js.array(js.HEX64_OUT), "^-?[0-9]+$"))),
    spec=(add_branch,), errata=(E8_3, E8_4, E9_3), domain=_add_branch_domain,
    check=lambda a: _add_branch_args(a),
    not_applicable={"numba": _WALK, "cupy": _WALK},
)


def _add_branch_args(a: dict) -> None:
    for name in ("old_value", "new_value"):
        a[name] = scalar_from_wire(i64, a[name], f"args.{name}")
    if a["existing_suffix"] is not None:
        a["existing_suffix"] = scalar_from_wire(id32, a["existing_suffix"], "args")


def _guarded(dim_index: int) -> dict:
    """Region 0x1 behind a branch with one arm (3), guarded on dim_index of op 0's input."""
    return {"nodes": [{"kind": "region", "content_hash": "0x1"},
                      {"kind": "branch", "guard": {"kind": 0, "op_index": 0,
                                                   "dim_index": dim_index},
                       "arms": [{"value": 3, "target": 0}]}], "root": 1}


def _two_arms(first: int, second: int) -> dict:
    """Regions 0x1 and 0x2 behind a branch whose arms (3 -> 0, 5 -> 1) come in this order."""
    arms = {0: {"value": 3, "target": 0}, 1: {"value": 5, "target": 1}}
    return {"nodes": [{"kind": "region", "content_hash": "0x1"},
                      {"kind": "region", "content_hash": "0x2"},
                      {"kind": "branch", "guard": {"kind": 1, "op_index": 0},
                       "arms": [arms[first], arms[second]]}], "root": 2}


_BRANCH_HEAD = "4741444307000000" + "0100000000000000"
"""Magic, version, kind BRANCH and pad: the first 16 bytes of a branch file."""
_DIM_256_NO_ARMS = "00" * 8 + "00" + "00" * 3 + "00000000" + "0000" + "0001" + "00000000"
"""After the Merkle hash: no next, guard {SHAPE_DIM, op 0, arg 0, dim 256}, no arms."""

erratum(
    E9_1, "The guard hash drops the high byte of dim_index",
    seed="crucible@8d2680a2", location="include/crucible/MerkleDag.h Guard::hash",
    ops=("dag.guard_hash", "dag.merkle", "dag.diff", "cdag.encode_branch"),
    witness={"args": {"kind": 0, "op_index": 0, "dim_index": 256},
             "spec": {"out": "0x662728d54dca796a"}, "seed": {"out": "0x0000000000000000"}},
    also=(
        {"op": "dag.merkle", "args": {"dag": _guarded(256)},
         "spec": {"merkle": ["0x0000000000000001", "0x71ff09d1e0c07005"]},
         "seed": {"merkle": ["0x0000000000000001", "0x8efc2c243d1bfa9c"]}},
        {"op": "dag.diff", "args": {"a": _guarded(1), "b": _guarded(257)},
         "spec": {"kind": 3, "depth": 0}, "seed": {"kind": 0, "depth": 0}},
        {"op": "cdag.encode_branch",
         "args": {"guard": {"kind": 0, "op_index": 0, "dim_index": 256}, "arms": []},
         "spec": {"hex": _BRANCH_HEAD + "1d3bfd3a55523596" + _DIM_256_NO_ARMS},
         "seed": {"hex": _BRANCH_HEAD + "00" * 8 + _DIM_256_NO_ARMS}},
    ),
    flag="result",
    detail="dim_index (16 bits) is shifted left by 56, so only its low byte survives: guards on "
           "dims 1 and 257 of the same argument are one guard to the branch and its Merkle "
           "hash. z3 finds such pairs at once (PO9.2). The spec keeps the packing and folds the "
           "high byte in apart; nothing changes below dim 256.",
)

erratum(
    E9_2, "A branch's Merkle hash depends on the order of its arms",
    seed="crucible@8d2680a2", location="include/crucible/MerkleDag.h compute_merkle_hash",
    ops=("dag.merkle", "dag.diff"),
    witness={"args": {"dag": {"nodes": [
        {"kind": "region", "content_hash": "0x1"}, {"kind": "region", "content_hash": "0x2"},
        {"kind": "branch", "guard": {"kind": 1, "op_index": 0},
         "arms": [{"value": 5, "target": 0}, {"value": 3, "target": 1}]}], "root": 2}},
             "spec": {"merkle": ["0x0000000000000001", "0x0000000000000002",
                                 "0x4d5eb9b05c6a4ca9"]},
             "seed": {"merkle": ["0x0000000000000001", "0x0000000000000002",
                                 "0x915d14b6e41e4315"]}},
    also=({"op": "dag.diff", "args": {"a": _two_arms(0, 1), "b": _two_arms(1, 0)},
           "spec": {"kind": 0, "depth": 0}, "seed": {"kind": 3, "depth": 0}},),
    flag="result",
    detail="The fold h ^= fmix64(arm merkle); h *= PHI is not commutative (PO9.3 checks the "
           "witness), while the Lean model proves order independence. add_branch "
           "keeps arms sorted by value, but a branch built or loaded with another order hashes "
           "differently. The spec folds the arms in value order.",
)

_C, _C_HASH = {"schema_hash": "0xc"}, "0xc4802792fc792854"
"""The shared suffix's op and its region's content hash."""
_AB = "0x6655f4b35ae8eab6"
"""The content hash of the old path's first region (ops 0xa, 0xb)."""

erratum(
    E9_3, "add_branch leaves the shared suffix in both arms",
    seed="crucible@8d2680a2", location="include/crucible/MerkleDag.h add_branch",
    ops=("dag.add_branch",),
    witness={"args": {"dag": {"nodes": [
                 {"kind": "terminal"}, {"kind": "region", "ops": [_C], "next": 0},
                 {"kind": "region", "ops": [{"schema_hash": "0xa"}, {"schema_hash": "0xb"}],
                  "next": 1}], "root": 2},
                 "divergence_point": 2, "existing_suffix": 2,
                 "new_ops": [{"schema_hash": "0xf"}, _C], "old_value": 5, "new_value": 3,
                 "guard": {"kind": 1, "op_index": 0}},
             "spec": {"replays": {"5": [_AB, _C_HASH], "3": ["0x116ad629a0dcbc3f", _C_HASH]}},
             "seed": {"replays": {"5": [_AB, _C_HASH, _C_HASH],
                                  "3": ["0x39fd792bba2e4d8c", _C_HASH, _C_HASH]}}},
    flag="result",
    detail="The new region holds every new op and continues at the merge point, and the old "
           "arm is the whole old chain, while the branch also continues at the merge point: "
           "replay runs the shared suffix twice after either arm. The spec cuts both arms "
           "where the suffix begins (copying the old arm's nodes). add_branch is untested in "
           "the seed.",
)
