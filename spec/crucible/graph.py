"""Chapter 14: the Graph IR: 64-byte nodes, micro-op bodies and extern calls."""

from __future__ import annotations

import enum

from ..core.layout import Member, array, enum_of, hash32, i8, id32, pad, ptr, struct, u8, u16, u32
from .ckernel import CKernelId
from .types import ScalarType


class NodeKind(enum.IntEnum):
    """Kind of a graph node."""

    INPUT = 0
    CONSTANT = 1
    POINTWISE = 2
    REDUCTION = 3
    SCAN = 4
    SORT = 5
    EXTERN = 6
    TEMPLATE = 7
    MUTATION = 8
    NOP = 9


class ReduceOp(enum.IntEnum):
    """Combiner of a reduction node."""

    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    ARGMAX = 4
    ARGMIN = 5
    ANY = 6
    XOR_SUM = 7
    WELFORD = 8
    DOT = 9


class ReduceHint(enum.IntEnum):
    """Where a reduction's axis lies."""

    DEFAULT = 0
    INNER = 1
    OUTER = 2


class NodeFlags(enum.IntFlag):
    """Bits of GraphNode.flags; REALIZED is never set at 8d2680a2."""

    DEAD = 0x01
    VISITED = 0x02
    FUSED = 0x04
    REALIZED = 0x08


MicroOp = enum.IntEnum("MicroOp", [
    "LOAD", "STORE", "ADD", "SUB", "MUL", "TRUEDIV", "FLOORDIV", "MOD", "NEG", "ABS",
    "RECIPROCAL", "SQUARE", "EQ", "NE", "LT", "LE", "GT", "GE", "EXP", "LOG", "LOG2", "SQRT",
    "RSQRT", "SIN", "COS", "TAN", "ASIN", "ACOS", "ATAN", "SINH", "COSH", "TANH", "ASINH", "ERF",
    "CEIL", "FLOOR", "TRUNC", "ROUND", "SIGMOID", "RELU", "BIT_AND", "BIT_OR", "BIT_XOR",
    "BIT_NOT", "LSHIFT", "RSHIFT", "AND", "OR", "NOT", "TO_DTYPE", "CONSTANT", "WHERE", "REDUCE",
    "INDEX_EXPR"], start=0)
MicroOp.__doc__ = "Opcode of one instruction of a compute body (u8, 54 opcodes)."

_scalar_type = enum_of(ScalarType, i8)

INST = struct("Inst", [
    Member("op", enum_of(MicroOp, u8), default=MicroOp.LOAD),
    Member("dtype", _scalar_type, default=ScalarType.Undefined),
    Member("operands", array(u16, 3)),
], size=8, align=2, chapter=14, doc="One SSA micro-op: 8 bytes.")

COMPUTE_BODY = struct("ComputeBody", [
    Member("ops", ptr, doc="Inst[num_ops]"),
    Member("num_ops", u16),
    Member("num_loads", u16),
    Member("store_op", u16),
    Member("pad", pad(2)),
    Member("aux", ptr, doc="int64[num_ops] or null"),
], size=24, align=8, chapter=14, doc="Micro-op body of a pointwise or reduction node.")

EXTERN_INFO = struct("ExternInfo", [
    Member("python_kernel_name", ptr),
    Member("cpp_kernel_name", ptr),
    Member("constant_args", ptr),
    Member("num_constant_args", u16),
], size=32, align=8, chapter=14, doc="Body of an extern node; bytes 26..31 are padding.")

GRAPH_NODE = struct("GraphNode", [
    Member("id", id32),
    Member("kind", enum_of(NodeKind, u8), default=NodeKind.NOP),
    Member("flags", u8, doc="NodeFlags"),
    Member("ndim", u8),
    Member("nred", u8),
    Member("dtype", _scalar_type, default=ScalarType.Undefined),
    Member("src_dtype", _scalar_type, default=ScalarType.Undefined),
    Member("device_idx", i8, default=-1),
    Member("reduce_op", enum_of(ReduceOp, u8), default=ReduceOp.SUM),
    Member("reduce_hint", enum_of(ReduceHint, u8), default=ReduceHint.DEFAULT),
    Member("pad0", pad(1)),
    Member("num_inputs", u16),
    Member("size", ptr, doc="const Expr*[ndim + nred]"),
    Member("stride", ptr),
    Member("body", ptr, doc="ComputeBody* or ExternInfo*"),
    Member("inputs", ptr, doc="GraphNode*[num_inputs]"),
    Member("num_uses", u16),
    Member("num_outputs", u16, default=1),
    Member("schedule_order", u32),
    Member("group_hash", hash32),
    Member("fused_group_id", u32, doc="0 = unfused"),
], size=64, align=8, chapter=14, doc="One computation: one cache line.")


def inst_word(op: int = MicroOp.LOAD, dtype: int = ScalarType.Undefined,
              operands: tuple[int, int, int] = (0, 0, 0)) -> int:
    """An Inst as its little-endian u64: op | (u8)dtype << 8 | o0 << 16 | o1 << 32 | o2 << 48."""
    o0, o1, o2 = operands
    return op | (dtype & 0xFF) << 8 | o0 << 16 | o1 << 32 | o2 << 48


def classify_node_kind(kernel_id: int) -> NodeKind:
    """The node kind lowering gives a CKernelId, rules in precedence order: cumulative sum and
    associative scan are SCAN; COPY_ is MUTATION; 25..56 POINTWISE; 57..64 REDUCTION; 73..88
    (views) NOP; everything else, OPAQUE included, EXTERN."""
    if kernel_id in (CKernelId.REDUCE_CUMSUM, CKernelId.ASSOC_SCAN):
        return NodeKind.SCAN
    if kernel_id == CKernelId.COPY_:
        return NodeKind.MUTATION
    if CKernelId.ACT_RELU <= kernel_id <= CKernelId.EWISE_FILL:
        return NodeKind.POINTWISE
    if CKernelId.REDUCE_SUM <= kernel_id <= CKernelId.REDUCE_TOPK:
        return NodeKind.REDUCTION
    if CKernelId.VIEW <= kernel_id <= CKernelId.UNFOLD:
        return NodeKind.NOP
    return NodeKind.EXTERN


NODE_KIND_OF = tuple(classify_node_kind(k) for k in range(CKernelId.NUM_KERNELS))
"""classify_node_kind for every CKernelId 0..146. Real code: `Graph.h`, `classify_node_kind`."""
