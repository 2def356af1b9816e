"""PyC values on the wire: its named enums as lowercase strings (the names PyC itself prints,
e.g. `pyc_kernel_workload_family_name`) and its doubles as IEEE-754 bit patterns in hex."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any

from ..core.errors import BadRequest, InvalidInput
from ..core.schema import HASH64, Type, json_kind
from ..core.strategies import st

PYC_SEED = "pyc@fdf1563"
"""The PyC commit the chapter's errata describe."""


def f64(bits: int) -> float:
    """The float64 whose bit pattern is `bits`."""
    return struct.unpack("<d", struct.pack("<Q", bits & 0xFFFF_FFFF_FFFF_FFFF))[0]


def bits(x: float) -> int:
    """The bit pattern of the float64 `x`."""
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def finite(x_bits: int, path: str) -> float:
    """The float64 of `x_bits`; NaN and infinities are `invalid_input` at `path`."""
    x = f64(x_bits)
    if not math.isfinite(x):
        raise InvalidInput(f"{path}: {x} is not a finite float64")
    return x


def non_negative(x_bits: int, path: str) -> float:
    """A finite float64 that is not below zero (negative zero passes)."""
    x = finite(x_bits, path)
    if x < 0.0:
        raise InvalidInput(f"{path}: {x!r} is negative")
    return x


F64 = HASH64
"""A float64 as its bit pattern: "0x"-prefixed hex on the wire, as every double of the protocol."""


def f64_strategy(lo: float = 0.0, hi: float = 1e6) -> st.SearchStrategy:
    """Bit patterns of finite doubles in [lo, hi]."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False).map(bits)


@dataclass(frozen=True)
class Named(Type):
    """One of a fixed tuple of names; the value is the name's position (PyC's enum ordinal)."""

    names: tuple[str, ...]
    what: str

    def decode(self, value: Any, path: str) -> int:
        if not isinstance(value, str):
            raise BadRequest(f"{path}: expected a {self.what} name, got {json_kind(value)}")
        if value not in self.names:
            raise InvalidInput(f"{path}: {value!r} is not a {self.what} "
                               f"(one of {', '.join(self.names)})")
        return self.names.index(value)

    def encode(self, value: int) -> str:
        return self.names[value]

    def strategy(self) -> st.SearchStrategy:
        return st.integers(0, len(self.names) - 1)

    def describe(self) -> str:
        return f"{self.what} ({' | '.join(self.names)})"

    def json_schema(self, result: bool = False) -> dict:
        return {"type": "string", "enum": list(self.names), "description": self.describe()}
