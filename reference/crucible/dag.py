"""Reference for the Merkle DAG ops and the kernel cache."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.dag_ops import add_branch_op, diff_op, merkle_op, replay_op
from ...spec.crucible.kernel_cache import kernel_cache_simulate
from ...spec.crucible.merkle_dag import feedback_signature, guard_hash, loopterm_hash


@reference("dag.guard_hash")
def guard_hash_op(kind: int, op_index: int, arg_index: int, dim_index: int,
                  errata: frozenset[str]) -> dict:
    return {"out": guard_hash(kind, op_index, arg_index, dim_index, errata)}


@reference("dag.feedback_signature")
def feedback_signature_op(edges: list[list[int]]) -> dict:
    return {"out": feedback_signature([(o, i) for o, i in edges])}


@reference("dag.loopterm_hash")
def loopterm_hash_op(term_kind: int, repeat_count: int, epsilon_bits: int) -> dict:
    return {"out": loopterm_hash(term_kind, repeat_count, epsilon_bits)}


reference("dag.merkle")(merkle_op)
reference("dag.diff")(diff_op)
reference("dag.replay")(replay_op)
reference("dag.add_branch")(add_branch_op)
reference("dag.kernel_cache")(kernel_cache_simulate)
