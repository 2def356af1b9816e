"""Chapter 12: a float32 tensor on the wire, and how two of them are compared.

1. A tensor is `{"shape": [d0, d1, ...], "data": "<hex>"}`: row-major, contiguous, each
   element an IEEE binary32 in little-endian byte order, so `data` has 8 hex digits per
   element (the bytes the seed's `float*` buffer holds).
2. Decoding checks the shape first (integers, at most MAX_RANK dims, none negative, neither
   any dim nor their product above MAX_ELEMENTS: a zero dim does not excuse a huge one) and
   only then reads `data`, whose length must be exactly 4 bytes per element: a bad shape
   allocates nothing.
3. Two tensors are equal when shapes and bytes are. Within an envelope of N ulps (chapter 12's
   numeric envelopes) each element may differ by up to N units in the last place, counted on
   the ordered integer line of binary32 (+0 and -0 are 0 apart, a NaN equals only a NaN with
   the same bits); with a floor 2^E, an element whose expected magnitude is below 2^E may
   differ by N ulps of 2^E instead (an absolute tolerance where sums cancel).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import BadRequest, InvalidInput
from .schema import Type, json_kind, shown
from .strategies import st

MAX_RANK = 8
"""At most 8 dims (the seed's kernels use up to 4)."""
MAX_ELEMENTS = 1 << 26
"""At most 2^26 elements (256 MiB of float32) in any tensor an op reads or writes."""
F32_SIGN = 0x80000000


def element_count(shape: list[int] | tuple[int, ...], path: str) -> int:
    """The product of `shape`, refused (invalid_input) past MAX_ELEMENTS before anything is
    allocated."""
    n = 1
    for d in shape:
        n *= d
        if n > MAX_ELEMENTS or d > MAX_ELEMENTS:
            raise InvalidInput(f"{path}: shape {list(shape)} has more than {MAX_ELEMENTS} "
                               "elements (2^26)")
    return n


def tensor_of(shape: list[int], data: bytes, path: str) -> np.ndarray:
    """The float32 array of a wire tensor's shape and bytes (steps 1-2)."""
    n = element_count(shape, path)
    if len(data) != 4 * n:
        raise InvalidInput(f"{path}.data: {len(data)} bytes, but shape {shape} needs {4 * n} "
                           "(4 per element)")
    return np.frombuffer(data, dtype="<f4").astype(np.float32).reshape(shape)


def _shape(value: Any, path: str) -> list[int]:
    if not isinstance(value, list):
        raise BadRequest(f"{path}.shape: expected a list of dims, got {json_kind(value)}")
    if len(value) > MAX_RANK:
        raise InvalidInput(f"{path}.shape: {len(value)} dims exceed the limit of {MAX_RANK}")
    for i, d in enumerate(value):
        if isinstance(d, bool) or not isinstance(d, int):
            raise BadRequest(f"{path}.shape[{i}]: expected an integer, got {json_kind(d)}")
        if d < 0:
            raise InvalidInput(f"{path}.shape[{i}]: a dim cannot be negative ({d})")
        if d > MAX_ELEMENTS:
            raise InvalidInput(f"{path}.shape[{i}]: a dim of {shown(d)} exceeds the limit of "
                               f"{MAX_ELEMENTS} elements (2^26)")
    return value


def _hex_data(value: Any, path: str) -> bytes:
    if not isinstance(value, str):
        raise BadRequest(f"{path}.data: expected a hex string, got {json_kind(value)}")
    if len(value) % 2 or value.strip(string.hexdigits):
        raise BadRequest(f"{path}.data: not a hex byte string")
    return bytes.fromhex(value)


@dataclass(frozen=True)
class F32Tensor(Type):
    """A float32 tensor (steps 1-2); `rank` fixes the number of dims when set."""

    rank: int | None = None

    def decode(self, value: Any, path: str) -> np.ndarray:
        if not isinstance(value, dict):
            raise BadRequest(f"{path}: expected a tensor {{shape, data}}, got {json_kind(value)}")
        extra = sorted(set(value) - {"shape", "data"})
        if extra:
            raise BadRequest(f"{path}: unknown field {extra[0]!r}")
        for name in ("shape", "data"):
            if name not in value:
                raise BadRequest(f"{path}: missing field {name!r}")
        shape = _shape(value["shape"], path)
        if self.rank is not None and len(shape) != self.rank:
            raise InvalidInput(f"{path}.shape: expected {self.rank} dims, got {len(shape)}")
        element_count(shape, f"{path}.shape")
        return tensor_of(shape, _hex_data(value["data"], path), path)

    def encode(self, value: np.ndarray) -> dict:
        a = np.asarray(value, dtype=np.float32)
        return {"shape": list(a.shape), "data": a.astype("<f4").tobytes().hex()}

    def strategy(self) -> st.SearchStrategy:
        rank = st.just(self.rank) if self.rank is not None else st.integers(0, 3)
        return rank.flatmap(lambda r: st.lists(st.integers(0, 4), min_size=r, max_size=r)).flatmap(
            lambda shape: st.lists(f32_values(), min_size=int(np.prod(shape, dtype=np.int64)),
                                   max_size=int(np.prod(shape, dtype=np.int64))).map(
                lambda xs, shape=shape: np.array(xs, dtype=np.float32).reshape(shape)))

    def describe(self) -> str:
        dims = f"{self.rank}-D " if self.rank is not None else ""
        return f"{dims}float32 tensor {{shape, data: little-endian hex}}"

    def json_schema(self, result: bool = False) -> dict:
        dims: dict[str, Any] = {"type": "array", "maxItems": MAX_RANK,
                                "items": {"type": "integer", "minimum": 0,
                                          "maximum": MAX_ELEMENTS}}
        if self.rank is not None:
            dims |= {"minItems": self.rank, "maxItems": self.rank}
        pattern = "^([0-9a-f]{8})*$" if result else "^([0-9a-fA-F]{8})*$"
        return {"type": "object", "description": self.describe(),
                "properties": {"shape": dims, "data": {"type": "string", "pattern": pattern}},
                "required": ["shape", "data"], "additionalProperties": False}


def f32_values(lo: float = -1e4, hi: float = 1e4) -> st.SearchStrategy:
    """Finite float32 values in [lo, hi], often small, with zeros of both signs."""
    return st.floats(lo, hi, width=32, allow_nan=False, allow_infinity=False) | st.sampled_from(
        [0.0, -0.0, 1.0, -1.0, 0.5])


def ordered(bits: np.ndarray) -> np.ndarray:
    """Binary32 bit patterns mapped to the ordered integer line (step 3)."""
    b = bits.astype(np.int64)
    return np.where(b & F32_SIGN, -(b & ~F32_SIGN), b)


@dataclass(frozen=True)
class Envelope:
    """N ulps per element, with an optional absolute floor of N ulps of 2^floor (step 3)."""

    ulps: int
    floor: int | None = None

    def distances(self, want: np.ndarray, got: np.ndarray) -> np.ndarray:
        """Per element, the distance in ulps (floored where step 3 says); a NaN against any
        other bits is infinitely far."""
        a = np.ascontiguousarray(want, dtype=np.float32).reshape(-1)
        b = np.ascontiguousarray(got, dtype=np.float32).reshape(-1)
        ab, bb = a.view(np.uint32), b.view(np.uint32)
        same = (ab == bb) | ((ab & ~np.uint32(F32_SIGN)) == 0) & ((bb & ~np.uint32(F32_SIGN)) == 0)
        ulp = np.abs(ordered(ab) - ordered(bb)).astype(np.float64)
        if self.floor is not None:
            unit = np.ldexp(1.0, self.floor - 23)
            small = np.abs(a.astype(np.float64)) < np.ldexp(1.0, self.floor)
            absolute = np.abs(a.astype(np.float64) - b.astype(np.float64)) / unit
            ulp = np.where(small & np.isfinite(absolute), np.minimum(ulp, absolute), ulp)
        nan = np.isnan(a) | np.isnan(b)
        return np.where(same, 0.0, np.where(nan, np.inf, ulp))

    def holds(self, want: np.ndarray, got: np.ndarray) -> bool:
        """Same shape, and every element within the envelope."""
        return want.shape == got.shape and bool(np.all(self.distances(want, got) <= self.ulps))


def ulp_distances(want: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Plain per-element ulp distance of two float32 arrays of one shape (no floor)."""
    return Envelope(0).distances(want, got)


def tensors_of_shape(shape: tuple[int, ...], elements: st.SearchStrategy | None = None
                     ) -> st.SearchStrategy:
    """float32 arrays of exactly `shape` (hypothesis), elements from `elements`."""
    n = int(np.prod(shape, dtype=np.int64))
    return st.lists(elements if elements is not None else f32_values(), min_size=n,
                    max_size=n).map(lambda xs: np.array(xs, dtype=np.float32).reshape(shape))


def random_tensor(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 1.0
                  ) -> np.ndarray:
    """A bench input: uniform float32 in [-scale, scale)."""
    return (rng.random(shape, dtype=np.float32) * np.float32(2 * scale)
            - np.float32(scale)).astype(np.float32)
