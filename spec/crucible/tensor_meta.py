"""Chapter 5: TensorMeta, the 168-byte description of one tensor argument.

The yellowpaper's 144-byte layout is outdated: the code adds requires_grad, flags and
output_nr at 141..143 and storage_offset, version, storage_nbytes, grad_fn_hash at 144..167.
"""

from __future__ import annotations

from ..core.errata import erratum
from ..core.errors import InvalidInput
from ..core.layout import Member, array, bool_, enum_of, hash64, i8, i64, ptr, struct, u8, u32
from ..core.registry import InvalidCase, declare
from ..core.schema import I64, U64, Field, List, record
from ..core.strategies import st
from .types import SCALAR_TYPE, DeviceType, Layout, ScalarType, element_size

MAX_DIMS = 8
"""TensorMeta holds at most 8 dimensions; the recorder clamps ndim to 8. Real code:
`TensorMeta.h`, the `sizes` and `strides` arrays."""

_members = [
    Member("sizes", array(i64, MAX_DIMS)),
    Member("strides", array(i64, MAX_DIMS)),
    Member("data_ptr", ptr, doc="identity of the storage; the serializers write 0"),
    Member("ndim", u8, doc="dimensions used, 0..8"),
    Member("dtype", enum_of(ScalarType, i8), default=ScalarType.Undefined),
    Member("device_type", enum_of(DeviceType, i8), default=DeviceType.CPU),
    Member("device_idx", i8, default=-1, doc="-1 = no index"),
    Member("layout", enum_of(Layout, i8), default=Layout.Strided),
    Member("requires_grad", bool_),
    Member("flags", u8, doc="MetaFlag bits"),
    Member("output_nr", u8, doc="autograd output number & 0xFF"),
    Member("storage_offset", i64),
    Member("version", u32, doc="tensor version counter & 0xFFFFFFFF; 0 without one (E5.2)"),
    Member("storage_nbytes", u32, doc="storage size & 0xFFFFFFFF"),
    Member("grad_fn_hash", hash64, doc="FNV-1a of the grad_fn class name, 0 = none"),
]

TENSOR_META = struct("TensorMeta", _members, size=168, align=8, chapter=5,
                     doc="One tensor argument: sizes, strides, identity, dtype and device.")

CRUCIBLE_META = struct("CrucibleMeta", _members, size=168, align=8, chapter=5,
                       doc="The vessel C API's binary-compatible copy of TensorMeta.")

erratum(
    "E5.1", "TensorMeta is 168 bytes; the yellowpaper, whitepaper and MetaLog comments say 144",
    seed="crucible@8d2680a2", location="include/crucible/MerkleDag.h TensorMeta; MetaLog.h",
    ops=("layout.info", "layout.decode", "layout.encode"),
    witness={"args": {"struct": "TensorMeta"}, "code": 168, "documents": 144},
    flag="doc",
    detail="Bytes 141..143 hold requires_grad, flags and output_nr (the yellowpaper has pad[3]) "
           "and 144..167 storage_offset, version, storage_nbytes and grad_fn_hash. The MetaLog "
           "buffer is therefore 176,160,768 bytes, not about 144 MB.",
)

erratum(
    "E5.2", "Recording an op on an inference tensor throws: the vessel reads its version counter",
    seed="crucible@8d2680a2", location="vessel/torch/crucible_fallback.cpp, the meta extraction "
                                       "(impl->version_counter().current_version())",
    ops=(),
    witness={"program": "with torch.inference_mode(): torch.ones(2) + 1",
             "seed": "c10::Error 'Inference tensors do not track version counter.' from the "
                     "boxed fallback: the op fails",
             "spec": "the op is recorded with version = 0"},
    flag="ub",
    detail="Tensors made under inference_mode have no version counter and c10 throws when it "
           "is read. The vessel reads it for every input and output, so under inference_mode "
           "(which it otherwise records, op_flags bit 0) recording aborts the user's op. The "
           "spec records such a tensor with version 0, as `crucible-spec record` does.",
)


def compute_storage_nbytes(sizes: list[int], strides: list[int], dtype: int) -> int:
    """Bytes between a view's lowest and highest element, inclusive (its storage span)."""
    if not sizes:
        return element_size(dtype)  # 1. a 0-d tensor is one element
    max_offset = min_offset = 0
    for size, stride in zip(sizes, strides, strict=True):  # 2. extent of each dimension
        if size == 0:
            return 0
        extent = (size - 1) * stride
        if extent > 0:
            max_offset += extent
        else:
            min_offset += extent
    return (max_offset - min_offset + 1) * element_size(dtype)  # 3. span times element size


I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


def check_storage_args(args: dict) -> None:
    """The domain: sizes and strides of one length <= 8, sizes >= 0, and no int64 overflow
    in the extents or their sums (the real code computes in int64), nor a span past 2^64."""
    sizes, strides = args["sizes"], args["strides"]
    if len(sizes) != len(strides):
        raise InvalidInput(f"args.strides: {len(strides)} strides for {len(sizes)} sizes")
    if any(s < 0 for s in sizes):
        raise InvalidInput("args.sizes: a size is negative")
    high = low = 0
    for size, stride in zip(sizes, strides, strict=True):
        extent = max(size - 1, 0) * stride
        high, low = high + max(extent, 0), low + min(extent, 0)
        if not I64_MIN <= extent <= I64_MAX or high > I64_MAX or low < I64_MIN:
            raise InvalidInput("args: the storage extent overflows int64")
    if compute_storage_nbytes(sizes, strides, args["dtype"]) >= 1 << 64:
        raise InvalidInput("args: the storage span does not fit 64 bits")


def random_views(n: int, rng) -> list[dict]:
    """n views of up to 4 dims with strides of either sign and some broadcast (bench inputs)."""
    out = []
    for ndim in rng.integers(0, 5, size=n):
        sizes = [int(x) for x in rng.integers(1, 64, size=ndim)]
        strides = [int(x) for x in rng.integers(-4096, 4096, size=ndim)]
        out.append({"sizes": sizes, "strides": strides, "dtype": ScalarType.Float})
    return out


def _dims() -> st.SearchStrategy:
    """(size, stride) pairs, at most MAX_DIMS of them."""
    return st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(-(1 << 24), 1 << 24)),
                    max_size=MAX_DIMS)

declare(
    "meta.storage_nbytes", chapter=5,
    summary="compute_storage_nbytes: bytes from a view's lowest to highest element.",
    args=record(sizes=Field(List(I64, max_len=MAX_DIMS), "sizes, at most 8"),
                strides=Field(List(I64, max_len=MAX_DIMS), "strides in elements, same length"),
                dtype=Field(SCALAR_TYPE, "ScalarType ordinal")),
    result=record(nbytes=Field(U64, "storage span in bytes")),
    spec=(compute_storage_nbytes,), check=check_storage_args,
    domain=lambda: st.tuples(_dims(), st.sampled_from(list(ScalarType))).map(
        lambda t: {"sizes": [s for s, _ in t[0]], "strides": [d for _, d in t[0]],
                   "dtype": t[1]}),
    invalid=(
        InvalidCase("more strides than sizes",
                    lambda: st.just({"sizes": [2], "strides": [1, 1], "dtype": 6})),
        InvalidCase("a negative size", lambda: st.just({"sizes": [-1], "strides": [1],
                                                        "dtype": 6})),
        InvalidCase("an extent past int64",
                    lambda: st.just({"sizes": [2**62, 5], "strides": [4, 1], "dtype": 6})),
        InvalidCase("nine dimensions",
                    lambda: st.just({"sizes": [1] * 9, "strides": [1] * 9, "dtype": 6})),
    ),
    edges=lambda: [
        {"sizes": [], "strides": [], "dtype": 6}, {"sizes": [], "strides": [], "dtype": -1},
        {"sizes": [0], "strides": [1], "dtype": 6}, {"sizes": [1], "strides": [0], "dtype": 10},
        {"sizes": [3, 4], "strides": [0, 0], "dtype": 6},
        {"sizes": [2**31, 2**31], "strides": [2**31, 1], "dtype": 10},
        {"sizes": [2] * 8, "strides": [-1] * 8, "dtype": 7}],
    bench=random_views,
)
