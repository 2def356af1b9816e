"""Chapter 5: TensorMeta, the 168-byte description of one tensor argument.

The yellowpaper's 144-byte layout is outdated: the code adds requires_grad, flags and
output_nr at 141..143 and storage_offset, version, storage_nbytes, grad_fn_hash at 144..167.
"""

from __future__ import annotations

from .errata import erratum
from .layout import Member, array, bool_, enum_of, hash64, i8, i64, ptr, struct, u8, u32
from .types import DeviceType, Layout, ScalarType

MAX_DIMS = 8
"""TensorMeta holds at most 8 dimensions; the recorder clamps ndim to 8."""

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
    Member("version", u32, doc="tensor version counter & 0xFFFFFFFF"),
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
