"""Chapter 8: the per-op identity hashes the Vessel (the framework adapter) records.

SchemaHash is FNV-1a of the op name exactly as PyTorch spells it ("aten::mm",
"aten::add.Tensor": the default overload has no suffix). ShapeHash is one FNV-1a chain over the
input tensors: per tensor its ndim as one byte, then its sizes as little-endian int64.
ScopeHash is FNV-1a of the module path from `named_modules()`.

The empty path: `named_modules()` names the root module "", and the native Vessel records it
as "<root>" instead, so every path a recorder emits is non-empty and FNV-1a("") (the offset
basis 0xcbf29ce484222325) never stands for a module. ScopeHash 0 is the strong-hash 'unset':
no module scope at all (outside any tracked module). The op `hash.scope` therefore maps null to
0 and any string, "" included, to its FNV-1a, exactly as the C function does.
"""

from __future__ import annotations

from ..core.bits import le_bytes
from ..core.errata import NO_ERRATA, erratum
from ..core.registry import InvalidCase, declare
from ..core.schema import HASH64, I64, Field, List, Optional, Utf8, record
from ..core.strategies import st
from .hashing import FNV_OFFSET, fnv1a

ROOT_SCOPE = "<root>"
"""The path the native Vessel records for the root module."""

MAX_SHAPE_NDIM = 255
"""The C API carries each tensor's ndim as one byte. Real code: `vessel_api.h`, the C struct's
ndim field."""

E8_1 = "E8.1"


def schema_hash(name: str | None) -> int:
    """FNV-1a of the op name's UTF-8 bytes; the C API maps a null name to 0."""
    return 0 if name is None else fnv1a(name.encode("utf-8"))


def shape_hash(shapes: list[list[int]], errata: frozenset[str] = NO_ERRATA) -> int:
    """ShapeHash over the input tensors' sizes, in argument order."""
    if E8_1 in errata and shapes and all(len(sizes) == 0 for sizes in shapes):
        return FNV_OFFSET
    h = FNV_OFFSET
    for sizes in shapes:
        h = fnv1a(bytes([len(sizes)]), h)  # 1. ndim, one byte: separates the tensors
        for size in sizes:
            h = fnv1a(le_bytes(size, 8), h)  # 2. each size as int64, little-endian
    return h


def scope_hash(path: str | None) -> int:
    """FNV-1a of the module path's UTF-8 bytes; null (no module scope) is 0."""
    return 0 if path is None else fnv1a(path.encode("utf-8"))


erratum(
    E8_1, "The shape-hash C API returns the offset basis when every tensor is 0-d",
    seed="crucible@8d2680a2",
    location="vessel/torch/vessel_api.cpp crucible_hash_shapes",
    ops=("hash.shape",),
    witness={"args": {"shapes": [[]]}, "spec": {"out": "0xaf63bd4c8601b7df"},
             "seed": {"out": "0xcbf29ce484222325"}},
    flag="result",
    detail="crucible_hash_shapes returns FNV_OFFSET early when the sizes pointer is null, which "
           "is what a caller passes when no tensor has a dimension (std::vector::data() of an "
           "empty vector). The ndim separator bytes are then not hashed, so one 0-d input, two "
           "0-d inputs and no input at all hash alike, while the native recorder hashes the "
           "0-d tensor as fnv1a(0x00).",
)

erratum(
    "E8.2", "The native fallback's comment names 'aten::mm.default'; it hashes 'aten::mm'",
    seed="crucible@8d2680a2", location="vessel/torch/crucible_fallback.cpp",
    ops=("hash.schema",),
    witness={"args": {"name": "aten::mm"}, "hashed": "aten::mm", "comment": "aten::mm.default"},
    flag="doc",
    detail="The hashed string is the operator name, then '.' and the overload name only when "
           "the overload name is non-empty, which is exactly PyTorch's OpOverload.name(): the "
           "default overload has no suffix. Both recorders agree; only the comment is wrong.",
)

_NAME = Utf8(c_string=True)
_BENCH_OPS = ("aten::mm", "aten::add.Tensor", "aten::addmm", "aten::relu_", "aten::_softmax",
              "aten::convolution", "aten::native_layer_norm", "aten::t")


def random_op_names(n: int, rng) -> list[str]:
    """Op names as a recorder sees them (bench inputs)."""
    return [_BENCH_OPS[i] for i in rng.integers(0, len(_BENCH_OPS), size=n)]


def random_shapes(n: int, rng) -> list[list[list[int]]]:
    """Input shapes of n ops: 1-3 tensors of 0-4 dimensions (bench inputs)."""
    return [[[int(x) for x in rng.integers(1, 4097, size=rng.integers(0, 5))]
             for _ in range(rng.integers(1, 4))] for _ in range(n)]
_SHAPES = List(List(I64, max_len=MAX_SHAPE_NDIM))

declare(
    "hash.schema", chapter=8, summary="SchemaHash: FNV-1a of the op name (null gives 0).",
    args=record(name=Field(Optional(_NAME, ""), "op name, e.g. 'aten::add.Tensor'")),
    result=record(out=HASH64), spec=(schema_hash,),
    bench=lambda n, rng: [{"name": x} for x in random_op_names(n, rng)],
    edges=lambda: [{"name": n} for n in (None, "", "aten::mm", "aten::add.Tensor",
                                         "aten::ünïcødé", "prim::\U0001f600")],
    invalid=(InvalidCase("a name with a NUL character",
                         lambda: st.just({"name": "aten::\u0000mm"})),),
)

declare(
    "hash.shape", chapter=8,
    summary="ShapeHash: FNV-1a over each input tensor's ndim byte and int64 sizes.",
    args=record(shapes=Field(_SHAPES, "sizes of each input tensor, in argument order")),
    result=record(out=HASH64), spec=(shape_hash,), errata=(E8_1,),
    domain=lambda: st.fixed_dictionaries({"shapes": st.lists(
        st.lists(st.integers(-(1 << 63), (1 << 63) - 1) | st.integers(0, 4096), max_size=10),
        max_size=6)}),
    invalid=(InvalidCase("a tensor of 256 dimensions (ndim is one byte)",
                         lambda: st.just({"shapes": [[1] * 256]})),),
    bench=lambda n, rng: [{"shapes": s} for s in random_shapes(n, rng)],
    edges=lambda: [{"shapes": s} for s in (
        [], [[]], [[], []], [[0]], [[-1]], [[2**63 - 1]], [[-(2**63)]], [[2] * 8], [[2] * 9],
        [[1] * MAX_SHAPE_NDIM], [[4, 8], [8, 16]])],
)

declare(
    "hash.scope", chapter=8, summary="ScopeHash: FNV-1a of the module path (null gives 0).",
    args=record(path=Field(Optional(_NAME, ""), "module path, e.g. 'layer1.0.conv1'")),
    result=record(out=HASH64), spec=(scope_hash,),
    bench=lambda n, rng: [{"path": f"encoder.block.{i}.mlp"} for i in rng.integers(0, 48, n)],
    edges=lambda: [{"path": p} for p in (None, "", ROOT_SCOPE, "layer1.0.conv1")],
)
