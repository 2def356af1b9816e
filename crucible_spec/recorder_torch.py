"""What the native Vessel's boxed fallback reads from one op: the input tensors and scalars
of its boxed stack, its returned tensors, and each tensor's TensorMeta.

Enum fields map torch's dtypes, devices and layouts to the spec's ordinals. Every tensor query
is guarded: a tensor that cannot answer one (sparse, nested, wrapper subclasses) keeps that
field's default.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from .spec.crucible.tensor_meta import MAX_DIMS, TENSOR_META
from .spec.crucible.types import DeviceType, Layout, MetaFlag, ScalarType
from .spec.crucible.vessel import schema_hash
from .synthetic import f64

T = TypeVar("T")

DTYPES = {
    torch.uint8: ScalarType.Byte, torch.int8: ScalarType.Char, torch.int16: ScalarType.Short,
    torch.int32: ScalarType.Int, torch.int64: ScalarType.Long, torch.float16: ScalarType.Half,
    torch.float32: ScalarType.Float, torch.float64: ScalarType.Double,
    torch.complex32: ScalarType.ComplexHalf, torch.complex64: ScalarType.ComplexFloat,
    torch.complex128: ScalarType.ComplexDouble, torch.bool: ScalarType.Bool,
    torch.bfloat16: ScalarType.BFloat16, torch.float8_e5m2: ScalarType.Float8_e5m2,
    torch.float8_e4m3fn: ScalarType.Float8_e4m3fn,
    torch.float8_e5m2fnuz: ScalarType.Float8_e5m2fnuz,
    torch.float8_e4m3fnuz: ScalarType.Float8_e4m3fnuz,
}
"""torch dtype -> ScalarType ordinal; any other dtype is Undefined (-1)."""

DEVICES = {"cpu": DeviceType.CPU, "cuda": DeviceType.CUDA, "mkldnn": DeviceType.MKLDNN,
           "hip": DeviceType.HIP, "xla": DeviceType.XLA, "mps": DeviceType.MPS,
           "meta": DeviceType.Meta, "privateuseone": DeviceType.PrivateUse1}
"""device.type -> DeviceType ordinal; any other device type is -1."""

LAYOUTS = {torch.strided: Layout.Strided, torch.sparse_coo: Layout.Sparse,
           torch.sparse_csr: Layout.SparseCsr, torch._mkldnn: Layout.Mkldnn,
           torch.sparse_csc: Layout.SparseCsc, torch.sparse_bsr: Layout.SparseBsr,
           torch.sparse_bsc: Layout.SparseBsc, torch.jagged: Layout.Jagged}
"""torch layout -> its c10 ordinal, as the vessel stores it; any other layout is -1."""

MEMORY_FORMATS = {torch.contiguous_format: 0, torch.preserve_format: 1,
                  torch.channels_last: 2, torch.channels_last_3d: 3}
"""c10::MemoryFormat ordinals: a memory-format argument is an int on the boxed stack."""

_INT_ELEMENTS = frozenset({"IntType", "SymIntType"})
_TENSOR_ELEMENTS = frozenset({"TensorType", "OptionalType"})


def query(fn: Callable[[], T], default: T) -> T:
    """fn(), or `default` when the tensor cannot answer (exotic tensors raise)."""
    try:
        return fn()
    except Exception:
        return default


def int64(value: int) -> int:
    """`value` wrapped to a signed 64-bit integer."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def scalar_value(value: Any) -> int | None:
    """A non-tensor argument as the native boxed stack holds it, bit-cast to int64: bool 0/1,
    int (SymInt too) as itself, float as its bits, dtype, layout and memory format as their
    ordinals (they are ints on the stack); None for anything else."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | torch.SymInt):
        return query(lambda: int64(int(value)), None)
    if isinstance(value, float):
        return f64(value)
    if isinstance(value, torch.dtype):
        return int(DTYPES.get(value, ScalarType.Undefined))
    if isinstance(value, torch.layout):
        return int(LAYOUTS.get(value, -1))
    if isinstance(value, torch.memory_format):
        return MEMORY_FORMATS.get(value, -1)
    return None


def list_element_kind(arg: torch._C.Argument) -> str | None:
    """The element type kind of a list argument (through Optional), else None."""
    t = arg.type
    if t.kind() == "OptionalType":
        t = t.getElementType()
    return t.getElementType().kind() if t.kind() == "ListType" else None


def argument_values(schema: torch._C.FunctionSchema, args: tuple, kwargs: dict) -> list:
    """Every schema argument's value in order: positional from args, else kwargs or default."""
    values = []
    for i, arg in enumerate(schema.arguments):
        if not arg.kwarg_only and i < len(args):
            values.append(args[i])
        else:
            default = arg.default_value if arg.has_default_value() else None
            values.append(kwargs.get(arg.name, default))
    return values


def walk_arguments(schema: torch._C.FunctionSchema, args: tuple,
                   kwargs: dict) -> tuple[list[torch.Tensor], list[int]]:
    """Input tensors (Tensor, Tensor[], Tensor?[]: defined ones, in order) and scalars (int,
    bool, float and int[]/float[] elements, in schema order), as the native fallback walks."""
    tensors: list[torch.Tensor] = []
    scalars: list[int] = []
    for arg, value in zip(schema.arguments, argument_values(schema, args, kwargs), strict=True):
        if isinstance(value, torch.Tensor):
            tensors.append(value)
        elif isinstance(value, list | tuple):
            kind = list_element_kind(arg)
            if kind in _TENSOR_ELEMENTS:
                tensors += [v for v in value if isinstance(v, torch.Tensor)]
            elif kind in _INT_ELEMENTS:
                scalars += [query(lambda v=v: int64(int(v)), 0) for v in value]
            elif kind == "FloatType":
                scalars += [f64(float(v)) for v in value]
        else:
            s = scalar_value(value)
            if s is not None:
                scalars.append(s)
    return tensors, scalars


def returned_tensors(schema: torch._C.FunctionSchema, out: Any) -> list[torch.Tensor]:
    """Output tensors: each Tensor or Tensor[] return, in order (undefined ones, None here,
    skipped)."""
    values = [out] if len(schema.returns) == 1 else list(out or ())
    tensors: list[torch.Tensor] = []
    for value in values:
        if isinstance(value, torch.Tensor):
            tensors.append(value)
        elif isinstance(value, list | tuple):
            tensors += [v for v in value if isinstance(v, torch.Tensor)]
    return tensors


class Pointers:
    """data_ptr identities: raw addresses, or (the default) each storage remapped to a fake
    base in first-seen order, base_k = (k + 1) << 32, keeping offsets within the storage. A
    storage is one live allocation: an address freed and reused by another storage, which
    depends on the allocator's timing, gets a new base, so two recordings are identical. A null
    storage keeps its pointer (an offset from null); a tensor whose storage cannot be read has
    pointer 0."""

    def __init__(self, raw: bool) -> None:
        self.raw = raw
        self.bases: dict[int, tuple[int, weakref.ref]] = {}
        self.count = 0

    def __call__(self, ptr: int, storage: torch.UntypedStorage | None) -> int:
        if self.raw:
            return ptr
        if storage is None:
            return 0
        address = query(storage.data_ptr, 0)
        if address == 0:
            return ptr
        known = self.bases.get(address)
        if known is None or known[1]() is not storage:
            self.count += 1
            known = self.bases[address] = (self.count << 32, weakref.ref(storage))
        return known[0] + ptr - address


def meta_flags(t: torch.Tensor, strided: bool, ptr: int, storage: int, offset: int) -> int:
    """MetaFlag bits: leaf, contiguous (strided only), grad_fn, view (an autograd view, or a
    strided tensor off its storage's start), neg, conj."""
    moved = strided and (offset != 0 or (storage != 0 and ptr != storage))
    view = moved or query(t._is_view, False)
    bits = [
        (MetaFlag.IS_LEAF, query(lambda: t.is_leaf, False)),
        (MetaFlag.IS_CONTIGUOUS, strided and query(t.is_contiguous, False)),
        (MetaFlag.HAS_GRAD_FN, query(lambda: t.grad_fn is not None, False)),
        (MetaFlag.IS_VIEW, view),
        (MetaFlag.IS_NEG, query(t.is_neg, False)),
        (MetaFlag.IS_CONJ, query(t.is_conj, False)),
    ]
    return sum(int(flag) for flag, on in bits if on)


def grad_fn_hash(t: torch.Tensor) -> int:
    """FNV-1a of the grad_fn node's name() (what the native fallback hashes), 0 without one."""
    node = query(lambda: t.grad_fn, None)
    return 0 if node is None else schema_hash(query(node.name, type(node).__name__))


def padded(values: list[int]) -> list[int]:
    """The first 8 values, padded with zeros to 8."""
    return (values + [0] * MAX_DIMS)[:MAX_DIMS]


def tensor_meta(t: torch.Tensor, pointers: Pointers) -> dict:
    """The TensorMeta the native fallback fills for `t`: ndim clamped to 8; strides, data_ptr,
    storage offset and size only for strided tensors; every failing query leaves its default."""
    meta = TENSOR_META.default_values()
    layout = query(lambda: t.layout, None)
    strided = layout == torch.strided
    ndim = min(query(t.dim, 0), MAX_DIMS)
    meta["ndim"] = ndim
    meta["sizes"] = padded(query(lambda: [int(s) for s in t.shape[:ndim]], []))
    device = query(lambda: t.device, None)
    meta["dtype"] = int(DTYPES.get(query(lambda: t.dtype, None), ScalarType.Undefined))
    meta["device_type"] = int(DEVICES.get(getattr(device, "type", None), -1))
    meta["device_idx"] = -1 if device is None or device.index is None else device.index
    meta["layout"] = int(LAYOUTS.get(layout, -1))
    meta["requires_grad"] = query(lambda: t.requires_grad, False)
    meta["output_nr"] = query(lambda: t.output_nr, 0) & 0xFF
    meta["version"] = query(lambda: t._version, 0) & 0xFFFFFFFF
    meta["grad_fn_hash"] = grad_fn_hash(t)
    ptr, storage = fill_strided(meta, t, pointers) if strided else (0, 0)
    meta["flags"] = meta_flags(t, strided, ptr, storage, meta["storage_offset"])
    return meta


def fill_strided(meta: dict, t: torch.Tensor, pointers: Pointers) -> tuple[int, int]:
    """A strided tensor's strides, data_ptr, storage offset and storage size; returns its real
    data pointer and storage base."""
    ptr = query(t.data_ptr, 0)
    untyped = query(t.untyped_storage, None)
    storage = 0 if untyped is None else query(untyped.data_ptr, 0)
    meta["strides"] = padded(query(lambda: [int(s) for s in t.stride()[:meta["ndim"]]], []))
    meta["data_ptr"] = pointers(ptr, untyped)
    meta["storage_offset"] = query(t.storage_offset, 0)
    meta["storage_nbytes"] = 0 if untyped is None else query(untyped.nbytes, 0) & 0xFFFFFFFF
    return ptr, storage


def has_python_key(t: torch.Tensor) -> bool:
    """Whether the tensor carries the Python dispatch key (a tensor subclass)."""
    return query(lambda: torch._C._dispatch_keys(t).has(torch._C.DispatchKey.Python), False)
