"""Chapter 2: types. Scalar types, devices, layouts, the flag bytes, strong IDs and hashes.

Ordinals mirror c10 (PyTorch) exactly, because recorded traces carry them raw. The enums are
stored as int8 in every layout; ScalarType.Undefined is -1 (byte 0xFF).
"""

from __future__ import annotations

import enum

from ..core.errata import erratum
from ..core.errors import InvalidInput
from ..core.layout import Member, hash64, id32, struct
from ..core.registry import InvalidCase, declare
from ..core.schema import U8, Enum, Field, record
from ..core.strategies import st

NONE32 = 0xFFFFFFFF
"""The 'none' value of every strong ID (OpIndex, SlotId, NodeId, SymbolId, MetaIndex). Real
code: `Types.h`, each strong ID's `none()`."""

HASH_UNSET = 0
"""A strong hash (SchemaHash, ShapeHash, ...) of 0 means 'unset'. Real code: `Types.h`, the
strong hashes' default value."""

HASH_SENTINEL = 0xFFFFFFFFFFFFFFFF
"""`sentinel()` of every strong hash; nothing at 8d2680a2 produces or tests it. Real code:
`Types.h`."""

STRONG_ID_BYTES = 4
"""Every strong ID is a u32 wrapper. Real code: `Types.h`, static_asserts on each ID."""
STRONG_HASH_BYTES = 8
"""Every strong hash is a u64 wrapper. Real code: `Types.h`, static_asserts on each hash."""


class ScalarType(enum.IntEnum):
    """Element type of a tensor (int8). Ordinals are c10's; gaps (12-14, 16-22) do not exist."""

    Byte = 0
    Char = 1
    Short = 2
    Int = 3
    Long = 4
    Half = 5
    Float = 6
    Double = 7
    ComplexHalf = 8
    ComplexFloat = 9
    ComplexDouble = 10
    Bool = 11
    BFloat16 = 15
    Float8_e5m2 = 23
    Float8_e4m3fn = 24
    Float8_e5m2fnuz = 25
    Float8_e4m3fnuz = 26
    Undefined = -1


ELEMENT_SIZE: dict[ScalarType, int] = {
    ScalarType.Byte: 1,
    ScalarType.Char: 1,
    ScalarType.Short: 2,
    ScalarType.Int: 4,
    ScalarType.Long: 8,
    ScalarType.Half: 2,
    ScalarType.Float: 4,
    ScalarType.Double: 8,
    ScalarType.ComplexHalf: 4,
    ScalarType.ComplexFloat: 8,
    ScalarType.ComplexDouble: 16,
    ScalarType.Bool: 1,
    ScalarType.BFloat16: 2,
    ScalarType.Float8_e5m2: 1,
    ScalarType.Float8_e4m3fn: 1,
    ScalarType.Float8_e5m2fnuz: 1,
    ScalarType.Float8_e4m3fnuz: 1,
    ScalarType.Undefined: 0,
}


class DeviceType(enum.IntEnum):
    """Device of a tensor (int8), c10 ordinals. HIP is 6 (the yellowpaper's 20 is PrivateUse1)."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    HIP = 6
    XLA = 9
    MPS = 13
    Meta = 14
    PrivateUse1 = 20


class Layout(enum.IntEnum):
    """Memory layout of a tensor (int8): c10::Layout's ordinals, which the vessel stores (E2.3)."""

    Strided = 0
    Sparse = 1
    SparseCsr = 2
    Mkldnn = 3
    SparseCsc = 4
    SparseBsr = 5
    SparseBsc = 6
    Jagged = 7


class TrainingPhase(enum.IntEnum):
    """Phase field of the op_flags byte (bits 2-3)."""

    FORWARD = 0
    BACKWARD = 1
    OPTIMIZER = 2
    OTHER = 3


class OpFlag(enum.IntFlag):
    """Bits of the op_flags byte of a ring entry (Entry byte 23). Bits 5-7 are reserved, 0."""

    INFERENCE_MODE = 0x01
    IS_MUTABLE = 0x02
    PHASE_MASK = 0x0C
    TORCH_FUNCTION = 0x10


OP_FLAG_PHASE_SHIFT = 2
"""The phase bits of op_flags start at bit 2. Real code: `TraceRing.h`, the op_flags bit
layout."""


class MetaFlag(enum.IntFlag):
    """Bits of TensorMeta.flags. Bits 6-7 are reserved."""

    IS_LEAF = 0x01
    IS_CONTIGUOUS = 0x02
    HAS_GRAD_FN = 0x04
    IS_VIEW = 0x08
    IS_NEG = 0x10
    IS_CONJ = 0x20


erratum(
    "E2.1", "element_size of an ordinal outside ScalarType is undefined behaviour",
    seed="crucible@8d2680a2", location="include/crucible/Types.h element_size",
    ops=("types.element_size",),
    witness={"args": {"dtype": 12}, "spec": "invalid_input",
             "seed": "std::unreachable(): undefined behaviour"},
    flag="ub",
    detail="The switch has no case for ordinals 12-14, 16-22 or 27 and up and ends in "
           "std::unreachable(). The spec rejects them. The Python prototype maps "
           "torch.uint16/32/64 to 27/28/29, which would reach it.",
)

erratum(
    "E2.2", "HIP is DeviceType 6; the yellowpaper's table says 20",
    seed="crucible@8d2680a2", location="papers/yellowpaper ch. 2, Table 2",
    ops=("layout.decode", "layout.encode"),
    witness={"enum": "DeviceType", "code": {"HIP": 6, "PrivateUse1": 20},
             "yellowpaper": {"HIP": 20}},
    flag="doc",
    detail="The code (and c10) has HIP = 6 and PrivateUse1 = 20, plus MKLDNN = 2, MPS = 13 and "
           "Meta = 14, which the yellowpaper omits. A source comment says HIP used to be 20 by "
           "mistake. The spec follows the code.",
)


erratum(
    "E2.3", "Layout's names for ordinals 3-5 are not c10's, though the enum says it mirrors c10",
    seed="crucible@8d2680a2", location="include/crucible/Types.h enum class Layout",
    ops=("layout.decode", "layout.encode"),
    witness={"enum": "Layout", "code": {"SparseCsc": 3, "SparseBsr": 4, "SparseBsc": 5},
             "c10": {"Mkldnn": 3, "SparseCsc": 4, "SparseBsr": 5, "SparseBsc": 6,
                     "Jagged": 7}},
    flag="doc",
    detail="The enum is commented 'Mirror c10::Layout ordinals' but omits Mkldnn, so its names "
           "for 3-5 are shifted. The bytes are right: the vessel stores static_cast<int8_t>("
           "t.layout()), c10's ordinal, so a recorded mkldnn tensor reads back as 'SparseCsc' "
           "under the code's names. No op's answer changes (the wire carries ordinals); the "
           "spec names the ordinals as c10 does.",
)


def element_size(dtype: int) -> int:
    """Bytes per element of `dtype`: 0 for Undefined; an ordinal outside ScalarType is rejected."""
    try:
        return ELEMENT_SIZE[ScalarType(dtype)]
    except ValueError:
        raise InvalidInput(f"{dtype} is not a ScalarType ordinal") from None


def pack_op_flags(inference_mode: bool, is_mutable: bool, phase: int, torch_function: bool) -> int:
    """op_flags: bit 0 inference, bit 1 mutable, bits 2-3 phase & 3, bit 4 torch_function."""
    return (phase & 3) << OP_FLAG_PHASE_SHIFT | inference_mode | is_mutable << 1 \
        | torch_function << 4


def unpack_op_flags(flags: int) -> tuple[int, int, int, int]:
    """The fields of op_flags as bits: (inference_mode, is_mutable, phase, torch_function)."""
    return flags & 1, flags >> 1 & 1, flags >> OP_FLAG_PHASE_SHIFT & 3, flags >> 4 & 1


SCALAR_TYPE = Enum(ScalarType, bits=8, signed=True)
DEVICE_TYPE = Enum(DeviceType, bits=8, signed=True)
LAYOUT = Enum(Layout, bits=8, signed=True)

_UNKNOWN_ORDINALS = [o for o in range(-128, 128) if o not in set(ScalarType)]

declare(
    "types.element_size",
    chapter=2,
    summary="Bytes per element of a ScalarType (0 for Undefined).",
    args=record(dtype=Field(SCALAR_TYPE, "ScalarType ordinal (int8)")),
    result=record(element_size=Field(U8, "bytes per element")),
    spec=(element_size,),
    invalid=(
        InvalidCase("an int8 that is no ScalarType ordinal (12-14, 16-22, 27+)",
                    lambda: st.fixed_dictionaries({"dtype": st.sampled_from(_UNKNOWN_ORDINALS)})),
        InvalidCase("an ordinal outside int8",
                    lambda: st.fixed_dictionaries({"dtype": st.integers(128, 10**6)})),
    ),
    edges=lambda: [{"dtype": int(t)} for t in ScalarType],
    bench=lambda n, rng: [{"dtype": ScalarType(d)}
                          for d in rng.choice([int(t) for t in ScalarType], size=n)],
)

for _name in ("OpIndex", "SlotId", "NodeId", "SymbolId", "MetaIndex"):
    struct(_name, [Member("v", id32, default=NONE32)], size=STRONG_ID_BYTES, align=4,
           chapter=2, doc="Strong ID: one u32, default none (0xFFFFFFFF), no arithmetic.")
for _name in ("SchemaHash", "ShapeHash", "ScopeHash", "CallsiteHash", "ContentHash",
              "MerkleHash"):
    struct(_name, [Member("v", hash64)], size=STRONG_HASH_BYTES, align=8, chapter=2,
           doc="Strong hash: one u64, default 0 (unset), no arithmetic.")
