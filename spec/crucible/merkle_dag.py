"""Chapter 9: the Merkle DAG: region, branch, loop and terminal nodes, guards, the kernel cache."""

from __future__ import annotations

import enum

from ..core.bits import BitVal, mul, select, shl, shr
from ..core.errata import NO_ERRATA
from ..core.layout import Member, enum_of, f32, hash64, i64, id32, pad, ptr, struct, u8, u16, u32
from .hashing import PHI, fmix64
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
"""Slots of the kernel cache (open addressing). Real code: `MerkleDag.h`, `KernelCache`."""

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

PHI_MUL = PHI
"""PHI, as the multiplier of the Merkle and guard folds. Real code: `MerkleDag.h`."""
GUARD_HIGH_SALT = 0x6775617264686900
"""'guardhi\\0': salts the high byte of dim_index in the spec's guard hash. Real code: none;
the spec's extension (see E9.1)."""
FEEDBACK_SEED = 0x6665656462616B73  # "feedbaks"
"""'feedbaks' in ASCII: feedback_signature's seed. Real code: `MerkleDag.h`,
`feedback_signature`."""
TERM_SALT = 0x7465726D696E6174  # "terminat"
"""ASCII salt of loopterm_hash's term kind. Real code: `MerkleDag.h`, `loopterm_hash`."""
EPS_SALT = 0x65707369006C6F6E  # "epsi\0lon"
"""ASCII salt of loopterm_hash's epsilon. Real code: `MerkleDag.h`, `loopterm_hash`."""
LOOP_SALT = 0x4C4F4F504E4F4445  # "LOOPNODE"
"""ASCII salt of a loop node's Merkle hash. Real code: `MerkleDag.h`, `recompute_merkle`."""
FEEDBACK_SALT = 0x6665656462616B00  # "feedbak\0"
"""'feedbak' and a zero byte: folds the feedback signature into a loop's Merkle hash. Real
code: `MerkleDag.h`, `recompute_merkle`."""
E9_1, E9_2 = "E9.1", "E9.2"


def guard_pack(kind: BitVal, op_index: BitVal, arg_index: BitVal, dim_index: BitVal) -> BitVal:
    """kind | op_index << 8 | arg_index << 40 | dim_index << 56 in 64 bits: dim_index's high
    byte falls off the top."""
    return kind | shl(op_index, 8) | shl(arg_index, 40) | shl(dim_index, 56)


def guard_hash(kind: BitVal, op_index: BitVal, arg_index: BitVal, dim_index: BitVal,
               errata: frozenset[str] = NO_ERRATA) -> BitVal:
    """fmix64 of the packed guard. The packing drops dim_index's high byte, so dims 0 and 256
    collide (erratum E9.1); the spec folds that byte in separately, which changes nothing
    for dim_index < 256."""
    h = fmix64(guard_pack(kind, op_index, arg_index, dim_index))
    if E9_1 in errata:
        return h
    high = shr(dim_index, 8)
    return h ^ select(high == 0, 0, fmix64(high ^ GUARD_HIGH_SALT))


def feedback_signature(edges: list[tuple[int, int]]) -> int:
    """0 without edges; else fmix64 over each (output_idx << 16 | input_idx) from the seed
    'feedbaks', then over the count."""
    if not edges:
        return 0
    h = FEEDBACK_SEED
    for output_idx, input_idx in edges:
        h = fmix64(h ^ (output_idx << 16 | input_idx))
    return fmix64(h ^ len(edges))


def loopterm_hash(term_kind: int, repeat_count: int, epsilon_bits: int) -> int:
    """fmix64 of (kind | repeat << 8) salted, XOR fmix64 of the epsilon's float bits salted."""
    return fmix64((term_kind | repeat_count << 8) ^ TERM_SALT) ^ fmix64(epsilon_bits ^ EPS_SALT)


def branch_hash(guard: int, arms: list[tuple[int, int]], errata: frozenset[str] = NO_ERRATA
                ) -> int:
    """A branch's own hash over its guard hash and (value, target merkle) arms: fmix64(guard),
    then per arm XOR fmix64(merkle) and multiply by PHI. The code takes the arms in array
    order, so the same arms in another order hash differently (E9.2); the spec takes them
    sorted by value, the order add_branch keeps."""
    h = fmix64(guard)
    for _, merkle in (arms if E9_2 in errata else sorted(arms)):
        h = mul(h ^ fmix64(merkle), PHI_MUL)
    return h


def loop_hash(body_content: int, feedback: int, loopterm: int) -> int:
    """A loop's own hash: salted fmix64 of its body content, its feedback signature, XOR its
    termination hash. The body's Merkle hash is not included."""
    return fmix64(body_content ^ LOOP_SALT) ^ fmix64(feedback ^ FEEDBACK_SALT) ^ loopterm


def chained(own: int, next_merkle: int | None) -> int:
    """A node's Merkle hash: its own hash, folded with its continuation's when it has one."""
    return own if next_merkle is None else fmix64(own ^ next_merkle)
