"""Chapter 14: PyC's canonical module text and its fingerprint (compiler_api.c).

One line per op: `<index>:<kind>:<name>:dtype=<ordinal>:shape=<d0>x<d1>...:inputs=<i0>,<i1>...`
and a newline. The fingerprint is FNV-1a 64 of that text with PyC's offset basis,
1469598103934665603: the standard basis 14695981039346656037 with its last digit dropped. It
is a definition (every PyC fingerprint and cache key depends on it), so the spec keeps it.

PyC escapes nothing in a name, so a name holding ':' or a newline can make two modules one
text (E14.1). The spec writes such names with a backslash escape (`\\:`, `\\n`, `\\\\`); every
other name, and so every fingerprint of a module without those bytes, is PyC's.
"""

from __future__ import annotations

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import I32, I64, Field, Int, List, Utf8, record
from ..core.strategies import st
from ..crucible.hashing import fnv1a
from .ir import (
    MAX_DIMS,
    MAX_INPUTS,
    MAX_OPS,
    WIRE_MAX_LIST,
    DType,
    OpKind,
    PycModule,
    PycOp,
    module_from_wire,
    module_to_wire,
    require_verified,
    verify,
)
from .wire import PYC_SEED

E14_1, E14_8 = "E14.1", "E14.8"
PYC_FNV_OFFSET = 1469598103934665603
"""PyC's FNV-1a 64 offset basis. Real code: src/compiler/compiler_api.c, fnv1a64."""
_ESCAPES = {"\\": "\\\\", ":": "\\:", "\n": "\\n"}


def fnv1a64(data: bytes) -> int:
    """FNV-1a 64 (chapter 8) started from PyC's basis."""
    return fnv1a(data, PYC_FNV_OFFSET)


def name_text(name: str, errata: frozenset[str] = NO_ERRATA) -> str:
    """A name as the canonical text writes it: raw under E14.1, escaped otherwise."""
    if E14_1 in errata:
        return name
    return "".join(_ESCAPES.get(c, c) for c in name)


def serialize(m: PycModule, errata: frozenset[str] = NO_ERRATA) -> str:
    """The canonical text of a verified module."""
    lines = []
    for i, op in enumerate(m.ops):
        shape = "x".join(str(d) for d in op.shape)
        inputs = ",".join(str(j) for j in op.inputs)
        lines.append(f"{i}:{op.kind.name.lower()}:{name_text(op.name, errata)}:"
                     f"dtype={int(op.dtype)}:shape={shape}:inputs={inputs}\n")
    return "".join(lines)


def fingerprint(m: PycModule, errata: frozenset[str] = NO_ERRATA) -> int:
    """fnv1a64 of the canonical text."""
    return fnv1a64(serialize(m, errata).encode("utf-8"))


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

_OP = record(kind=Field(Utf8(), "input, const, matmul, add, relu, gelu, reduce_sum, layernorm "
                                "or output"),
             name=Field(Utf8(c_string=True), "at most 63 bytes; empty is allowed", ""),
             dtype=Field(Int(32, signed=True), "0 unknown, 1 f32, 2 f16, 3 bf16, 4 i32, 5 i8"),
             shape=Field(List(I64, WIRE_MAX_LIST), "dimensions; the rank is the length"),
             inputs=Field(List(I32, WIRE_MAX_LIST), "indices of earlier ops", []))
MODULE = record(ops=Field(List(_OP, MAX_OPS), "the ops, topologically ordered"))


def check_module(args: dict) -> None:
    """A module's dtypes are pyc_dtype ordinals and its fields fit PyC's structs."""
    for i, op in enumerate(args["module"]["ops"]):
        if op["dtype"] not in tuple(DType):
            raise InvalidInput(f"args.module.ops[{i}].dtype: {op['dtype']} is not a pyc_dtype")
    module_from_wire(args["module"])


def verify_op(module: dict) -> dict:
    return {"code": int(verify(module_from_wire(module)))}


def require_text(m: PycModule, errata: frozenset[str]) -> None:
    """The spec writes the text of a verified module only; PyC (E14.8) of any module whose
    struct holds it: at most 8 dimensions and 8 inputs an op."""
    if E14_8 not in errata:
        require_verified(m)
        return
    for i, op in enumerate(m.ops):
        if len(op.shape) > MAX_DIMS or len(op.inputs) > MAX_INPUTS:
            raise InvalidInput(f"args.module.ops[{i}]: more than {MAX_DIMS} dimensions or "
                               f"{MAX_INPUTS} inputs, which PyC's op struct cannot hold")


def serialize_op(module: dict, errata: frozenset[str] = NO_ERRATA) -> dict:
    m = module_from_wire(module)
    require_text(m, errata)
    return {"text": serialize(m, errata)}


def fingerprint_op(module: dict, errata: frozenset[str] = NO_ERRATA) -> dict:
    m = module_from_wire(module)
    require_text(m, errata)
    return {"out": fingerprint(m, errata)}


def _op(kind: OpKind, name: str, shape: tuple[int, ...], inputs: tuple[int, ...] = ()) -> PycOp:
    return PycOp(kind, name, DType.F32, shape, inputs)


GOLDEN_SOURCE = PycModule((
    _op(OpKind.INPUT, "lhs", (2, 3)), _op(OpKind.INPUT, "rhs", (3, 4)),
    _op(OpKind.MATMUL, "", (2, 4), (0, 1)), _op(OpKind.RELU, "", (2, 4), (2,)),
    _op(OpKind.OUTPUT, "", (2, 4), (3,))))
"""PyC's pass-golden module (tests/compiler_next/test_pass_golden.c) before the passes."""
GOLDEN_AFTER_NO_FUSION = PycModule((
    *GOLDEN_SOURCE.ops[:2], _op(OpKind.MATMUL, "op_2", (2, 4), (0, 1)),
    _op(OpKind.RELU, "op_3", (2, 4), (2,)), _op(OpKind.OUTPUT, "op_4", (2, 4), (3,))))
"""The same after PyC's passes with fusion off (empty names become op_<index>)."""
GOLDEN_AFTER = PycModule((
    *GOLDEN_SOURCE.ops[:2], _op(OpKind.MATMUL, "fused_op_2_op_3", (2, 4), (0, 1)),
    _op(OpKind.OUTPUT, "op_4", (2, 4), (2,))))
"""The same after PyC's passes with fusion on (tests/compiler_next/golden/
simple_pipeline_after.txt)."""


def wire_op(kind: str, name: str = "", shape: list | None = None,
             inputs: list | None = None, dtype: int = 1) -> dict:
    return {"kind": kind, "name": name, "dtype": dtype, "shape": shape or [],
            "inputs": inputs or []}


def edges() -> list[dict]:
    """PyC's golden modules, then the edges of verify."""
    out = [{"module": module_to_wire(m)} for m in (GOLDEN_SOURCE, GOLDEN_AFTER_NO_FUSION,
                                                   GOLDEN_AFTER)]
    out += [{"module": {"ops": [wire_op("input", "x", [])]}},
            {"module": {"ops": [wire_op("input", "a:b", [2]), wire_op("output", "y\nz", [2],
                                                                        [0])]}},
            {"module": {"ops": [wire_op("gelu", "g" * 63, [1] * 8, [], 0)]}}]
    return out


def verify_edges() -> list[dict]:
    """One module per verify code, and the boundaries between them."""
    ok = wire_op("input", "x", [2])
    return [{"module": {"ops": []}},
            {"module": {"ops": [ok, wire_op("add", "", [2], [0] * (MAX_INPUTS + 1))]}},
            {"module": {"ops": [ok, wire_op("add", "", [2], [0] * MAX_INPUTS)]}},
            {"module": {"ops": [wire_op("input", "x", [1] * 9)]}},
            {"module": {"ops": [wire_op("input", "x", [2, 0])]}},
            {"module": {"ops": [wire_op("input", "x", [-1])]}},
            {"module": {"ops": [wire_op("matmul", "", [2], [0])]}},
            {"module": {"ops": [ok, wire_op("relu", "", [2], [1])]}},
            {"module": {"ops": [ok, wire_op("relu", "", [2], [-1])]}},
            {"module": {"ops": [ok, wire_op("matmul", "", [2], [0])]}},
            *edges()]


def modules(verified: bool = False) -> st.SearchStrategy:
    """Small wire modules; with `verified`, only ones verify accepts."""
    names = st.text(st.sampled_from("abxy_:0\n"), max_size=6)
    dims = st.integers(1, 64) if verified else st.integers(-1, 64)

    @st.composite
    def build(draw) -> dict:
        n = draw(st.integers(1 if verified else 0, 6))
        ops = []
        for i in range(n):
            lo, hi = (0, i - 1) if verified else (-1, i + 1)
            inputs = draw(st.lists(st.integers(lo, hi), max_size=3 if verified and i else
                                   0 if verified else 10)) if hi >= lo else []
            ops.append(wire_op(draw(st.sampled_from([k.name.lower() for k in OpKind])),
                                draw(names), draw(st.lists(dims, max_size=8 if verified else
                                                           10)), inputs,
                                draw(st.sampled_from(list(DType)))))
        return {"module": {"ops": ops}}

    return build()


_INVALID = (
    InvalidCase("more than 1024 ops", lambda: st.just(
        {"module": {"ops": [wire_op("input", "x", [1])] * (MAX_OPS + 1)}})),
    InvalidCase("a name of 64 bytes", lambda: st.just(
        {"module": {"ops": [wire_op("input", "n" * 64, [1])]}})),
    InvalidCase("an unknown kind", lambda: st.just(
        {"module": {"ops": [wire_op("conv", "x", [1])]}})),
    InvalidCase("a dimension of 2^63", lambda: st.just(
        {"module": {"ops": [wire_op("input", "x", [2**63])]}})),
    InvalidCase("a dtype outside pyc_dtype", lambda: st.just(
        {"module": {"ops": [wire_op("input", "x", [1], [], 9)]}})),
)
_NOT_BATCHED = ("one module is one ordered pass over at most 1024 small ops: nothing to batch "
                "across a device")
_NO_KERNEL = ("a string built from at most 1024 short lines, hashed once: the text, not the "
              "hash, is the work")

declare(
    "pyc.verify", chapter=14, summary="PyC's diagnostic code of a module (0 when it verifies).",
    args=record(module=Field(MODULE, "the module")),
    result=record(code=Field(Int(32), "0 ok, 2 no ops, 3 too many inputs, 4 bad shape, "
                                      "5 bad input id")),
    spec=(verify,), check=check_module, domain=modules, edges=verify_edges, invalid=_INVALID,
    not_applicable={"numba": _NO_KERNEL, "cupy": _NOT_BATCHED},
)
declare(
    "pyc.serialize", chapter=14, summary="The canonical text of a verified module, the "
                                        "pre-image of its fingerprint.",
    args=record(module=Field(MODULE, "a module verify accepts")),
    result=record(text=Field(Utf8(), "one line per op")),
    spec=(serialize,), check=check_module, domain=lambda: modules(True), edges=edges,
    invalid=(*_INVALID, InvalidCase("a module verify rejects", lambda: st.just(
        {"module": {"ops": []}}))), errata=(E14_1, E14_8),
    not_applicable={"numba": _NO_KERNEL, "cupy": _NOT_BATCHED},
)
declare(
    "pyc.fingerprint", chapter=14, summary="FNV-1a 64, from PyC's offset basis, of the "
                                          "canonical text.",
    args=record(module=Field(MODULE, "a module verify accepts")),
    result=record(out=Field(Int(64, hex=True), "the fingerprint")),
    spec=(fingerprint, fnv1a64), check=check_module, domain=lambda: modules(True), edges=edges,
    invalid=(*_INVALID, InvalidCase("a module verify rejects", lambda: st.just(
        {"module": {"ops": [wire_op("input", "x", [0])]}}))), errata=(E14_1, E14_8),
    not_applicable={"numba": _NO_KERNEL, "cupy": _NOT_BATCHED},
)

_TWINS = ({"module": {"ops": [wire_op("input", "a:dtype=1:shape=1:inputs=\n1:input:b", [1])]}},
          {"module": {"ops": [wire_op("input", "a", [1]), wire_op("input", "b", [1])]}})
erratum(
    E14_1, "Names are not escaped, so two modules can share one text and one fingerprint",
    seed="pyc@fdf1563", location="src/compiler/ir/ir.c pyc_ir_serialize",
    ops=("pyc.serialize", "pyc.fingerprint", "pyc.cache_key", "pyc.cache.simulate"),
    witness={"args": _TWINS[0],
             "spec": {"text": "0:input:a\\:dtype=1\\:shape=1\\:inputs=\\n1\\:input\\:b:dtype=1:"
                              "shape=1:inputs=\n"},
             "seed": {"text": "0:input:a:dtype=1:shape=1:inputs=\n1:input:b:dtype=1:shape=1:"
                              "inputs=\n"}},
    flag="result",
    also=({"op": "pyc.fingerprint", "args": _TWINS[0], "spec": {"out": "0x1567db4f71319765"},
           "seed": {"out": "0x196e17e8e38225ed"}},
          {"op": "pyc.cache_key", "args": {"module": _TWINS[0]["module"]},
           "spec": {"out": "0x15f92b65c54f16a4"}, "seed": {"out": "0xddf3da4397ddc800"}},
          {"op": "pyc.cache.simulate",
           "args": {"steps": [{"module": _TWINS[1]["module"]}, {"module": _TWINS[0]["module"]}]},
           "spec": {"results": [
               {"key": "0xddf3da4397ddc800", "hit": False, "slot": 0, "plan_of": 0},
               {"key": "0x15f92b65c54f16a4", "hit": False, "slot": 1, "plan_of": 1}]},
           "seed": {"results": [
               {"key": "0xddf3da4397ddc800", "hit": False, "slot": 0, "plan_of": 0},
               {"key": "0xddf3da4397ddc800", "hit": True, "slot": 0, "plan_of": 0}]}}),
    detail="The name is printed with %s between colons and the line ends in a newline, so a "
           "name holding ':dtype=1:shape=1:inputs=\\n1:input:b' makes a one-op module print "
           "exactly as the two-op module [input a [1], input b [1]]: one text, one fingerprint, "
           "one compile-cache key for different modules. The spec escapes backslash, colon and "
           "newline in names; names without them print as in PyC.",
)

_UNVERIFIED = {"module": {"ops": [wire_op("input", "x", [-1]), wire_op("relu", "", [2], [3])]}}
erratum(
    E14_8, "The canonical text and the fingerprint are written for modules verify rejects",
    seed=PYC_SEED, location="src/compiler/ir/ir.c pyc_ir_serialize",
    ops=("pyc.serialize", "pyc.fingerprint"),
    witness={"args": {"module": {"ops": []}}, "spec": {"error": "invalid_input"},
             "seed": {"text": ""}},
    flag="result",
    also=({"op": "pyc.fingerprint", "args": {"module": {"ops": []}},
           "spec": {"error": "invalid_input"}, "seed": {"out": "0x14650fb0739d0383"}},
          {"op": "pyc.serialize", "args": _UNVERIFIED, "spec": {"error": "invalid_input"},
           "seed": {"text": "0:input:x:dtype=1:shape=-1:inputs=\n"
                            "1:relu::dtype=1:shape=2:inputs=3\n"}}),
    detail="pyc_ir_serialize checks only its buffer, and the fingerprint hashes whatever it "
           "writes, so a module with no ops has the text \"\" and the fingerprint of the empty "
           "string (PyC's FNV basis), a dimension of -1 prints as -1 and a forward input id as "
           "itself. Compile verifies before it fingerprints, so only a direct caller meets "
           "them. The spec defines the text on verified modules only; under E14.8 it writes "
           "any module PyC's op struct holds (at most 8 dimensions and 8 inputs an op).",
)
