"""Chapter 14: PyC's IR (include/pyc/ir.h), its verifier and its canonical text.

A module is a topologically ordered array of at most 1024 ops; an op's inputs are indices of
earlier ops. There are no blocks, phis or attributes. `verify` answers PyC's diagnostic code
(0 when valid): 2 no ops, then per op in order 3 more than 8 inputs, 4 a bad shape (rank over
8 or a dimension <= 0; rank 0 passes), 5 an input index outside 0..i-1. It checks neither kind,
dtype nor arity. Code 1 (a null module) cannot be sent over the wire.

On the wire a module is {"ops": [{kind, name, dtype, shape, inputs}]}. What PyC's struct cannot
hold is refused before verify (`invalid_input` naming the field): more than 1024 ops, a name
of 64 bytes or more, a dimension or index outside its C type. What it can hold but verify
rejects (9 inputs, rank 9, a zero dimension, a forward index) is verify's answer, not an
error; the canonical text and the fingerprint are defined only on verified modules.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..core.errors import InvalidInput

MAX_OPS = 1024
"""Ops a module holds. Real code: include/pyc/ir.h, PYC_IR_MAX_OPS."""
MAX_INPUTS = 8
"""Inputs an op names. Real code: include/pyc/ir.h, PYC_IR_MAX_INPUTS."""
MAX_DIMS = 8
"""Dimensions of a shape. Real code: include/pyc/ir.h, PYC_IR_MAX_DIMS."""
MAX_NAME = 64
"""Bytes of an op name including its NUL (63 characters). Real code: include/pyc/ir.h,
PYC_IR_MAX_NAME."""
WIRE_MAX_LIST = 64
"""The spec's own bound on a wire op's `inputs` and `shape` lists: enough to carry the
counts verify rejects (9 and up), no more."""


class DType(enum.IntEnum):
    """pyc_dtype."""

    UNKNOWN = 0
    F32 = 1
    F16 = 2
    BF16 = 3
    I32 = 4
    I8 = 5


DTYPE_BYTES = {DType.UNKNOWN: 0, DType.F32: 4, DType.F16: 2, DType.BF16: 2, DType.I32: 4,
               DType.I8: 1}
"""Bytes per element. Real code: the dtype size helper of the compiler."""


class OpKind(enum.IntEnum):
    """pyc_ir_op_kind; the canonical text spells each in lower case."""

    INPUT = 0
    CONST = 1
    MATMUL = 2
    ADD = 3
    RELU = 4
    GELU = 5
    REDUCE_SUM = 6
    LAYERNORM = 7
    OUTPUT = 8


KIND_BY_NAME = {k.name.lower(): k for k in OpKind}


class Code(enum.IntEnum):
    """pyc_ir_verify's diagnostic codes."""

    OK = 0
    NULL_MODULE = 1
    NO_OPS = 2
    TOO_MANY_INPUTS = 3
    BAD_SHAPE = 4
    BAD_INPUT_ID = 5


@dataclass(frozen=True)
class PycOp:
    """One op: kind, name (may be empty), dtype, shape (its length is the rank) and inputs."""

    kind: OpKind
    name: str = ""
    dtype: DType = DType.F32
    shape: tuple[int, ...] = ()
    inputs: tuple[int, ...] = ()


@dataclass(frozen=True)
class PycModule:
    ops: tuple[PycOp, ...] = ()


def verify(m: PycModule) -> Code:
    """The first failure, in PyC's order, or OK."""
    if not m.ops:  # 1. a module needs an op
        return Code.NO_OPS
    for i, op in enumerate(m.ops):  # 2. each op in order
        if len(op.inputs) > MAX_INPUTS:  # 2a. input count
            return Code.TOO_MANY_INPUTS
        if len(op.shape) > MAX_DIMS or any(d <= 0 for d in op.shape):  # 2b. shape
            return Code.BAD_SHAPE
        if any(j < 0 or j >= i for j in op.inputs):  # 2c. inputs precede the op
            return Code.BAD_INPUT_ID
    return Code.OK


def well_formed(m: PycModule) -> bool:
    """What verify accepts, stated as one predicate: some ops, each with at most 8 earlier
    inputs and at most 8 positive dimensions."""
    return bool(m.ops) and all(
        len(op.inputs) <= MAX_INPUTS and len(op.shape) <= MAX_DIMS
        and all(d > 0 for d in op.shape) and all(0 <= j < i for j in op.inputs)
        for i, op in enumerate(m.ops))


def module_from_wire(module: dict, path: str = "args.module") -> PycModule:
    """A decoded wire module as a PycModule; a field PyC's structs cannot hold is refused."""
    ops = []
    for i, op in enumerate(module["ops"]):
        where = f"{path}.ops[{i}]"
        kind = KIND_BY_NAME.get(op["kind"])
        if kind is None:
            raise InvalidInput(f"{where}.kind: {op['kind']!r} is not one of "
                               f"{', '.join(KIND_BY_NAME)}")
        if len(op["name"].encode("utf-8")) >= MAX_NAME:
            raise InvalidInput(f"{where}.name: {len(op['name'].encode('utf-8'))} bytes; a name "
                               f"holds at most {MAX_NAME - 1}")
        ops.append(PycOp(kind, op["name"], DType(op["dtype"]), tuple(op["shape"]),
                         tuple(op["inputs"])))
    return PycModule(tuple(ops))


def module_to_wire(m: PycModule) -> dict:
    return {"ops": [{"kind": op.kind.name.lower(), "name": op.name, "dtype": int(op.dtype),
                     "shape": list(op.shape), "inputs": list(op.inputs)} for op in m.ops]}


def require_verified(m: PycModule, path: str = "args.module") -> None:
    """The canonical text exists only for a module verify accepts."""
    code = verify(m)
    if code != Code.OK:
        raise InvalidInput(f"{path}: verify answers {int(code)} ({code.name.lower()}); only a "
                           "verified module has a canonical text")
