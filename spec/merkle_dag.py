"""Chapter 9: the Merkle DAG: region, branch, loop and terminal nodes, guards, the kernel cache."""

from __future__ import annotations

import enum

from .layout import Member, enum_of, f32, hash64, i64, id32, pad, ptr, struct, u8, u16, u32
from .types import NONE32


class TraceNodeKind(enum.IntEnum):
    """Kind byte of every DAG node."""

    REGION = 0
    BRANCH = 1
    LOOP = 2
    TERMINAL = 3


class GuardKind(enum.IntEnum):
    """What a branch guard observes."""

    SHAPE_DIM = 0
    SCALAR_VALUE = 1
    DTYPE = 2
    DEVICE = 3
    OP_SEQUENCE = 4


class LoopTermKind(enum.IntEnum):
    """How a loop node terminates."""

    REPEAT = 0
    UNTIL = 1


class DagDiffKind(enum.IntEnum):
    """Outcome of comparing two DAGs."""

    IDENTICAL = 0
    KIND_MISMATCH = 1
    CONTENT_MISMATCH = 2
    BRANCH_MISMATCH = 3
    LOOP_MISMATCH = 4
    STRUCTURE_MISMATCH = 5


KERNEL_CACHE_CAPACITY = 4096

GUARD = struct("Guard", [
    Member("kind", enum_of(GuardKind, u8), default=GuardKind.SHAPE_DIM),
    Member("pad", pad(3)),
    Member("op_index", id32, default=NONE32),
    Member("arg_index", u16),
    Member("dim_index", u16),
], size=12, align=4, chapter=9, doc="A branch condition; serialized verbatim (12 bytes).")

TRACE_NODE = struct("TraceNode", [
    Member("kind", enum_of(TraceNodeKind, u8), default=TraceNodeKind.REGION),
    Member("pad", pad(7)),
    Member("merkle_hash", hash64, doc="identity of the subtree"),
    Member("next", ptr, doc="continuation, null for TERMINAL"),
], size=24, align=8, chapter=9, doc="Common head of every DAG node.")

REGION_NODE = struct("RegionNode", [
    Member("content_hash", hash64),
    Member("compiled", ptr, doc="CompiledKernel*, atomic"),
    Member("ops", ptr, doc="TraceEntry[num_ops]"),
    Member("num_ops", u32),
    Member("first_op_schema", hash64),
    Member("measured_ms", f32),
    Member("variant_id", u32),
    Member("plan", ptr, doc="MemoryPlan*"),
], base=TRACE_NODE, size=80, align=8, chapter=9, doc="A compiled unit: a run of ops.")

ARM = struct("BranchNode::Arm", [
    Member("value", i64, doc="observed guard outcome"),
    Member("target", ptr, doc="TraceNode* of this outcome"),
], size=16, align=8, chapter=9, doc="One arm of a branch; arms are kept sorted by value.")

BRANCH_NODE = struct("BranchNode", [
    Member("guard", GUARD),
    Member("arms", ptr, doc="Arm[num_arms]"),
    Member("num_arms", u32),
    Member("pad1", u32),
], base=TRACE_NODE, size=56, align=8, chapter=9, doc="A guarded choice between arms.")

FEEDBACK_EDGE = struct("FeedbackEdge", [
    Member("output_idx", u16, doc="which body output"),
    Member("input_idx", u16, doc="feeds which body input next iteration"),
], size=4, align=2, chapter=9, doc="Loop-carried dependence of a loop body.")

LOOP_NODE = struct("LoopNode", [
    Member("body_content_hash", hash64),
    Member("body", ptr),
    Member("feedback_edges", ptr),
    Member("num_feedback", u16),
    Member("term_kind", enum_of(LoopTermKind, u8), default=LoopTermKind.REPEAT),
    Member("pad_l0", u8),
    Member("repeat_count", u32),
    Member("epsilon", f32, doc="UNTIL threshold (float bits)"),
    Member("measured_body_ms", f32),
], base=TRACE_NODE, size=64, align=8, chapter=9, doc="A repeated body with feedback edges.")

DAG_DIFF = struct("DagDiff", [
    Member("node_a", ptr),
    Member("node_b", ptr),
    Member("depth", u32),
    Member("kind", enum_of(DagDiffKind, u8), default=DagDiffKind.IDENTICAL),
], size=24, align=8, chapter=9, doc="First divergence between two DAGs.")

KERNEL_CACHE = struct("KernelCache", [
    Member("table_", ptr, doc="calloc'd Entry{hash, kernel}[capacity]"),
    Member("capacity_", u32, default=KERNEL_CACHE_CAPACITY),
    Member("size_", u32, doc="relaxed counter"),
], size=16, align=8, chapter=9,
   doc="Content hash -> compiled kernel map (keyed by the content hash only).")
