"""The Graph IR (facts sheet §7.1, §8, §9): Inst words, classify_node_kind, and the passes'
expectations (test_graph, test_lower, the toposort and fusion examples) asked through `serve`
and through the spec's own op functions; the erratum E14.600 under both profiles; bad graphs."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.crucible import graph_ir_ops as ops
from crucible_spec.spec.crucible.graph import (
    INST,
    NODE_KIND_OF,
    NodeKind,
    classify_node_kind,
    inst_word,
)

load_all()

SPEC = {"ir.dce": ops.dce_op, "ir.toposort": ops.toposort_op, "ir.cse": ops.cse_op,
        "ir.fusion_groups": ops.fusion_op, "ir.rauw": ops.rauw_op, "ir.lower": ops.lower_op}
ERRATA_OPS = {"ir.cse", "ir.lower"}
IN, PW, RED, EXT, MUT = 0, 2, 3, 6, 8
ADD = [{"op": 0, "dtype": 6, "operands": [0, 0, 0]}, {"op": 0, "dtype": 6, "operands": [1, 0, 0]},
       {"op": 2, "dtype": 6, "operands": [0, 1, 0]}, {"op": 1, "dtype": 6, "operands": [2, 0, 0]}]


def _reply(op: str, args: dict, profile: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, profile)


def _ask(op: str, args: dict, profile: str = "crucible") -> dict:
    """The served (reference) result, checked equal to the spec's own op function."""
    reply = _reply(op, args, profile)
    assert "result" in reply, reply
    extra = {"errata": profile_errata(profile)} if op in ERRATA_OPS else {}
    assert reply["result"] == json.loads(json.dumps(SPEC[op](**args, **extra))), op
    return reply["result"]


def n(i: int, kind: int, inputs: list[int], **fields) -> dict:
    return {"id": i, "kind": kind, "inputs": inputs, **fields}


def facts_dag(outputs=(6,), dead7=False) -> dict:
    """§8.8: 0 IN a, 1 IN b, 2 PW(b), 3 PW(2,a), 4 IN c, 5 PW(c,c), 6 PW(5,3), 7 PW(a)."""
    s = {"sizes": [8]}
    nodes = [n(0, IN, [], **s), n(1, IN, [], **s), n(2, PW, [1], **s), n(3, PW, [2, 0], **s),
             n(4, IN, [], **s), n(5, PW, [4, 4], **s), n(6, PW, [5, 3], **s),
             n(7, PW, [0], **s, dead=dead7)]
    return {"nodes": nodes, "outputs": list(outputs)}


def test_inst_words_are_the_facts_examples():
    assert inst_word() == 0x000000000000FF00
    assert inst_word(2, 6, (0, 1, 0)) == 0x0000000100000602
    assert INST.pack({"op": 2, "dtype": 6, "operands": [0, 1, 0]}) == \
        (0x0000000100000602).to_bytes(8, "little")


@pytest.mark.parametrize("kid,kind", [
    (0, NodeKind.EXTERN), (1, NodeKind.EXTERN), (24, NodeKind.EXTERN), (25, NodeKind.POINTWISE),
    (33, NodeKind.POINTWISE), (35, NodeKind.POINTWISE), (56, NodeKind.POINTWISE),
    (57, NodeKind.REDUCTION), (62, NodeKind.REDUCTION), (63, NodeKind.SCAN),
    (64, NodeKind.REDUCTION), (65, NodeKind.EXTERN), (73, NodeKind.NOP), (88, NodeKind.NOP),
    (89, NodeKind.EXTERN), (91, NodeKind.MUTATION), (109, NodeKind.SCAN), (146, NodeKind.EXTERN)])
def test_classify_node_kind(kid, kind):
    assert classify_node_kind(kid) == kind == NODE_KIND_OF[kid]


def test_classify_never_gives_constant_sort_template_or_input():
    assert not {NodeKind.CONSTANT, NodeKind.SORT, NodeKind.TEMPLATE, NodeKind.INPUT} & \
        set(NODE_KIND_OF)
    assert len(NODE_KIND_OF) == 147


def test_toposort_is_the_facts_fifo_order():
    out = _ask("ir.toposort", {"graph": facts_dag()})
    assert out["schedule_order"] == [0, 1, 4, 6, 2, 5, 7, 3]
    assert out["order"] == [0, 1, 4, 7, 2, 5, 3, 6]


def test_toposort_leaves_dead_nodes_unordered():
    assert _ask("ir.toposort", {"graph": facts_dag(dead7=True)})["schedule_order"][7] is None


def test_dce_kills_what_no_output_reaches():
    out = _ask("ir.dce", {"graph": facts_dag()})
    assert out["dead"] == [7] and out["num_live"] == 7
    assert out["num_uses"] == [1, 1, 1, 1, 2, 1, 1, 0]


def test_dce_without_outputs_keeps_only_mutations():
    g = {"nodes": [n(0, IN, []), n(1, PW, [0]), n(2, MUT, [1]), n(3, PW, [0])], "outputs": []}
    out = _ask("ir.dce", {"graph": g})
    assert out["dead"] == [3] and out["num_uses"] == [1, 1, 0, 0]
    assert _ask("ir.dce", {"graph": facts_dag(outputs=())})["dead"] == list(range(8))


def test_cse_is_test_graph():
    g = {"nodes": [n(0, IN, []), n(1, IN, []), n(2, PW, [0, 1], body=ADD),
                   n(3, PW, [0, 1], body=ADD), n(4, PW, [2, 3], body=ADD)], "outputs": [4]}
    out = _ask("ir.cse", {"graph": g})
    assert out["eliminated"] == 1 and out["dead"] == [3]
    assert out["inputs"][4] == [2, 2] and out["num_uses"][2] == 2


def test_cse_keeps_different_inputs_apart():
    g = {"nodes": [n(0, IN, []), n(1, IN, []), n(2, IN, []), n(3, PW, [0, 1], body=ADD),
                   n(4, PW, [0, 2], body=ADD)], "outputs": [3, 4]}
    out = _ask("ir.cse", {"graph": g})
    assert out["eliminated"] == 0 and out["num_uses"] == [2, 1, 1, 0, 0]


def _meta(ptr: int, sizes=(4, 16)) -> dict:
    return {"ndim": len(sizes), "sizes": list(sizes), "strides": [1] * len(sizes), "dtype": 6,
            "data_ptr": hex(ptr)}


TEST_LOWER = {"ops": [{"schema_hash": "0xa", "inputs": [_meta(0x10), _meta(0x20)],
                       "outputs": [_meta(0x30)]},
                      {"schema_hash": "0xb", "inputs": [_meta(0x30)], "outputs": [_meta(0x40)]},
                      {"schema_hash": "0xc", "inputs": [_meta(0x40), _meta(0x50)],
                       "outputs": [_meta(0x60)]}],
              "kernels": [["0xa", 38], ["0xb", 25], ["0xc", 1]]}
"""test_lower: EWISE_ADD(s0, s1) -> s2; ACT_RELU(op0) -> s3; GEMM_MM(op1, s4) -> s5."""


def test_lower_is_test_lower():
    out = _ask("ir.lower", TEST_LOWER)
    nodes = out["nodes"]
    assert len(nodes) == 6 and out["num_input_nodes"] == 3
    assert [x["kind"] for x in nodes] == [IN, IN, IN, PW, PW, EXT]
    assert [x["output_slots"] for x in nodes] == [[0], [1], [4], [2], [3], [5]]
    assert nodes[3]["inputs"] == [0, 1] and nodes[3]["input_slots"] == [0, 1]
    assert len(nodes[3]["sizes"]) == 2
    assert nodes[4]["input_slots"] == [2]
    assert nodes[5]["inputs"] == [4, 2] and nodes[5]["input_slots"] == [3, 4]
    assert nodes[5]["sizes"] == [4, 16] and nodes[5]["extern"] == {"name": "GEMM_MM"}
    assert {x["num_outputs"] for x in nodes} == {1}
    assert (out["graph_inputs"], out["graph_outputs"]) == ([0, 1, 2], [5])
    order = _ask("ir.toposort", {"graph": {"nodes": nodes, "outputs": [5]}})["schedule_order"]
    assert order[0] < order[3] < order[4] < order[5]


def test_lower_drops_an_input_without_a_dependency():
    args = {"ops": [{"schema_hash": "0x4", "inputs": [_meta(0), _meta(0x10), _meta(0x20)],
                     "outputs": [_meta(0x30)]}], "kernels": [["0x4", 4]]}
    nodes = _ask("ir.lower", args)["nodes"]
    assert len(nodes) == 3 and nodes[2]["kind"] == EXT
    assert nodes[2]["inputs"] == [0, 1] and nodes[2]["input_slots"] == [0, 1]


def test_lower_of_no_ops_is_empty():
    assert _ask("ir.lower", {"ops": [], "kernels": []}) == {"nodes": [], "graph_inputs": [],
                                              "graph_outputs": [], "num_input_nodes": 0}


def test_cse_merges_lowered_add_and_mul_and_two_opaque_externs():
    """The facts' hazard (a): lowered pointwise nodes carry no op identity."""
    ops_ = [{"schema_hash": h, "inputs": [_meta(0x10), _meta(0x20)], "outputs": [_meta(p)]}
            for h, p in (("0xa", 0x30), ("0xb", 0x40), ("0xc", 0x50), ("0xd", 0x60))]
    lowered = _ask("ir.lower", {"ops": ops_, "kernels": [["0xa", 38], ["0xb", 39]]})
    graph = {"nodes": lowered["nodes"], "outputs": lowered["graph_outputs"]}
    out = _ask("ir.cse", {"graph": graph})
    assert out["eliminated"] == 2 and out["dead"] == [3, 5]


@pytest.mark.parametrize("profile,eliminated", [("crucible", 1), ("crucible@8d2680a2", 0)])
def test_lowered_reductions_under_e14_600(profile, eliminated):
    g = {"nodes": [n(0, IN, [], sizes=[4, 8]),
                   n(1, RED, [0], sizes=[4], extern={"name": "REDUCE_SUM"}),
                   n(2, RED, [0], sizes=[4], extern={"name": "REDUCE_SUM"})], "outputs": [1, 2]}
    assert _ask("ir.cse", {"graph": g}, profile)["eliminated"] == eliminated


def test_fusion_groups_of_the_facts_example_after_dce():
    out = _ask("ir.fusion_groups", {"graph": facts_dag(dead7=True)})
    assert out == {"num_groups": 2, "fused_group_id": [0, 0, 1, 1, 0, 2, 2, 0], "fused": [3, 6]}


def test_rauw_moves_every_use():
    g = {"nodes": [n(0, IN, []), n(1, PW, [0]), n(2, PW, [0]), n(3, PW, [1, 1]),
                   n(4, PW, [1], dead=True)], "outputs": [1, 3]}
    out = _ask("ir.rauw", {"graph": g, "old": 1, "new": 2})
    assert out["inputs"] == [[], [0], [0], [2, 2], [1]]
    assert out["outputs"] == [2, 3] and out["num_uses"] == [2, 1, 2, 0, 0]


@pytest.mark.parametrize("op,args,field", [
    ("ir.toposort", {"graph": {"nodes": [n(0, PW, [1]), n(1, PW, [0])]}}, "inputs"),
    ("ir.cse", {"graph": {"nodes": [n(0, PW, [1])]}}, "nodes[0].inputs[0]"),
    ("ir.dce", {"graph": {"nodes": [n(0, 10, [])]}}, "nodes[0].kind"),
    ("ir.dce", {"graph": {"nodes": [n(0, IN, "0")]}}, "nodes[0].inputs"),
    ("ir.dce", {"graph": {"nodes": [n(1, IN, [])]}}, "nodes[0].id"),
    ("ir.dce", {"graph": {"nodes": [n(0, IN, [])], "outputs": [3]}}, "outputs[0]"),
    ("ir.cse", {"graph": {"nodes": [n(0, EXT, [], body=ADD)]}}, "nodes[0].body"),
    ("ir.cse", {"graph": {"nodes": [n(0, PW, [], body=ADD, aux=[0])]}}, "nodes[0].aux"),
    ("ir.cse", {"graph": {"nodes": [n(0, PW, [], body=[{"op": 54}])]}}, "body[0].op"),
    ("ir.rauw", {"graph": {"nodes": [n(0, IN, [])]}, "old": 1, "new": 0}, "args.old"),
    ("ir.lower", {"ops": [{"schema_hash": "0x1"}], "kernels": [["0x1", 200]]}, "kernels[0]"),
])
def test_bad_input_is_invalid_input_naming_the_field(op, args, field):
    reply = _reply(op, args)
    assert reply["error"]["code"] == "invalid_input", reply
    assert field in reply["error"]["message"], reply


def test_a_long_chain_needs_no_recursion():
    size = 100_000
    g = {"nodes": [n(0, IN, [])] + [n(i, PW, [i - 1]) for i in range(1, size)],
         "outputs": [size - 1]}
    assert ops.toposort_op(g)["order"] == list(range(size))
    assert ops.dce_op(g)["num_live"] == size
    assert _reply("ir.toposort", {"graph": g})["result"]["order"][-1] == size - 1
