"""Chapter 9: the content hash of a region, the identity its compiled kernel is cached under.

Starting from PHI, each op mixes in its schema hash, then each input tensor (its sizes and
strides weighed by kDimMix and XOR-folded, then mixed with its packed dtype, device type and
device index), then up to 5 scalars (FNV-style). fmix64 finishes. Outputs, names, flags, slot
ids and data pointers are not hashed.
"""

from __future__ import annotations

from ...synthetic_bench import content_bench
from ..core import shapes as js
from ..core.bits import mask, mul, to_unsigned
from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import declare
from ..core.schema import HASH64, Field, Json, record
from ..core.strategies import st
from .hashing import FNV_PRIME, KDIMMIX, PHI, fmix64, wymix
from .tensor_meta import MAX_DIMS, TENSOR_META
from .trace_entry import TraceOp, trace_op_from_wire, trace_op_schema
from .trace_ring import MAX_SCALARS

E8_3, E8_4 = "E8.3", "E8.4"
_HASHED_ELSEWHERE = ("trace.build", "dag.merkle", "dag.diff", "dag.add_branch", "cdag.encode")
"""Ops that compute content hashes of their own regions."""


def _region(ops: list[dict]) -> dict:
    return {"nodes": [{"kind": "region", "ops": ops}], "root": 0}


def _new_region(ops: list[dict]) -> dict:
    """dag.add_branch args whose new arm is a region of `ops`."""
    return {"dag": {"nodes": [{"kind": "terminal"}, {"kind": "region", "next": 0,
                                                     "ops": [{"schema_hash": "0x3"}]}],
                    "root": 1}, "divergence_point": 1, "existing_suffix": None,
            "new_ops": ops, "old_value": 0, "new_value": 1, "guard": {"kind": 1, "op_index": 0}}


def _witnesses(ops: list[dict], other: list[dict], spec: str, seed: str,
               cdag: tuple[list[dict], str, str]) -> tuple[dict, ...]:
    """A content-hash witness on every op that hashes regions: `ops` hashes to `spec` and to
    `seed` under the erratum; `other` hashes like `ops` under it only. cdag: (ops, spec file,
    seed file)."""
    old = {"replays": {"0": ["0x5ab46c0941861212"]}}
    return (
        {"op": "trace.build", "args": {"ops": ops}, "spec": {"content_hash": spec},
         "seed": {"content_hash": seed}},
        {"op": "dag.merkle", "args": {"dag": _region(ops)}, "spec": {"merkle": [spec]},
         "seed": {"merkle": [seed]}},
        {"op": "dag.diff", "args": {"a": _region(ops), "b": _region(other)},
         "spec": {"kind": 2, "depth": 0}, "seed": {"kind": 0, "depth": 0}},
        {"op": "dag.add_branch", "args": _new_region(ops),
         "spec": {"replays": old["replays"] | {"1": [spec]}},
         "seed": {"replays": old["replays"] | {"1": [seed]}}},
        {"op": "cdag.encode", "args": {"region": {"ops": cdag[0], "has_plan": False}},
         "spec": {"hex": cdag[1]}, "seed": {"hex": cdag[2]}},
    )



def mix(h: int, x: int, errata: frozenset[str] = NO_ERRATA) -> int:
    """wymix, except that a zero operand counts as PHI: wymix(h, 0) = wymix(0, x) = 0 would
    erase the whole chain before it (the code keeps the zero: erratum E8.3)."""
    if E8_3 in errata:
        return wymix(h, x)
    return wymix(h or PHI, x or PHI)


def packed_meta(m: dict, errata: frozenset[str] = NO_ERRATA) -> int:
    """dtype | device_type << 8 | device_idx << 16, each one byte. The code sign-extends
    dtype and device_type, so Undefined (-1) sets every bit (erratum E8.4)."""
    if E8_4 in errata:
        return (to_unsigned(m["dtype"], 64) | to_unsigned(m["device_type"], 64) << 8
                | to_unsigned(m["device_idx"], 8) << 16) & mask(64)
    return to_unsigned(m["dtype"], 8) | to_unsigned(m["device_type"], 8) << 8 | \
        to_unsigned(m["device_idx"], 8) << 16


def dims_fold(m: dict) -> int:
    """XOR over the used dimensions of sizes[d] * kDimMix[d] and strides[d] * kDimMix[d + 8]."""
    h = 0
    for d in range(m["ndim"]):
        h ^= mul(to_unsigned(m["sizes"][d], 64), KDIMMIX[d])
        h ^= mul(to_unsigned(m["strides"][d], 64), KDIMMIX[d + MAX_DIMS])
    return h


def tensor_fold(h: int, m: dict, errata: frozenset[str] = NO_ERRATA) -> int:
    """Mix one input tensor into the chain."""
    return mix(h ^ dims_fold(m), packed_meta(m, errata), errata)


def scalars_hashed(op: TraceOp) -> list[int]:
    """The scalars the hash reads: up to 5, none when the array is null."""
    if op.scalar_args is None:
        return []
    return op.scalar_args[: min(op.num_scalar_args, MAX_SCALARS)]


def fold_op(h: int, op: TraceOp, errata: frozenset[str] = NO_ERRATA) -> int:
    """One op's part of the chain: schema, inputs, scalars."""
    h = mix(h, op.schema_hash, errata)  # 1. the op
    for m in op.inputs:  # 2. its input tensors
        h = tensor_fold(h, m, errata)
    for s in scalars_hashed(op):  # 3. its scalars
        h = mul(h ^ to_unsigned(s, 64), FNV_PRIME)
    return h


def compute_content_hash(ops: list[TraceOp], errata: frozenset[str] = NO_ERRATA) -> int:
    """fmix64 of the chain over every op, started at PHI."""
    h = PHI
    for op in ops:
        h = fold_op(h, op, errata)
    return fmix64(h)


def check_op_for_hash(op: TraceOp, path: str) -> None:
    """What the hash reads must exist: ndim <= 8, and as many scalars as it will read."""
    for j, m in enumerate(op.inputs):
        if m["ndim"] > MAX_DIMS:
            raise InvalidInput(f"{path}.inputs[{j}].ndim: {m['ndim']} > {MAX_DIMS}")
    if op.scalar_args is not None and len(op.scalar_args) < min(op.num_scalar_args, 5):
        raise InvalidInput(f"{path}.scalar_args: {len(op.scalar_args)} given, "
                           f"num_scalar_args says {op.num_scalar_args}")


TRACE_OPS = js.array(trace_op_schema())
"""What `trace_ops_from_wire` accepts."""


def trace_ops_from_wire(ops: object, path: str = "args.ops") -> list[TraceOp]:
    """Trace ops the content hash can fold, from their wire form at `path`."""
    if not isinstance(ops, list):
        raise InvalidInput(f"{path}: expected a list of trace ops")
    out = [trace_op_from_wire(o, f"{path}[{i}]") for i, o in enumerate(ops)]
    for i, op in enumerate(out):
        check_op_for_hash(op, f"{path}[{i}]")
    return out


def content_hash_op(ops: object, errata: frozenset[str] = NO_ERRATA) -> dict:
    return {"out": compute_content_hash(trace_ops_from_wire(ops), errata)}


@st.composite
def regions(draw) -> dict:
    """Regions of 0-6 ops with 0-3 inputs each, random shapes, dtypes, devices, scalars."""
    from ..core.layout_ops import to_wire, values_strategy

    def meta() -> st.SearchStrategy:
        return values_strategy(TENSOR_META).map(lambda m: m | {"ndim": m["ndim"] % 9})

    ops = []
    for _ in range(draw(st.integers(0, 6))):
        inputs = [to_wire(TENSOR_META, draw(meta())) for _ in range(draw(st.integers(0, 3)))]
        scalars = draw(st.none() | st.lists(st.integers(-(2**63), 2**63 - 1), max_size=7))
        op = {"schema_hash": f"0x{draw(st.integers(0, 2**64 - 1)):x}", "inputs": inputs,
              "scalar_args": scalars}
        if scalars is not None and draw(st.booleans()):
            op["num_scalar_args"] = draw(st.integers(0, len(scalars)))
        ops.append(op)
    return {"ops": ops}


_CDAG_HEAD = "4741444307000000" + "00" * 8
"""The first 16 bytes of a region file: magic, version, kind REGION and pad."""
_E8_3_BODY = (
    "0200000001000000000000000000000000000000000100000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000")
"""What follows the hashes in the file of the E8.3 witness's ops."""
_E8_4_BODY = (
    "0100000038010000000000000000000000000000003801000000000000000000000000000000000000000000"
    "0000000000000000000100000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000038f7e8000000000000000000000000000000000000"
    "00000000000000000000ffffffffffffffff")
"""What follows the hashes in the file of the E8.4 witness's op (the real code's
content hash of that op, under its packing, is 0x936f864631821f42)."""


erratum(
    E8_3, "A zero operand of wymix erases the content hash chain before it",
    seed="crucible@8d2680a2", location="include/crucible/MerkleDag.h compute_content_hash",
    ops=("dag.content_hash", *_HASHED_ELSEWHERE),
    witness={"args": {"ops": [{"schema_hash": "0x1"}, {"schema_hash": "0x0"}]},
             "spec": {"out": "0xfde4aebe7dd3e418"}, "seed": {"out": "0x0000000000000000"}},
    also=_witnesses(
        [{"schema_hash": "0x1"}, {"schema_hash": "0x0"}],
        [{"schema_hash": "0x2"}, {"schema_hash": "0x0"}],
        "0xfde4aebe7dd3e418", "0x0000000000000000",
        ([{"schema_hash": "0x1"}, {"schema_hash": "0x0"}],
         _CDAG_HEAD + "1d74cf7c81d404a9" + "18e4d37dbeaee4fd" + _E8_3_BODY,
         _CDAG_HEAD + "00" * 16 + _E8_3_BODY)),
    flag="result",
    detail="wymix(h, 0) = 0 for every h (proof obligation PO8.3), so an op whose schema hash "
           "or packed meta is 0 resets the chain and regions that differ only before it get "
           "the same content hash, i.e. the same compiled kernel. The code knows the hazard "
           "(its loop hash avoids wymix for this reason) but the content hash does not. The "
           "spec mixes a zero operand as PHI; every other input hashes as in the code.",
)

erratum(
    E8_4, "dtype and device type are sign-extended into the packed meta of the content hash",
    seed="crucible@8d2680a2", location="include/crucible/MerkleDag.h compute_content_hash",
    ops=("dag.content_hash", *_HASHED_ELSEWHERE),
    witness={"args": {"ops": [{"schema_hash": "0x1", "inputs": [
                 {"ndim": 0, "dtype": -1, "device_type": 1, "device_idx": 0}]}]},
             "spec": {"out": "0x04ab58762271b2d0"}, "seed": {"out": "0x64b5720b4b825f21"}},
    also=_witnesses(
        [{"schema_hash": "0x1", "inputs": [{"ndim": 0, "dtype": -1, "device_type": 1,
                                               "device_idx": 0}]}],
        [{"schema_hash": "0x1", "inputs": [{"ndim": 0, "dtype": -1, "device_type": 2,
                                               "device_idx": 0}]}],
        "0x04ab58762271b2d0", "0x64b5720b4b825f21",
        ([{"schema_hash": "0x138", "inputs": [{"ndim": 0, "dtype": 56, "device_type": -9,
                                               "device_idx": -24}]}],
         _CDAG_HEAD + "8d84ec57e1f399bf" + "3a31bbf04867a27e" + _E8_4_BODY,
         _CDAG_HEAD + "de736b23cc74a2fe" + "421f823146866f93" + _E8_4_BODY)),
    flag="result",
    detail="static_cast<uint64_t>(std::to_underlying(dtype)) widens the int8 with its sign, so "
           "ScalarType::Undefined (-1) sets bits 8..63 and covers the device type and index: "
           "Undefined tensors on different devices hash alike. The spec packs each as a byte, "
           "as it already does for device_idx.",
)

declare(
    "dag.content_hash", chapter=9,
    summary="Content hash of a region's ops (schema, input shapes/strides/dtype/device, "
            "scalars).",
    args=record(ops=Field(Json("[trace op]", TRACE_OPS), "the region's ops, as content_merkle "
                                              "region_inputs in the vectors")),
    result=record(out=HASH64), spec=(compute_content_hash,), errata=(E8_3, E8_4),
    domain=regions, bench=content_bench,
    edges=lambda: [{"ops": []}, {"ops": [{"schema_hash": "0x0"}]},
                   {"ops": [{"schema_hash": "0x1"}, {"schema_hash": "0x0"}]}],
)
