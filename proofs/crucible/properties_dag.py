"""Two DAG ops as properties: where two Merkle DAGs first differ (dag.diff, ch. 9) and the CDAG
file of a branch node (cdag.encode_branch, ch. 18). The expected divergence is read off the
DAG's shape (each node's depth in the lockstep walk) and the golden file, the expected bytes
off the format's field offsets and the facts' 80-byte branch, never from the code under check."""

from __future__ import annotations

import struct

from hypothesis import strategies as st

from ...spec.core.errata import NO_ERRATA, SEEDS, profile_errata
from ...spec.core.registry import Mutant
from ...spec.crucible.cdag import (
    ARM_SIZE,
    HEADER_SIZE,
    MAGIC,
    VERSION,
    decode_branch,
    encode_branch,
)
from ...spec.crucible.cdag_ops import branch_values, cdag_decode_branch, cdag_encode_branch
from ...spec.crucible.dag import Dag, dag_diff, dag_from_wire, merkle_hashes
from ...spec.crucible.dag_ops import dags, diff_op
from ...spec.crucible.merkle_dag import DagDiffKind, TraceNodeKind, branch_hash
from ..core.obligation import Property, property_obligation

SEED = profile_errata(SEEDS["crucible"])
BRANCH_FILE_FIXED = 48
"""Header 32, Guard 12, num_arms 4 (facts §27: 80 bytes for two arms)."""

# --- dag.diff (chapter 9) -------------------------------------------------------------------


def _golden_diffs() -> list[tuple[dict, dict]]:
    from ...conformance.golden import dag_cases, golden

    return [(c.args, c.result) for c in dag_cases(golden()["content_merkle"])
            if c.op == "dag.diff"]


def _golden_diff(case: tuple[dict, dict]) -> None:
    args, expected = case
    assert diff_op(**args) == expected


def _diff(a: Dag, b: Dag) -> tuple[int, int, int | None, int | None]:
    return dag_diff(a, a.root, b, b.root, merkle_hashes(a), merkle_hashes(b))


def _self_diff(dag: dict) -> None:
    a, b = dag_from_wire(dag), dag_from_wire(dag)
    assert _diff(a, b) == (DagDiffKind.IDENTICAL, 0, a.root, b.root)


@property_obligation(
    "PO9.50",
    "dag.diff gives the real code's answers on the golden file's three cases (A->B->C->T "
    "against itself: IDENTICAL at depth 0; against A->C->B->T: CONTENT_MISMATCH at depth 1; "
    "against a lone TERMINAL: KIND_MISMATCH at depth 0), and a generated DAG diffs against a "
    "fresh copy of itself as IDENTICAL at depth 0, at the two roots.",
    covers=("dag.diff",),
    subject=dag_diff,
    mutants=(Mutant.edit("chain depth not counted", "the depth does not grow along a "
                         "continuation", dag_diff, "ka, kb, depth = x.next, y.next, depth + 1",
                         "ka, kb, depth = x.next, y.next, depth"),
             Mutant.edit("kind as structure", "two nodes of different kinds are a structure "
                         "mismatch", dag_diff,
                         "return DagDiffKind.KIND_MISMATCH, depth, ka, kb",
                         "return DagDiffKind.STRUCTURE_MISMATCH, depth, ka, kb")),
)
def diff_golden_and_identical(_subject):
    return [Property("the golden dag_diff cases", _golden_diff, cases=_golden_diffs),
            Property("a DAG", _self_diff, strategy=dags, examples=100)]


def _places(dag: Dag) -> dict[int, tuple[int, int | None]]:
    """Each node reached from the root: its depth in the lockstep walk (one more per
    continuation, arm or body step) and the outermost loop whose body holds it, if any."""
    out: dict[int, tuple[int, int | None]] = {}
    stack = [(dag.root, 0, None)]
    while stack:
        k, depth, loop = stack.pop()
        if k is None or k in out:
            continue
        out[k] = (depth, loop)
        n = dag.nodes[k]
        inner = k if loop is None and n.kind == TraceNodeKind.LOOP else loop
        stack += [(t, depth + 1, loop) for _, t in n.arms]
        stack += [(n.body, depth + 1, inner)]
        if n.kind != TraceNodeKind.TERMINAL:
            stack.append((n.next, depth + 1, loop))
    return out


@st.composite
def _dag_and_node(draw) -> tuple[dict, int]:
    dag = draw(dags())
    changeable = [k for k, n in enumerate(dag["nodes"]) if n["kind"] != "terminal"]
    return dag, draw(st.sampled_from(changeable)) if changeable else -1


def _changed(dag: Dag, k: int) -> DagDiffKind:
    """Change one field of node k; the kind of mismatch the spec reports at it."""
    n = dag.nodes[k]
    if n.kind == TraceNodeKind.REGION:
        n.content_hash ^= 1
        return DagDiffKind.CONTENT_MISMATCH
    if n.kind == TraceNodeKind.BRANCH:
        n.guard = (n.guard[0], n.guard[1] + 1, *n.guard[2:])
        return DagDiffKind.BRANCH_MISMATCH
    n.repeat_count += 1
    return DagDiffKind.LOOP_MISMATCH


def _one_node_changed(case: tuple[dict, int]) -> None:
    dag, k = case
    a, b = dag_from_wire(dag), dag_from_wire(dag)
    if k < 0:
        assert _diff(a, b)[0] == DagDiffKind.IDENTICAL
        return
    kind = _changed(b, k)
    depth, loop = _places(a)[k]
    expected = (kind, depth, k, k) if loop is None else \
        (DagDiffKind.LOOP_MISMATCH, _places(a)[loop][0], loop, loop)
    assert _diff(a, b) == expected
    assert _diff(b, a) == expected


@property_obligation(
    "PO9.51",
    "Changing one node of a generated DAG (a region's content hash, a branch's guard, a loop's "
    "repeat count) makes dag.diff report that node of both DAGs, at its depth in the walk "
    "(one per continuation, arm or body step), as CONTENT_, BRANCH_ or LOOP_MISMATCH; a region "
    "on a loop's body is reported as a LOOP_MISMATCH of the loop (its body hash changed); the "
    "same either way round.",
    covers=("dag.diff",),
    subject=dag_diff,
    mutants=(Mutant.edit("arm depth not counted", "an arm's nodes are reported at the "
                         "branch's depth", dag_diff, "dag_diff(a, ta, b, tb, ma, mb, depth + 1,",
                         "dag_diff(a, ta, b, tb, ma, mb, depth,"),
             Mutant.edit("content as kind", "a region of another content is a kind mismatch",
                         dag_diff, "return DagDiffKind.CONTENT_MISMATCH, depth, ka, kb",
                         "return DagDiffKind.KIND_MISMATCH, depth, ka, kb"),
             Mutant.edit("guard not compared", "a branch's guard is left out of the "
                         "comparison", dag_diff,
                         "guard_hash(*x.guard, errata) != guard_hash(*y.guard, errata) or \\\n",
                         "")),
)
def diff_finds_the_changed_node(_subject):
    return [Property("a DAG and one node to change", _one_node_changed,
                     strategy=_dag_and_node, examples=150)]


def _branches_of(dag: dict) -> list[int]:
    """Branches of two or more arms whose values are all distinct."""
    return [k for k, n in enumerate(dag["nodes"])
            if n["kind"] == "branch" and len({a["value"] for a in n["arms"]}) == len(n["arms"]) > 1]


@st.composite
def _dag_with_branch(draw) -> tuple[dict, int, bool]:
    dag = draw(dags().filter(_branches_of))
    return dag, draw(st.sampled_from(_branches_of(dag))), draw(st.booleans())


def _reordered(case: tuple[dict, int, bool]) -> None:
    dag, k, change = case
    other = dag_from_wire(dag)
    other.nodes[k].arms.reverse()
    if change:
        region = next(t for _, t in other.nodes[k].arms)
        other.nodes[region].content_hash ^= 1
    a = dag_from_wire(dag)
    depth = _places(a)[k][0]
    expected = (DagDiffKind.BRANCH_MISMATCH, depth, k, k) if change else \
        (DagDiffKind.IDENTICAL, 0, a.root, other.root)
    assert _diff(a, other) == expected


@property_obligation(
    "PO9.52",
    "Reversing the arms of a branch (two or more arms of distinct values) leaves the spec's DAG "
    "identical to dag.diff at depth 0 (its Merkle hash ignores arm order, unlike the seed's: "
    "E9.2); reversed and with one arm's region changed, the arms are paired by position, so the "
    "branch itself is a BRANCH_MISMATCH at its depth.",
    covers=("dag.diff", "dag.merkle"),
    subject=dag_diff,
    mutants=(Mutant.edit("array order", "branch_hash takes the arms in array order (the seed's "
                         "reading, E9.2)", branch_hash,
                         "(arms if E9_2 in errata else sorted(arms))", "arms"),
             Mutant.edit("arms paired by value", "dag_diff pairs the arms of two branches by "
                         "value, not by position", dag_diff,
                         "zip(x.arms, y.arms, strict=True)",
                         "zip(sorted(x.arms), sorted(y.arms), strict=True)")),
)
def diff_of_reordered_arms(_subject):
    return [Property("a DAG with a branch, reversed, maybe changed", _reordered,
                     strategy=_dag_with_branch, examples=100)]


# --- cdag.encode_branch (chapter 18) --------------------------------------------------------


def _fields_in_place(b) -> None:
    data = encode_branch(b)
    n = len(b.arms)
    assert len(data) == BRANCH_FILE_FIXED + ARM_SIZE * n
    assert struct.unpack_from("<IIB7sQQ", data) == (MAGIC, VERSION, TraceNodeKind.BRANCH,
                                                    bytes(7), b.merkle_hash, b.next_merkle)
    g = b.guard
    assert struct.unpack_from("<B3sIHHI", data, HEADER_SIZE) == \
        (g["kind"], g["pad"], g["op_index"], g["arg_index"], g["dim_index"], n)
    assert [struct.unpack_from("<qQ", data, BRANCH_FILE_FIXED + ARM_SIZE * k)
            for k in range(n)] == list(b.arms)


def _facts_branch(_case: None) -> None:
    from ...conformance.golden_cdag import BRANCH_80, BRANCH_80_ARGS, BRANCH_80_MERKLE

    assert cdag_encode_branch(**BRANCH_80_ARGS)["hex"].hex() == BRANCH_80
    back = cdag_decode_branch(bytes.fromhex(BRANCH_80))
    assert f"0x{back['merkle_hash']:016x}" == BRANCH_80_MERKLE and back["next_merkle"] == 0


@property_obligation(
    "PO18.50",
    "A branch file is 48 + 16 per arm bytes: magic, version 7, kind BRANCH, 7 zero bytes, the "
    "merkle and continuation hashes; at 32 the Guard (kind, pad, op_index, arg_index, "
    "dim_index) and num_arms; from 48 each arm's (i64 value, u64 target merkle); and the "
    "facts' branch (guard SCALAR_VALUE op 0, arms 3 and 5) encodes to its 80 bytes, merkle "
    "0xe1b5865551ca3b0e.",
    covers=("cdag.encode_branch",),
    subject=encode_branch,
    mutants=(Mutant.edit("header hashes swapped", "the header holds the continuation's merkle "
                         "first", encode_branch, "b.merkle_hash, b.next_merkle",
                         "b.next_merkle, b.merkle_hash"),
             Mutant.edit("arm fields swapped", "each arm is written target first", encode_branch,
                         '        w.put("q", value, f"arms[{k}].value")\n'
                         '        w.put("Q", target, f"arms[{k}].target_merkle")\n',
                         '        w.put("Q", target, f"arms[{k}].target_merkle")\n'
                         '        w.put("q", value, f"arms[{k}].value")\n')),
)
def branch_file_layout(_subject):
    return [Property("a branch", _fields_in_place, strategy=branch_values, examples=150),
            Property("the facts' 80-byte branch", _facts_branch, cases=lambda: [None])]


def _round_trip(case: tuple[object, frozenset[str]]) -> None:
    b, errata = case
    assert decode_branch(encode_branch(b), errata) == b


@property_obligation(
    "PO18.51",
    "decode_branch(encode_branch(b)) == b for generated branches (sorted arms, any guard and "
    "hashes), under both profiles.",
    covers=("cdag.encode_branch", "cdag.decode_branch"),
    subject=encode_branch,
    mutants=(Mutant.edit("region kind", "the header names the node a REGION", encode_branch,
                         "TraceNodeKind.BRANCH", "TraceNodeKind.REGION"),
             Mutant.edit("num_arms one short", "the arm count leaves out the last arm",
                         encode_branch, 'w.put("I", len(b.arms), "num_arms")',
                         'w.put("I", max(len(b.arms) - 1, 0), "num_arms")')),
)
def branch_round_trip(_subject):
    return [Property("a branch and a profile", _round_trip,
                     strategy=lambda: st.tuples(branch_values(),
                                                st.sampled_from([NO_ERRATA, SEED])),
                     examples=150)]
